-- CreateTable
CREATE TABLE "push_device_token" (
    "id" SERIAL NOT NULL,
    "user_profile_id" INTEGER NOT NULL,
    "kind" INTEGER NOT NULL,
    "token" TEXT NOT NULL,
    "ios_app_id" TEXT,
    "last_updated" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "push_device_token_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "push_device_token_user_profile_id_kind_token_key" ON "push_device_token"("user_profile_id", "kind", "token");

-- AddForeignKey
ALTER TABLE "push_device_token" ADD CONSTRAINT "push_device_token_user_profile_id_fkey" FOREIGN KEY ("user_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
