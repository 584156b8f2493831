/**
 * Register's `unread_msgs` (zerver/lib/message.py get_raw_unread_data + aggregate_unread_data)
 * and the `message_details` of messages marked unread: the user's newest unread messages (or the
 * listed ones), grouped by conversation, in one statement.
 */
import { CUSTOM_PLAN, Prisma, type Db, type RawTx } from "../../db/index.ts";
import { FLAG_BITS } from "./flags.ts";
import { RecipientType } from "../recipients.ts";
import { TopicVisibility } from "./topics.ts";

/** Zulip's MAX_UNREAD_MESSAGES: older unread messages are left out (`old_unreads_missing`). */
export const MAX_UNREAD_MESSAGES = 50000;

/** A conversation of the user's unread messages, as the database groups it. */
interface GroupRow {
  type: number;
  type_id: number;
  subject: string;
  other: number | null;
  member_ids: string | null;
  muted: boolean;
  /** Its messages, in order. */
  ids: number[];
  /** Those that mention the user personally or through a group. */
  personal: number[];
  /** Those that mention them only by a wildcard (a mention unless the conversation is muted). */
  wildcard: number[];
  /** More than MAX_UNREAD_MESSAGES were unread: the oldest is left out. */
  missing: boolean;
}

const PERSONAL_MENTION = FLAG_BITS.mentioned | FLAG_BITS.group_mentioned;
const WILDCARD_MENTION = FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned;

/**
 * The user's unread messages (get_raw_unread_data + aggregate_unread_data), newest first, at
 * most MAX_UNREAD_MESSAGES (`missing` when there were more), or (`messageIds`) those listed, read
 * or not, as the `message_details` of messages just marked unread need; grouped by conversation
 * (channel and topic, a one-to-one conversation, a group), each group in the order of its oldest
 * message, its ids in order:
 * - Messages of channels the user left are not unread (Zulip excludes its inactive
 *   subscriptions' recipients). Muted senders' messages are not filtered here: muting marks them
 *   read, and they arrive read, so one the user marks unread again counts, as in Zulip.
 * - `muted`: a channel topic that is muted, or whose channel is muted and the topic not unmuted or
 *   followed. Mentions: personal and group ones, and wildcard ones where not muted.
 * - `other`: a one-to-one conversation's other user; `member_ids`: a group's members (all of
 *   them, joined by commas in numerical order).
 *
 * The rows are grouped first (by hashing, their ids put in order here) and the conversation's
 * recipient, muting and members joined to each group, not to each message: for a reader with
 * 50,000 unread messages in 15,000 conversations, the statement took 350 ms per message and takes
 * 300 ms grouped first, 230 ms by hashing (at 10,000 people, PostgreSQL 15; most of what remains
 * is looking up 50,000 messages).
 *
 * The walk is fixed on purpose: `u` follows the user's unread index newest first and looks each
 * message up by its key, stopping at the limit. The LATERAL … OFFSET 0 keeps PostgreSQL from
 * choosing a merge or hash join over the whole message table, which it prefers from its
 * estimates, and which costs 3–10 times as much when a reader's 50,000 newest unread messages
 * are spread over half the history. It is planned for its values each time (CUSTOM_PLAN):
 * PostgreSQL's generic plan for it, kept after five executions, took 1.2–1.5 s where the custom
 * one takes 0.3 s.
 */
async function unreadGroups(
  db: Db | RawTx,
  userId: number,
  messageIds: number[] | null,
): Promise<GroupRow[]> {
  const which =
    messageIds === null
      ? Prisma.sql`(um.flags & 1) = 0`
      : Prisma.sql`um.message_id = ANY (${messageIds}::int[])`;
  const groups = await db.$queryRaw<GroupRow[]>`${Prisma.raw(CUSTOM_PLAN)}
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
    ), n AS (SELECT count(*) AS n, min(id) AS oldest FROM u
    ), a AS (
      -- By conversation: a one-to-one one sent to the user by its sender (their own recipient
      -- is the same for every sender), others by recipient; channels by topic as spelled.
      SELECT u.recipient_id, u.subject,
             CASE WHEN u.recipient_id = (SELECT recipient_id FROM user_profile WHERE id = ${userId})
                  THEN u.sender_id END AS sender,
             array_agg(u.id) AS ids,
             coalesce(array_agg(u.id) FILTER (WHERE (u.flags & ${PERSONAL_MENTION}) <> 0), '{}') AS personal,
             coalesce(array_agg(u.id) FILTER (WHERE (u.flags & ${PERSONAL_MENTION}) = 0
                                              AND (u.flags & ${WILDCARD_MENTION}) <> 0), '{}') AS wildcard,
             min(u.id) AS first
      FROM u, n
      -- More than the limit: the oldest is left out, and missing says so.
      WHERE n.n <= ${MAX_UNREAD_MESSAGES} OR u.id > n.oldest
      GROUP BY 1, 2, 3
    )
    SELECT r.type, r.type_id, a.subject, a.ids, a.personal, a.wildcard,
           CASE WHEN r.type = ${RecipientType.PERSONAL} THEN coalesce(a.sender, r.type_id) END AS other,
           (SELECT string_agg(s.user_profile_id::text, ',' ORDER BY s.user_profile_id) FROM subscription s
            WHERE r.type = ${RecipientType.DIRECT_MESSAGE_GROUP} AND s.recipient_id = a.recipient_id) AS member_ids,
           r.type = ${RecipientType.STREAM} AND (
             ut.visibility_policy = ${TopicVisibility.MUTED} OR
             (s.is_muted AND coalesce(ut.visibility_policy, ${TopicVisibility.INHERIT})
                             NOT IN (${TopicVisibility.UNMUTED}, ${TopicVisibility.FOLLOWED}))
           ) IS TRUE AS muted,
           (SELECT n.n FROM n) > ${MAX_UNREAD_MESSAGES} AS missing
    FROM a
    JOIN recipient r ON r.id = a.recipient_id
    LEFT JOIN subscription s ON r.type = ${RecipientType.STREAM} AND s.user_profile_id = ${userId}
         AND s.recipient_id = a.recipient_id
    LEFT JOIN user_topic ut ON r.type = ${RecipientType.STREAM} AND ut.user_profile_id = ${userId}
         AND ut.stream_id = r.type_id AND ut.topic_name_lower = lower(a.subject)
    ORDER BY a.first`;
  // Aggregated unordered (by hashing, not by sorting 50,000 rows on their topics): in order here.
  for (const group of groups) {
    group.ids.sort(byNumber);
    group.personal.sort(byNumber);
    group.wildcard.sort(byNumber);
  }
  return groups;
}

const byNumber = (a: number, b: number) => a - b;

/** A group's messages that mention the user: personal ones, and wildcard ones unless muted. */
const mentionsOf = (group: GroupRow) =>
  group.muted ? group.personal : [...group.personal, ...group.wildcard];

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
  const entries: [number, Record<string, unknown>][] = [];
  for (const group of await unreadGroups(db, userId, messageIds)) {
    const mentioned = new Set(mentionsOf(group));
    for (const id of group.ids) {
      const entry: Record<string, unknown> =
        group.type === RecipientType.STREAM
          ? {
              type: "stream",
              stream_id: group.type_id,
              topic: group.subject,
              unmuted_stream_msg: !group.muted,
            }
          : {
              type: "private",
              user_ids:
                group.type === RecipientType.PERSONAL
                  ? [group.other!].filter((id) => id !== userId)
                  : othersOf(group.member_ids, userId),
            };
      if (mentioned.has(id)) entry.mentioned = true;
      entries.push([id, entry]);
    }
  }
  // In the order of their ids, as the event lists them.
  for (const [id, entry] of entries.sort((x, y) => x[0] - y[0])) details[String(id)] = entry;
  return details;
}

/**
 * Register's `unread_msgs`: the groups above, so that a reader with 50,000 unread messages costs
 * a few thousand rows, not 50,000. Groups come in the order of their oldest unread message, their
 * ids in order, as aggregate_unread_data lists them.
 */
export async function unreadMessages(
  db: Db,
  userId: number,
  options: { emptyTopicName: string | null },
) {
  const groups = await unreadGroups(db, userId, null);
  const pms = [];
  const streams = [];
  const huddles = [];
  const mentions: number[] = [];
  let count = 0;
  for (const group of groups) {
    for (const id of mentionsOf(group)) mentions.push(id);
    if (group.type === RecipientType.STREAM) {
      const topic =
        group.subject === "" && options.emptyTopicName !== null
          ? options.emptyTopicName
          : group.subject;
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
