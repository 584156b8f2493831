/**
 * A message's edit history in Zulip's export format: the message row's `edit_history`, a JSON
 * string of the edits newest first, each `{user_id, timestamp, prev_content,
 * prev_rendered_content, prev_rendered_content_version, prev_topic, topic, prev_stream, stream}`
 * with only the keys the edit changed (Zulip's Message.edit_history). Here the edits are rows of
 * `message_edit`; the export writes them into the message rows and the import reads them back.
 */
import type { Db } from "../../db/index.ts";

/** The `edit_history` text of each of these messages that was edited. */
export async function editHistories(db: Db, messageIds: number[]): Promise<Map<number, string>> {
  const rows = await db.$queryRaw<{ id: number; history: string }[]>`
    SELECT e.message_id AS id,
      json_agg(jsonb_strip_nulls(jsonb_build_object(
        'user_id', e.user_id,
        'timestamp', floor(extract(epoch FROM e.edit_time))::bigint,
        'prev_content', e.prev_content,
        'prev_rendered_content', e.prev_rendered_content,
        'prev_rendered_content_version', e.prev_rendered_content_version,
        'prev_topic', e.prev_topic,
        'topic', e.topic,
        'prev_stream', e.prev_stream_id,
        'stream', e.stream_id)) ORDER BY e.id DESC)::text AS history
    FROM message_edit e WHERE e.message_id = ANY (${messageIds}::int[])
    GROUP BY e.message_id`;
  return new Map(rows.map((r) => [r.id, r.history]));
}

export interface EditRow {
  realm_id: number;
  message_id: number;
  user_id: number | null;
  edit_time: string;
  prev_content: string | null;
  prev_rendered_content: string | null;
  prev_rendered_content_version: number | null;
  prev_topic: string | null;
  topic: string | null;
  prev_stream_id: number | null;
  stream_id: number | null;
}

/**
 * A message's `edit_history` as `message_edit` rows, oldest first, with ids moved by the
 * caller (`user` and `stream` give the new id, or null for one the export lacks: Zulip keeps
 * the history of an editor who is gone). A history that is not a list of edits is an error
 * the caller names.
 */
export function editRows(
  history: unknown,
  message: { id: number; realmId: number },
  user: (id: number) => number | null,
  stream: (id: number) => number | null,
): EditRow[] {
  if (history === null || history === undefined || history === "") return [];
  const edits: unknown = typeof history === "string" ? JSON.parse(history) : history;
  if (!Array.isArray(edits)) throw new Error("edit_history is not a list");
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const id = (v: unknown, move: (id: number) => number | null) =>
    typeof v === "number" ? move(v) : null;
  return edits
    .map((raw) => {
      if (
        !raw ||
        typeof raw !== "object" ||
        typeof (raw as { timestamp?: unknown }).timestamp !== "number"
      )
        throw new Error("an edit of edit_history has no timestamp");
      const e = raw as Record<string, unknown>;
      return {
        realm_id: message.realmId,
        message_id: message.id,
        user_id: id(e.user_id, user),
        edit_time: new Date(Number(e.timestamp) * 1000).toISOString(),
        prev_content: text(e.prev_content),
        prev_rendered_content: text(e.prev_rendered_content),
        prev_rendered_content_version:
          typeof e.prev_rendered_content_version === "number"
            ? e.prev_rendered_content_version
            : null,
        prev_topic: text(e.prev_topic ?? e.prev_subject),
        topic: text(e.topic),
        prev_stream_id: id(e.prev_stream, stream),
        stream_id: id(e.stream, stream),
      };
    })
    .reverse();
}
