-- AlterTable
ALTER TABLE "realm" ADD COLUMN     "avatar_changes_disabled" BOOLEAN NOT NULL DEFAULT false;
