-- DropIndex
DROP INDEX "channel_folder_realm_id_name_key";

-- DropIndex
DROP INDEX "message_realm_id_recipient_id_subject_id_idx";

-- DropIndex
DROP INDEX "named_user_group_realm_id_name_key";

-- DropIndex
DROP INDEX "stream_realm_id_name_key";

-- DropIndex
DROP INDEX "user_message_user_profile_id_flags_idx";

-- DropIndex
DROP INDEX "user_profile_realm_id_delivery_email_key";

-- DropIndex
DROP INDEX "user_profile_realm_id_email_key";

-- AlterTable
ALTER TABLE "realm" ALTER COLUMN "can_access_all_users_group_id" SET NOT NULL,
ALTER COLUMN "can_add_custom_emoji_group_id" SET NOT NULL,
ALTER COLUMN "can_add_subscribers_group_id" SET NOT NULL,
ALTER COLUMN "can_create_bots_group_id" SET NOT NULL,
ALTER COLUMN "can_create_groups_id" SET NOT NULL,
ALTER COLUMN "can_create_private_channel_group_id" SET NOT NULL,
ALTER COLUMN "can_create_public_channel_group_id" SET NOT NULL,
ALTER COLUMN "can_create_web_public_channel_group_id" SET NOT NULL,
ALTER COLUMN "can_create_write_only_bots_group_id" SET NOT NULL,
ALTER COLUMN "can_delete_any_message_group_id" SET NOT NULL,
ALTER COLUMN "can_delete_own_message_group_id" SET NOT NULL,
ALTER COLUMN "can_invite_users_group_id" SET NOT NULL,
ALTER COLUMN "can_manage_all_groups_id" SET NOT NULL,
ALTER COLUMN "can_manage_billing_group_id" SET NOT NULL,
ALTER COLUMN "can_mention_many_users_group_id" SET NOT NULL,
ALTER COLUMN "can_move_messages_between_channels_group_id" SET NOT NULL,
ALTER COLUMN "can_move_messages_between_topics_group_id" SET NOT NULL,
ALTER COLUMN "can_resolve_topics_group_id" SET NOT NULL,
ALTER COLUMN "can_set_delete_message_policy_group_id" SET NOT NULL,
ALTER COLUMN "can_set_topics_policy_group_id" SET NOT NULL,
ALTER COLUMN "can_summarize_topics_group_id" SET NOT NULL,
ALTER COLUMN "create_multiuse_invite_group_id" SET NOT NULL,
ALTER COLUMN "direct_message_initiator_group_id" SET NOT NULL,
ALTER COLUMN "direct_message_permission_group_id" SET NOT NULL;

-- AlterTable
-- (Prisma writes SET DATA TYPE BIGSERIAL, which PostgreSQL refuses: the column and its sequence.)
ALTER TABLE "user_message" ALTER COLUMN "id" SET DATA TYPE BIGINT;
ALTER SEQUENCE "user_message_id_seq" AS BIGINT;

-- CreateTable
CREATE TABLE "event_log" (
    "id" BIGSERIAL NOT NULL,
    "xid" BIGINT NOT NULL DEFAULT ((pg_current_xact_id())::text)::bigint,
    "realm_id" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "event" JSONB NOT NULL,
    "user_ids" INTEGER[],
    "user_data" JSONB,
    "invalidate" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_queue" (
    "id" TEXT NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "event_types" TEXT[],
    "options" JSONB NOT NULL,
    "narrow" JSONB NOT NULL DEFAULT '[]',
    "cursor_xid" BIGINT NOT NULL,
    "next_event_id" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_touch" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_queue_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_queue_item" (
    "queue_id" TEXT NOT NULL,
    "event_id" INTEGER NOT NULL,
    "log_id" BIGINT,
    "inline" JSONB,

    CONSTRAINT "event_queue_item_pkey" PRIMARY KEY ("queue_id","event_id")
);

-- CreateIndex
CREATE INDEX "event_log_xid_idx" ON "event_log"("xid");

-- CreateIndex
CREATE INDEX "event_queue_user_profile_id_last_touch_idx" ON "event_queue"("user_profile_id", "last_touch");

-- CreateIndex
CREATE INDEX "event_queue_last_touch_idx" ON "event_queue"("last_touch");

-- CreateIndex
CREATE INDEX "event_queue_item_log_id_idx" ON "event_queue_item"("log_id");

-- AddForeignKey
ALTER TABLE "event_queue_item" ADD CONSTRAINT "event_queue_item_log_id_fkey" FOREIGN KEY ("log_id") REFERENCES "event_log"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_queue_item" ADD CONSTRAINT "event_queue_item_queue_id_fkey" FOREIGN KEY ("queue_id") REFERENCES "event_queue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------
-- Written by hand: what the Prisma schema cannot express.

-- UserMessage.flags bits at Zulip's positions (ALL_FLAGS: group_mentioned is bit 6,
-- has_alert_word 9, historical 10, is_private 11, active_mobile_push_notification 12);
-- bits 10-13 were used one position too high.
UPDATE "user_message" SET "flags" = ("flags" & 63) | (("flags" >> 1) & 7680) WHERE "flags" >= 1024;

-- Flag lookups, as Zulip's partial indexes: a query names the same constant predicate.
CREATE INDEX "user_message_unread_idx" ON "user_message" ("user_profile_id", "message_id") WHERE ("flags" & 1) = 0;
CREATE INDEX "user_message_starred_idx" ON "user_message" ("user_profile_id", "message_id") WHERE ("flags" & 2) <> 0;
CREATE INDEX "user_message_mentioned_idx" ON "user_message" ("user_profile_id", "message_id") WHERE ("flags" & 120) <> 0;
CREATE INDEX "user_message_has_alert_word_idx" ON "user_message" ("user_profile_id", "message_id") WHERE ("flags" & 512) <> 0;
CREATE INDEX "user_message_is_private_idx" ON "user_message" ("user_profile_id", "message_id") WHERE ("flags" & 2048) <> 0;

-- Case-insensitive uniqueness (Zulip's Upper(...) constraints), served by the index lookups use.
CREATE UNIQUE INDEX "user_profile_realm_id_lower_delivery_email_key" ON "user_profile" ("realm_id", lower("delivery_email"));
CREATE UNIQUE INDEX "user_profile_realm_id_lower_email_key" ON "user_profile" ("realm_id", lower("email"));
CREATE UNIQUE INDEX "stream_realm_id_lower_name_key" ON "stream" ("realm_id", lower("name"));
CREATE UNIQUE INDEX "named_user_group_realm_id_lower_name_key" ON "named_user_group" ("realm_id", lower("name"));
CREATE UNIQUE INDEX "channel_folder_realm_id_lower_name_key" ON "channel_folder" ("realm_id", lower("name"));

-- Topics are matched case-insensitively (Zulip's zerver_message_realm_recipient_upper_subject).
CREATE INDEX "message_realm_id_recipient_id_lower_subject_id_idx" ON "message" ("realm_id", "recipient_id", lower("subject"), "id");
