-- CreateTable
CREATE TABLE "rate_limit_history" (
    "domain" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "hits" DOUBLE PRECISION[],
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "rate_limit_history_pkey" PRIMARY KEY ("domain","key")
);

-- CreateIndex
CREATE INDEX "rate_limit_history_expires_at_idx" ON "rate_limit_history"("expires_at");
