/** The Channels page (ChannelBrowser): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function ChannelBrowserPage(_: PageProps) {
  return (
    <section class="page" aria-label={t("Channels")}>
      <h1>{t("Channels")}</h1>
    </section>
  );
}
