/** The Recent conversations page (Recent): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function RecentPage(_: PageProps) {
  return (
    <section class="page" aria-label={t("Recent conversations")}>
      <h1>{t("Recent conversations")}</h1>
    </section>
  );
}
