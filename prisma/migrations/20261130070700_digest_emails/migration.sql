-- AlterTable
ALTER TABLE "realm" ADD COLUMN     "digest_weekday" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "digest_email_record" (
    "user_profile_id" INTEGER NOT NULL,
    "last_digest_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "digest_email_record_pkey" PRIMARY KEY ("user_profile_id")
);

-- AddForeignKey
ALTER TABLE "digest_email_record" ADD CONSTRAINT "digest_email_record_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
