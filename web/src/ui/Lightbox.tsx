/**
 * The lightbox (Zulip's lightbox.ts): an image of a message, full size in a dialog named by its
 * title or file name, with a link to download it; Escape, the close button or a click beside it
 * closes it. Loaded on the first click on an image (state/uploads.ts), into a root of its own.
 * The thumbnail the feed already shows stands in until the original has loaded (as Zulip's
 * message-formatting documentation recommends), so the dialog never opens empty.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { Dialog } from "./Dialog.tsx";
import "./Lightbox.css";

export interface LightboxImage {
  src: string;
  name: string;
  /** What the feed shows of it (a thumbnail), shown until `src` has loaded. */
  preview?: string;
}

let root: HTMLDivElement | undefined;

/** Where the image downloads from: Zulip's `/user_uploads/download/...` for an upload. */
function downloadUrl(src: string): string {
  const url = new URL(src, location.href);
  if (url.origin === location.origin && url.pathname.startsWith("/user_uploads/"))
    return url.pathname.replace(/^\/user_uploads\//, "/user_uploads/download/");
  return url.href;
}

function Lightbox({ image, onClose }: { image: LightboxImage; onClose: () => void }) {
  const [loaded, setLoaded] = useState(!image.preview || image.preview === image.src);
  useEffect(() => {
    if (loaded) return;
    const original = new Image();
    original.onload = () => setLoaded(true);
    original.src = image.src;
    return () => {
      original.onload = null;
    };
  }, [image.src, loaded]);
  return (
    <Dialog title={image.name} onClose={onClose} wide>
      <div class="lightbox">
        <img src={loaded ? image.src : image.preview} alt={image.name} />
        <p class="lightbox-actions">
          <a href={downloadUrl(image.src)} download={image.name}>
            {t("Download")}
          </a>{" "}
          <a href={image.src} target="_blank" rel="noopener noreferrer">
            {t("Open in new tab")}
          </a>
        </p>
      </div>
    </Dialog>
  );
}

export function closeLightbox() {
  if (root) render(null, root);
}

export function openLightbox(image: LightboxImage) {
  if (!root) {
    root = document.createElement("div");
    root.className = "lightbox-root";
    document.body.append(root);
  }
  const opener = document.activeElement as HTMLElement | null;
  render(null, root);
  render(
    <Lightbox
      image={image}
      onClose={() => {
        closeLightbox();
        opener?.focus?.();
      }}
    />,
    root,
  );
}
