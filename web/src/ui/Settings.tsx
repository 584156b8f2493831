/** The Settings page (Settings): to be built (issue 33). */
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";

export default function SettingsPage(_: PageProps) {
  return (
    <section class="page" aria-label={t("Settings")}>
      <h1>{t("Settings")}</h1>
    </section>
  );
}
