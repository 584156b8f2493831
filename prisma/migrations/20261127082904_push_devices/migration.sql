-- AlterTable
ALTER TABLE "push_device" ADD COLUMN     "pending_push_token_id" BIGINT,
ADD COLUMN     "push_token_id" BIGINT,
ADD COLUMN     "push_token_last_updated" TIMESTAMPTZ(6),
ALTER COLUMN "push_account_id" DROP NOT NULL,
ALTER COLUMN "token_kind" DROP NOT NULL,
ALTER COLUMN "push_key_id" SET DATA TYPE BIGINT;

-- CreateIndex
CREATE INDEX "push_device_user_profile_id_push_token_id_idx" ON "push_device"("user_profile_id", "push_token_id");
