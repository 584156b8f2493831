/** The Drafts page (Drafts): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function DraftsPage(_: PageProps) {
  return (
    <section class="page" aria-label={t("Drafts")}>
      <h1>{t("Drafts")}</h1>
    </section>
  );
}
