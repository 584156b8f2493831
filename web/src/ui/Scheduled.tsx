/** The Scheduled messages page (Scheduled): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function ScheduledPage(_: PageProps) {
  return (
    <section class="page" aria-label={t("Scheduled messages")}>
      <h1>{t("Scheduled messages")}</h1>
    </section>
  );
}
