/**
 * Per-user message flags (Zulip's UserMessage.flags bit field) and fetching a message the user may
 * see (zerver/lib/message.py access_message; the rule is lib/access/channels.ts).
 */
import { isStorableId, MAX_ID } from "../ids.ts";
import { Prisma, type Message, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import { relatedSql, showsEditHistory, type Related } from "./message-dicts.ts";
import { JsonableError } from "../../errors.ts";
import { messageAccessSql } from "../access/channels.ts";

/** Message ids are 32-bit (Zulip's AutoField): a larger id names no message. */
export const MAX_MESSAGE_ID = MAX_ID;

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
 * access_message / has_message_access, the rule of lib/access/channels.ts): one statement reads the
 * message, the user's flags, whether the rule lets the user read it (its SQL form, over the
 * message's channel), and everything the message's dict needs (message-dicts.ts relatedSql), so
 * GET /messages/{id} is one statement.
 * `change`: to edit or move it, which no one may in an archived channel.
 */
type AccessRow = Message & { flags: bigint | null; allowed: boolean };

export async function accessMessage(
  db: Db,
  user: UserProfile,
  messageId: number,
  realm: Realm,
  options: { change?: boolean } = {},
): Promise<AccessibleMessage & { related: Related }> {
  if (!isStorableId(messageId)) throw new JsonableError("Invalid message(s)");
  const relatedQuery = relatedSql(showsEditHistory(realm));
  const rows = await db.$queryRaw<(AccessRow & Related)[]>`
    WITH msgs AS (SELECT id, recipient_id, sender_id
                  FROM message WHERE id = ${messageId} AND realm_id = ${user.realmId})
    , ${relatedQuery.ctes}
    SELECT ${MESSAGE_COLUMNS}, um.flags,
           COALESCE(${messageAccessSql(user, Prisma.raw("um.message_id IS NOT NULL"), options)}, FALSE) AS allowed
           , ${relatedQuery.columns}
    FROM message m
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}
    LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
    WHERE m.id IN (SELECT id FROM msgs)`;
  const row = rows[0];
  if (!row) throw new JsonableError("Invalid message(s)");
  const {
    flags,
    allowed,
    recipients,
    groupMembers,
    users,
    reactions,
    submessages,
    edits,
    ...message
  } = row;
  const related: Related = { recipients, groupMembers, users, reactions, submessages, edits };
  if (!allowed) throw new JsonableError("Invalid message(s)");
  const received = flags !== null;
  return { message, flags: received ? BigInt(flags) : null, related };
}
