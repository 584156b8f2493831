-- AlterTable
ALTER TABLE "event_log" ADD COLUMN     "all_public" BOOLEAN NOT NULL DEFAULT false;
