-- A channel's topics, one row each with its latest message (GET /users/me/{stream_id}/topics
-- reads them), kept by the database in the very statement that changes `message`: whatever path
-- sends, moves, renames or deletes messages (the send pipeline, topic moves, deletions,
-- retention, imports, populate-scale), the summary cannot drift from the messages. Statement-level
-- triggers with transition tables: a bulk statement costs one set-based update, not one per row.
CREATE TABLE "channel_topic" (
    "recipient_id" INTEGER NOT NULL,
    "topic_lower" TEXT NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "subject" TEXT NOT NULL,
    "max_id" INTEGER NOT NULL,

    CONSTRAINT "channel_topic_pkey" PRIMARY KEY ("recipient_id","topic_lower")
);

ALTER TABLE "channel_topic" ADD CONSTRAINT "channel_topic_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The topics named (channel recipient, lowercased topic, realm) made right again: each row takes
-- its topic's latest message (one descent of the (realm_id, recipient_id, lower(subject), id)
-- index), or goes when the topic has none left. Keys in a sorted order, so that two transactions
-- lock shared rows in the same order.
CREATE FUNCTION channel_topic_recompute(recipients INTEGER[], topics TEXT[], realms INTEGER[])
RETURNS void LANGUAGE sql AS $$
  WITH k AS (
    SELECT DISTINCT recipient_id, topic_lower, realm_id
    FROM unnest(recipients, topics, realms) AS k(recipient_id, topic_lower, realm_id)
  ), latest AS (
    SELECT k.recipient_id, k.topic_lower, k.realm_id, l.id, l.subject FROM k
    LEFT JOIN LATERAL (
      SELECT m.id, m.subject FROM message m
      WHERE m.realm_id = k.realm_id AND m.recipient_id = k.recipient_id AND lower(m.subject) = k.topic_lower
      ORDER BY m.id DESC LIMIT 1
    ) l ON TRUE
  ), gone AS (
    DELETE FROM channel_topic ct USING latest
    WHERE latest.id IS NULL AND ct.recipient_id = latest.recipient_id AND ct.topic_lower = latest.topic_lower
  )
  INSERT INTO channel_topic (recipient_id, topic_lower, realm_id, subject, max_id)
  SELECT recipient_id, topic_lower, realm_id, subject, id FROM latest WHERE id IS NOT NULL
  ORDER BY recipient_id, topic_lower
  ON CONFLICT (recipient_id, topic_lower) DO UPDATE SET subject = excluded.subject, max_id = excluded.max_id;
$$;

-- A send (or a bulk insert): each topic takes the statement's latest message in it, when later
-- than the one it has.
CREATE FUNCTION channel_topic_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO channel_topic (recipient_id, topic_lower, realm_id, subject, max_id)
  SELECT DISTINCT ON (recipient_id, lower(subject)) recipient_id, lower(subject), realm_id, subject, id
  FROM new_rows WHERE is_channel_message
  ORDER BY recipient_id, lower(subject), id DESC
  ON CONFLICT (recipient_id, topic_lower) DO UPDATE SET subject = excluded.subject, max_id = excluded.max_id
  WHERE excluded.max_id > channel_topic.max_id;
  RETURN NULL;
END $$;

-- A move or rename (of channel or topic, or only the topic's case): the topics the changed
-- messages left and joined are recomputed. Other updates (edits of content) change no key.
CREATE FUNCTION channel_topic_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM channel_topic_recompute(array_agg(k.recipient_id), array_agg(k.topic_lower), array_agg(k.realm_id))
  FROM (
    SELECT o.recipient_id, lower(o.subject) AS topic_lower, o.realm_id
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE o.is_channel_message AND (o.recipient_id <> n.recipient_id OR o.subject <> n.subject)
    UNION
    SELECT n.recipient_id, lower(n.subject), n.realm_id
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE n.is_channel_message AND (o.recipient_id <> n.recipient_id OR o.subject <> n.subject)
  ) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

-- A deletion: the topics of the deleted messages are recomputed (or go, when emptied).
CREATE FUNCTION channel_topic_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM channel_topic_recompute(array_agg(o.recipient_id), array_agg(lower(o.subject)), array_agg(o.realm_id))
  FROM old_rows o WHERE o.is_channel_message
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE TRIGGER channel_topic_insert AFTER INSERT ON message
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION channel_topic_after_insert();
CREATE TRIGGER channel_topic_update AFTER UPDATE ON message
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION channel_topic_after_update();
CREATE TRIGGER channel_topic_delete AFTER DELETE ON message
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION channel_topic_after_delete();

-- The topics of the messages already sent.
INSERT INTO channel_topic (recipient_id, topic_lower, realm_id, subject, max_id)
SELECT DISTINCT ON (recipient_id, lower(subject)) recipient_id, lower(subject), realm_id, subject, id
FROM message WHERE is_channel_message
ORDER BY recipient_id, lower(subject), id DESC;
