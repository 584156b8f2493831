/**
 * Per-user message flags (Zulip's UserMessage.flags bit field) and who may see a message
 * (zerver/lib/message.py access_message / has_message_access).
 */
import type { Message, PrismaClient, Stream, Tx, UserProfile } from "../db.ts";
import { JsonableError } from "../errors.ts";
import { isGuest } from "./users.ts";

type Db = PrismaClient | Tx;

/** Message ids are 32-bit (Zulip's AutoField): a larger id names no message. */
export const MAX_MESSAGE_ID = 2 ** 31 - 1;

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
  stream: Stream | null;
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

/** Fetches a message the user may see, or fails with Zulip's "Invalid message(s)". */
export async function accessMessage(db: Db, user: UserProfile, messageId: number): Promise<AccessibleMessage> {
  const message = await db.message.findFirst({ where: { id: messageId, realmId: user.realmId } });
  if (!message) throw new JsonableError("Invalid message(s)");
  const [userMessage, stream] = await Promise.all([
    db.userMessage.findUnique({ where: { userProfileId_messageId: { userProfileId: user.id, messageId } }, select: { flags: true } }),
    message.isChannelMessage ? db.stream.findFirst({ where: { recipientId: message.recipientId } }) : null,
  ]);
  if (userMessage) return { message, flags: userMessage.flags, stream };
  if (stream && (await canReadChannelHistory(db, user, stream))) return { message, flags: null, stream };
  throw new JsonableError("Invalid message(s)");
}
