-- CreateTable
CREATE TABLE "realm_user_default" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email_address_visibility" INTEGER NOT NULL DEFAULT 1,
    "twenty_four_hour_time" BOOLEAN NOT NULL DEFAULT false,
    "enable_drafts_synchronization" BOOLEAN NOT NULL DEFAULT true,
    "send_private_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    "send_stream_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    "send_read_receipts" BOOLEAN NOT NULL DEFAULT true,
    "presence_enabled" BOOLEAN NOT NULL DEFAULT true,
    "enable_stream_desktop_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_email_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_push_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_audible_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_followed_topic_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_audible_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
    "wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
    "enable_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_sounds" BOOLEAN NOT NULL DEFAULT true,
    "enable_offline_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_offline_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_online_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "automatically_follow_topics_policy" INTEGER NOT NULL DEFAULT 3,
    "automatically_unmute_topics_in_muted_streams_policy" INTEGER NOT NULL DEFAULT 2,
    "automatically_follow_topics_where_mentioned" BOOLEAN NOT NULL DEFAULT true,
    "enter_sends" BOOLEAN NOT NULL DEFAULT false,
    "left_side_userlist" BOOLEAN NOT NULL DEFAULT false,
    "web_home_view" TEXT NOT NULL DEFAULT 'inbox',
    "web_escape_navigates_to_home_view" BOOLEAN NOT NULL DEFAULT true,
    "web_inbox_show_channel_folders" BOOLEAN NOT NULL DEFAULT true,
    "fluid_layout_width" BOOLEAN NOT NULL DEFAULT false,
    "high_contrast_mode" BOOLEAN NOT NULL DEFAULT false,
    "translate_emoticons" BOOLEAN NOT NULL DEFAULT false,
    "display_emoji_reaction_users" BOOLEAN NOT NULL DEFAULT true,
    "starred_message_counts" BOOLEAN NOT NULL DEFAULT true,
    "web_suggest_update_timezone" BOOLEAN NOT NULL DEFAULT true,
    "color_scheme" INTEGER NOT NULL DEFAULT 1,
    "web_font_size_px" INTEGER NOT NULL DEFAULT 16,
    "web_line_height_percent" INTEGER NOT NULL DEFAULT 140,
    "web_animate_image_previews" TEXT NOT NULL DEFAULT 'on_hover',
    "demote_inactive_streams" INTEGER NOT NULL DEFAULT 1,
    "web_mark_read_on_scroll_policy" INTEGER NOT NULL DEFAULT 1,
    "web_channel_default_view" INTEGER NOT NULL DEFAULT 1,
    "emojiset" TEXT NOT NULL DEFAULT 'google',
    "user_list_style" INTEGER NOT NULL DEFAULT 3,
    "web_stream_unreads_count_display_policy" INTEGER NOT NULL DEFAULT 2,
    "web_left_sidebar_show_channel_folders" BOOLEAN NOT NULL DEFAULT true,
    "web_left_sidebar_unreads_count_summary" BOOLEAN NOT NULL DEFAULT true,
    "web_navigate_to_sent_message" BOOLEAN NOT NULL DEFAULT true,
    "email_notifications_batching_period_seconds" INTEGER NOT NULL DEFAULT 120,
    "notification_sound" TEXT NOT NULL DEFAULT 'zulip',
    "pm_content_in_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "message_content_in_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "desktop_icon_count_display" INTEGER NOT NULL DEFAULT 1,
    "enable_digest_emails" BOOLEAN NOT NULL DEFAULT true,
    "realm_name_in_email_notifications_policy" INTEGER NOT NULL DEFAULT 1,
    "resolved_topic_notice_auto_read_policy" TEXT NOT NULL DEFAULT 'except_followed',
    "receives_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    "hide_ai_features" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "realm_user_default_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "realm_user_default_realm_id_key" ON "realm_user_default"("realm_id");

-- AddForeignKey
ALTER TABLE "realm_user_default" ADD CONSTRAINT "realm_user_default_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every existing organization gets its row with Zulip's defaults (the column defaults), its
-- email address visibility from the organization's setting, as new users took it before.
INSERT INTO "realm_user_default" ("realm_id", "email_address_visibility")
SELECT "id", "email_address_visibility" FROM "realm";
