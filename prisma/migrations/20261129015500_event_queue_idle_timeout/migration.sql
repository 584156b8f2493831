-- AlterTable
ALTER TABLE "event_queue" ADD COLUMN     "idle_timeout_secs" INTEGER;
