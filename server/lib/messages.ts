/**
 * Per-user message flags (Zulip's UserMessage.flags bit field) and who may see a message
 * (zerver/lib/message.py access_message / has_message_access).
 */
import { Prisma, type Message, type PrismaClient, type Stream, type Tx, type UserProfile } from "../db.ts";
import { JsonableError } from "../errors.ts";
import { isGuest } from "./users.ts";

type Db = PrismaClient | Tx;

/** Message ids are 32-bit (Zulip's AutoField): a larger id names no message. */
export const MAX_MESSAGE_ID = 2 ** 31 - 1;

/** Whether an id fits the 32-bit id columns; one that does not names nothing, and raw SQL must not compare it. */
export const isStorableId = (id: number) => Number.isInteger(id) && id >= -(2 ** 31) && id <= MAX_MESSAGE_ID;

/** Bit positions of UserMessage.flags, in Zulip's order (zerver/models/messages.py). */
export const FLAG_BITS = {
  read: 1n << 0n,
  starred: 1n << 1n,
  collapsed: 1n << 2n,
  mentioned: 1n << 3n,
  stream_wildcard_mentioned: 1n << 4n,
  topic_wildcard_mentioned: 1n << 5n,
  group_mentioned: 1n << 6n,
  has_alert_word: 1n << 9n,
  historical: 1n << 10n,
  is_private: 1n << 11n,
  active_mobile_push_notification: 1n << 12n,
} as const;
export type FlagName = keyof typeof FLAG_BITS;

/** Flags the API shows (is_private and active_mobile_push_notification are internal). */
const API_FLAGS: FlagName[] = ["read", "starred", "collapsed", "mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "has_alert_word", "historical"];

export function flagsToList(flags: bigint): string[] {
  const out: string[] = [];
  for (const name of API_FLAGS) if (flags & FLAG_BITS[name]) out.push(name);
  // `wildcard_mentioned` is the union of the two wildcard flags, for older clients.
  if (flags & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) out.push("wildcard_mentioned");
  return out;
}

export function flagsOf(...names: FlagName[]): bigint {
  return names.reduce((acc, n) => acc | FLAG_BITS[n], 0n);
}

export interface AccessibleMessage {
  message: Message;
  /** The caller's flags, or null when they see the message without a UserMessage row. */
  flags: bigint | null;
}

/**
 * Whether a user without a UserMessage row may still read a channel's history: public
 * channels with shared history (not for guests), and private channels with shared history
 * for their subscribers.
 */
export async function canReadChannelHistory(db: Db, user: UserProfile, stream: Stream): Promise<boolean> {
  if (!stream.historyPublicToSubscribers) return false;
  if (!stream.inviteOnly && !isGuest(user)) return true;
  const sub = await db.subscription.findFirst({ where: { userProfileId: user.id, recipientId: stream.recipientId!, active: true }, select: { id: true } });
  return sub !== null;
}

/** The message table's columns under their model names, for raw queries that return Message rows. */
export const MESSAGE_COLUMNS = Prisma.sql`m.id, m.realm_id AS "realmId", m.sender_id AS "senderId", m.recipient_id AS "recipientId", m.subject, m.content,
  m.rendered_content AS "renderedContent", m.rendered_content_version AS "renderedContentVersion", m.date_sent AS "dateSent",
  m.sending_client_id AS "sendingClientId", m.last_edit_time AS "lastEditTime", m.last_moved_time AS "lastMovedTime", m.type,
  m.has_attachment AS "hasAttachment", m.has_image AS "hasImage", m.has_link AS "hasLink", m.is_channel_message AS "isChannelMessage"`;

/**
 * Fetches a message the user may see, or fails with Zulip's "Invalid message(s)": one statement
 * reads the message, the user's flags and, for a channel message, what decides whether its
 * history is open to them (Zulip's has_message_access).
 */
export async function accessMessage(db: Db, user: UserProfile, messageId: number): Promise<AccessibleMessage> {
  if (!isStorableId(messageId)) throw new JsonableError("Invalid message(s)");
  const rows = await db.$queryRaw<(Message & { flags: bigint | null; streamId: number | null; inviteOnly: boolean | null; historyPublic: boolean | null; subscribed: boolean })[]>`
    SELECT ${MESSAGE_COLUMNS}, um.flags, s.id AS "streamId", s.invite_only AS "inviteOnly", s.history_public_to_subscribers AS "historyPublic",
           (s.id IS NOT NULL AND um.flags IS NULL AND EXISTS (
              SELECT 1 FROM subscription sub WHERE sub.user_profile_id = ${user.id} AND sub.recipient_id = m.recipient_id AND sub.active)) AS subscribed
    FROM message m
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}
    LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
    WHERE m.id = ${messageId} AND m.realm_id = ${user.realmId}`;
  const row = rows[0];
  if (!row) throw new JsonableError("Invalid message(s)");
  const { flags, streamId, inviteOnly, historyPublic, subscribed, ...message } = row;
  if (flags !== null) return { message, flags: BigInt(flags) };
  // Without a row of their own: a channel's history, if it is open to them.
  if (streamId !== null && historyPublic && ((!inviteOnly && !isGuest(user)) || subscribed)) return { message, flags: null };
  throw new JsonableError("Invalid message(s)");
}
