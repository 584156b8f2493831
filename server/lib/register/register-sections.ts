/**
 * The register sections that are small reads of their own (zerver/lib/events.py
 * fetch_initial_state_data): the realm's stored settings beyond the group settings, the
 * current user's extras, and the per-user lists (starred, muted, alert words, recent direct
 * conversations, …). Each is one statement, whatever the organization's size.
 */
import { availableVideoChatProviders } from "../realm/video-calls.ts";
import type { RequestContext } from "../../context.ts";
import type { Db, Realm } from "../../db/index.ts";
import { REALM_GROUP_SETTINGS, type GroupSetting } from "../groups/group-settings.ts";
import { can } from "../groups/permissions.ts";
import { emojiDataFile } from "../realm/emoji-data.ts";
import { fakeEmailDomain, realmIconUrl, realmUrl } from "../realm/realm.ts";
import { RecipientType } from "../recipients.ts";
import { unixSeconds } from "../time.ts";
import { TopicVisibility } from "../messages/topics.ts";

/** Realm.MESSAGE_EDIT_HISTORY_VISIBILITY_POLICY_TYPES by stored value. */
const EDIT_HISTORY_POLICY: Record<number, string> = { 1: "all", 2: "moves", 3: "none" };
const streamIdOrNone = (id: number | null) => id ?? -1;

/** The realm's stored settings under their register names (the `realm` section's plain fields). */
export async function realmSettingsState(ctx: Pick<RequestContext, "db" | "config">, realm: Realm) {
  const url = await realmUrl(ctx.db, realm, ctx.config);
  const logo = (source: string, version: number, night: boolean) =>
    source === "U"
      ? `/user_avatars/${realm.id}/realm/${night ? "night_logo" : "logo"}.png?version=${version}`
      : `/static/images/logo/zulip-org-logo.svg?version=0`;
  return {
    realm_date_created: unixSeconds(realm.dateCreated),
    realm_message_edit_history_visibility_policy:
      EDIT_HISTORY_POLICY[realm.messageEditHistoryVisibilityPolicy] ?? "all",
    realm_allow_edit_history: realm.messageEditHistoryVisibilityPolicy !== 3,
    realm_default_language: realm.defaultLanguage,
    realm_welcome_message_custom_text: realm.welcomeMessageCustomText,
    realm_digest_emails_enabled: realm.digestEmailsEnabled,
    realm_digest_weekday: realm.digestWeekday,
    // Zulip's SEND_DIGEST_EMAILS: clients offer the digest settings only when digests go out.
    settings_send_digest_emails: ctx.config.sendDigestEmails,
    realm_disallow_disposable_email_addresses: realm.disallowDisposableEmailAddresses,
    realm_invite_required: realm.inviteRequired,
    realm_inline_image_preview: realm.inlineImagePreview,
    realm_inline_url_embed_preview: realm.inlineUrlEmbedPreview,
    realm_mandatory_topics: realm.mandatoryTopics,
    // -1 is Zulip's "keep forever" (Realm.MESSAGE_RETENTION_SPECIAL_VALUES_MAP["unlimited"]).
    realm_message_retention_days: realm.messageRetentionDays ?? -1,
    realm_require_unique_names: realm.requireUniqueNames,
    realm_emails_restricted_to_domains: realm.emailsRestrictedToDomains,
    realm_send_welcome_emails: realm.sendWelcomeEmails,
    realm_message_content_allowed_in_email_notifications:
      realm.messageContentAllowedInEmailNotifications,
    realm_video_chat_provider: realm.videoChatProvider,
    realm_available_video_chat_providers: availableVideoChatProviders(ctx.config),
    realm_jitsi_server_url: realm.jitsiServerUrl,
    // realm_giphy_rating before level 453: the rating applies to every GIF provider.
    realm_gif_rating_policy: realm.gifRatingPolicy,
    // Level 469: previews' height, in percent of the default.
    realm_media_preview_size: realm.mediaPreviewSize,
    // Level 434: whether Notification Bot posts channel events (creation, archiving, …).
    realm_send_channel_events_messages: realm.sendChannelEventsMessages,
    realm_avatar_changes_disabled: realm.avatarChangesDisabled,
    // Level 466: lets clients draw Jdenticon avatars themselves.
    realm_uuid: realm.uuid,
    realm_waiting_period_threshold: realm.waitingPeriodThreshold,
    realm_default_code_block_language: realm.defaultCodeBlockLanguage,
    realm_message_content_delete_limit_seconds: realm.messageContentDeleteLimitSeconds,
    realm_enable_read_receipts: realm.enableReadReceipts,
    realm_enable_guest_user_indicator: realm.enableGuestUserIndicator,
    realm_password_auth_enabled: realm.passwordAuthEnabled,
    realm_push_notifications_enabled: realm.pushNotificationsEnabled,
    realm_org_type: realm.orgType,
    realm_plan_type: realm.planType,
    realm_icon_source: realm.iconSource,
    realm_icon_url: realmIconUrl(realm),
    realm_logo_source: realm.logoSource,
    realm_logo_url: logo(realm.logoSource, realm.logoVersion, false),
    realm_night_logo_source: realm.nightLogoSource,
    realm_night_logo_url: logo(realm.nightLogoSource, realm.nightLogoVersion, true),
    realm_bot_domain: await fakeEmailDomain(ctx.db, realm, ctx.config),
    realm_uri: url,
    realm_url: url,
    realm_new_stream_announcements_stream_id: streamIdOrNone(realm.newStreamAnnouncementsStreamId),
    realm_signup_announcements_stream_id: streamIdOrNone(realm.signupAnnouncementsStreamId),
    realm_zulip_update_announcements_stream_id: streamIdOrNone(
      realm.zulipUpdateAnnouncementsStreamId,
    ),
    server_web_public_streams_enabled: ctx.config.webPublicStreamsEnabled,
    max_avatar_file_size_mib: ctx.config.maxAvatarFileSizeMib,
    // Absolute, as Zulip's (emoji.data_url()): clients fetch it as is.
    server_emoji_data_url: url + emojiDataFile().path,
    server_generation: SERVER_GENERATION,
  };
}

/** When this process started (Zulip's server_generation: clients reload when it changes). */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/** Every organization group setting, for the `realm` section (not only those PATCH /realm offers). */
export const ALL_REALM_SETTINGS: readonly GroupSetting<"realm">[] =
  Object.values(REALM_GROUP_SETTINGS);

/** The current user's permissions as register's `realm_user` section states them. */
export async function ownPermissions(ctx: Pick<RequestContext, "db" | "realm" | "user">) {
  const { db, realm, user } = ctx;
  // One statement at most: the user's groups are read once and cached for the rest.
  const [pub, priv, webPublic, subscribe, invite] = await Promise.all([
    can(db, user, realm, "can_create_public_channel_group"),
    can(db, user, realm, "can_create_private_channel_group"),
    can(db, user, realm, "can_create_web_public_channel_group"),
    can(db, user, realm, "can_add_subscribers_group"),
    can(db, user, realm, "can_invite_users_group"),
  ]);
  return {
    can_create_streams: pub || priv || webPublic,
    can_create_public_streams: pub,
    can_create_private_streams: priv,
    can_create_web_public_streams: webPublic,
    can_subscribe_other_users: subscribe,
    can_invite_others_to_realm: invite,
  };
}

/** `starred_messages`: the ids of the user's starred messages, oldest first. */
export async function starredMessageIds(db: Db, userId: number): Promise<number[]> {
  const rows = await db.$queryRaw<{ message_id: number }[]>`
    SELECT message_id FROM user_message WHERE user_profile_id = ${userId} AND (flags & 2) <> 0
    ORDER BY message_id`;
  return rows.map((r) => r.message_id);
}

/** Zulip's RECENT_CONVERSATIONS_LIMIT: how many of the newest direct messages are looked at. */
const RECENT_CONVERSATIONS_LIMIT = 1000;

/**
 * `recent_private_conversations` (zerver/lib/recent_private_conversations.py): each direct
 * conversation among the user's newest direct messages, newest first, with its newest message id
 * and the other participants (none for the user's own conversation with themselves).
 *
 * Bounded as Zulip bounds it: two ordered, limited scans, the user's newest 1,000 direct messages
 * not addressed to them alone (sent one-to-one, or in a group) and the newest 1,000 addressed to
 * them, whatever the user's history holds (67,000 direct messages took 400 ms unbounded).
 */
export async function recentPrivateConversations(db: Db, userId: number) {
  const rows = await db.$queryRaw<{ max_message_id: number; user_ids: number[] }[]>`
    WITH me AS (SELECT realm_id, recipient_id FROM user_profile WHERE id = ${userId}),
    recent AS (
      (SELECT um.message_id, m.recipient_id, NULL::int AS sender_id
       FROM user_message um JOIN message m ON m.id = um.message_id
       WHERE um.user_profile_id = ${userId} AND (um.flags & 2048) <> 0
         AND m.recipient_id IS DISTINCT FROM (SELECT recipient_id FROM me)
       ORDER BY um.message_id DESC LIMIT ${RECENT_CONVERSATIONS_LIMIT})
      UNION ALL
      (SELECT m.id, NULL, m.sender_id FROM message m
       WHERE m.realm_id = (SELECT realm_id FROM me) AND m.recipient_id = (SELECT recipient_id FROM me)
       ORDER BY m.id DESC LIMIT ${RECENT_CONVERSATIONS_LIMIT})
    ), c AS (
      -- A one-to-one conversation is keyed by the other user (negated), a group by its recipient.
      SELECT CASE WHEN recent.sender_id IS NOT NULL THEN -recent.sender_id
                  WHEN r.type = ${RecipientType.PERSONAL} THEN -r.type_id
                  ELSE r.id END AS k,
             max(recent.message_id) AS max_message_id
      FROM recent LEFT JOIN recipient r ON r.id = recent.recipient_id
      GROUP BY 1
    )
    SELECT c.max_message_id,
           CASE WHEN c.k < 0 THEN (CASE WHEN -c.k = ${userId} THEN ARRAY[]::int[] ELSE ARRAY[-c.k] END)
                ELSE ARRAY(SELECT s.user_profile_id FROM subscription s
                           WHERE s.recipient_id = c.k AND s.user_profile_id <> ${userId} ORDER BY 1) END AS user_ids
    FROM c ORDER BY c.max_message_id DESC`;
  return rows.map((r) => ({ max_message_id: r.max_message_id, user_ids: r.user_ids }));
}

/** Legacy `muted_topics`: [channel name, topic, time muted] of the user's muted topics (from user_topics). */
export async function mutedTopics(db: Db, userId: number, emptyTopicName: string | null) {
  const rows = await db.$queryRaw<{ name: string; topic_name: string; last_updated: Date }[]>`
    SELECT s.name, ut.topic_name, ut.last_updated FROM user_topic ut JOIN stream s ON s.id = ut.stream_id
    WHERE ut.user_profile_id = ${userId} AND ut.visibility_policy = ${TopicVisibility.MUTED} ORDER BY ut.id`;
  return rows.map((r) => [
    r.name,
    r.topic_name === "" && emptyTopicName !== null ? emptyTopicName : r.topic_name,
    unixSeconds(r.last_updated),
  ]);
}

/** `realm_emoji`: written with the custom emoji themselves. */
export { realmEmojiDicts } from "../realm/realm-emoji.ts";

export async function realmDomains(db: Db, realmId: number) {
  const rows = await db.realmDomain.findMany({ where: { realmId }, orderBy: { domain: "asc" } });
  return rows.map((d) => ({ domain: d.domain, allow_subdomains: d.allowSubdomains }));
}
