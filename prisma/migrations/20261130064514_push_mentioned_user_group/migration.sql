-- AlterTable
ALTER TABLE "push_notification_queue" ADD COLUMN     "mentioned_user_group_id" INTEGER;
