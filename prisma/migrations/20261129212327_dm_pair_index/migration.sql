-- A direct-message conversation is read as two ordered scans, one per sender (issue 34): the
-- (realm_id, sender_id, recipient_id) index gains the id, so each scan walks from the anchor
-- outwards and stops at the limit instead of collecting and sorting the whole conversation.
DROP INDEX IF EXISTS "message_realm_id_sender_id_recipient_id_idx";

CREATE INDEX IF NOT EXISTS "message_realm_id_sender_id_recipient_id_id_idx" ON "message"("realm_id", "sender_id", "recipient_id", "id");
