/** The Organization settings page (Organization): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function OrganizationPage(_: PageProps) {
  return (
    <section class="page" aria-label={t("Organization settings")}>
      <h1>{t("Organization settings")}</h1>
    </section>
  );
}
