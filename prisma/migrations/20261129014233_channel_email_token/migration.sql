-- A volatile default is evaluated for every existing row, so each channel gets its own token.
-- AlterTable
ALTER TABLE "stream" ADD COLUMN     "email_token" TEXT NOT NULL DEFAULT md5((random())::text || (clock_timestamp())::text);
