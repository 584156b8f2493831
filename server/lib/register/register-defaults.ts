/**
 * Zulip's documented empty or default value of every register field this server has no feature
 * for yet (or whose feature another part fills), by the `fetch_event_types` name that asks for
 * it (zerver/lib/events.py fetch_initial_state_data). fetchInitialState lays these down first,
 * then overwrites them with real data: a field is never missing, whatever is implemented.
 */
import { GROUP_SETTINGS } from "../groups/group-settings.ts";
import { GIF_RATING_POLICY_OPTIONS } from "../realm/realm.ts";
import { serverThumbnailFormats } from "../uploads/thumbnails.ts";

/** Zulip's UserBaseSettings defaults (zerver/models/users.py), as register's `user_settings`. */
export const USER_SETTINGS_DEFAULTS = {
  twenty_four_hour_time: false,
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  starred_message_counts: true,
  receives_typing_notifications: true,
  web_suggest_update_timezone: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  web_font_size_px: 16,
  web_line_height_percent: 140,
  color_scheme: 1,
  translate_emoticons: false,
  display_emoji_reaction_users: true,
  default_language: "en",
  web_home_view: "inbox",
  web_escape_navigates_to_home_view: true,
  web_inbox_show_channel_folders: true,
  left_side_userlist: false,
  emojiset: "google",
  demote_inactive_streams: 1,
  user_list_style: 2,
  web_animate_image_previews: "on_hover",
  web_stream_unreads_count_display_policy: 2,
  hide_ai_features: false,
  web_left_sidebar_show_channel_folders: true,
  web_left_sidebar_unreads_count_summary: true,
  timezone: "",
  enter_sends: false,
  enable_drafts_synchronization: true,
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  notification_sound: "zulip",
  enable_desktop_notifications: true,
  enable_sounds: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  email_notifications_batching_period_seconds: 120,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_digest_emails: true,
  enable_marketing_emails: true,
  enable_login_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  desktop_icon_count_display: 1,
  realm_name_in_email_notifications_policy: 1,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 3,
  automatically_follow_topics_where_mentioned: true,
  resolved_topic_notice_auto_read_policy: "except_followed",
  presence_enabled: true,
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
  allow_private_data_export: false,
  email_address_visibility: 1,
  web_navigate_to_sent_message: true,
  // Not settings: the choices a settings page offers.
  available_notification_sounds: ["chime", "ding", "zulip"],
  emojiset_choices: [
    { key: "google", text: "Google" },
    { key: "twitter", text: "Twitter" },
    { key: "text", text: "Plain text" },
  ],
};
type UserSettings = typeof USER_SETTINGS_DEFAULTS;

/** server_supported_permission_settings: every group setting's rules, by kind. */
function permissionSettings() {
  const kinds = { realm: "realm", channel: "stream", group: "group" } as const;
  const out: Record<string, Record<string, unknown>> = { realm: {}, stream: {}, group: {} };
  for (const s of GROUP_SETTINGS)
    out[kinds[s.kind]]![s.name] = {
      require_system_group: s.requireSystemGroup,
      allow_internet_group: s.allowInternetGroup,
      allow_nobody_group: s.allowNobodyGroup,
      allow_everyone_group: s.allowEveryoneGroup,
      // Creator defaults go by Zulip's names: `channel_creator` (was `stream_creator_or_nobody`
      // before level 427) and `group_creator`.
      default_group_name: s.default,
      default_for_system_groups: s.defaultForSystemGroups ?? null,
      allowed_system_groups: s.allowedSystemGroups,
    };
  return out;
}

/**
 * Realm.VIDEO_CHAT_PROVIDERS of a server with no provider credentials (zerver/models/realms.py);
 * register fills in the configured ones (lib/realm/video-calls.ts availableVideoChatProviders).
 */
export const VIDEO_CHAT_PROVIDERS = {
  disabled: { name: "None", id: 0 },
  jitsi_meet: { name: "Jitsi Meet", id: 1 },
};

/**
 * Per event type, the fields it fills and their defaults. Fields this server computes for real
 * are listed too (with the value an empty organization would have), so the table is the whole
 * of Zulip's register schema and a test can check it key by key.
 */
export function registerDefaults(): Record<string, Record<string, unknown>> {
  return {
    alert_words: { alert_words: [] },
    custom_profile_fields: { custom_profile_fields: [], custom_profile_field_types: {} },
    onboarding_steps: { onboarding_steps: [], navigation_tour_video_url: null },
    message: { max_message_id: -1 },
    drafts: { drafts: [] },
    scheduled_messages: { scheduled_messages: [] },
    reminders: { reminders: [] },
    muted_topics: { muted_topics: [] },
    muted_users: { muted_users: [] },
    presence: { presences: {}, presence_last_update_id: -1, server_timestamp: 0 },
    realm: {
      max_reminder_note_length: 1000,
      max_bulk_new_subscription_messages: 100,
      server_min_deactivated_realm_deletion_days: 14,
      server_max_deactivated_realm_deletion_days: null,
      // Zulip's PRESENCE_PING_INTERVAL_SECS and OFFLINE_THRESHOLD_SECS.
      server_presence_ping_interval_seconds: 60,
      server_presence_offline_threshold_seconds: 140,
      realm_allow_edit_history: true,
      realm_create_public_stream_policy: 1,
      realm_create_private_stream_policy: 1,
      realm_create_web_public_stream_policy: 7,
      realm_wildcard_mention_policy: 5,
      realm_email_changes_disabled: false,
      realm_name_changes_disabled: false,
      realm_require_e2ee_push_notifications: false,
      realm_want_advertise_in_communities_directory: false,
      realm_digest_weekday: 1,
      realm_authentication_methods: {
        Email: { enabled: true, available: true },
        "Dev Auth": { enabled: false, available: false },
      },
      realm_available_video_chat_providers: VIDEO_CHAT_PROVIDERS,
      realm_presence_disabled: false,
      settings_send_digest_emails: false,
      realm_email_auth_enabled: true,
      realm_push_notifications_enabled_end_timestamp: null,
      realm_upload_quota_mib: null,
      realm_enable_guest_user_dm_warning: true,
      zulip_plan_is_not_limited: true,
      upgrade_text_for_wide_organization_logo: "",
      realm_default_external_accounts: {},
      development_environment: false,
      password_min_length: 6,
      password_max_length: 100,
      password_min_guesses: 10000,
      // Was giphy_rating_options before level 442, gif_rating_options before 453.
      gif_rating_policy_options: GIF_RATING_POLICY_OPTIONS,
      // No data export consents here: the organization's owners never get everyone's private
      // content (Realm.owner_full_content_access, set only by a server administrator; level 438).
      realm_owner_full_content_access: false,
      max_icon_file_size_mib: 5,
      max_logo_file_size_mib: 5,
      server_inline_image_preview: true,
      server_inline_url_embed_preview: false,
      // The formats uploaded images are thumbnailed into (lib/uploads/thumbnails.ts).
      server_thumbnail_formats: serverThumbnailFormats(),
      server_avatar_changes_disabled: false,
      server_name_changes_disabled: false,
      server_needs_upgrade: false,
      server_jitsi_server_url: "https://meet.jit.si",
      jitsi_server_url: "https://meet.jit.si",
      server_can_summarize_topics: false,
      server_supported_permission_settings: permissionSettings(),
      event_queue_longpoll_timeout_seconds: 90,
    },
    realm_billing: { realm_billing: {} },
    realm_domains: { realm_domains: [] },
    realm_emoji: { realm_emoji: {} },
    realm_linkifiers: { realm_linkifiers: [] },
    realm_filters: { realm_filters: [] },
    realm_playgrounds: { realm_playgrounds: [] },
    realm_user_groups: { realm_user_groups: [] },
    // The organization's defaults for new users: every personal setting but the time zone.
    realm_user_settings_defaults: {
      realm_user_settings_defaults: (({ timezone: _, ...rest }) => rest)(USER_SETTINGS_DEFAULTS),
    },
    realm_bot: { realm_bots: [] },
    realm_embedded_bots: { realm_embedded_bots: [] },
    realm_incoming_webhook_bots: { realm_incoming_webhook_bots: [] },
    recent_private_conversations: { recent_private_conversations: [] },
    navigation_views: { navigation_views: [] },
    saved_snippets: { saved_snippets: [] },
    subscription: { subscriptions: [], unsubscribed: [], never_subscribed: [] },
    channel_folders: { channel_folders: [] },
    starred_messages: { starred_messages: [] },
    stream: { streams: [] },
    default_streams: { realm_default_streams: [] },
    default_stream_groups: { realm_default_stream_groups: [] },
    // Zulip's full-text search (PostgreSQL's english configuration) has no list to give.
    stop_words: { stop_words: [] },
    user_status: { user_status: {} },
    user_settings: { user_settings: { ...USER_SETTINGS_DEFAULTS } },
    user_topic: { user_topics: [] },
    video_calls: { has_zoom_token: false },
    // No GIF provider is configured: every provider's key is empty (Tenor level 442, KLIPY 486).
    giphy: { giphy_api_key: "" },
    tenor: { tenor_api_key: "" },
    klipy: { klipy_api_key: "" },
  };
}

/** A subscription's notification settings and the personal setting a null one inherits. */
const INHERITED_NOTIFICATION_SETTINGS = {
  desktop_notifications: "enable_stream_desktop_notifications",
  audible_notifications: "enable_stream_audible_notifications",
  push_notifications: "enable_stream_push_notifications",
  email_notifications: "enable_stream_email_notifications",
  wildcard_mentions_notify: "wildcard_mentions_notify",
} as const;

/**
 * Clients without `notification_settings_null` get each null ("inherit") per-channel setting as
 * the user's own setting (Zulip's gather_subscriptions_helper).
 */
export function fillNotificationSettings(
  subscriptions: Record<string, unknown>[],
  settings: UserSettings,
) {
  for (const sub of subscriptions)
    for (const [field, inherited] of Object.entries(INHERITED_NOTIFICATION_SETTINGS))
      if (field in sub && sub[field] === null) sub[field] = settings[inherited];
}
