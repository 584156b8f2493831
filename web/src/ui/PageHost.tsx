/**
 * The page the fragment names (state/view.ts), each loaded on first use from a chunk of its own,
 * so that the first screen's JavaScript stays small (web/build.mjs splits at each import()).
 * A page module's default export takes the fragment's section (`profile` in `#settings/profile`).
 */
import type { FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n.ts";
import type { Page, PageName } from "../state/view.ts";

export type PageProps = { section: string };
type PageModule = { default: FunctionComponent<PageProps> };

const LOADERS: Record<PageName, () => Promise<PageModule>> = {
  inbox: () => import("./Inbox.tsx"),
  recent: () => import("./Recent.tsx"),
  channels: () => import("./ChannelBrowser.tsx"),
  drafts: () => import("./Drafts.tsx"),
  scheduled: () => import("./Scheduled.tsx"),
  settings: () => import("./Settings.tsx"),
  organization: () => import("./Organization.tsx"),
  user: () => import("./UserProfile.tsx"),
};

const loaded = new Map<PageName, FunctionComponent<PageProps>>();

/** Starts loading a page's chunk (on hover of its link, or once the first screen is drawn). */
export function preloadPage(name: PageName): Promise<void> {
  if (loaded.has(name)) return Promise.resolve();
  return LOADERS[name]().then((m) => void loaded.set(name, m.default));
}

export function PageHost({ page }: { page: Page }) {
  const [, setTick] = useState(0);
  const [failed, setFailed] = useState(false);
  const Component = loaded.get(page.name);
  useEffect(() => {
    if (Component) return;
    let live = true;
    preloadPage(page.name).then(
      () => live && setTick((x) => x + 1),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [page.name, Component]);
  if (failed)
    return (
      <p class="page-error" role="alert">
        {t("Could not load this view. Reload the page to try again.")}
      </p>
    );
  if (!Component) return <p class="page-loading">{t("Loading…")}</p>;
  return <Component section={page.section} />;
}
