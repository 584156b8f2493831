/**
 * The initial state POST /register returns (zerver/lib/events.py fetch_initial_state_data),
 * section by section, each fetched only when the client asked for its event type.
 */
import { unixSeconds } from "./time.ts";
import type { RequestContext } from "../context.ts";
import type { Db } from "../db.ts";
import { emptyTopicDisplayName, MAX_MESSAGE_LENGTH, MAX_TOPIC_NAME_LENGTH } from "./topics.ts";
import { OFFERED_REALM_SETTINGS } from "./group-settings.ts";
import { groupSettingValues, userGroupDicts } from "./user-groups.ts";
import {
  isModeratorOrAbove,
  isRealmAdmin,
  profileDataOf,
  realmUsers,
  Role,
  toApiUser,
} from "./users.ts";
import { customProfileFieldTypes, realmFields } from "./custom-profile-fields.ts";
import { RecipientType } from "./recipients.ts";
import { listScheduledMessages } from "./scheduled-messages.ts";
import { gatherSubscriptions, type IncludeSubscribers } from "./subscriptions.ts";
import { STREAM_RECORD_SELECT, toChannelDicts, visibleChannels } from "./channels.ts";
import { listChannelFolders } from "./channel-folders.ts";
import { ownedBotDicts } from "./bots.ts";
import { realmUserStatuses } from "./user-status.ts";
import { presenceResponse, PRESENCE_REGISTER_SETTINGS } from "./presence.ts";

export type { IncludeSubscribers };
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../version.ts";

/** Limits and timings clients are told (Conventions 7; zerver/lib/events.py). */
export const LIMITS = {
  max_message_length: MAX_MESSAGE_LENGTH,
  max_topic_length: MAX_TOPIC_NAME_LENGTH,
  max_stream_name_length: 60,
  max_stream_description_length: 1024,
  max_channel_folder_name_length: 60,
  max_channel_folder_description_length: 1024,
  server_typing_started_wait_period_milliseconds: 10000,
  server_typing_stopped_wait_period_milliseconds: 5000,
  server_typing_started_expiry_period_milliseconds: 15000,
};

/** Realm.REPORT_MESSAGE_REASONS, in Zulip's order (feature level 435). */
export const REPORT_MESSAGE_TYPES = [
  { key: "spam", name: "Spam" },
  { key: "harassment", name: "Harassment" },
  { key: "inappropriate", name: "Inappropriate content" },
  { key: "norms", name: "Violates community norms" },
  { key: "other", name: "Other reason" },
];

export async function fetchInitialState(
  ctx: RequestContext,
  types: string[] | null,
  clientGravatar: boolean,
  includeSubscribers: IncludeSubscribers = false,
  presence: { slim: boolean } = { slim: false },
) {
  const want = (t: string) => types === null || types.includes(t);
  const { realm, user, db } = ctx;
  const state: Record<string, unknown> = {
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
    ...LIMITS,
    realm_empty_topic_display_name: emptyTopicDisplayName(realm),
    server_report_message_types: REPORT_MESSAGE_TYPES,
  };
  if (want("realm")) {
    // Every offered group setting's value in one statement (named ids, anonymous groups' members).
    const values = await groupSettingValues(
      db,
      OFFERED_REALM_SETTINGS.map((s) => realm[s.field] as number),
    );
    for (const setting of OFFERED_REALM_SETTINGS)
      state[`realm_${setting.name}`] = values.get(realm[setting.field] as number);
    Object.assign(state, {
      max_file_upload_size_mib: ctx.config.maxFileUploadSizeMib,
      realm_name: realm.name,
      realm_description: realm.description,
      realm_allow_message_editing: realm.allowMessageEditing,
      realm_message_content_edit_limit_seconds: realm.messageContentEditLimitSeconds,
      realm_move_messages_within_stream_limit_seconds: realm.moveMessagesWithinStreamLimitSeconds,
      realm_move_messages_between_streams_limit_seconds:
        realm.moveMessagesBetweenStreamsLimitSeconds,
      realm_moderation_request_channel_id: realm.moderationRequestChannelId ?? -1,
      realm_topics_policy: realm.topicsPolicy,
      realm_enable_spectator_access: realm.enableSpectatorAccess,
    });
  }
  if (want("realm_user")) {
    // Zulip's register includes every human's custom profile values (in the same statement).
    const users = await realmUsers(db, realm.id, { activeOnly: true, profileData: true });
    const profileData = profileDataOf(users);
    Object.assign(state, {
      realm_users: users.map((u) => toApiUser(u, user, { clientGravatar, profileData })),
      user_id: user.id,
      email: user.email,
      delivery_email: user.deliveryEmail,
      full_name: user.fullName,
      is_admin: isRealmAdmin(user),
      is_owner: user.role === Role.OWNER,
      is_moderator: isModeratorOrAbove(user),
      is_guest: user.role === Role.GUEST,
    });
  }
  if (want("realm_bot")) state.realm_bots = await ownedBotDicts(db, user);
  if (want("message")) {
    const last = await db.userMessage.findFirst({
      where: { userProfileId: user.id },
      orderBy: { messageId: "desc" },
      select: { messageId: true },
    });
    state.max_message_id = last?.messageId ?? -1;
  }
  if (want("subscription"))
    Object.assign(state, await gatherSubscriptions(ctx, includeSubscribers));
  if (want("stream")) state.streams = await visibleChannels(ctx);
  if (want("user_group"))
    state.realm_user_groups = await userGroupDicts(db, realm.id, { includeDeactivated: false });
  if (want("channel_folder")) state.channel_folders = await listChannelFolders(db, realm.id, true);
  if (want("custom_profile_fields")) {
    state.custom_profile_fields = await realmFields(db, realm.id);
    state.custom_profile_field_types = customProfileFieldTypes();
  }
  if (want("default_streams"))
    state.realm_default_streams = await defaultChannelDicts(db, realm.id);
  if (want("drafts")) {
    const drafts = await db.draft.findMany({
      where: { userProfileId: user.id },
      include: { recipient: true },
      orderBy: { lastEditTime: "desc" },
    });
    const groupIds = drafts
      .filter((d) => d.recipient?.type === RecipientType.DIRECT_MESSAGE_GROUP)
      .map((d) => d.recipientId!);
    const groupSubs = groupIds.length
      ? await db.subscription.findMany({
          where: { recipientId: { in: groupIds } },
          select: { recipientId: true, userProfileId: true },
        })
      : [];
    const toOf = (d: (typeof drafts)[number]): number[] => {
      if (d.recipient === null) return [];
      if (d.recipient.type === RecipientType.DIRECT_MESSAGE_GROUP)
        return groupSubs
          .filter((s) => s.recipientId === d.recipientId && s.userProfileId !== user.id)
          .map((s) => s.userProfileId);
      return [d.recipient.typeId];
    };
    state.drafts = drafts.map((d) => ({
      id: d.id,
      type:
        d.recipient === null
          ? ""
          : d.recipient.type === RecipientType.STREAM
            ? "stream"
            : "private",
      to: toOf(d),
      topic: d.topic,
      content: d.content,
      timestamp: unixSeconds(d.lastEditTime),
    }));
  }
  if (want("user_topic")) {
    const topics = await db.userTopic.findMany({ where: { userProfileId: user.id } });
    state.user_topics = topics.map((t) => ({
      stream_id: t.streamId,
      topic_name: t.topicName,
      last_updated: unixSeconds(t.lastUpdated),
      visibility_policy: t.visibilityPolicy,
    }));
  }
  if (want("scheduled_messages")) state.scheduled_messages = await listScheduledMessages(db, user);
  if (want("has_videoprovider_token")) {
    state.has_videoprovider_token =
      (await db.videoCallProviderToken.count({ where: { userProfileId: user.id } })) > 0;
  }
  if (want("user_status")) state.user_status = await realmUserStatuses(db, realm.id);
  if (want("realm")) Object.assign(state, PRESENCE_REGISTER_SETTINGS);
  if (want("presence"))
    Object.assign(state, await presenceResponse(db, realm, ctx.now(), { slim: presence.slim }));
  return state;
}

/** The organization's default channels in API form (register's realm_default_streams, and the default_streams event). */
export async function defaultChannelDicts(db: Db, realmId: number) {
  const rows = await db.stream.findMany({
    where: { realmId, defaultStreams: { some: {} } },
    select: STREAM_RECORD_SELECT,
    orderBy: { id: "asc" },
  });
  return toChannelDicts(db, rows);
}
