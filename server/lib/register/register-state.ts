/**
 * The initial state POST /register returns (zerver/lib/events.py fetch_initial_state_data),
 * section by section, each fetched only when the client asked for its event type.
 */
import { oauthProviderId, WEBEX } from "../realm/video-calls.ts";
import {
  realmUserDefaults,
  userSettingsDefaultsState,
} from "../realm/realm-user-settings-defaults.ts";
import { unixSeconds } from "../time.ts";
import type { RequestContext } from "../../context.ts";
import {
  emptyTopicDisplayName,
  MAX_MESSAGE_LENGTH,
  MAX_TOPIC_NAME_LENGTH,
} from "../messages/topics.ts";
import { groupSettingValues, userGroupDicts } from "../groups/user-groups.ts";
import {
  avatarUrl,
  isModeratorOrAbove,
  isRealmAdmin,
  profileDataOf,
  realmUsers,
  Role,
  toApiUser,
} from "../users/users.ts";
import { customProfileFieldTypes, realmFields } from "../users/custom-profile-fields.ts";
import { listReminders } from "../messages/reminders.ts";
import { listScheduledMessages } from "../messages/scheduled-messages.ts";
import { gatherSubscriptions, type IncludeSubscribers } from "../channels/subscriptions.ts";
import { visibleChannels } from "../channels/channels.ts";
import { listChannelFolders } from "../channels/channel-folders.ts";
import { defaultChannelIds } from "../channels/default-streams.ts";
import { registerLinkifiers } from "../realm/linkifiers.ts";
import { ownedBotDicts } from "../users/bots.ts";
import { formatForViewer, userAccessSql, viewerAccess } from "../access/users.ts";
import { fakeEmailDomain } from "../realm/realm.ts";
import { realmUserStatuses } from "../users/user-status.ts";
import { userDevices } from "../push/push-devices.ts";
import { fillNotificationSettings, registerDefaults } from "./register-defaults.ts";
import {
  ALL_REALM_SETTINGS,
  mutedTopics,
  ownPermissions,
  realmDomains,
  realmEmojiDicts,
  realmSettingsState,
  recentPrivateConversations,
  starredMessageIds,
} from "./register-sections.ts";
import { unreadMessages } from "../messages/unread.ts";
import { userAlertWords } from "../users/alert-words.ts";
import { mutedUsers } from "../users/muted-users.ts";
import { registerDrafts } from "../messages/drafts.ts";
import { savedSnippetDicts } from "../users/saved-snippets.ts";
import { realmPlaygrounds } from "../realm/playgrounds.ts";
import { navigationViewDicts } from "../users/navigation-views.ts";
import { userSettingsState } from "../users/user-settings.ts";
import { presenceResponse, PRESENCE_REGISTER_SETTINGS } from "../users/presence.ts";

export type { IncludeSubscribers };
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../../version.ts";

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

/** The client capabilities that change the register state (POST /register `client_capabilities`). */
export type ClientCapabilities = Record<string, boolean | undefined>;

export async function fetchInitialState(
  ctx: RequestContext,
  types: string[] | null,
  clientGravatar: boolean,
  includeSubscribers: IncludeSubscribers = false,
  capabilities: ClientCapabilities = {},
  presence: { slim: boolean } = { slim: false },
) {
  const want = (t: string) => types === null || types.includes(t);
  const { realm, user, db } = ctx;
  // Clients without `empty_topic_name` see the empty topic under the realm's display name.
  const emptyTopicName = capabilities.empty_topic_name ? null : emptyTopicDisplayName(realm);
  const state: Record<string, unknown> = {
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
    ...LIMITS,
    realm_empty_topic_display_name: emptyTopicDisplayName(realm),
    server_report_message_types: REPORT_MESSAGE_TYPES,
  };
  // Zulip's documented default of every field asked for; the sections below overwrite them.
  const defaults = registerDefaults();
  for (const [type, fields] of Object.entries(defaults))
    if (want(type)) Object.assign(state, fields);
  // Personal settings, from the settings table (lib/users/user-settings.ts); `settings` gives the
  // values null channel notification settings inherit.
  const settings = userSettingsState(user, (t) => t === "user_settings", true)
    .user_settings as Parameters<typeof fillNotificationSettings>[1];
  Object.assign(state, userSettingsState(user, want, capabilities.user_settings_object === true));
  if (want("realm")) Object.assign(state, PRESENCE_REGISTER_SETTINGS);

  // Every section starts at once, each on a pooled connection, and writes its fields when its
  // statements answer: the register takes as long as its slowest section plus the formatting,
  // not the sum of ~40 statements. They start slowest first, so that the pool serves them first:
  // unread_msgs (a few hundred milliseconds for a reader with 50,000 unread), then the users,
  // channels and groups, which are large. Each writes fields no other section writes.
  const sections: Promise<void>[] = [];
  const section = <T>(asked: boolean, read: () => T | Promise<T>, write: (value: T) => void) => {
    if (asked) sections.push((async () => write(await read()))());
  };
  // unread_msgs is kept current by message events and flag updates together (events.py).
  section(
    want("message") && want("update_message_flags"),
    () => unreadMessages(db, user.id, { emptyTopicName }),
    (unread) => (state.unread_msgs = unread),
  );
  section(
    want("realm_user"),
    () => realmUserState(ctx, clientGravatar, capabilities),
    (fields) => Object.assign(state, fields),
  );
  const archived = capabilities.archived_channels === true;
  section(
    want("subscription"),
    () => gatherSubscriptions(ctx, includeSubscribers),
    (lists) => {
      for (const list of Object.values(lists)) {
        // Without `archived_channels`, archived channels are left out (Zulip's default).
        if (!archived) list.splice(0, list.length, ...list.filter((s) => s.is_archived !== true));
        if (!capabilities.notification_settings_null) fillNotificationSettings(list, settings);
      }
      Object.assign(state, lists);
    },
  );
  section(
    want("stream"),
    () => visibleChannels(ctx, { includeArchived: archived }),
    (streams) => (state.streams = streams),
  );
  // Zulip's clients ask for `realm_user_groups`; `user_group` is the event type that keeps it.
  section(
    want("realm_user_groups") || want("user_group"),
    () =>
      userGroupDicts(db, realm.id, {
        includeDeactivated: capabilities.include_deactivated_groups === true,
      }),
    (groups) => (state.realm_user_groups = groups),
  );
  section(
    want("realm"),
    () => realmState(ctx),
    (fields) => Object.assign(state, fields),
  );
  // The stored defaults over the static ones (which add the choices and the settings without one).
  section(
    want("realm_user_settings_defaults"),
    () => realmUserDefaults(db, realm.id),
    (stored) =>
      (state.realm_user_settings_defaults = {
        ...(state.realm_user_settings_defaults as object),
        ...userSettingsDefaultsState(stored),
      }),
  );
  section(
    want("realm_bot"),
    () => ownedBotDicts(db, user),
    (bots) => (state.realm_bots = bots),
  );
  section(
    want("message"),
    () =>
      db.userMessage.findFirst({
        where: { userProfileId: user.id },
        orderBy: { messageId: "desc" },
        select: { messageId: true },
      }),
    (last) => (state.max_message_id = last?.messageId ?? -1),
  );
  const list = <T>(type: string, field: string, read: () => T | Promise<T>) =>
    section(want(type), read, (value) => (state[field] = value));
  list("starred_messages", "starred_messages", () => starredMessageIds(db, user.id));
  list("recent_private_conversations", "recent_private_conversations", () =>
    recentPrivateConversations(db, user.id),
  );
  list("muted_users", "muted_users", () => mutedUsers(db, user.id));
  list("muted_topics", "muted_topics", () => mutedTopics(db, user.id, emptyTopicName));
  list("alert_words", "alert_words", () => userAlertWords(db, user.id));
  list("realm_emoji", "realm_emoji", () => realmEmojiDicts(db, realm.id));
  list("realm_playgrounds", "realm_playgrounds", () => realmPlaygrounds(db, realm.id));
  list("realm_linkifiers", "realm_linkifiers", () =>
    registerLinkifiers(db, realm.id, capabilities),
  );
  list("realm_domains", "realm_domains", () => realmDomains(db, realm.id));
  section(
    want("channel_folder") || want("channel_folders"),
    () => listChannelFolders(db, realm.id, true),
    (folders) => (state.channel_folders = folders),
  );
  section(
    want("custom_profile_fields"),
    () => realmFields(db, realm.id),
    (fields) => {
      state.custom_profile_fields = fields;
      state.custom_profile_field_types = customProfileFieldTypes();
    },
  );
  list("default_streams", "realm_default_streams", () => defaultChannelIds(db, realm.id));
  list("drafts", "drafts", () => registerDrafts(db, user));
  list("saved_snippets", "saved_snippets", () => savedSnippetDicts(db, user.id));
  list("navigation_views", "navigation_views", () => navigationViewDicts(db, user.id));
  list("user_topic", "user_topics", async () =>
    (await db.userTopic.findMany({ where: { userProfileId: user.id } })).map((t) => ({
      stream_id: t.streamId,
      topic_name: t.topicName === "" && emptyTopicName !== null ? emptyTopicName : t.topicName,
      last_updated: unixSeconds(t.lastUpdated),
      visibility_policy: t.visibilityPolicy,
    })),
  );
  list("scheduled_messages", "scheduled_messages", () => listScheduledMessages(db, user));
  list("reminders", "reminders", () => listReminders(db, user));
  // Both token fields come from one count, read once when either is asked for.
  let tokens: Promise<boolean> | undefined;
  const hasToken = () =>
    (tokens ??= db.videoCallProviderToken
      .count({ where: { userProfileId: user.id } })
      .then((n) => n > 0));
  list("has_videoprovider_token", "has_videoprovider_token", hasToken);
  list("has_webex_token", "has_webex_token", async () =>
    oauthProviderId(ctx.config) === WEBEX ? hasToken() : false,
  );
  list("user_status", "user_status", () => realmUserStatuses(db, realm.id));
  list("device", "devices", () => userDevices(db, user.id));
  section(
    want("presence"),
    () => presenceResponse(db, realm, ctx.now(), { slim: presence.slim }),
    (fields) => Object.assign(state, fields),
  );
  // Promise.all waits on every section and answers the first failure (the rest are handled).
  await Promise.all(sections);
  return state;
}

/** The organization's settings (the `realm` section): every group setting in one statement. */
async function realmState(ctx: RequestContext): Promise<Record<string, unknown>> {
  const { realm, db } = ctx;
  const state: Record<string, unknown> = {};
  const values = await groupSettingValues(
    db,
    ALL_REALM_SETTINGS.map((s) => realm[s.field] as number),
  );
  for (const setting of ALL_REALM_SETTINGS)
    state[`realm_${setting.name}`] = values.get(realm[setting.field] as number);
  return Object.assign(state, await realmSettingsState(ctx, realm), {
    max_file_upload_size_mib: ctx.config.maxFileUploadSizeMib,
    realm_name: realm.name,
    realm_description: realm.description,
    realm_allow_message_editing: realm.allowMessageEditing,
    realm_message_content_edit_limit_seconds: realm.messageContentEditLimitSeconds,
    realm_move_messages_within_stream_limit_seconds: realm.moveMessagesWithinStreamLimitSeconds,
    realm_move_messages_between_streams_limit_seconds: realm.moveMessagesBetweenStreamsLimitSeconds,
    realm_moderation_request_channel_id: realm.moderationRequestChannelId ?? -1,
    realm_topics_policy: realm.topicsPolicy,
    realm_enable_spectator_access: realm.enableSpectatorAccess,
  });
}

/**
 * The `realm_user` section: every user with their custom profile values (in one statement), and
 * the caller's own account. Active and deactivated users are read together (Zulip's realm_users
 * and realm_non_active_users). Users the caller may not access (lib/access/users.ts) are "Unknown
 * user" placeholders, or left out for clients with `user_list_incomplete` (get_users_for_api,
 * get_raw_user_data).
 */
async function realmUserState(
  ctx: RequestContext,
  clientGravatar: boolean,
  capabilities: ClientCapabilities,
): Promise<Record<string, unknown>> {
  const { realm, user, db } = ctx;
  const access = await viewerAccess(db, user, realm);
  const users = await realmUsers(db, realm.id, {
    profileData: true,
    accessible: userAccessSql(access, "u"),
  });
  const profileData = profileDataOf(users);
  const format = (u: (typeof users)[number]) => toApiUser(u, user, { clientGravatar, profileData });
  // As Zulip splits them by the dicts' is_active, a placeholder (always active) is in realm_users.
  const dicts = await formatForViewer(
    users,
    format,
    () => fakeEmailDomain(db, realm, ctx.config),
    capabilities.user_list_incomplete === true,
  );
  return {
    realm_users: dicts.filter((u) => u.is_active),
    realm_non_active_users: dicts.filter((u) => !u.is_active),
    // Zulip's system bots live in an internal realm; here they are the organization's own users
    // (in realm_users), so there is no cross-realm bot to list.
    cross_realm_bots: [],
    avatar_source: user.avatarSource,
    avatar_url: avatarUrl(user),
    avatar_url_medium: avatarUrl(user, true),
    ...(await ownPermissions(ctx)),
    user_id: user.id,
    email: user.email,
    delivery_email: user.deliveryEmail,
    full_name: user.fullName,
    is_admin: isRealmAdmin(user),
    is_owner: user.role === Role.OWNER,
    is_moderator: isModeratorOrAbove(user),
    is_guest: user.role === Role.GUEST,
  };
}
