/**
 * Personal settings (Zulip's `#settings/<section>`): the list of sections on the left, as links,
 * and the section the fragment names on the right. Each section is a file of ui/settings/; every
 * control saves at once (PATCH /settings) and shows the value the `user_settings` events carry,
 * so a change made in another tab shows here too.
 */
import type { FunctionComponent } from "preact";
import { t } from "../i18n.ts";
import type { PageProps } from "./PageHost.tsx";
import { AccountSection } from "./settings/Account.tsx";
import { AlertWordsSection } from "./settings/AlertWords.tsx";
import { MutedUsersSection } from "./settings/MutedUsers.tsx";
import { NotificationsSection } from "./settings/Notifications.tsx";
import { PreferencesSection } from "./settings/Preferences.tsx";
import { ProfileSection } from "./settings/Profile.tsx";
import "./Settings.css";

interface SectionDef {
  key: string;
  title: () => string;
  Component: FunctionComponent;
}

const SECTIONS: readonly SectionDef[] = [
  { key: "profile", title: () => t("Profile"), Component: ProfileSection },
  {
    key: "account-and-privacy",
    title: () => t("Account & privacy"),
    Component: AccountSection,
  },
  { key: "preferences", title: () => t("Preferences"), Component: PreferencesSection },
  { key: "notifications", title: () => t("Notifications"), Component: NotificationsSection },
  { key: "muted-users", title: () => t("Muted users"), Component: MutedUsersSection },
  { key: "alert-words", title: () => t("Alert words"), Component: AlertWordsSection },
];

export default function SettingsPage({ section }: PageProps) {
  const current = SECTIONS.find((s) => s.key === section) ?? SECTIONS[0]!;
  const { Component } = current;
  return (
    <section class="page settings-page" aria-label={t("Settings")}>
      <nav class="settings-nav" aria-label={t("Settings sections")}>
        <h1>{t("Personal settings")}</h1>
        <ul>
          {SECTIONS.map((s) => (
            <li key={s.key}>
              <a href={`#settings/${s.key}`} aria-current={s === current ? "page" : undefined}>
                {s.title()}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="settings-body" role="region" aria-label={current.title()}>
        <h2 class="settings-title">{current.title()}</h2>
        <Component key={current.key} />
      </div>
    </section>
  );
}
