/**
 * Changing organization settings (zerver/actions/realm_settings.py do_set_realm_property):
 * the whole request is checked first, then every change is written in one transaction and
 * announced to the organization's users after commit.
 */
import type { Prisma, Realm } from "../db.ts";
import type { RequestContext } from "../context.ts";
import { JsonableError } from "../errors.ts";
import { checkGroupSettingUpdate, groupSettingValue, type GroupSettingValue, type SettingRules } from "../lib/user-groups.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import { fakeEmailDomain } from "../lib/realms.ts";
import { apiEmailFor } from "../lib/users.ts";
import { inTransaction } from "./transaction.ts";

type TimeLimit = "unlimited" | number | null;

export interface RealmChanges {
  name?: string;
  description?: string;
  allow_message_editing?: boolean;
  message_content_edit_limit_seconds?: TimeLimit;
  move_messages_within_stream_limit_seconds?: TimeLimit;
  move_messages_between_streams_limit_seconds?: TimeLimit;
  can_resolve_topics_group?: { new: GroupSettingValue; old?: GroupSettingValue };
  can_move_messages_between_channels_group?: { new: GroupSettingValue; old?: GroupSettingValue };
  can_move_messages_between_topics_group?: { new: GroupSettingValue; old?: GroupSettingValue };
  can_mention_many_users_group?: { new: GroupSettingValue; old?: GroupSettingValue };
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

const GROUP_SETTINGS: Record<string, { field: keyof Realm & string; rules: SettingRules }> = {
  can_resolve_topics_group: { field: "canResolveTopicsGroupId", rules: { allowEveryone: true } },
  can_move_messages_between_channels_group: { field: "canMoveMessagesBetweenChannelsGroupId", rules: { allowEveryone: true } },
  can_move_messages_between_topics_group: { field: "canMoveMessagesBetweenTopicsGroupId", rules: { allowEveryone: true } },
  can_mention_many_users_group: { field: "canMentionManyUsersGroupId", rules: { allowEveryone: true } },
};

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
      const stream = await ctx.db.stream.findFirst({ where: { realmId: realm.id, id, isArchived: false }, select: { id: true } });
      if (!stream) throw new JsonableError("Invalid channel ID");
    }
    if (id !== realm.moderationRequestChannelId) {
      data.moderationRequestChannelId = id;
      echoed.moderation_request_channel_id = id ?? -1;
    }
  }

  return inTransaction(ctx, realm.id, async (tx, events) => {
    for (const [setting, { field, rules }] of Object.entries(GROUP_SETTINGS)) {
      const update = changes[setting as keyof RealmChanges] as RealmChanges["can_resolve_topics_group"];
      if (!update) continue;
      const current = realm[field] as number;
      const groupId = await checkGroupSettingUpdate(tx, realm.id, setting, current, update, rules);
      if (groupId !== current) {
        (data as Record<string, unknown>)[field] = groupId;
        echoed[setting] = await groupSettingValue(tx, groupId);
      }
    }
    if (Object.keys(echoed).length === 0) return {};
    await tx.realm.update({ where: { id: realm.id }, data });
    const recipients = (await tx.userProfile.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true } })).map((u) => u.id);
    if (echoed.email_address_visibility !== undefined) {
      // The organization-wide policy applies to every user, and their API emails follow it.
      const domain = await fakeEmailDomain(tx, realm, ctx.config);
      const users = await tx.userProfile.findMany({ where: { realmId: realm.id }, select: { id: true, deliveryEmail: true, isBot: true, email: true } });
      for (const u of users) {
        const email = apiEmailFor({ ...u, emailAddressVisibility: echoed.email_address_visibility as number }, domain);
        await tx.userProfile.update({ where: { id: u.id }, data: { emailAddressVisibility: echoed.email_address_visibility as number, email } });
        if (email !== u.email) events.add({ type: "realm_user", op: "update", person: { user_id: u.id, new_email: email } }, recipients);
      }
    }
    await tx.realmAuditLog.create({
      data: { realmId: realm.id, actingUserId: ctx.user.id, eventType: 201, eventTime: ctx.now(), extraData: echoed as Prisma.InputJsonValue },
    });
    for (const [property, value] of Object.entries(echoed)) {
      const eventValue = value === "updated" ? changes[property as "name"] : value;
      events.add({ type: "realm", op: "update_dict", property: "default", data: { [property]: eventValue } }, recipients);
    }
    return echoed;
  });
}
