-- CreateTable
CREATE TABLE "realm_export" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "type" SMALLINT NOT NULL DEFAULT 1,
    "status" SMALLINT NOT NULL DEFAULT 1,
    "date_requested" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "date_started" TIMESTAMPTZ(6),
    "date_succeeded" TIMESTAMPTZ(6),
    "date_failed" TIMESTAMPTZ(6),
    "date_deleted" TIMESTAMPTZ(6),
    "acting_user_id" INTEGER,
    "export_path" TEXT,
    "sha256sum_hex" TEXT,
    "tarball_size_bytes" BIGINT,
    "stats" JSONB,
    "claimed_until" TIMESTAMPTZ(6),
    "claimed_by" TEXT,

    CONSTRAINT "realm_export_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "realm_export_realm_id_date_requested_idx" ON "realm_export"("realm_id", "date_requested");

-- CreateIndex
CREATE INDEX "realm_export_status_idx" ON "realm_export"("status");

-- AddForeignKey
ALTER TABLE "realm_export" ADD CONSTRAINT "realm_export_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_export" ADD CONSTRAINT "realm_export_acting_user_id_fkey" FOREIGN KEY ("acting_user_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;
