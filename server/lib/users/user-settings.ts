/**
 * A user's personal settings (Zulip's UserBaseSettings.property_types, zerver/models/users.py):
 * ONE table naming each setting, its type, the values it may take and its column. It drives
 * PATCH /settings (what is changed and checked), the register `user_settings` object and its
 * legacy top-level copies, and the `user_settings` events.
 */
import type { UserProfile } from "../../db/index.ts";
import type { ZulipEvent } from "../../events/log.ts";
import { JsonableError } from "../../errors.ts";

type Kind = "bool" | "int" | "string";

export interface UserSetting {
  /** Zulip's property name: the PATCH parameter, the register key and the event's `property`. */
  name: string;
  kind: Kind;
  field: keyof UserProfile;
  /** The values it may take (Zulip's check_int_in / check_string_in / Literal), when limited. */
  choices?: readonly (number | string)[];
  /**
   * Settings older than feature level 89 also have a top-level register copy for clients without
   * the `user_settings_object` capability, fetched as `update_display_settings` or
   * `update_global_notifications` (display_settings_legacy / notification_settings_legacy), and
   * a deprecated PATCH /settings/display or /settings/notifications alias. Their legacy events
   * are no longer sent (feature level 439).
   */
  legacy?: "display" | "notification";
  /**
   * false for the settings an organization has no default for (not among the parameters of
   * Zulip's update_realm_user_settings_defaults): the time zone and language come from the new
   * user, the login and marketing emails and the private data export are the user's own choice.
   */
  realmDefault?: false;
}

/** UserProfile.EMOJISET_CHOICES, in Zulip's order (register's emojiset_choices). */
export const EMOJISET_CHOICES = [
  { key: "google", text: "Google" },
  { key: "twitter", text: "Twitter" },
  { key: "text", text: "Plain text" },
  { key: "google-blob", text: "Google blobs" },
];

/** The sounds of static/audio/notification_sounds (get_available_notification_sounds), sorted. */
export const NOTIFICATION_SOUNDS = [
  "ascend", "beep_boop", "bink", "bright", "brlip", "chime", "deep tom", "ding", "double tap",
  "down", "dry bongos", "dutdut", "fast ascend", "flute", "friendly", "kick roll",
  "loud tintong", "metallic snare", "pan", "practicechat", "shaker", "simple", "stairs",
  "subtle", "swish", "tintong", "up", "wood block", "zaping", "zing", "zulip",
]; // prettier-ignore

/** The codes of locale/language_name_map.json (get_available_language_codes). */
const LANGUAGE_CODES = [
  "ar", "be", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "en_GB", "eo", "es", "fa",
  "fi", "fr", "gl", "gu", "hi", "hu", "id", "it", "ja", "ko", "lt", "lmo", "ml", "mn", "nl",
  "no", "pl", "pt", "pt_BR", "pt_PT", "ro", "ru", "si", "sr", "sv", "ta", "te", "tl", "tr",
  "uk", "uz", "vi", "zh-hans", "zh-hant", "zh_TW",
]; // prettier-ignore

const ONE_TO_THREE = [1, 2, 3] as const;
const ONE_TO_FOUR = [1, 2, 3, 4] as const;

const bool = (name: string, field: UserSetting["field"], legacy?: UserSetting["legacy"]) =>
  ({ name, kind: "bool", field, ...(legacy && { legacy }) }) as UserSetting;

/** Every setting, in the order of Zulip's register `user_settings` object. */
export const USER_SETTINGS: readonly UserSetting[] = [
  bool("twenty_four_hour_time", "twentyFourHourTime", "display"),
  { name: "web_mark_read_on_scroll_policy", kind: "int", field: "webMarkReadOnScrollPolicy", choices: ONE_TO_THREE },
  { name: "web_channel_default_view", kind: "int", field: "webChannelDefaultView", choices: [1, 2, 3, 4] },
  bool("starred_message_counts", "starredMessageCounts", "display"),
  bool("receives_typing_notifications", "receivesTypingNotifications", "notification"),
  bool("web_suggest_update_timezone", "webSuggestUpdateTimezone"),
  bool("fluid_layout_width", "fluidLayoutWidth", "display"),
  bool("high_contrast_mode", "highContrastMode", "display"),
  { name: "web_font_size_px", kind: "int", field: "webFontSizePx" },
  { name: "web_line_height_percent", kind: "int", field: "webLineHeightPercent" },
  { name: "color_scheme", kind: "int", field: "colorScheme", choices: ONE_TO_THREE, legacy: "display" },
  bool("translate_emoticons", "translateEmoticons", "display"),
  bool("display_emoji_reaction_users", "displayEmojiReactionUsers"),
  { name: "default_language", kind: "string", field: "defaultLanguage", legacy: "display", realmDefault: false },
  // "recent" was "recent_topics" before level 454 (stored values moved by a migration).
  { name: "web_home_view", kind: "string", field: "webHomeView", choices: ["recent", "inbox", "all_messages"], legacy: "display" },
  bool("web_escape_navigates_to_home_view", "webEscapeNavigatesToHomeView"),
  bool("web_inbox_show_channel_folders", "webInboxShowChannelFolders"),
  bool("left_side_userlist", "leftSideUserlist", "display"),
  { name: "emojiset", kind: "string", field: "emojiset", choices: EMOJISET_CHOICES.map((e) => e.key), legacy: "display" },
  { name: "demote_inactive_streams", kind: "int", field: "demoteInactiveStreams", choices: ONE_TO_THREE, legacy: "display" },
  { name: "user_list_style", kind: "int", field: "userListStyle", choices: ONE_TO_THREE },
  { name: "web_animate_image_previews", kind: "string", field: "webAnimateImagePreviews", choices: ["always", "on_hover", "never"] },
  { name: "web_stream_unreads_count_display_policy", kind: "int", field: "webStreamUnreadsCountDisplayPolicy", choices: ONE_TO_THREE },
  bool("hide_ai_features", "hideAiFeatures"),
  bool("web_left_sidebar_show_channel_folders", "webLeftSidebarShowChannelFolders"),
  bool("web_left_sidebar_unreads_count_summary", "webLeftSidebarUnreadsCountSummary"),
  { name: "timezone", kind: "string", field: "timezone", realmDefault: false },
  bool("enter_sends", "enterSends", "display"),
  bool("enable_drafts_synchronization", "enableDraftsSynchronization", "display"),
  bool("enable_stream_desktop_notifications", "enableStreamDesktopNotifications", "notification"),
  bool("enable_stream_email_notifications", "enableStreamEmailNotifications", "notification"),
  bool("enable_stream_push_notifications", "enableStreamPushNotifications", "notification"),
  bool("enable_stream_audible_notifications", "enableStreamAudibleNotifications", "notification"),
  { name: "notification_sound", kind: "string", field: "notificationSound", legacy: "notification" },
  bool("enable_desktop_notifications", "enableDesktopNotifications", "notification"),
  bool("enable_sounds", "enableSounds", "notification"),
  bool("enable_followed_topic_desktop_notifications", "enableFollowedTopicDesktopNotifications"),
  bool("enable_followed_topic_email_notifications", "enableFollowedTopicEmailNotifications"),
  bool("enable_followed_topic_push_notifications", "enableFollowedTopicPushNotifications"),
  bool("enable_followed_topic_audible_notifications", "enableFollowedTopicAudibleNotifications"),
  { name: "email_notifications_batching_period_seconds", kind: "int", field: "emailNotificationsBatchingPeriodSeconds", legacy: "notification" },
  bool("enable_offline_email_notifications", "enableOfflineEmailNotifications", "notification"),
  bool("enable_offline_push_notifications", "enableOfflinePushNotifications", "notification"),
  bool("enable_online_push_notifications", "enableOnlinePushNotifications", "notification"),
  bool("enable_digest_emails", "enableDigestEmails", "notification"),
  { ...bool("enable_marketing_emails", "enableMarketingEmails", "notification"), realmDefault: false },
  { ...bool("enable_login_emails", "enableLoginEmails", "notification"), realmDefault: false },
  bool("message_content_in_email_notifications", "messageContentInEmailNotifications", "notification"),
  bool("pm_content_in_desktop_notifications", "pmContentInDesktopNotifications", "notification"),
  bool("wildcard_mentions_notify", "wildcardMentionsNotify", "notification"),
  bool("enable_followed_topic_wildcard_mentions_notify", "enableFollowedTopicWildcardMentionsNotify"),
  { name: "desktop_icon_count_display", kind: "int", field: "desktopIconCountDisplay", choices: ONE_TO_FOUR, legacy: "notification" },
  { name: "realm_name_in_email_notifications_policy", kind: "int", field: "realmNameInEmailNotificationsPolicy", choices: ONE_TO_THREE, legacy: "notification" },
  { name: "automatically_follow_topics_policy", kind: "int", field: "automaticallyFollowTopicsPolicy", choices: ONE_TO_FOUR },
  { name: "automatically_unmute_topics_in_muted_streams_policy", kind: "int", field: "automaticallyUnmuteTopicsInMutedStreamsPolicy", choices: ONE_TO_FOUR },
  bool("automatically_follow_topics_where_mentioned", "automaticallyFollowTopicsWhereMentioned"),
  { name: "resolved_topic_notice_auto_read_policy", kind: "string", field: "resolvedTopicNoticeAutoReadPolicy", choices: ["always", "except_followed", "never"] },
  bool("presence_enabled", "presenceEnabled", "notification"),
  bool("send_private_typing_notifications", "sendPrivateTypingNotifications"),
  bool("send_stream_typing_notifications", "sendStreamTypingNotifications"),
  bool("send_read_receipts", "sendReadReceipts"),
  { ...bool("allow_private_data_export", "allowPrivateDataExport"), realmDefault: false },
  { name: "email_address_visibility", kind: "int", field: "emailAddressVisibility", choices: [1, 2, 3, 4, 5] },
  bool("web_navigate_to_sent_message", "webNavigateToSentMessage"),
]; // prettier-ignore

/** The settings of one legacy group: what PATCH /settings/display or /settings/notifications takes. */
export const legacySettings = (group: NonNullable<UserSetting["legacy"]>) =>
  USER_SETTINGS.filter((s) => s.legacy === group);

const BY_NAME = new Map(USER_SETTINGS.map((s) => [s.name, s]));

/** The settings an organization sets defaults for (Zulip's RealmUserDefault, as its view takes them). */
export const REALM_DEFAULT_SETTINGS = USER_SETTINGS.filter((s) => s.realmDefault !== false);
export const userSetting = (name: string) => BY_NAME.get(name);

export type SettingValue = boolean | number | string;

/** A user's value of a setting, as the API shows it. */
export const settingValue = (user: UserProfile, s: UserSetting) => user[s.field] as SettingValue;

/**
 * The checks Zulip makes beyond each parameter's type and choices (which the spec makes):
 * the time zone while parsing parameters, then check_settings_values, in its order.
 */
export function checkSettingValues(changes: Map<string, SettingValue>): void {
  // Integers without a list of values (font size, line height, batching period) fit their column.
  for (const [name, value] of changes)
    if (typeof value === "number" && (value > 2 ** 31 - 1 || value < -(2 ** 31)))
      throw new JsonableError(`Invalid ${name}`);
  const timezone = changes.get("timezone");
  if (timezone !== undefined && !isTimezone(String(timezone)))
    throw new JsonableError("Invalid timezone: Value error, Not a recognized time zone");
  const language = changes.get("default_language");
  if (language !== undefined && !LANGUAGE_CODES.includes(String(language)))
    throw new JsonableError("Invalid default_language");
  const sound = changes.get("notification_sound");
  if (sound !== undefined && sound !== "none" && !NOTIFICATION_SOUNDS.includes(String(sound)))
    throw new JsonableError(`Invalid notification sound '${sound}'`);
  const period = changes.get("email_notifications_batching_period_seconds");
  // Zulip caps the batching period at one week.
  if (period !== undefined && (Number(period) <= 0 || Number(period) > 7 * 24 * 60 * 60))
    throw new JsonableError(`Invalid email batching period: ${period} seconds`);
}

/** An IANA time zone name (aliases too, as zoneinfo accepts them); "" is the unset value. */
function isTimezone(name: string): boolean {
  if (name === "") return true;
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** get_language_name: the language's own name for itself (language_name_map.json's `name`). */
export function languageName(code: string): string {
  const tag = code.replace("_", "-");
  try {
    const name = new Intl.DisplayNames([tag], { type: "language" }).of(tag);
    return name ? name.charAt(0).toLocaleUpperCase(tag) + name.slice(1) : code;
  } catch {
    return code;
  }
}

/**
 * The event of one setting's change (do_change_user_setting), to the user: `user_settings`. The
 * legacy `update_global_notifications` / `update_display_settings` twins are no longer sent to
 * any client (feature level 439).
 */
export function settingChangeEvent(s: UserSetting, value: SettingValue): ZulipEvent {
  const language =
    s.name === "default_language" ? { language_name: languageName(String(value)) } : {};
  return { type: "user_settings", op: "update", property: s.name, value, ...language };
}

/**
 * Register's settings (fetch_initial_state_data): the `user_settings` object, and for clients
 * without the `user_settings_object` capability the legacy top-level copies.
 */
export function userSettingsState(
  user: UserProfile,
  want: (type: string) => boolean,
  userSettingsObject: boolean,
): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  if (want("update_display_settings") && !userSettingsObject) {
    for (const s of USER_SETTINGS)
      if (s.legacy === "display") state[s.name] = settingValue(user, s);
    state.emojiset_choices = EMOJISET_CHOICES;
    state.timezone = user.timezone;
  }
  if (want("update_global_notifications") && !userSettingsObject) {
    for (const s of USER_SETTINGS)
      if (s.legacy === "notification") state[s.name] = settingValue(user, s);
    state.available_notification_sounds = NOTIFICATION_SOUNDS;
  }
  if (want("user_settings")) {
    const settings: Record<string, unknown> = {};
    for (const s of USER_SETTINGS) settings[s.name] = settingValue(user, s);
    settings.emojiset_choices = EMOJISET_CHOICES;
    settings.available_notification_sounds = NOTIFICATION_SOUNDS;
    state.user_settings = settings;
  }
  return state;
}
