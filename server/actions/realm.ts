/**
 * Changing organization settings (zerver/actions/realm_settings.py do_set_realm_property):
 * the whole request is checked first, then every change is written in one transaction and
 * announced to the organization's users after commit.
 */
import type { Prisma } from "../db.ts";
import type { RequestContext } from "../context.ts";
import { JsonableError } from "../errors.ts";
import { OFFERED_REALM_SETTINGS, settingChangeEvent, settingColumn } from "../lib/group-settings.ts";
import { checkGroupSettingUpdate, deleteAnonymousGroups, type GroupSettingValue } from "../lib/user-groups.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import { fakeEmailDomain } from "../lib/realms.ts";
import { activeUserIds, EmailVisibility } from "../lib/users.ts";
import type { ZulipEvent } from "../events.ts";
import { inTransaction } from "./transaction.ts";

type TimeLimit = "unlimited" | number | null;

export interface RealmChanges {
  name?: string;
  description?: string;
  allow_message_editing?: boolean;
  message_content_edit_limit_seconds?: TimeLimit;
  move_messages_within_stream_limit_seconds?: TimeLimit;
  move_messages_between_streams_limit_seconds?: TimeLimit;
  /** The group settings this server offers (lib/group-settings.ts OFFERED_REALM_SETTINGS). */
  can_resolve_topics_group?: GroupSettingUpdate;
  can_move_messages_between_channels_group?: GroupSettingUpdate;
  can_move_messages_between_topics_group?: GroupSettingUpdate;
  can_mention_many_users_group?: GroupSettingUpdate;
  moderation_request_channel_id?: number;
  topics_policy?: "allow_empty_topic" | "disable_empty_topic";
  empty_topic_display_name?: string;
  enable_spectator_access?: boolean;
  email_address_visibility?: number;
}

const TIME_LIMITS = {
  message_content_edit_limit_seconds: "messageContentEditLimitSeconds",
  move_messages_within_stream_limit_seconds: "moveMessagesWithinStreamLimitSeconds",
  move_messages_between_streams_limit_seconds: "moveMessagesBetweenStreamsLimitSeconds",
} as const;

type GroupSettingUpdate = { new: GroupSettingValue; old?: GroupSettingValue };

/** Settings announced together in one `update_dict` event, as Zulip groups them. */
const SIMPLE = {
  allow_message_editing: "allowMessageEditing",
  topics_policy: "topicsPolicy",
  enable_spectator_access: "enableSpectatorAccess",
  email_address_visibility: "emailAddressVisibility",
} as const;

export async function doUpdateRealm(ctx: RequestContext, changes: RealmChanges): Promise<Record<string, unknown>> {
  const realm = ctx.realm;
  const data: Prisma.RealmUncheckedUpdateInput = {};
  const echoed: Record<string, unknown> = {};

  if (changes.name !== undefined && changes.name.trim() !== realm.name) {
    if (changes.name.trim() === "") throw new JsonableError("Organization name can't be empty.");
    data.name = changes.name.trim();
    echoed.name = "updated";
  }
  if (changes.description !== undefined && changes.description !== realm.description) {
    data.description = changes.description;
    data.renderedDescription = changes.description ? renderMarkdown(changes.description).html : "";
    echoed.description = "updated";
  }
  if (changes.empty_topic_display_name !== undefined && changes.empty_topic_display_name.trim() !== realm.emptyTopicDisplayName) {
    data.emptyTopicDisplayName = changes.empty_topic_display_name.trim();
    echoed.empty_topic_display_name = "updated";
  }
  for (const [setting, field] of Object.entries(TIME_LIMITS)) {
    const value = changes[setting as keyof typeof TIME_LIMITS];
    if (value === undefined) continue;
    const limit = value === "unlimited" || value === null ? null : value;
    if (limit !== null && limit < 1) throw new JsonableError(`Bad value for '${setting}': ${value}`);
    if (limit !== realm[field]) {
      data[field] = limit;
      echoed[setting] = limit;
    }
  }
  for (const [setting, field] of Object.entries(SIMPLE)) {
    const value = changes[setting as keyof typeof SIMPLE];
    if (value !== undefined && value !== realm[field]) {
      (data as Record<string, unknown>)[field] = value;
      echoed[setting] = value;
    }
  }
  if (changes.moderation_request_channel_id !== undefined) {
    const id = changes.moderation_request_channel_id === -1 ? null : changes.moderation_request_channel_id;
    if (id !== null) {
      const stream = await ctx.db.stream.findFirst({ where: { realmId: realm.id, id, isArchived: false }, select: { id: true, inviteOnly: true } });
      if (!stream) throw new JsonableError("Invalid channel ID");
      // Reports quote messages from private places: only a private channel may receive them.
      if (!stream.inviteOnly) throw new JsonableError("Moderation request channel must be private.");
    }
    if (id !== realm.moderationRequestChannelId) {
      data.moderationRequestChannelId = id;
      echoed.moderation_request_channel_id = id ?? -1;
    }
  }

  // Only settings the API declares: anything else a client sends is reported as ignored.
  const groupUpdates = OFFERED_REALM_SETTINGS.flatMap((setting) => {
    const update = (changes as Record<string, GroupSettingUpdate | undefined>)[setting.name];
    return update ? [{ setting, update }] : [];
  });

  return inTransaction(ctx, realm.id, async (tx, events) => {
    const replaced: number[] = [];
    const groupEvents: object[] = [];
    if (groupUpdates.length) {
      // The current values come from the row, locked: concurrent updates of a setting then take
      // turns, so an anonymous group is never updated by one and replaced by the other.
      const columns = groupUpdates.map(({ setting }) => `"${settingColumn(setting)}" AS "${setting.field}"`).join(", ");
      const [current] = await tx.$queryRawUnsafe<Record<string, number>[]>(`SELECT ${columns} FROM realm WHERE id = $1 FOR UPDATE`, realm.id);
      for (const { setting, update } of groupUpdates) {
        const change = await checkGroupSettingUpdate(tx, events, realm.id, setting, current![setting.field]!, update);
        if (!change) continue;
        (data as Record<string, unknown>)[setting.field] = change.groupId;
        if (change.replacedGroupId !== null) replaced.push(change.replacedGroupId);
        echoed[setting.name] = change.value;
        groupEvents.push(settingChangeEvent(setting, realm, change.value));
      }
    }
    if (Object.keys(echoed).length === 0) return {};
    events.invalidate(`realm:${realm.id}`);
    await tx.realm.update({ where: { id: realm.id }, data });
    // Only now does no row reference the anonymous groups a named group replaced.
    await deleteAnonymousGroups(tx, replaced);
    const recipients = await activeUserIds(tx, realm.id);
    if (echoed.email_address_visibility !== undefined) {
      // The organization-wide policy applies to every user, and their API emails follow it.
      // One statement for every user; the new email is apiEmailFor's rule: the real address for
      // bots and under "everyone", else the dummy user<id>@<domain>.
      const visibility = echoed.email_address_visibility as number;
      const domain = await fakeEmailDomain(tx, realm, ctx.config);
      const changed = await tx.$queryRaw<{ id: number; old_email: string; new_email: string }[]>`
        WITH old AS (SELECT id, email FROM user_profile WHERE realm_id = ${realm.id} FOR UPDATE)
        UPDATE user_profile u SET email_address_visibility = ${visibility},
          email = CASE WHEN u.is_bot OR ${visibility}::int = ${EmailVisibility.EVERYONE}::int THEN u.delivery_email ELSE 'user' || u.id || '@' || ${domain} END
        FROM old WHERE u.id = old.id
        RETURNING u.id, old.email AS old_email, u.email AS new_email`;
      events.invalidate(`users:${realm.id}`);
      for (const u of changed.sort((a, b) => a.id - b.id))
        if (u.new_email !== u.old_email) events.add({ type: "realm_user", op: "update", person: { user_id: u.id, new_email: u.new_email } }, recipients);
    }
    await tx.realmAuditLog.create({
      data: { realmId: realm.id, actingUserId: ctx.user.id, eventType: 201, eventTime: ctx.now(), extraData: echoed as Prisma.InputJsonValue },
    });
    for (const [property, value] of Object.entries(echoed)) {
      if (groupUpdates.some(({ setting }) => setting.name === property)) continue;
      const eventValue = value === "updated" ? changes[property as "name"] : value;
      events.add({ type: "realm", op: "update_dict", property: "default", data: { [property]: eventValue } }, recipients);
    }
    for (const event of groupEvents) events.add(event as ZulipEvent, recipients);
    return echoed;
  });
}
