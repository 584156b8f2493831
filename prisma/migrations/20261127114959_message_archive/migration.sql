-- CreateTable
CREATE TABLE "archive_transaction" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER,
    "timestamp" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "restored" BOOLEAN NOT NULL DEFAULT false,
    "type" INTEGER NOT NULL,

    CONSTRAINT "archive_transaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_message" (
    "id" INTEGER NOT NULL,
    "archive_transaction_id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "subject" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "rendered_content" TEXT,
    "rendered_content_version" INTEGER,
    "date_sent" TIMESTAMPTZ(6) NOT NULL,
    "sending_client_id" INTEGER NOT NULL,
    "last_edit_time" TIMESTAMPTZ(6),
    "last_moved_time" TIMESTAMPTZ(6),
    "type" INTEGER NOT NULL DEFAULT 1,
    "has_attachment" BOOLEAN NOT NULL DEFAULT false,
    "has_image" BOOLEAN NOT NULL DEFAULT false,
    "has_link" BOOLEAN NOT NULL DEFAULT false,
    "is_channel_message" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "archived_message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_user_message" (
    "id" BIGINT NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "flags" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "archived_user_message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_reaction" (
    "id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "emoji_name" TEXT NOT NULL,
    "emoji_code" TEXT NOT NULL,
    "reaction_type" TEXT NOT NULL,

    CONSTRAINT "archived_reaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_submessage" (
    "id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "msg_type" TEXT NOT NULL,
    "content" TEXT NOT NULL,

    CONSTRAINT "archived_submessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_message_edit" (
    "id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "user_id" INTEGER,
    "edit_time" TIMESTAMPTZ(6) NOT NULL,
    "prev_content" TEXT,
    "prev_rendered_content" TEXT,
    "prev_rendered_content_version" INTEGER,
    "prev_topic" TEXT,
    "topic" TEXT,
    "prev_stream_id" INTEGER,
    "stream_id" INTEGER,

    CONSTRAINT "archived_message_edit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_attachment" (
    "id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "file_name" TEXT NOT NULL,
    "path_id" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "content_type" TEXT,
    "create_time" TIMESTAMPTZ(6) NOT NULL,
    "is_realm_public" BOOLEAN,
    "is_web_public" BOOLEAN,

    CONSTRAINT "archived_attachment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_attachment_message" (
    "attachment_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,

    CONSTRAINT "archived_attachment_message_pkey" PRIMARY KEY ("attachment_id","message_id")
);

-- CreateIndex
CREATE INDEX "archive_transaction_timestamp_idx" ON "archive_transaction"("timestamp");

-- CreateIndex
CREATE INDEX "archived_message_archive_transaction_id_idx" ON "archived_message"("archive_transaction_id");

-- CreateIndex
CREATE INDEX "archived_user_message_message_id_idx" ON "archived_user_message"("message_id");

-- CreateIndex
CREATE INDEX "archived_reaction_message_id_idx" ON "archived_reaction"("message_id");

-- CreateIndex
CREATE INDEX "archived_submessage_message_id_idx" ON "archived_submessage"("message_id");

-- CreateIndex
CREATE INDEX "archived_message_edit_message_id_idx" ON "archived_message_edit"("message_id");

-- CreateIndex
CREATE INDEX "archived_attachment_path_id_idx" ON "archived_attachment"("path_id");

-- CreateIndex
CREATE INDEX "archived_attachment_message_message_id_idx" ON "archived_attachment_message"("message_id");

-- AddForeignKey
ALTER TABLE "archived_message" ADD CONSTRAINT "archived_message_archive_transaction_id_fkey" FOREIGN KEY ("archive_transaction_id") REFERENCES "archive_transaction"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "archived_user_message" ADD CONSTRAINT "archived_user_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "archived_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "archived_reaction" ADD CONSTRAINT "archived_reaction_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "archived_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "archived_submessage" ADD CONSTRAINT "archived_submessage_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "archived_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "archived_message_edit" ADD CONSTRAINT "archived_message_edit_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "archived_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "archived_attachment_message" ADD CONSTRAINT "archived_attachment_message_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "archived_attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "archived_attachment_message" ADD CONSTRAINT "archived_attachment_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "archived_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
