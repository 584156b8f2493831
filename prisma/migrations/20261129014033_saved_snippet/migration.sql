-- CreateTable
CREATE TABLE "saved_snippet" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "saved_snippet_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "saved_snippet_user_profile_id_idx" ON "saved_snippet"("user_profile_id");

-- AddForeignKey
ALTER TABLE "saved_snippet" ADD CONSTRAINT "saved_snippet_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "saved_snippet" ADD CONSTRAINT "saved_snippet_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
