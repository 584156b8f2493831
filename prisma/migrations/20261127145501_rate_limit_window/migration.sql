-- CreateTable
CREATE TABLE "rate_limit_window" (
    "domain" TEXT NOT NULL,
    "seconds" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(6) NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "granted" INTEGER NOT NULL,
    "leased" INTEGER NOT NULL,

    CONSTRAINT "rate_limit_window_pkey" PRIMARY KEY ("domain","seconds","key")
);

-- CreateIndex
CREATE INDEX "rate_limit_window_expires_at_idx" ON "rate_limit_window"("expires_at");
