-- CreateTable
CREATE TABLE "navigation_view" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "fragment" TEXT NOT NULL,
    "is_pinned" BOOLEAN NOT NULL,
    "name" TEXT,

    CONSTRAINT "navigation_view_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "navigation_view_user_profile_id_fragment_key" ON "navigation_view"("user_profile_id", "fragment");

-- CreateIndex
CREATE UNIQUE INDEX "navigation_view_user_profile_id_name_key" ON "navigation_view"("user_profile_id", "name");

-- AddForeignKey
ALTER TABLE "navigation_view" ADD CONSTRAINT "navigation_view_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "navigation_view" ADD CONSTRAINT "navigation_view_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
