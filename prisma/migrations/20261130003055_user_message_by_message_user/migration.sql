-- A user's row of a message, found by message then user: the planner reads a user's row through
-- the message index when it believes messages have few recipients, and with (message_id) alone
-- that walked every recipient of a message to a channel of thousands (sender:me at 10,000 people:
-- 5,600 rows removed per message, 60 ms). Same size per entry as (message_id).
CREATE INDEX "user_message_message_id_user_profile_id_idx" ON "user_message"("message_id", "user_profile_id");

DROP INDEX "user_message_message_id_idx";
