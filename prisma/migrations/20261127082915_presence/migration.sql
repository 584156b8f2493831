-- AlterTable
ALTER TABLE "realm" ADD COLUMN     "presence_disabled" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "user_presence" ALTER COLUMN "last_update_id" SET DATA TYPE BIGINT;

-- CreateIndex
CREATE INDEX "user_presence_realm_id_last_update_id_idx" ON "user_presence"("realm_id", "last_update_id");

-- Presence update ids (Zulip's PresenceSequence, without its per-organization counter row that
-- every presence write of the organization locks): a sequence hands out ids without locking.
CREATE SEQUENCE "user_presence_update_id_seq" AS BIGINT;
