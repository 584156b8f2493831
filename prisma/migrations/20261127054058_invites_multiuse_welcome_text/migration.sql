-- AlterTable
ALTER TABLE "multiuse_invite" ADD COLUMN     "welcome_message_custom_text" TEXT;
