/** The User profile page (UserProfile): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function UserProfilePage(_: PageProps) {
  return (
    <section class="page" aria-label={t("User profile")}>
      <h1>{t("User profile")}</h1>
    </section>
  );
}
