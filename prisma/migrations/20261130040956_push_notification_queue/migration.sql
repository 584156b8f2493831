-- CreateTable
CREATE TABLE "push_notification_queue" (
    "id" SERIAL NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "message_ids" INTEGER[],
    "trigger" TEXT,
    "scheduled_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_at" TIMESTAMPTZ(6),
    "claimed_by" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "push_notification_queue_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "push_notification_queue_scheduled_at_idx" ON "push_notification_queue"("scheduled_at");

-- AddForeignKey
ALTER TABLE "push_notification_queue" ADD CONSTRAINT "push_notification_queue_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
