/**
 * The organization settings (Zulip's `#organization/<section>`): a list of sections on the left,
 * the section's form on the right. Thin forms over the API's administration operations; members
 * see the profile and settings read only, and not the administrators' sections.
 */
import type { FunctionComponent } from "preact";
import { t } from "../i18n.ts";
import { myRole } from "../state/org.ts";
import type { PageProps } from "./PageHost.tsx";
import "./Organization.css";
import { ChannelsSection } from "./organization/Channels.tsx";
import { EmojiSection } from "./organization/Emoji.tsx";
import { GroupsSection } from "./organization/Groups.tsx";
import { InvitesSection } from "./organization/Invites.tsx";
import { LinkifiersSection } from "./organization/Linkifiers.tsx";
import { PermissionsSection } from "./organization/Permissions.tsx";
import { ProfileSection } from "./organization/Profile.tsx";
import { ProfileFieldsSection } from "./organization/ProfileFields.tsx";
import { SettingsSection } from "./organization/Settings.tsx";
import { UsersSection } from "./organization/Users.tsx";

interface SectionDef {
  key: string;
  label: () => string;
  adminOnly: boolean;
  Component: FunctionComponent<{ section: string }>;
  /** Other fragments this section answers to (its tabs). */
  also?: readonly string[];
}

const SECTIONS: readonly SectionDef[] = [
  {
    key: "organization-profile",
    label: () => t("Organization profile"),
    adminOnly: false,
    Component: ProfileSection,
  },
  {
    key: "organization-settings",
    label: () => t("Organization settings"),
    adminOnly: false,
    Component: SettingsSection,
  },
  {
    key: "organization-permissions",
    label: () => t("Organization permissions"),
    adminOnly: false,
    Component: PermissionsSection,
  },
  {
    key: "users",
    label: () => t("Users"),
    adminOnly: true,
    Component: UsersSection,
    also: ["deactivated"],
  },
  { key: "invites", label: () => t("Invitations"), adminOnly: true, Component: InvitesSection },
  { key: "channels", label: () => t("Channels"), adminOnly: true, Component: ChannelsSection },
  { key: "groups", label: () => t("User groups"), adminOnly: true, Component: GroupsSection },
  {
    key: "emoji-settings",
    label: () => t("Custom emoji"),
    adminOnly: false,
    Component: EmojiSection,
  },
  {
    key: "linkifier-settings",
    label: () => t("Linkifiers"),
    adminOnly: false,
    Component: LinkifiersSection,
  },
  {
    key: "profile-field-settings",
    label: () => t("Custom profile fields"),
    adminOnly: false,
    Component: ProfileFieldsSection,
  },
];

export default function OrganizationPage({ section }: PageProps) {
  const admin = myRole.value.isAdmin;
  const shown = SECTIONS.filter((s) => admin || !s.adminOnly);
  const current = shown.find((s) => s.key === section || s.also?.includes(section)) ?? shown[0]!;
  const Current = current.Component;
  return (
    <div class="page org">
      <h1>{t("Organization settings")}</h1>
      <div class="org-body">
        <nav class="org-nav" aria-label={t("Organization settings sections")}>
          <ul>
            {shown.map((s) => (
              <li key={s.key}>
                <a
                  href={`#organization/${s.key}`}
                  aria-current={s === current ? "page" : undefined}
                >
                  {s.label()}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="org-content">
          <Current section={section} />
        </div>
      </div>
    </div>
  );
}
