/** The Inbox page (Inbox): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function InboxPage(_: PageProps) {
  return (
    <section class="page" aria-label={t("Inbox")}>
      <h1>{t("Inbox")}</h1>
    </section>
  );
}
