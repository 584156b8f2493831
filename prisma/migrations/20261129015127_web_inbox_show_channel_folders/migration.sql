-- AlterTable
ALTER TABLE "user_profile" ADD COLUMN     "web_inbox_show_channel_folders" BOOLEAN NOT NULL DEFAULT true;
