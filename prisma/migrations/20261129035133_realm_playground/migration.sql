-- CreateTable
CREATE TABLE "realm_playground" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "pygments_language" VARCHAR(40) NOT NULL,
    "url_template" TEXT NOT NULL,

    CONSTRAINT "realm_playground_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "realm_playground_realm_id_pygments_language_name_key" ON "realm_playground"("realm_id", "pygments_language", "name");

-- AddForeignKey
ALTER TABLE "realm_playground" ADD CONSTRAINT "realm_playground_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;
