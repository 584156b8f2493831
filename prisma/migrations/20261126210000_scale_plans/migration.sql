-- Written by hand: Prisma cannot express extended statistics, expression or partial indexes.

-- Statistics on the flag tests the narrows write (lib/narrow.ts; the partial indexes of migration
-- 20261123215650_messages name the same expressions). Without them PostgreSQL has no statistics
-- for an expression such as (flags & 120) and guesses: it estimated 288,778 rows of a user's
-- 2.7 million for `(flags & 120) <> 0` where there were 31, and merge-joined the whole message
-- table backwards (310 ms) instead of reading the user's 31 rows from the partial index (a few
-- ms). The MCV list of the combination also estimates narrows that test two flags (unread
-- mentions). Expression statistics need PostgreSQL 14 or later (PGlite is 17); PostgreSQL 13,
-- which the README still names, goes without them.
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 140000 THEN
    CREATE STATISTICS "user_message_flags_stats" ON ("flags" & 1), ("flags" & 2), ("flags" & 120), ("flags" & 512), ("flags" & 2048) FROM "user_message";
  END IF;
END $$;

-- Statistics are built by ANALYZE (sampled: seconds, whatever the table's size), which
-- autovacuum would otherwise run only after enough rows change.
ANALYZE "user_message";

-- A topic named without its channel (`topic:` alone, as Zulip's search allows): Zulip's
-- zerver_message_realm_upper_subject. Without it the topic was found by walking the
-- organization's messages from the newest (300 ms at 200,000 messages, growing with them).
CREATE INDEX "message_realm_id_lower_subject_id_idx" ON "message" ("realm_id", lower("subject"), "id") WHERE "is_channel_message";

-- `has:` in a channel: the channel's messages with an image, an upload or a link, newest first,
-- rather than every message of the channel read until enough of them have one.
CREATE INDEX "message_has_image_idx" ON "message" ("realm_id", "recipient_id", "id") WHERE "has_image";
CREATE INDEX "message_has_attachment_idx" ON "message" ("realm_id", "recipient_id", "id") WHERE "has_attachment";
CREATE INDEX "message_has_link_idx" ON "message" ("realm_id", "recipient_id", "id") WHERE "has_link";
