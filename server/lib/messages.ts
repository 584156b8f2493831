/**
 * Per-user message flags (Zulip's UserMessage.flags bit field) and who may see a message
 * (zerver/lib/message.py access_message / has_message_access).
 */
import { Prisma, type Message, type Db, type Realm, type UserProfile } from "../db.ts";
import { relatedSql, showsEditHistory, type Related } from "./message-dicts.ts";
import { JsonableError } from "../errors.ts";
import { isGuest } from "./users.ts";

/** Message ids are 32-bit (Zulip's AutoField): a larger id names no message. */
export const MAX_MESSAGE_ID = 2 ** 31 - 1;

/** Whether an id fits the 32-bit id columns; one that does not names nothing, and raw SQL must not compare it. */
export const isStorableId = (id: number) => Number.isInteger(id) && id >= -(2 ** 31) && id <= MAX_MESSAGE_ID;

export { FLAG_BITS, flagsOf, flagsToList, type FlagName } from "./flags.ts";

export interface AccessibleMessage {
  message: Message;
  /** The caller's flags, or null when they see the message without a UserMessage row. */
  flags: bigint | null;
}

/** The message table's columns under their model names, for raw queries that return Message rows. */
export const MESSAGE_COLUMNS = Prisma.sql`m.id, m.realm_id AS "realmId", m.sender_id AS "senderId", m.recipient_id AS "recipientId", m.subject, m.content,
  m.rendered_content AS "renderedContent", m.rendered_content_version AS "renderedContentVersion", m.date_sent AS "dateSent",
  m.sending_client_id AS "sendingClientId", m.last_edit_time AS "lastEditTime", m.last_moved_time AS "lastMovedTime", m.type,
  m.has_attachment AS "hasAttachment", m.has_image AS "hasImage", m.has_link AS "hasLink", m.is_channel_message AS "isChannelMessage"`;

/**
 * Fetches a message the user may see, or fails with Zulip's "Invalid message(s)" (Zulip's
 * has_message_access): one statement reads the message, the user's flags, what decides whether a
 * channel's history is open to them, and everything the message's dict needs (message-dicts.ts
 * relatedSql), so GET /messages/{id} is one statement.
 */
type AccessRow = Message & { flags: bigint | null; streamId: number | null; inviteOnly: boolean | null; historyPublic: boolean | null; subscribed: boolean };

export async function accessMessage(db: Db, user: UserProfile, messageId: number, realm: Realm): Promise<AccessibleMessage & { related: Related }> {
  if (!isStorableId(messageId)) throw new JsonableError("Invalid message(s)");
  const relatedQuery = relatedSql(showsEditHistory(realm));
  const rows = await db.$queryRaw<(AccessRow & Related)[]>`
    WITH msgs AS (SELECT id, recipient_id, sender_id
                  FROM message WHERE id = ${messageId} AND realm_id = ${user.realmId})
    , ${relatedQuery.ctes}
    SELECT ${MESSAGE_COLUMNS}, um.flags, s.id AS "streamId", s.invite_only AS "inviteOnly", s.history_public_to_subscribers AS "historyPublic",
           (s.id IS NOT NULL AND um.flags IS NULL AND EXISTS (
              SELECT 1 FROM subscription sub WHERE sub.user_profile_id = ${user.id} AND sub.recipient_id = m.recipient_id AND sub.active)) AS subscribed
           , ${relatedQuery.columns}
    FROM message m
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}
    LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
    WHERE m.id IN (SELECT id FROM msgs)`;
  const row = rows[0];
  if (!row) throw new JsonableError("Invalid message(s)");
  const { flags, streamId, inviteOnly, historyPublic, subscribed, recipients, groupMembers, users, reactions, submessages, edits, ...message } = row;
  const related: Related = { recipients, groupMembers, users, reactions, submessages, edits };
  if (flags !== null) return { message, flags: BigInt(flags), related };
  // Without a row of their own: a channel's history, if it is open to them (shared history, and
  // public, not for guests, or subscribed).
  if (streamId !== null && historyPublic && ((!inviteOnly && !isGuest(user)) || subscribed)) return { message, flags: null, related };
  throw new JsonableError("Invalid message(s)");
}
