/**
 * The event log. An action appends its events in its own transaction, so an event exists exactly
 * when its change committed; after commit, NOTIFY (payload `<last log id>:<1 if it names stale
 * cache entries, else 0>`, far below PostgreSQL's 8 kB) wakes every process.
 *
 * Log ids come from a sequence at insert time, so a transaction that took id 10 can commit after
 * one that took id 11: a reader that went past 11 by id would skip 10. Readers therefore go by
 * transaction id instead. Each row records its transaction's id (`xid`); a reader takes the rows
 * with `from <= xid < pg_snapshot_xmin(pg_current_snapshot())`, the oldest transaction still
 * running when its statement started. Every transaction below that bound has finished, so all of
 * its rows are visible in that same statement; the next read starts at the bound. Consecutive
 * windows cover every xid exactly once: no row is skipped or read twice, whatever the commit order.
 */
import type { Db, RawTx } from "../db.ts";
import { storableJson } from "../lib/text.ts";

export const NOTIFY_CHANNEL = "zulip_events";

export interface ZulipEvent {
  type: string;
  [key: string]: unknown;
}

export interface LoggedEvent {
  event: ZulipEvent;
  /** The users the event goes to. */
  users: number[];
  /** Per-user fields merged into the event when a queue takes it (Zulip's `users: [{id, flags}]`). */
  userData?: Map<number, Record<string, unknown>>;
}

/**
 * Appends events (and cache keys they make stale) in one statement inside the caller's
 * transaction, and NOTIFYs at commit. Returns the last log id, or null when there was nothing.
 */
export async function appendEvents(
  tx: RawTx,
  realmId: number,
  events: LoggedEvent[],
  invalidate: string[],
): Promise<bigint | null> {
  const rows: {
    type: string;
    event: ZulipEvent;
    users: number[];
    user_data: Record<string, unknown> | null;
    invalidate: string[];
  }[] = events.map((e) => ({
    type: e.event.type,
    event: e.event,
    users: e.users,
    user_data: e.userData && e.userData.size ? Object.fromEntries(e.userData) : null,
    invalidate: [],
  }));
  // Keys ride on the first row; a change with keys but no events gets a row of its own.
  if (invalidate.length) {
    if (rows[0]) rows[0].invalidate = invalidate;
    else rows.push({ type: "", event: { type: "" }, users: [], user_data: null, invalidate });
  }
  if (rows.length === 0) return null;
  const result = await tx.$queryRaw<{ last: bigint | null }[]>`
    WITH ins AS (
      INSERT INTO event_log (realm_id, type, event, user_ids, user_data, invalidate)
      SELECT ${realmId}::int, e->>'type', e->'event',
             ARRAY(SELECT jsonb_array_elements_text(e->'users')::int),
             NULLIF(e->'user_data', 'null'::jsonb),
             ARRAY(SELECT jsonb_array_elements_text(e->'invalidate'))
      FROM jsonb_array_elements(${storableJson(rows)}::jsonb) WITH ORDINALITY AS t(e, n)
      ORDER BY n
      RETURNING id),
    last AS (SELECT max(id) AS id FROM ins),
    notified AS (SELECT pg_notify(${NOTIFY_CHANNEL}, (SELECT id FROM last)::text || ${invalidate.length ? ":1" : ":0"}))
    SELECT (SELECT id FROM last) AS last FROM notified`;
  return result[0]?.last ?? null;
}

export interface LogRow {
  id: bigint;
  realmId: number;
  userIds: number[];
  invalidate: string[];
}

/**
 * The rows of the next window `[from, horizon)` and the new horizon, in one statement. For a
 * process that wakes its long-polls and drops stale cache entries; queues read their own windows.
 * Of each row's users only those in `waiting` come back (a channel message may go to thousands).
 */
export async function readLogWindow(
  db: Db,
  from: bigint | null,
  waiting: number[] = [],
): Promise<{ horizon: bigint; rows: LogRow[] }> {
  const rows = await db.$queryRaw<
    {
      hi: bigint;
      id: bigint | null;
      realm_id: number | null;
      user_ids: number[] | null;
      invalidate: string[] | null;
    }[]
  >`
    WITH h AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS hi)
    SELECT h.hi, l.id, l.realm_id, ARRAY(SELECT u FROM unnest(l.user_ids) AS u WHERE u = ANY (${waiting}::int[])) AS user_ids, l.invalidate
    FROM h LEFT JOIN event_log l ON ${from}::bigint IS NOT NULL AND l.xid >= ${from}::bigint AND l.xid < h.hi
    ORDER BY l.id`;
  const horizon = BigInt(rows[0]!.hi);
  return {
    horizon,
    rows: rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        id: BigInt(r.id!),
        realmId: r.realm_id!,
        userIds: r.user_ids ?? [],
        invalidate: r.invalidate ?? [],
      })),
  };
}

/**
 * Deletes log rows no queue needs any more: below every queue's cursor, referenced by no queue
 * item, and older than `keepMs` (other processes read recent rows for their caches).
 */
export async function collectLog(db: Db, keepMs: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM event_log l
    WHERE l.created_at < now() - ${keepMs}::int * interval '1 millisecond'
      AND l.xid < COALESCE((SELECT min(cursor_xid) FROM event_queue), pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
      AND NOT EXISTS (SELECT 1 FROM event_queue_item i WHERE i.log_id = l.id)`;
}
