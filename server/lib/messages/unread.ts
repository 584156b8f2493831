/**
 * Register's `unread_msgs` (zerver/lib/message.py get_raw_unread_data + aggregate_unread_data):
 * the user's newest unread messages, grouped by conversation, in one statement.
 */
import { CUSTOM_PLAN, Prisma, type Db, type RawTx } from "../../db/index.ts";
import { FLAG_BITS } from "./flags.ts";
import { RecipientType } from "../recipients.ts";
import { TopicVisibility } from "./topics.ts";

/** Zulip's MAX_UNREAD_MESSAGES: older unread messages are left out (`old_unreads_missing`). */
export const MAX_UNREAD_MESSAGES = 50000;

/** A conversation of unread_msgs, as the database groups it. */
interface GroupRow {
  type: number;
  type_id: number;
  subject: string | null;
  other: number | null;
  member_ids: string | null;
  muted: boolean;
  ids: number[];
  mention_ids: number[];
  missing: boolean;
}

/** One message of an update_message_flags event's message_details. */
interface DetailRow {
  id: number;
  type: number;
  type_id: number;
  subject: string;
  other: number | null;
  member_ids: string | null;
  muted: boolean;
  mentioned: boolean;
}

const PERSONAL_MENTION = FLAG_BITS.mentioned | FLAG_BITS.group_mentioned;
const WILDCARD_MENTION = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/**
 * The user's unread rows (get_raw_unread_data), each with its conversation and what
 * aggregate_unread_data reads off it: all their unread messages, newest first, at most
 * MAX_UNREAD_MESSAGES + 1, or (`messageIds`) those listed, read or not, as the `message_details`
 * of messages just marked unread need. A WITH list whose `c` holds the rows:
 * - Messages of channels the user left are not unread (Zulip excludes its inactive
 *   subscriptions' recipients). Muted senders' messages are not filtered here: muting marks them
 *   read, and they arrive read, so one the user marks unread again counts, as in Zulip.
 * - `muted`: a channel message whose topic is muted, or whose channel is muted and the topic not
 *   unmuted or followed. `mentioned`: a personal or group mention, or a wildcard one where the
 *   conversation is not muted.
 * - `other`: a one-to-one conversation's other user; `member_ids`: a group's members (all of
 *   them, joined by commas in numerical order), aggregated once per group, not per message.
 *
 * The plan is fixed on purpose: `u` walks the user's unread index newest first and looks each
 * message up by its key, stopping at the limit. The LATERAL … OFFSET 0 keeps PostgreSQL from
 * choosing a merge or hash join over the whole message table, which it prefers from its
 * estimates, and which costs 3–10 times as much when a reader's 50,000 newest unread messages
 * are spread over half the history. Muting and the recipient are joined to the rows kept only.
 * It is planned for its values each time (CUSTOM_PLAN): PostgreSQL's generic plan for it, kept
 * after five executions, took 1.2–1.5 s where the custom one takes 0.3 s.
 */
function unreadConversations(userId: number, messageIds: number[] | null) {
  const which =
    messageIds === null
      ? Prisma.sql`(um.flags & 1) = 0`
      : Prisma.sql`um.message_id = ANY (${messageIds}::int[])`;
  return Prisma.sql`${Prisma.raw(CUSTOM_PLAN)}
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
    ), v AS (
      SELECT u.id, u.flags, u.sender_id, r.type, r.type_id, u.subject, g.member_ids,
             CASE WHEN r.type = ${RecipientType.PERSONAL}
                  THEN CASE WHEN u.sender_id = ${userId} THEN r.type_id ELSE u.sender_id END END AS other,
             r.type = ${RecipientType.STREAM} AND (
               ut.visibility_policy = ${TopicVisibility.MUTED} OR
               (s.is_muted AND coalesce(ut.visibility_policy, ${TopicVisibility.INHERIT})
                               NOT IN (${TopicVisibility.UNMUTED}, ${TopicVisibility.FOLLOWED}))
             ) IS TRUE AS muted
      FROM u
      JOIN recipient r ON r.id = u.recipient_id
      LEFT JOIN subscription s ON r.type = ${RecipientType.STREAM} AND s.user_profile_id = ${userId}
           AND s.recipient_id = u.recipient_id
      LEFT JOIN user_topic ut ON r.type = ${RecipientType.STREAM} AND ut.user_profile_id = ${userId}
           AND ut.stream_id = r.type_id AND ut.topic_name_lower = lower(u.subject)
      LEFT JOIN g ON g.recipient_id = u.recipient_id
    ), c AS (
      SELECT v.*, ((v.flags & ${PERSONAL_MENTION}) <> 0
                   OR ((v.flags & ${WILDCARD_MENTION}) <> 0 AND NOT v.muted)) AS mentioned
      FROM v
    )`;
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
  const rows = await db.$queryRaw<DetailRow[]>`${unreadConversations(userId, messageIds)}
    SELECT id, type, type_id, subject, other, member_ids, muted, mentioned FROM c ORDER BY id`;
  for (const row of rows) {
    const entry: Record<string, unknown> =
      row.type === RecipientType.STREAM
        ? {
            type: "stream",
            stream_id: row.type_id,
            topic: row.subject,
            unmuted_stream_msg: !row.muted,
          }
        : {
            type: "private",
            user_ids:
              row.type === RecipientType.PERSONAL
                ? [row.other!].filter((id) => id !== userId)
                : othersOf(row.member_ids, userId),
          };
    if (row.mentioned) entry.mentioned = true;
    details[String(row.id)] = entry;
  }
  return details;
}

/**
 * Register's `unread_msgs`: the rows above grouped by conversation in the database, so that a
 * reader with 50,000 unread messages costs a few thousand rows, not 50,000. Groups come in the
 * order of their oldest unread message, their ids in order, as aggregate_unread_data lists them.
 */
export async function unreadMessages(
  db: Db,
  userId: number,
  options: { emptyTopicName: string | null },
) {
  const groups = await db.$queryRaw<GroupRow[]>`${unreadConversations(userId, null)},
    kept AS (
      -- More than the limit: the oldest is left out, and old_unreads_missing says so.
      SELECT c.* FROM c
      WHERE (SELECT count(*) FROM c) <= ${MAX_UNREAD_MESSAGES} OR c.id > (SELECT min(id) FROM c)
    )
    SELECT type, type_id, CASE WHEN type = ${RecipientType.STREAM} THEN subject END AS subject,
           other, member_ids, muted,
           array_agg(id ORDER BY id) AS ids,
           coalesce(array_agg(id ORDER BY id) FILTER (WHERE mentioned), '{}') AS mention_ids,
           (SELECT count(*) FROM c) > ${MAX_UNREAD_MESSAGES} AS missing
    FROM kept
    GROUP BY 1, 2, 3, 4, 5, 6
    ORDER BY min(id)`;
  const pms = [];
  const streams = [];
  const huddles = [];
  const mentions: number[] = [];
  let count = 0;
  for (const group of groups) {
    for (const id of group.mention_ids) mentions.push(id);
    if (group.type === RecipientType.STREAM) {
      const topic =
        group.subject === "" && options.emptyTopicName !== null
          ? options.emptyTopicName
          : group.subject!;
      streams.push({ stream_id: group.type_id, topic, unread_message_ids: group.ids });
      if (!group.muted) count += group.ids.length;
      continue;
    }
    count += group.ids.length;
    if (group.type === RecipientType.PERSONAL)
      pms.push({
        other_user_id: group.other!,
        sender_id: group.other!,
        unread_message_ids: group.ids,
      });
    else huddles.push({ user_ids_string: group.member_ids ?? "", unread_message_ids: group.ids });
  }
  return {
    count,
    pms,
    streams,
    huddles,
    mentions: mentions.sort((a, b) => a - b),
    old_unreads_missing: groups[0]?.missing ?? false,
  };
}
