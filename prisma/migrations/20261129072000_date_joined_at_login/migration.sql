-- AlterTable
ALTER TABLE "user_profile" ADD COLUMN     "date_joined_at_login" BOOLEAN NOT NULL DEFAULT false;
