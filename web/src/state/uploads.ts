/**
 * Uploads (Zulip's web/src/upload.ts): each file goes to `POST /json/user_uploads` (multipart,
 * with the session's CSRF token) by XMLHttpRequest, for its progress; the register's
 * `max_file_upload_size_mib` is checked first. And the images of messages: a click on one opens
 * the lightbox (ui/Lightbox.tsx, loaded on first use).
 */
import { signal } from "@preact/signals";
import { csrfToken } from "../api.ts";
import { t } from "../i18n.ts";
import { onRegister } from "./events.ts";

export const maxUploadMib = signal<number | undefined>(undefined);

export interface Upload {
  id: number;
  name: string;
  /** 0 to 100. */
  percent: number;
  error?: string;
}
/** The uploads in progress, and those that failed (until dismissed). */
export const uploads = signal<readonly Upload[]>([]);

onRegister((state) => {
  const mib = state.max_file_upload_size_mib;
  maxUploadMib.value = typeof mib === "number" ? mib : undefined;
});

let counter = 0;

function change(id: number, patch: Partial<Upload> | undefined) {
  uploads.value = patch
    ? uploads.value.map((u) => (u.id === id ? { ...u, ...patch } : u))
    : uploads.value.filter((u) => u.id !== id);
}

export function dismissUpload(id: number) {
  change(id, undefined);
}

/** Uploads `file`; resolves with its URL (`/user_uploads/...`), or undefined when it failed. */
export function uploadFile(file: File): Promise<string | undefined> {
  const id = ++counter;
  const name = file.name || "pasted-image.png";
  const max = maxUploadMib.value;
  if (max !== undefined && file.size > max * 1024 * 1024) {
    uploads.value = [
      ...uploads.value,
      {
        id,
        name,
        percent: 0,
        error:
          max === 0
            ? t("File and image uploads have been disabled for this organization.")
            : t("File {name} exceeds maximum upload size of {size} MiB.", { name, size: max }),
      },
    ];
    return Promise.resolve(undefined);
  }
  uploads.value = [...uploads.value, { id, name, percent: 0 }];
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/json/user_uploads");
    xhr.setRequestHeader("X-CSRFToken", csrfToken);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) change(id, { percent: Math.round((e.loaded / e.total) * 100) });
    };
    const fail = (msg: string) => {
      change(id, { error: msg });
      resolve(undefined);
    };
    xhr.onerror = () => fail(t("Could not reach the server."));
    xhr.onload = () => {
      let body: { result?: string; msg?: string; url?: string; uri?: string } = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        // not JSON: an error page (a proxy's size limit)
      }
      const url = body.url ?? body.uri;
      if (xhr.status === 200 && url) {
        change(id, undefined);
        resolve(url);
      } else if (xhr.status === 413) fail(t("File too large: {name}", { name }));
      else fail(body.msg || t("Could not upload {name}.", { name }));
    };
    const form = new FormData();
    form.append("file", file, name);
    xhr.send(form);
  });
}

/** Zulip's link to an upload: `[name](/user_uploads/...)`. */
export function uploadLink(name: string, url: string): string {
  return `[${name.replace(/[[\]]/g, "")}](${url})`;
}

// A click on an image of a message opens it in the lightbox (Zulip's lightbox.ts): the server's
// `img.inline-image` (Markdown images) and Zulip's `.message_inline_image` previews.
document.addEventListener("click", (e) => {
  if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
  const target = e.target as Element | null;
  const img = target?.closest?.(
    "img.inline-image, .message_inline_image:not(.message_inline_video) img",
  );
  if (!(img instanceof HTMLImageElement) || !img.closest("[role=feed]")) return;
  e.preventDefault();
  const link = img.closest("a");
  // The full image: the original (a thumbnail's `data-original-src`), or where its link points.
  const src = img.dataset.originalSrc || link?.href || img.src;
  const file = decodeURIComponent(new URL(src, location.href).pathname.split("/").pop() ?? "");
  const name = img.getAttribute("title") || img.getAttribute("alt") || file || t("Image");
  void import("../ui/Lightbox.tsx").then((m) =>
    m.openLightbox({ src, name, preview: img.currentSrc || img.src }),
  );
});
