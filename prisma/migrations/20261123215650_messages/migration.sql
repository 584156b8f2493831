-- Written by hand: Prisma cannot express generated columns or GIN indexes.

-- Full-text search (Zulip's search_tsvector), kept by the database itself on every insert and
-- update of the topic or the content, on PostgreSQL and on PGlite alike.
ALTER TABLE "message" ADD COLUMN "search_tsvector" tsvector
  GENERATED ALWAYS AS (to_tsvector('english'::regconfig, "subject" || ' ' || "content")) STORED;
CREATE INDEX "message_search_tsvector_idx" ON "message" USING GIN ("search_tsvector");

-- The delivery loop's claim: due rows that are neither delivered nor failed, oldest first.
CREATE INDEX "scheduled_message_due_idx" ON "scheduled_message" ("scheduled_timestamp") WHERE NOT "delivered" AND NOT "failed";

