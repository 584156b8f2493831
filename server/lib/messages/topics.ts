/**
 * Topic and content rules of zerver/lib/topic.py, zerver/lib/message.py and
 * zerver/lib/string_validation.py.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { accessSql, type Reader } from "../access/channels.ts";
import { isStorableId } from "../ids.ts";

export const MAX_TOPIC_NAME_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10000;
/** The contract's default display text of the empty topic (Conventions 6). */
export const DEFAULT_EMPTY_TOPIC_DISPLAY_NAME = "(no topic)";
/** A user's visibility policy for a topic (Zulip's UserTopic.VisibilityPolicy; INHERIT is no row). */
export const TopicVisibility = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

/** A resolved topic's name starts with this (zerver/lib/topic.py RESOLVED_TOPIC_PREFIX). */
export const RESOLVED_TOPIC_PREFIX = "✔ ";
/** Zulip's own fallback name, also read as the empty topic. */
export const EMPTY_TOPIC_FALLBACK_NAME = "general chat";

export function emptyTopicDisplayName(realm: { emptyTopicDisplayName: string | null }) {
  return realm.emptyTopicDisplayName ?? DEFAULT_EMPTY_TOPIC_DISPLAY_NAME;
}

/** Whether a (stripped) topic is one of the names of the empty topic: "(no topic)", "general chat", the realm's display name. */
export function namesEmptyTopic(
  topic: string,
  realm: { emptyTopicDisplayName: string | null },
): boolean {
  return (
    topic === DEFAULT_EMPTY_TOPIC_DISPLAY_NAME ||
    topic === EMPTY_TOPIC_FALLBACK_NAME ||
    topic === emptyTopicDisplayName(realm)
  );
}

/** A topic parameter naming a topic (no truncation): stripped, the empty topic's names mean "", unprintable characters refused. */
export function checkTopicName(
  raw: string,
  realm: { emptyTopicDisplayName: string | null },
): string {
  const topic = raw.trim();
  const bad = firstInvalidCharacter(topic);
  if (bad) throw new JsonableError(`Invalid character in topic, at position ${bad}!`);
  return namesEmptyTopic(topic, realm) ? "" : topic;
}

/** Python's str.isprintable()-style check: control and format characters are refused. */
function firstInvalidCharacter(text: string): number {
  let i = 0;
  for (const ch of text) {
    i++;
    if (/[\p{Cc}\p{Cs}\p{Co}\p{Cn}]/u.test(ch)) return i;
  }
  return 0;
}

/**
 * Strips a topic and maps the names that stand for the empty topic ("(no topic)",
 * "general chat" and the realm's display name) to "". Over-long topics are truncated with
 * "..." as Zulip does when sending.
 */
export function normalizeTopic(
  raw: string,
  realm: { emptyTopicDisplayName: string | null },
): string {
  let topic = raw.trim();
  if (namesEmptyTopic(topic, realm)) topic = "";
  const bad = firstInvalidCharacter(topic);
  if (bad) throw new JsonableError(`Invalid character in topic, at position ${bad}!`);
  const chars = [...topic];
  if (chars.length > MAX_TOPIC_NAME_LENGTH)
    topic = chars.slice(0, MAX_TOPIC_NAME_LENGTH - 3).join("") + "...";
  return topic;
}

/** normalize_body: strip, refuse empty and null bytes, truncate over-long content. */
export function normalizeContent(raw: string): string {
  const content = raw.trimEnd().replace(/^\n+/, "");
  if (content.trim() === "") throw new JsonableError("Message must not be empty");
  if (content.includes("\x00")) throw new JsonableError("Message must not contain null bytes");
  const chars = [...content];
  if (chars.length > MAX_MESSAGE_LENGTH)
    return chars.slice(0, MAX_MESSAGE_LENGTH - 20).join("") + "\n[message truncated]";
  return content;
}

/** The topic as a client sees it: the empty topic becomes the display name unless the client supports it. */
export function topicForClient(
  topic: string,
  realm: { emptyTopicDisplayName: string | null },
  allowEmptyTopicName: boolean,
) {
  return topic === "" && !allowEmptyTopicName ? emptyTopicDisplayName(realm) : topic;
}

/**
 * GET /users/me/{stream_id}/topics (get_topic_history_for_stream): the channel's topics the user
 * may read, newest first, or null when the channel is not one whose content they may access
 * (access_stream_by_id). One statement: the channel row under the access rule, then either
 * (history public to subscribers) a skip scan of the (realm_id, recipient_id, lower(subject), id)
 * index, one descent per topic straight to its latest message, or (protected history) the topics
 * of the user's own user_message rows. At 1,000,000 messages the biggest channel (128,000
 * messages, 4,236 topics) took 60 ms this way, 180 ms grouping all its messages by topic.
 */
export async function topicHistory(
  db: Db,
  user: Reader,
  streamId: number,
): Promise<{ name: string; maxId: number }[] | null> {
  if (!isStorableId(streamId)) return null;
  const rows = await db.$queryRaw<{ subject: string | null; max_id: number | null }[]>`
    WITH RECURSIVE ch AS (
      SELECT s.recipient_id, ${accessSql("CHANNEL_TOPICS_WITHOUT_ROWS", user, "s")} AS shared FROM stream s
      WHERE s.id = ${streamId}::int AND s.realm_id = ${user.realmId}::int
        AND ${accessSql("CHANNEL_CONTENT", user, "s")}
    ), t(k, id, subject) AS (
      SELECT n.* FROM ch CROSS JOIN LATERAL (
        SELECT lower(m.subject), m.id, m.subject FROM message m
        WHERE m.realm_id = ${user.realmId}::int AND m.recipient_id = ch.recipient_id
        ORDER BY lower(m.subject) DESC, m.id DESC LIMIT 1) n
      WHERE ch.shared
      UNION ALL
      SELECT n.* FROM t CROSS JOIN ch CROSS JOIN LATERAL (
        SELECT lower(m.subject), m.id, m.subject FROM message m
        WHERE m.realm_id = ${user.realmId}::int AND m.recipient_id = ch.recipient_id
          AND lower(m.subject) < t.k
        ORDER BY lower(m.subject) DESC, m.id DESC LIMIT 1) n
    )
    SELECT NULL::text AS subject, NULL::int AS max_id FROM ch
    UNION ALL SELECT subject, id FROM t
    UNION ALL SELECT m.subject, max(m.id) FROM ch
      JOIN user_message um ON um.user_profile_id = ${user.id}::int
      JOIN message m ON m.id = um.message_id AND m.realm_id = ${user.realmId}::int
        AND m.recipient_id = ch.recipient_id
      WHERE NOT ch.shared GROUP BY m.subject`;
  if (rows.length === 0) return null;
  // Spellings of one topic (protected history lists each): the latest one names it.
  const byKey = new Map<string, { name: string; maxId: number }>();
  for (const r of rows) {
    if (r.subject === null || r.max_id === null) continue;
    const key = r.subject.toLowerCase();
    const seen = byKey.get(key);
    if (!seen || seen.maxId < r.max_id) byKey.set(key, { name: r.subject, maxId: r.max_id });
  }
  return [...byKey.values()].sort((a, b) => b.maxId - a.maxId);
}
