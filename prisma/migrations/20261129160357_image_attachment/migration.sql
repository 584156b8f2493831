-- CreateTable
CREATE TABLE "image_attachment" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "path_id" TEXT NOT NULL,
    "original_width_px" INTEGER NOT NULL,
    "original_height_px" INTEGER NOT NULL,
    "frames" INTEGER NOT NULL,
    "thumbnail_metadata" JSONB NOT NULL DEFAULT '[]',
    "content_type" TEXT,

    CONSTRAINT "image_attachment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "image_attachment_path_id_key" ON "image_attachment"("path_id");

-- CreateIndex
CREATE INDEX "image_attachment_realm_id_idx" ON "image_attachment"("realm_id");

-- AddForeignKey
ALTER TABLE "image_attachment" ADD CONSTRAINT "image_attachment_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;
