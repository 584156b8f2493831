-- AlterTable
ALTER TABLE "email_outbox" ADD COLUMN     "headers" JSONB;

-- CreateTable
CREATE TABLE "scheduled_message_notification_email" (
    "id" SERIAL NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "trigger" TEXT NOT NULL,
    "mentioned_user_group_id" INTEGER,
    "scheduled_timestamp" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "scheduled_message_notification_email_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "scheduled_message_notification_email_scheduled_timestamp_idx" ON "scheduled_message_notification_email"("scheduled_timestamp");

-- CreateIndex
CREATE INDEX "scheduled_message_notification_email_user_profile_id_schedu_idx" ON "scheduled_message_notification_email"("user_profile_id", "scheduled_timestamp");

-- AddForeignKey
ALTER TABLE "scheduled_message_notification_email" ADD CONSTRAINT "scheduled_message_notification_email_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message_notification_email" ADD CONSTRAINT "scheduled_message_notification_email_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
