/**
 * Register's `unread_msgs` (zerver/lib/message.py get_raw_unread_data + aggregate_unread_data):
 * the user's newest unread messages, grouped by conversation, in one statement.
 */
import { Prisma, type Db, type RawTx } from "../../db/index.ts";
import { FLAG_BITS } from "./flags.ts";
import { RecipientType } from "../recipients.ts";
import { TopicVisibility } from "./topics.ts";

/** Zulip's MAX_UNREAD_MESSAGES: older unread messages are left out (`old_unreads_missing`). */
export const MAX_UNREAD_MESSAGES = 50000;

interface UnreadRow {
  id: number;
  sender_id: number;
  recipient_id: number;
  type: number;
  type_id: number;
  subject: string;
  flags: bigint;
  stream_muted: boolean | null;
  visibility_policy: number | null;
  member_ids: string | null;
}

const PERSONAL_MENTION = FLAG_BITS.mentioned | FLAG_BITS.group_mentioned;
const WILDCARD_MENTION = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/**
 * The user's unread rows (get_raw_unread_data), newest first, at most MAX_UNREAD_MESSAGES + 1:
 * all their unread messages, or (`messageIds`) those listed, read or not, as the
 * `message_details` of messages just marked unread need.
 */
function unreadRows(db: Db | RawTx, userId: number, messageIds: number[] | null) {
  // Messages of channels the user left are not unread (Zulip excludes its inactive
  // subscriptions' recipients). Muted senders' messages are not filtered here: muting marks them
  // read, and they arrive read, so one the user marks unread again counts, as in Zulip. Group DM
  // members are aggregated once per group, not per message.
  //
  // The plan is fixed on purpose. `u` walks the user's unread index newest first and looks each
  // message up by its key, stopping at the limit: the LATERAL … OFFSET 0 keeps PostgreSQL from
  // choosing a merge or hash join over the whole message table, which it prefers from its
  // estimates, and which costs 3–10 times as much when a reader's 50,000 newest unread messages
  // are spread over half the history. Muting (subscription, user_topic) and the recipient are
  // joined only to the rows kept, each as one hash join on the user's few rows.
  const which =
    messageIds === null
      ? Prisma.sql`(um.flags & 1) = 0`
      : Prisma.sql`um.message_id = ANY (${messageIds}::int[])`;
  return db.$queryRaw<UnreadRow[]>`
    WITH u AS MATERIALIZED (
      SELECT um.message_id AS id, um.flags, m.sender_id, m.recipient_id, m.subject
      FROM user_message um
      CROSS JOIN LATERAL (
        SELECT m.sender_id, m.recipient_id, m.subject FROM message m
        WHERE m.id = um.message_id
          AND m.recipient_id <> ALL (ARRAY(SELECT i.recipient_id FROM subscription i
                                           WHERE i.user_profile_id = ${userId} AND NOT i.active))
        OFFSET 0) m
      WHERE um.user_profile_id = ${userId} AND ${which}
      ORDER BY um.message_id DESC
      LIMIT ${MAX_UNREAD_MESSAGES + 1}
    ), g AS (
      SELECT s.recipient_id, string_agg(s.user_profile_id::text, ',' ORDER BY s.user_profile_id) AS member_ids
      FROM subscription s JOIN recipient r ON r.id = s.recipient_id
      WHERE r.type = ${RecipientType.DIRECT_MESSAGE_GROUP} AND s.recipient_id IN (SELECT recipient_id FROM u)
      GROUP BY s.recipient_id
    )
    SELECT u.id, u.sender_id, u.recipient_id, r.type, r.type_id, u.subject, u.flags,
           s.is_muted AS stream_muted, ut.visibility_policy, g.member_ids
    FROM u
    JOIN recipient r ON r.id = u.recipient_id
    LEFT JOIN subscription s ON r.type = ${RecipientType.STREAM} AND s.user_profile_id = ${userId}
         AND s.recipient_id = u.recipient_id
    LEFT JOIN user_topic ut ON r.type = ${RecipientType.STREAM} AND ut.user_profile_id = ${userId}
         AND ut.stream_id = r.type_id AND ut.topic_name_lower = lower(u.subject)
    LEFT JOIN g ON g.recipient_id = u.recipient_id
    ORDER BY u.id`;
}

/** What aggregate_unread_data reads off a row: whether its conversation is muted, whether it mentions the user. */
function classify(row: UnreadRow): { muted: boolean; mentioned: boolean } {
  const flags = BigInt(row.flags);
  if (row.type !== RecipientType.STREAM)
    return { muted: false, mentioned: (flags & (PERSONAL_MENTION | WILDCARD_MENTION)) !== 0n };
  const policy = row.visibility_policy ?? TopicVisibility.INHERIT;
  const muted =
    policy === TopicVisibility.MUTED ||
    (row.stream_muted === true &&
      policy !== TopicVisibility.UNMUTED &&
      policy !== TopicVisibility.FOLLOWED);
  // Wildcard mentions count only where the conversation is not muted.
  const mentioned =
    (flags & PERSONAL_MENTION) !== 0n || ((flags & WILDCARD_MENTION) !== 0n && !muted);
  return { muted, mentioned };
}

/** A group DM's other members, in numerical order, from its member list. */
function othersOf(memberIds: string | null, userId: number): number[] {
  return (memberIds ?? "")
    .split(",")
    .filter(Boolean)
    .map(Number)
    .filter((id) => id !== userId)
    .sort((a, b) => a - b);
}

/**
 * The `message_details` of an `update_message_flags` event removing `read`
 * (format_unread_message_details), keyed by message id: the listed messages the user now has
 * unread, as their clients add them to `unread_msgs`.
 */
export async function unreadMessageDetails(db: Db | RawTx, userId: number, messageIds: number[]) {
  const details: Record<string, Record<string, unknown>> = {};
  if (!messageIds.length) return details;
  for (const row of await unreadRows(db, userId, messageIds)) {
    const { muted, mentioned } = classify(row);
    const entry: Record<string, unknown> =
      row.type === RecipientType.STREAM
        ? { type: "stream", stream_id: row.type_id, topic: row.subject, unmuted_stream_msg: !muted }
        : row.type === RecipientType.PERSONAL
          ? {
              type: "private",
              user_ids: [row.sender_id === userId ? row.type_id : row.sender_id].filter(
                (id) => id !== userId,
              ),
            }
          : { type: "private", user_ids: othersOf(row.member_ids, userId) };
    if (mentioned) entry.mentioned = true;
    details[String(row.id)] = entry;
  }
  return details;
}

export async function unreadMessages(
  db: Db,
  userId: number,
  options: { emptyTopicName: string | null },
) {
  const rows = await unreadRows(db, userId, null);
  const missing = rows.length > MAX_UNREAD_MESSAGES;
  if (missing) rows.shift();

  const pms = new Map<number, number[]>();
  const streams = new Map<
    string,
    { stream_id: number; topic: string; unread_message_ids: number[] }
  >();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const row of rows) {
    const id = row.id;
    const { muted, mentioned } = classify(row);
    if (mentioned) mentions.push(id);
    if (row.type === RecipientType.STREAM) {
      const topic =
        row.subject === "" && options.emptyTopicName !== null
          ? options.emptyTopicName
          : row.subject;
      const key = `${row.type_id}\0${row.subject}`;
      let entry = streams.get(key);
      if (!entry)
        streams.set(key, (entry = { stream_id: row.type_id, topic, unread_message_ids: [] }));
      entry.unread_message_ids.push(id);
      if (!muted) count++;
      continue;
    }
    count++;
    if (row.type === RecipientType.PERSONAL) {
      const other = row.sender_id === userId ? row.type_id : row.sender_id;
      if (!pms.has(other)) pms.set(other, []);
      pms.get(other)!.push(id);
    } else {
      const key = row.member_ids ?? "";
      if (!huddles.has(key)) huddles.set(key, []);
      huddles.get(key)!.push(id);
    }
  }
  return {
    count,
    pms: [...pms].map(([other, ids]) => ({
      other_user_id: other,
      sender_id: other,
      unread_message_ids: ids,
    })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: missing,
  };
}
