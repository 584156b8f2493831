-- CreateTable
CREATE TABLE "server_secret" (
    "name" TEXT NOT NULL,
    "value" BYTEA NOT NULL,

    CONSTRAINT "server_secret_pkey" PRIMARY KEY ("name")
);
