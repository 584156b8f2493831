-- AlterTable
ALTER TABLE "custom_profile_field" ALTER COLUMN "field_data" SET DATA TYPE JSON;
