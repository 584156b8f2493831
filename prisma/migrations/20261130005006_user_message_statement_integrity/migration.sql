-- user_message's integrity, checked once per statement instead of once per row.
--
-- A foreign key checks each inserted row by itself: a lookup of its message and of its user, each
-- locked FOR KEY SHARE. A send to a channel of 10,000 inserts 10,000 rows: their checks took longer
-- than the inserts (about 75 ms of the send). These triggers keep what the two foreign keys
-- guaranteed, with set-based statements:
-- - an insert (or a change of a row's keys) names existing messages, locked FOR KEY SHARE as the
--   foreign key's check locks them, so a message deleted by a transaction still running makes it
--   wait, then fail; and existing users;
-- - deleting messages or users deletes their rows (ON DELETE CASCADE), at the end of the statement
--   as the foreign key's cascade does.
-- A violation fails as PostgreSQL's foreign key does (SQLSTATE 23503, the same constraint names).
-- Users are not locked: no user is deleted while their organization lives (deactivation keeps
-- the row), and locking every recipient's row was most of the check's cost.

ALTER TABLE "user_message" DROP CONSTRAINT "user_message_message_id_fkey";
ALTER TABLE "user_message" DROP CONSTRAINT "user_message_user_profile_id_fkey";

CREATE FUNCTION user_message_check_references() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  wanted bigint;
  locked bigint;
  missing integer;
BEGIN
  SELECT count(DISTINCT message_id) INTO wanted FROM new_rows;
  SELECT count(*) INTO locked FROM (
    SELECT m.id FROM message m WHERE m.id IN (SELECT message_id FROM new_rows) FOR KEY SHARE) AS l;
  IF locked < wanted THEN
    SELECT n.message_id INTO missing FROM new_rows n
      WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = n.message_id) LIMIT 1;
    RAISE EXCEPTION 'insert or update on table "user_message" violates foreign key constraint "user_message_message_id_fkey"'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'user_message_message_id_fkey', TABLE = 'user_message',
            DETAIL = format('Key (message_id)=(%s) is not present in table "message".', missing);
  END IF;
  SELECT n.user_profile_id INTO missing FROM new_rows n
    WHERE NOT EXISTS (SELECT 1 FROM user_profile u WHERE u.id = n.user_profile_id) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'insert or update on table "user_message" violates foreign key constraint "user_message_user_profile_id_fkey"'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'user_message_user_profile_id_fkey', TABLE = 'user_message',
            DETAIL = format('Key (user_profile_id)=(%s) is not present in table "user_profile".', missing);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER user_message_references_insert AFTER INSERT ON user_message
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION user_message_check_references();

-- Rows are never re-keyed (updates change flags); should one be, it is checked like an insert. A
-- trigger with a column list cannot see a transition table, so this one reads its own row.
CREATE FUNCTION user_message_check_rekeyed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM message WHERE id = NEW.message_id FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'insert or update on table "user_message" violates foreign key constraint "user_message_message_id_fkey"'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'user_message_message_id_fkey', TABLE = 'user_message',
            DETAIL = format('Key (message_id)=(%s) is not present in table "message".', NEW.message_id);
  END IF;
  PERFORM 1 FROM user_profile WHERE id = NEW.user_profile_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'insert or update on table "user_message" violates foreign key constraint "user_message_user_profile_id_fkey"'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'user_message_user_profile_id_fkey', TABLE = 'user_message',
            DETAIL = format('Key (user_profile_id)=(%s) is not present in table "user_profile".', NEW.user_profile_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER user_message_references_rekey AFTER UPDATE OF message_id, user_profile_id ON user_message
  FOR EACH ROW EXECUTE FUNCTION user_message_check_rekeyed();

CREATE FUNCTION user_message_cascade_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_message WHERE message_id IN (SELECT id FROM old_rows);
  RETURN NULL;
END $$;

CREATE TRIGGER message_cascade_user_message AFTER DELETE ON message
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION user_message_cascade_messages();

CREATE FUNCTION user_message_cascade_users() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_message WHERE user_profile_id IN (SELECT id FROM old_rows);
  RETURN NULL;
END $$;

CREATE TRIGGER user_profile_cascade_user_message AFTER DELETE ON user_profile
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION user_message_cascade_users();
