/**
 * Organization permissions (`#organization/organization-permissions`): who may do what, each a
 * group setting shown as a select of the system groups; a change is saved at once.
 */
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole, realmSettings, type GroupSettingValue } from "../../state/org.ts";
import { AdminOnly, GroupSelect, Section, StatusText, useStatus } from "./common.tsx";

/** The settings shown, by their PATCH /realm names, with Zulip's labels. */
const PERMISSIONS = [
  { key: "can_add_custom_emoji_group", label: () => t("Who can add custom emoji") },
  { key: "can_delete_own_message_group", label: () => t("Who can delete their own messages") },
  { key: "can_delete_any_message_group", label: () => t("Who can delete any message") },
  {
    key: "can_move_messages_between_topics_group",
    label: () => t("Who can move messages to another topic"),
  },
  {
    key: "can_move_messages_between_channels_group",
    label: () => t("Who can move messages to another channel"),
  },
  { key: "can_resolve_topics_group", label: () => t("Who can resolve topics") },
  {
    key: "can_mention_many_users_group",
    label: () => t("Who can notify a large number of users with a wildcard mention"),
  },
] as const;

export function PermissionsSection() {
  const admin = myRole.value.isAdmin;
  const [status, run] = useStatus();
  return (
    <Section title={t("Organization permissions")}>
      {!admin && <AdminOnly />}
      <div class="org-form">
        {PERMISSIONS.map((p) => (
          <GroupSelect
            key={p.key}
            label={p.label()}
            value={realmSettings.value[p.key] as GroupSettingValue | undefined}
            disabled={!admin}
            onChange={(id) =>
              void run(() => call(api.PATCH("/realm", { body: { [p.key]: { new: id } } })))
            }
          />
        ))}
        <StatusText status={status} />
      </div>
    </Section>
  );
}
