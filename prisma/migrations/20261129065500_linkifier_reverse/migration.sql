-- AlterTable
ALTER TABLE "realm_filter" ADD COLUMN     "alternative_url_templates" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "example_input" TEXT,
ADD COLUMN     "reverse_template" TEXT;
