-- CreateEnum
CREATE TYPE "topics_policy" AS ENUM ('inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only');

-- CreateTable
CREATE TABLE "realm" (
    "id" SERIAL NOT NULL,
    "string_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "rendered_description" TEXT NOT NULL DEFAULT '',
    "uuid" UUID NOT NULL,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "deactivated_redirect" TEXT,
    "org_type" INTEGER NOT NULL DEFAULT 0,
    "plan_type" INTEGER NOT NULL DEFAULT 1,
    "invite_required" BOOLEAN NOT NULL DEFAULT true,
    "emails_restricted_to_domains" BOOLEAN NOT NULL DEFAULT false,
    "disallow_disposable_email_addresses" BOOLEAN NOT NULL DEFAULT true,
    "max_invites" INTEGER,
    "password_auth_enabled" BOOLEAN NOT NULL DEFAULT true,
    "email_address_visibility" INTEGER NOT NULL DEFAULT 1,
    "waiting_period_threshold" INTEGER NOT NULL DEFAULT 0,
    "require_unique_names" BOOLEAN NOT NULL DEFAULT false,
    "welcome_message_custom_text" TEXT NOT NULL DEFAULT '',
    "send_welcome_emails" BOOLEAN NOT NULL DEFAULT true,
    "digest_emails_enabled" BOOLEAN NOT NULL DEFAULT false,
    "allow_message_editing" BOOLEAN NOT NULL DEFAULT true,
    "message_content_edit_limit_seconds" INTEGER DEFAULT 600,
    "message_content_delete_limit_seconds" INTEGER,
    "move_messages_within_stream_limit_seconds" INTEGER DEFAULT 604800,
    "move_messages_between_streams_limit_seconds" INTEGER DEFAULT 604800,
    "message_edit_history_visibility_policy" INTEGER NOT NULL DEFAULT 1,
    "message_retention_days" INTEGER,
    "topics_policy" "topics_policy" NOT NULL DEFAULT 'allow_empty_topic',
    "empty_topic_display_name" TEXT,
    "mandatory_topics" BOOLEAN NOT NULL DEFAULT false,
    "moderation_request_channel_id" INTEGER,
    "new_stream_announcements_stream_id" INTEGER,
    "signup_announcements_stream_id" INTEGER,
    "zulip_update_announcements_stream_id" INTEGER,
    "send_channel_events_messages" BOOLEAN NOT NULL DEFAULT true,
    "enable_spectator_access" BOOLEAN NOT NULL DEFAULT false,
    "enable_read_receipts" BOOLEAN NOT NULL DEFAULT false,
    "enable_guest_user_indicator" BOOLEAN NOT NULL DEFAULT true,
    "inline_image_preview" BOOLEAN NOT NULL DEFAULT true,
    "inline_url_embed_preview" BOOLEAN NOT NULL DEFAULT false,
    "message_content_allowed_in_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "push_notifications_enabled" BOOLEAN NOT NULL DEFAULT false,
    "default_language" TEXT NOT NULL DEFAULT 'en',
    "default_code_block_language" TEXT NOT NULL DEFAULT '',
    "video_chat_provider" INTEGER NOT NULL DEFAULT 1,
    "jitsi_server_url" TEXT,
    "giphy_rating" INTEGER NOT NULL DEFAULT 2,
    "icon_source" TEXT NOT NULL DEFAULT 'G',
    "icon_version" INTEGER NOT NULL DEFAULT 1,
    "logo_source" TEXT NOT NULL DEFAULT 'D',
    "logo_version" INTEGER NOT NULL DEFAULT 1,
    "night_logo_source" TEXT NOT NULL DEFAULT 'D',
    "night_logo_version" INTEGER NOT NULL DEFAULT 1,
    "can_access_all_users_group_id" INTEGER,
    "can_add_custom_emoji_group_id" INTEGER,
    "can_add_subscribers_group_id" INTEGER,
    "can_create_bots_group_id" INTEGER,
    "can_create_groups_id" INTEGER,
    "can_create_private_channel_group_id" INTEGER,
    "can_create_public_channel_group_id" INTEGER,
    "can_create_web_public_channel_group_id" INTEGER,
    "can_create_write_only_bots_group_id" INTEGER,
    "can_delete_any_message_group_id" INTEGER,
    "can_delete_own_message_group_id" INTEGER,
    "can_invite_users_group_id" INTEGER,
    "can_manage_all_groups_id" INTEGER,
    "can_manage_billing_group_id" INTEGER,
    "can_mention_many_users_group_id" INTEGER,
    "can_move_messages_between_channels_group_id" INTEGER,
    "can_move_messages_between_topics_group_id" INTEGER,
    "can_resolve_topics_group_id" INTEGER,
    "can_set_delete_message_policy_group_id" INTEGER,
    "can_set_topics_policy_group_id" INTEGER,
    "can_summarize_topics_group_id" INTEGER,
    "create_multiuse_invite_group_id" INTEGER,
    "direct_message_initiator_group_id" INTEGER,
    "direct_message_permission_group_id" INTEGER,

    CONSTRAINT "realm_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "realm_domain" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "domain" TEXT NOT NULL,
    "allow_subdomains" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "realm_domain_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "realm_filter" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "pattern" TEXT NOT NULL,
    "url_template" TEXT NOT NULL,
    "order" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "realm_filter_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "realm_emoji" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "author_id" INTEGER,
    "name" TEXT NOT NULL,
    "file_name" TEXT,
    "is_animated" BOOLEAN NOT NULL DEFAULT false,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "realm_emoji_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "client" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,

    CONSTRAINT "client_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_profile" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "delivery_email" TEXT NOT NULL,
    "full_name" TEXT NOT NULL,
    "role" INTEGER NOT NULL DEFAULT 400,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "is_bot" BOOLEAN NOT NULL DEFAULT false,
    "bot_type" INTEGER,
    "bot_owner_id" INTEGER,
    "api_key" VARCHAR(32) NOT NULL,
    "password_hash" TEXT,
    "date_joined" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_login" TIMESTAMPTZ(6),
    "timezone" TEXT NOT NULL DEFAULT '',
    "avatar_source" TEXT NOT NULL DEFAULT 'G',
    "avatar_version" INTEGER NOT NULL DEFAULT 1,
    "avatar_hash" TEXT,
    "is_imported_stub" BOOLEAN NOT NULL DEFAULT false,
    "is_mirror_dummy" BOOLEAN NOT NULL DEFAULT false,
    "is_deleted" BOOLEAN NOT NULL DEFAULT false,
    "tos_version" TEXT,
    "recipient_id" INTEGER,
    "can_forge_sender" BOOLEAN NOT NULL DEFAULT false,
    "can_create_users" BOOLEAN NOT NULL DEFAULT false,
    "can_change_user_emails" BOOLEAN NOT NULL DEFAULT false,
    "default_sending_stream_id" INTEGER,
    "default_events_register_stream_id" INTEGER,
    "default_all_streams" BOOLEAN NOT NULL DEFAULT false,
    "email_address_visibility" INTEGER NOT NULL DEFAULT 1,
    "default_language" TEXT NOT NULL DEFAULT 'en',
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

    CONSTRAINT "user_profile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "recipient" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "type" INTEGER NOT NULL,
    "type_id" INTEGER NOT NULL,

    CONSTRAINT "recipient_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "direct_message_group" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "huddle_hash" VARCHAR(40) NOT NULL,
    "group_size" INTEGER NOT NULL,
    "recipient_id" INTEGER,

    CONSTRAINT "direct_message_group_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stream" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "rendered_description" TEXT NOT NULL DEFAULT '',
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "creator_id" INTEGER,
    "is_archived" BOOLEAN NOT NULL DEFAULT false,
    "invite_only" BOOLEAN NOT NULL DEFAULT false,
    "is_web_public" BOOLEAN NOT NULL DEFAULT false,
    "history_public_to_subscribers" BOOLEAN NOT NULL DEFAULT true,
    "message_retention_days" INTEGER,
    "topics_policy" "topics_policy" NOT NULL DEFAULT 'inherit',
    "folder_id" INTEGER,
    "recipient_id" INTEGER,
    "first_message_id" INTEGER,
    "subscriber_count" INTEGER NOT NULL DEFAULT 0,
    "is_recently_active" BOOLEAN NOT NULL DEFAULT true,
    "can_add_subscribers_group_id" INTEGER NOT NULL,
    "can_administer_channel_group_id" INTEGER NOT NULL,
    "can_create_topic_group_id" INTEGER NOT NULL,
    "can_delete_any_message_group_id" INTEGER NOT NULL,
    "can_delete_own_message_group_id" INTEGER NOT NULL,
    "can_move_messages_out_of_channel_group_id" INTEGER NOT NULL,
    "can_move_messages_within_channel_group_id" INTEGER NOT NULL,
    "can_remove_subscribers_group_id" INTEGER NOT NULL,
    "can_resolve_topics_group_id" INTEGER NOT NULL,
    "can_send_message_group_id" INTEGER NOT NULL,
    "can_subscribe_group_id" INTEGER NOT NULL,

    CONSTRAINT "stream_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "is_user_active" BOOLEAN NOT NULL DEFAULT true,
    "color" TEXT NOT NULL DEFAULT '#c2c2c2',
    "is_muted" BOOLEAN NOT NULL DEFAULT false,
    "pin_to_top" BOOLEAN NOT NULL DEFAULT false,
    "desktop_notifications" BOOLEAN,
    "audible_notifications" BOOLEAN,
    "push_notifications" BOOLEAN,
    "email_notifications" BOOLEAN,
    "wildcard_mentions_notify" BOOLEAN,

    CONSTRAINT "subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "default_stream" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,

    CONSTRAINT "default_stream_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "channel_folder" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "rendered_description" TEXT NOT NULL DEFAULT '',
    "order" INTEGER NOT NULL DEFAULT 0,
    "is_archived" BOOLEAN NOT NULL DEFAULT false,
    "creator_id" INTEGER,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "channel_folder_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "message" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "subject" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "rendered_content" TEXT,
    "rendered_content_version" INTEGER,
    "date_sent" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sending_client_id" INTEGER NOT NULL,
    "last_edit_time" TIMESTAMPTZ(6),
    "last_moved_time" TIMESTAMPTZ(6),
    "type" INTEGER NOT NULL DEFAULT 1,
    "has_attachment" BOOLEAN NOT NULL DEFAULT false,
    "has_image" BOOLEAN NOT NULL DEFAULT false,
    "has_link" BOOLEAN NOT NULL DEFAULT false,
    "is_channel_message" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "message_edit" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "user_id" INTEGER,
    "edit_time" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "prev_content" TEXT,
    "prev_rendered_content" TEXT,
    "prev_rendered_content_version" INTEGER,
    "prev_topic" TEXT,
    "topic" TEXT,
    "prev_stream_id" INTEGER,
    "stream_id" INTEGER,

    CONSTRAINT "message_edit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_message" (
    "id" SERIAL NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "flags" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "user_message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reaction" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "emoji_name" TEXT NOT NULL,
    "emoji_code" TEXT NOT NULL,
    "reaction_type" TEXT NOT NULL DEFAULT 'unicode_emoji',

    CONSTRAINT "reaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "submessage" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "msg_type" TEXT NOT NULL,
    "content" TEXT NOT NULL,

    CONSTRAINT "submessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attachment" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "file_name" TEXT NOT NULL,
    "path_id" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "content_type" TEXT,
    "create_time" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "is_realm_public" BOOLEAN,
    "is_web_public" BOOLEAN,

    CONSTRAINT "attachment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attachment_message" (
    "attachment_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,

    CONSTRAINT "attachment_message_pkey" PRIMARY KEY ("attachment_id","message_id")
);

-- CreateTable
CREATE TABLE "attachment_scheduled_message" (
    "attachment_id" INTEGER NOT NULL,
    "scheduled_message_id" INTEGER NOT NULL,

    CONSTRAINT "attachment_scheduled_message_pkey" PRIMARY KEY ("attachment_id","scheduled_message_id")
);

-- CreateTable
CREATE TABLE "scheduled_message" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "stream_id" INTEGER,
    "subject" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "rendered_content" TEXT,
    "sending_client_id" INTEGER NOT NULL,
    "scheduled_timestamp" TIMESTAMPTZ(6) NOT NULL,
    "read_by_sender" BOOLEAN,
    "delivery_type" INTEGER NOT NULL DEFAULT 1,
    "reminder_target_message_id" INTEGER,
    "has_attachment" BOOLEAN NOT NULL DEFAULT false,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "delivered_message_id" INTEGER,
    "failed" BOOLEAN NOT NULL DEFAULT false,
    "failure_message" TEXT,
    "claimed_at" TIMESTAMPTZ(6),
    "claimed_by" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "scheduled_message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "draft" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "recipient_id" INTEGER,
    "topic" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "last_edit_time" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "draft_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_group" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,

    CONSTRAINT "user_group_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "named_user_group" (
    "id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "creator_id" INTEGER,
    "is_system_group" BOOLEAN NOT NULL DEFAULT false,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "can_add_members_group_id" INTEGER NOT NULL,
    "can_join_group_id" INTEGER NOT NULL,
    "can_leave_group_id" INTEGER NOT NULL,
    "can_manage_group_id" INTEGER NOT NULL,
    "can_mention_group_id" INTEGER NOT NULL,
    "can_remove_members_group_id" INTEGER NOT NULL,

    CONSTRAINT "named_user_group_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_group_membership" (
    "id" SERIAL NOT NULL,
    "user_group_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,

    CONSTRAINT "user_group_membership_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "group_group_membership" (
    "id" SERIAL NOT NULL,
    "supergroup_id" INTEGER NOT NULL,
    "subgroup_id" INTEGER NOT NULL,

    CONSTRAINT "group_group_membership_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_topic" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "topic_name" TEXT NOT NULL,
    "topic_name_lower" TEXT NOT NULL,
    "visibility_policy" INTEGER NOT NULL DEFAULT 1,
    "last_updated" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_topic_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "custom_profile_field" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "hint" TEXT NOT NULL DEFAULT '',
    "order" INTEGER NOT NULL DEFAULT 0,
    "field_type" INTEGER NOT NULL DEFAULT 1,
    "field_data" JSONB,
    "display_in_profile_summary" BOOLEAN NOT NULL DEFAULT false,
    "required" BOOLEAN NOT NULL DEFAULT false,
    "editable_by_user" BOOLEAN NOT NULL DEFAULT true,
    "use_for_user_matching" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "custom_profile_field_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "custom_profile_field_value" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "field_id" INTEGER NOT NULL,
    "value" TEXT NOT NULL,
    "rendered_value" TEXT,

    CONSTRAINT "custom_profile_field_value_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_status" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "timestamp" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "client_id" INTEGER,
    "status_text" TEXT NOT NULL DEFAULT '',
    "emoji_name" TEXT NOT NULL DEFAULT '',
    "emoji_code" TEXT NOT NULL DEFAULT '',
    "reaction_type" TEXT NOT NULL DEFAULT 'unicode_emoji',

    CONSTRAINT "user_status_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_presence" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "last_connected_time" TIMESTAMPTZ(6),
    "last_active_time" TIMESTAMPTZ(6),
    "last_update_id" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "user_presence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_word" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "word" TEXT NOT NULL,

    CONSTRAINT "alert_word_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "muted_user" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "muted_user_id" INTEGER NOT NULL,
    "date_muted" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "muted_user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "preregistration_user" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "full_name" TEXT,
    "full_name_validated" BOOLEAN NOT NULL DEFAULT false,
    "referred_by_id" INTEGER,
    "invited_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiry_date" TIMESTAMPTZ(6),
    "invited_as" INTEGER NOT NULL DEFAULT 400,
    "include_realm_default_subscriptions" BOOLEAN NOT NULL DEFAULT false,
    "notify_referrer_on_join" BOOLEAN NOT NULL DEFAULT true,
    "welcome_message_custom_text" TEXT,
    "status" INTEGER NOT NULL DEFAULT 0,
    "created_user_id" INTEGER,
    "multiuse_invite_id" INTEGER,

    CONSTRAINT "preregistration_user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "preregistration_user_stream" (
    "preregistration_user_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,

    CONSTRAINT "preregistration_user_stream_pkey" PRIMARY KEY ("preregistration_user_id","stream_id")
);

-- CreateTable
CREATE TABLE "preregistration_user_group" (
    "preregistration_user_id" INTEGER NOT NULL,
    "user_group_id" INTEGER NOT NULL,

    CONSTRAINT "preregistration_user_group_pkey" PRIMARY KEY ("preregistration_user_id","user_group_id")
);

-- CreateTable
CREATE TABLE "multiuse_invite" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "referred_by_id" INTEGER,
    "invited_as" INTEGER NOT NULL DEFAULT 400,
    "include_realm_default_subscriptions" BOOLEAN NOT NULL DEFAULT false,
    "status" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiry_date" TIMESTAMPTZ(6),

    CONSTRAINT "multiuse_invite_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "multiuse_invite_stream" (
    "multiuse_invite_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,

    CONSTRAINT "multiuse_invite_stream_pkey" PRIMARY KEY ("multiuse_invite_id","stream_id")
);

-- CreateTable
CREATE TABLE "multiuse_invite_group" (
    "multiuse_invite_id" INTEGER NOT NULL,
    "user_group_id" INTEGER NOT NULL,

    CONSTRAINT "multiuse_invite_group_pkey" PRIMARY KEY ("multiuse_invite_id","user_group_id")
);

-- CreateTable
CREATE TABLE "confirmation" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER,
    "type" INTEGER NOT NULL,
    "object_id" INTEGER NOT NULL,
    "confirmation_key" TEXT NOT NULL,
    "date_sent" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiry_date" TIMESTAMPTZ(6),

    CONSTRAINT "confirmation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "email_outbox" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER,
    "to_address" TEXT NOT NULL,
    "from_address" TEXT,
    "reply_to" TEXT,
    "subject" TEXT NOT NULL,
    "text_body" TEXT NOT NULL,
    "html_body" TEXT,
    "template_name" TEXT,
    "context" JSONB,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "scheduled_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(6),
    "claimed_at" TIMESTAMPTZ(6),
    "claimed_by" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "email_outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "push_device" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "push_account_id" BIGINT NOT NULL,
    "token_kind" TEXT NOT NULL,
    "encrypted_token" TEXT,
    "bouncer_device_id" BIGINT,
    "push_key_id" INTEGER,
    "push_key" BYTEA,
    "public_key" TEXT,
    "ios_app_id" TEXT,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_updated" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expired_time" TIMESTAMPTZ(6),
    "error_code" TEXT,

    CONSTRAINT "push_device_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "video_call_provider_token" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "provider" TEXT NOT NULL,
    "access_token" TEXT NOT NULL,
    "refresh_token" TEXT,
    "token_type" TEXT,
    "scope" TEXT,
    "expires_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "video_call_provider_token_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "realm_audit_log" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "acting_user_id" INTEGER,
    "modified_user_id" INTEGER,
    "modified_stream_id" INTEGER,
    "modified_user_group_id" INTEGER,
    "event_last_message_id" INTEGER,
    "event_type" INTEGER NOT NULL,
    "event_time" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "backfilled" BOOLEAN NOT NULL DEFAULT false,
    "extra_data" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "realm_audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "realm_string_id_key" ON "realm"("string_id");

-- CreateIndex
CREATE UNIQUE INDEX "realm_uuid_key" ON "realm"("uuid");

-- CreateIndex
CREATE UNIQUE INDEX "realm_domain_realm_id_domain_key" ON "realm_domain"("realm_id", "domain");

-- CreateIndex
CREATE INDEX "realm_filter_realm_id_order_idx" ON "realm_filter"("realm_id", "order");

-- CreateIndex
CREATE UNIQUE INDEX "realm_filter_realm_id_pattern_key" ON "realm_filter"("realm_id", "pattern");

-- CreateIndex
CREATE INDEX "realm_emoji_realm_id_name_idx" ON "realm_emoji"("realm_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "client_name_key" ON "client"("name");

-- CreateIndex
CREATE UNIQUE INDEX "user_profile_api_key_key" ON "user_profile"("api_key");

-- CreateIndex
CREATE UNIQUE INDEX "user_profile_recipient_id_key" ON "user_profile"("recipient_id");

-- CreateIndex
CREATE INDEX "user_profile_realm_id_is_active_idx" ON "user_profile"("realm_id", "is_active");

-- CreateIndex
CREATE INDEX "user_profile_bot_owner_id_idx" ON "user_profile"("bot_owner_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_profile_realm_id_delivery_email_key" ON "user_profile"("realm_id", "delivery_email");

-- CreateIndex
CREATE UNIQUE INDEX "user_profile_realm_id_email_key" ON "user_profile"("realm_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "recipient_type_type_id_key" ON "recipient"("type", "type_id");

-- CreateIndex
CREATE UNIQUE INDEX "direct_message_group_huddle_hash_key" ON "direct_message_group"("huddle_hash");

-- CreateIndex
CREATE UNIQUE INDEX "direct_message_group_recipient_id_key" ON "direct_message_group"("recipient_id");

-- CreateIndex
CREATE UNIQUE INDEX "stream_recipient_id_key" ON "stream"("recipient_id");

-- CreateIndex
CREATE INDEX "stream_realm_id_is_archived_idx" ON "stream"("realm_id", "is_archived");

-- CreateIndex
CREATE INDEX "stream_folder_id_idx" ON "stream"("folder_id");

-- CreateIndex
CREATE UNIQUE INDEX "stream_realm_id_name_key" ON "stream"("realm_id", "name");

-- CreateIndex
CREATE INDEX "subscription_recipient_id_active_is_user_active_idx" ON "subscription"("recipient_id", "active", "is_user_active");

-- CreateIndex
CREATE UNIQUE INDEX "subscription_user_profile_id_recipient_id_key" ON "subscription"("user_profile_id", "recipient_id");

-- CreateIndex
CREATE UNIQUE INDEX "default_stream_realm_id_stream_id_key" ON "default_stream"("realm_id", "stream_id");

-- CreateIndex
CREATE UNIQUE INDEX "channel_folder_realm_id_name_key" ON "channel_folder"("realm_id", "name");

-- CreateIndex
CREATE INDEX "message_realm_id_recipient_id_subject_id_idx" ON "message"("realm_id", "recipient_id", "subject", "id");

-- CreateIndex
CREATE INDEX "message_realm_id_recipient_id_id_idx" ON "message"("realm_id", "recipient_id", "id");

-- CreateIndex
CREATE INDEX "message_realm_id_sender_id_recipient_id_idx" ON "message"("realm_id", "sender_id", "recipient_id");

-- CreateIndex
CREATE INDEX "message_realm_id_date_sent_idx" ON "message"("realm_id", "date_sent");

-- CreateIndex
CREATE INDEX "message_sender_id_id_idx" ON "message"("sender_id", "id");

-- CreateIndex
CREATE INDEX "message_edit_message_id_id_idx" ON "message_edit"("message_id", "id");

-- CreateIndex
CREATE INDEX "user_message_message_id_idx" ON "user_message"("message_id");

-- CreateIndex
CREATE INDEX "user_message_user_profile_id_flags_idx" ON "user_message"("user_profile_id", "flags");

-- CreateIndex
CREATE UNIQUE INDEX "user_message_user_profile_id_message_id_key" ON "user_message"("user_profile_id", "message_id");

-- CreateIndex
CREATE INDEX "reaction_message_id_id_idx" ON "reaction"("message_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "reaction_user_profile_id_message_id_reaction_type_emoji_cod_key" ON "reaction"("user_profile_id", "message_id", "reaction_type", "emoji_code");

-- CreateIndex
CREATE INDEX "submessage_message_id_id_idx" ON "submessage"("message_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "attachment_path_id_key" ON "attachment"("path_id");

-- CreateIndex
CREATE INDEX "attachment_realm_id_owner_id_idx" ON "attachment"("realm_id", "owner_id");

-- CreateIndex
CREATE INDEX "attachment_message_message_id_idx" ON "attachment_message"("message_id");

-- CreateIndex
CREATE INDEX "attachment_scheduled_message_scheduled_message_id_idx" ON "attachment_scheduled_message"("scheduled_message_id");

-- CreateIndex
CREATE INDEX "scheduled_message_delivered_failed_scheduled_timestamp_idx" ON "scheduled_message"("delivered", "failed", "scheduled_timestamp");

-- CreateIndex
CREATE INDEX "scheduled_message_realm_id_sender_id_delivered_idx" ON "scheduled_message"("realm_id", "sender_id", "delivered");

-- CreateIndex
CREATE INDEX "draft_user_profile_id_last_edit_time_idx" ON "draft"("user_profile_id", "last_edit_time");

-- CreateIndex
CREATE INDEX "user_group_realm_id_idx" ON "user_group"("realm_id");

-- CreateIndex
CREATE UNIQUE INDEX "named_user_group_realm_id_name_key" ON "named_user_group"("realm_id", "name");

-- CreateIndex
CREATE INDEX "user_group_membership_user_profile_id_idx" ON "user_group_membership"("user_profile_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_group_membership_user_group_id_user_profile_id_key" ON "user_group_membership"("user_group_id", "user_profile_id");

-- CreateIndex
CREATE INDEX "group_group_membership_subgroup_id_idx" ON "group_group_membership"("subgroup_id");

-- CreateIndex
CREATE UNIQUE INDEX "group_group_membership_supergroup_id_subgroup_id_key" ON "group_group_membership"("supergroup_id", "subgroup_id");

-- CreateIndex
CREATE INDEX "user_topic_stream_id_topic_name_lower_idx" ON "user_topic"("stream_id", "topic_name_lower");

-- CreateIndex
CREATE UNIQUE INDEX "user_topic_user_profile_id_stream_id_topic_name_lower_key" ON "user_topic"("user_profile_id", "stream_id", "topic_name_lower");

-- CreateIndex
CREATE INDEX "custom_profile_field_realm_id_order_idx" ON "custom_profile_field"("realm_id", "order");

-- CreateIndex
CREATE UNIQUE INDEX "custom_profile_field_realm_id_name_key" ON "custom_profile_field"("realm_id", "name");

-- CreateIndex
CREATE INDEX "custom_profile_field_value_field_id_idx" ON "custom_profile_field_value"("field_id");

-- CreateIndex
CREATE UNIQUE INDEX "custom_profile_field_value_user_profile_id_field_id_key" ON "custom_profile_field_value"("user_profile_id", "field_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_status_user_profile_id_key" ON "user_status"("user_profile_id");

-- CreateIndex
CREATE INDEX "user_status_realm_id_idx" ON "user_status"("realm_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_presence_user_profile_id_key" ON "user_presence"("user_profile_id");

-- CreateIndex
CREATE INDEX "user_presence_realm_id_last_active_time_idx" ON "user_presence"("realm_id", "last_active_time");

-- CreateIndex
CREATE INDEX "alert_word_realm_id_idx" ON "alert_word"("realm_id");

-- CreateIndex
CREATE UNIQUE INDEX "alert_word_user_profile_id_word_key" ON "alert_word"("user_profile_id", "word");

-- CreateIndex
CREATE INDEX "muted_user_muted_user_id_idx" ON "muted_user"("muted_user_id");

-- CreateIndex
CREATE UNIQUE INDEX "muted_user_user_profile_id_muted_user_id_key" ON "muted_user"("user_profile_id", "muted_user_id");

-- CreateIndex
CREATE INDEX "preregistration_user_realm_id_email_idx" ON "preregistration_user"("realm_id", "email");

-- CreateIndex
CREATE INDEX "preregistration_user_realm_id_referred_by_id_invited_at_idx" ON "preregistration_user"("realm_id", "referred_by_id", "invited_at");

-- CreateIndex
CREATE INDEX "preregistration_user_stream_stream_id_idx" ON "preregistration_user_stream"("stream_id");

-- CreateIndex
CREATE INDEX "preregistration_user_group_user_group_id_idx" ON "preregistration_user_group"("user_group_id");

-- CreateIndex
CREATE INDEX "multiuse_invite_realm_id_idx" ON "multiuse_invite"("realm_id");

-- CreateIndex
CREATE INDEX "multiuse_invite_stream_stream_id_idx" ON "multiuse_invite_stream"("stream_id");

-- CreateIndex
CREATE INDEX "multiuse_invite_group_user_group_id_idx" ON "multiuse_invite_group"("user_group_id");

-- CreateIndex
CREATE UNIQUE INDEX "confirmation_confirmation_key_key" ON "confirmation"("confirmation_key");

-- CreateIndex
CREATE INDEX "confirmation_type_object_id_idx" ON "confirmation"("type", "object_id");

-- CreateIndex
CREATE INDEX "email_outbox_sent_at_scheduled_at_idx" ON "email_outbox"("sent_at", "scheduled_at");

-- CreateIndex
CREATE INDEX "push_device_realm_id_idx" ON "push_device"("realm_id");

-- CreateIndex
CREATE UNIQUE INDEX "push_device_user_profile_id_push_account_id_key" ON "push_device"("user_profile_id", "push_account_id");

-- CreateIndex
CREATE INDEX "video_call_provider_token_realm_id_idx" ON "video_call_provider_token"("realm_id");

-- CreateIndex
CREATE UNIQUE INDEX "video_call_provider_token_user_profile_id_provider_key" ON "video_call_provider_token"("user_profile_id", "provider");

-- CreateIndex
CREATE INDEX "realm_audit_log_realm_id_event_time_idx" ON "realm_audit_log"("realm_id", "event_time");

-- CreateIndex
CREATE INDEX "realm_audit_log_realm_id_event_type_idx" ON "realm_audit_log"("realm_id", "event_type");

-- CreateIndex
CREATE INDEX "realm_audit_log_modified_user_id_event_type_idx" ON "realm_audit_log"("modified_user_id", "event_type");

-- CreateIndex
CREATE INDEX "realm_audit_log_modified_stream_id_idx" ON "realm_audit_log"("modified_stream_id");

-- CreateIndex
CREATE INDEX "realm_audit_log_modified_user_group_id_idx" ON "realm_audit_log"("modified_user_group_id");

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_moderation_request_channel_id_fkey" FOREIGN KEY ("moderation_request_channel_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_new_stream_announcements_stream_id_fkey" FOREIGN KEY ("new_stream_announcements_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_signup_announcements_stream_id_fkey" FOREIGN KEY ("signup_announcements_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_zulip_update_announcements_stream_id_fkey" FOREIGN KEY ("zulip_update_announcements_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_access_all_users_group_id_fkey" FOREIGN KEY ("can_access_all_users_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_add_custom_emoji_group_id_fkey" FOREIGN KEY ("can_add_custom_emoji_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_add_subscribers_group_id_fkey" FOREIGN KEY ("can_add_subscribers_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_bots_group_id_fkey" FOREIGN KEY ("can_create_bots_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_groups_id_fkey" FOREIGN KEY ("can_create_groups_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_private_channel_group_id_fkey" FOREIGN KEY ("can_create_private_channel_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_public_channel_group_id_fkey" FOREIGN KEY ("can_create_public_channel_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_web_public_channel_group_id_fkey" FOREIGN KEY ("can_create_web_public_channel_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_write_only_bots_group_id_fkey" FOREIGN KEY ("can_create_write_only_bots_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_delete_any_message_group_id_fkey" FOREIGN KEY ("can_delete_any_message_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_delete_own_message_group_id_fkey" FOREIGN KEY ("can_delete_own_message_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_invite_users_group_id_fkey" FOREIGN KEY ("can_invite_users_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_manage_all_groups_id_fkey" FOREIGN KEY ("can_manage_all_groups_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_manage_billing_group_id_fkey" FOREIGN KEY ("can_manage_billing_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_mention_many_users_group_id_fkey" FOREIGN KEY ("can_mention_many_users_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_move_messages_between_channels_group_id_fkey" FOREIGN KEY ("can_move_messages_between_channels_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_move_messages_between_topics_group_id_fkey" FOREIGN KEY ("can_move_messages_between_topics_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_resolve_topics_group_id_fkey" FOREIGN KEY ("can_resolve_topics_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_set_delete_message_policy_group_id_fkey" FOREIGN KEY ("can_set_delete_message_policy_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_set_topics_policy_group_id_fkey" FOREIGN KEY ("can_set_topics_policy_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_summarize_topics_group_id_fkey" FOREIGN KEY ("can_summarize_topics_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_create_multiuse_invite_group_id_fkey" FOREIGN KEY ("create_multiuse_invite_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_direct_message_initiator_group_id_fkey" FOREIGN KEY ("direct_message_initiator_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_direct_message_permission_group_id_fkey" FOREIGN KEY ("direct_message_permission_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_domain" ADD CONSTRAINT "realm_domain_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_filter" ADD CONSTRAINT "realm_filter_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_emoji" ADD CONSTRAINT "realm_emoji_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_emoji" ADD CONSTRAINT "realm_emoji_author_id_fkey" FOREIGN KEY ("author_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_bot_owner_id_fkey" FOREIGN KEY ("bot_owner_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_default_sending_stream_id_fkey" FOREIGN KEY ("default_sending_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_default_events_register_stream_id_fkey" FOREIGN KEY ("default_events_register_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "recipient" ADD CONSTRAINT "recipient_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "direct_message_group" ADD CONSTRAINT "direct_message_group_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "direct_message_group" ADD CONSTRAINT "direct_message_group_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_folder_id_fkey" FOREIGN KEY ("folder_id") REFERENCES "channel_folder"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_add_subscribers_group_id_fkey" FOREIGN KEY ("can_add_subscribers_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_administer_channel_group_id_fkey" FOREIGN KEY ("can_administer_channel_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_create_topic_group_id_fkey" FOREIGN KEY ("can_create_topic_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_delete_any_message_group_id_fkey" FOREIGN KEY ("can_delete_any_message_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_delete_own_message_group_id_fkey" FOREIGN KEY ("can_delete_own_message_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_move_messages_out_of_channel_group_id_fkey" FOREIGN KEY ("can_move_messages_out_of_channel_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_move_messages_within_channel_group_id_fkey" FOREIGN KEY ("can_move_messages_within_channel_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_remove_subscribers_group_id_fkey" FOREIGN KEY ("can_remove_subscribers_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_resolve_topics_group_id_fkey" FOREIGN KEY ("can_resolve_topics_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_send_message_group_id_fkey" FOREIGN KEY ("can_send_message_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_subscribe_group_id_fkey" FOREIGN KEY ("can_subscribe_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "default_stream" ADD CONSTRAINT "default_stream_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "default_stream" ADD CONSTRAINT "default_stream_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "channel_folder" ADD CONSTRAINT "channel_folder_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "channel_folder" ADD CONSTRAINT "channel_folder_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message" ADD CONSTRAINT "message_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message" ADD CONSTRAINT "message_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message" ADD CONSTRAINT "message_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message" ADD CONSTRAINT "message_sending_client_id_fkey" FOREIGN KEY ("sending_client_id") REFERENCES "client"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_edit" ADD CONSTRAINT "message_edit_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_edit" ADD CONSTRAINT "message_edit_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_edit" ADD CONSTRAINT "message_edit_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_edit" ADD CONSTRAINT "message_edit_prev_stream_id_fkey" FOREIGN KEY ("prev_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_edit" ADD CONSTRAINT "message_edit_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_message" ADD CONSTRAINT "user_message_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_message" ADD CONSTRAINT "user_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reaction" ADD CONSTRAINT "reaction_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reaction" ADD CONSTRAINT "reaction_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reaction" ADD CONSTRAINT "reaction_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "submessage" ADD CONSTRAINT "submessage_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "submessage" ADD CONSTRAINT "submessage_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "submessage" ADD CONSTRAINT "submessage_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment" ADD CONSTRAINT "attachment_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment" ADD CONSTRAINT "attachment_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_message" ADD CONSTRAINT "attachment_message_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_message" ADD CONSTRAINT "attachment_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_scheduled_message" ADD CONSTRAINT "attachment_scheduled_message_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_scheduled_message" ADD CONSTRAINT "attachment_scheduled_message_scheduled_message_id_fkey" FOREIGN KEY ("scheduled_message_id") REFERENCES "scheduled_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_sending_client_id_fkey" FOREIGN KEY ("sending_client_id") REFERENCES "client"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_delivered_message_id_fkey" FOREIGN KEY ("delivered_message_id") REFERENCES "message"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "draft" ADD CONSTRAINT "draft_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "draft" ADD CONSTRAINT "draft_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "draft" ADD CONSTRAINT "draft_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_id_fkey" FOREIGN KEY ("id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_can_add_members_group_id_fkey" FOREIGN KEY ("can_add_members_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_can_join_group_id_fkey" FOREIGN KEY ("can_join_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_can_leave_group_id_fkey" FOREIGN KEY ("can_leave_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_can_manage_group_id_fkey" FOREIGN KEY ("can_manage_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_can_mention_group_id_fkey" FOREIGN KEY ("can_mention_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "named_user_group" ADD CONSTRAINT "named_user_group_can_remove_members_group_id_fkey" FOREIGN KEY ("can_remove_members_group_id") REFERENCES "user_group"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group_membership" ADD CONSTRAINT "user_group_membership_user_group_id_fkey" FOREIGN KEY ("user_group_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group_membership" ADD CONSTRAINT "user_group_membership_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group_group_membership" ADD CONSTRAINT "group_group_membership_supergroup_id_fkey" FOREIGN KEY ("supergroup_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group_group_membership" ADD CONSTRAINT "group_group_membership_subgroup_id_fkey" FOREIGN KEY ("subgroup_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_topic" ADD CONSTRAINT "user_topic_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_topic" ADD CONSTRAINT "user_topic_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_topic" ADD CONSTRAINT "user_topic_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_topic" ADD CONSTRAINT "user_topic_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "custom_profile_field" ADD CONSTRAINT "custom_profile_field_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "custom_profile_field_value" ADD CONSTRAINT "custom_profile_field_value_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "custom_profile_field_value" ADD CONSTRAINT "custom_profile_field_value_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "custom_profile_field_value" ADD CONSTRAINT "custom_profile_field_value_field_id_fkey" FOREIGN KEY ("field_id") REFERENCES "custom_profile_field"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_status" ADD CONSTRAINT "user_status_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_status" ADD CONSTRAINT "user_status_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_status" ADD CONSTRAINT "user_status_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "client"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_presence" ADD CONSTRAINT "user_presence_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_presence" ADD CONSTRAINT "user_presence_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_word" ADD CONSTRAINT "alert_word_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_word" ADD CONSTRAINT "alert_word_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "muted_user" ADD CONSTRAINT "muted_user_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "muted_user" ADD CONSTRAINT "muted_user_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "muted_user" ADD CONSTRAINT "muted_user_muted_user_id_fkey" FOREIGN KEY ("muted_user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user" ADD CONSTRAINT "preregistration_user_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user" ADD CONSTRAINT "preregistration_user_referred_by_id_fkey" FOREIGN KEY ("referred_by_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user" ADD CONSTRAINT "preregistration_user_created_user_id_fkey" FOREIGN KEY ("created_user_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user" ADD CONSTRAINT "preregistration_user_multiuse_invite_id_fkey" FOREIGN KEY ("multiuse_invite_id") REFERENCES "multiuse_invite"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user_stream" ADD CONSTRAINT "preregistration_user_stream_preregistration_user_id_fkey" FOREIGN KEY ("preregistration_user_id") REFERENCES "preregistration_user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user_stream" ADD CONSTRAINT "preregistration_user_stream_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user_group" ADD CONSTRAINT "preregistration_user_group_preregistration_user_id_fkey" FOREIGN KEY ("preregistration_user_id") REFERENCES "preregistration_user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preregistration_user_group" ADD CONSTRAINT "preregistration_user_group_user_group_id_fkey" FOREIGN KEY ("user_group_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite" ADD CONSTRAINT "multiuse_invite_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite" ADD CONSTRAINT "multiuse_invite_referred_by_id_fkey" FOREIGN KEY ("referred_by_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite_stream" ADD CONSTRAINT "multiuse_invite_stream_multiuse_invite_id_fkey" FOREIGN KEY ("multiuse_invite_id") REFERENCES "multiuse_invite"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite_stream" ADD CONSTRAINT "multiuse_invite_stream_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite_group" ADD CONSTRAINT "multiuse_invite_group_multiuse_invite_id_fkey" FOREIGN KEY ("multiuse_invite_id") REFERENCES "multiuse_invite"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite_group" ADD CONSTRAINT "multiuse_invite_group_user_group_id_fkey" FOREIGN KEY ("user_group_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "confirmation" ADD CONSTRAINT "confirmation_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "email_outbox" ADD CONSTRAINT "email_outbox_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "push_device" ADD CONSTRAINT "push_device_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "push_device" ADD CONSTRAINT "push_device_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_call_provider_token" ADD CONSTRAINT "video_call_provider_token_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_call_provider_token" ADD CONSTRAINT "video_call_provider_token_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_audit_log" ADD CONSTRAINT "realm_audit_log_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_audit_log" ADD CONSTRAINT "realm_audit_log_acting_user_id_fkey" FOREIGN KEY ("acting_user_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_audit_log" ADD CONSTRAINT "realm_audit_log_modified_user_id_fkey" FOREIGN KEY ("modified_user_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_audit_log" ADD CONSTRAINT "realm_audit_log_modified_stream_id_fkey" FOREIGN KEY ("modified_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_audit_log" ADD CONSTRAINT "realm_audit_log_modified_user_group_id_fkey" FOREIGN KEY ("modified_user_group_id") REFERENCES "user_group"("id") ON DELETE SET NULL ON UPDATE CASCADE;
