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
 *
 * The NOTIFY payload also names the committing transaction's xid. A reader whose window stops
 * below it (an older transaction, perhaps one that logs nothing, is still running) knows that a
 * committed row is still ahead of it, and reads again until its window passes that xid.
 */
import type { Db, RawTx } from "../db/index.ts";
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
  /**
   * A message in a public channel: queues registered with `all_public_streams` take it too,
   * whoever their user (Tornado's get_client_info_for_message_event).
   */
  allPublic?: boolean;
}

/**
 * The users' own parts of an event (a message's flags) as stored: the value most of them share
 * under "*", and by user id only those of the others. A message to a channel of 10,000 people is
 * one "*" and the few who differ (its sender, those it mentions), so each of the polls that take
 * it reads a few hundred bytes instead of 10,000 entries (its fan-out to 1,000 parked polls had a
 * p99 of 900 ms, PostgreSQL decompressing the whole map for each). queues.ts reads a recipient's
 * entry, else "*".
 */
export function storedUserData(
  userData: Map<number, Record<string, unknown>> | undefined,
): Record<string, unknown> | null {
  if (!userData || userData.size === 0) return null;
  // Each distinct value (serialized), with how many users have it.
  const values = new Map<string, { data: Record<string, unknown>; n: number }>();
  const keys = new Map<number, string>();
  for (const [id, data] of userData) {
    const key = JSON.stringify(data);
    keys.set(id, key);
    const value = values.get(key);
    if (value) value.n++;
    else values.set(key, { data, n: 1 });
  }
  // The most shared value, when at least two users share it.
  let common: string | null = null;
  let most = 1;
  for (const [key, { n }] of values)
    if (n > most) {
      most = n;
      common = key;
    }
  if (common === null) return Object.fromEntries(userData);
  const stored: Record<string, unknown> = { "*": values.get(common)!.data };
  for (const [id, data] of userData) if (keys.get(id) !== common) stored[String(id)] = data;
  return stored;
}

/** What appending returned: the last log id and the transaction's xid, or null for nothing. */
export interface Appended {
  lastId: bigint;
  xid: bigint;
}

/**
 * Appends events (and cache keys they make stale) in one statement inside the caller's
 * transaction, and NOTIFYs at commit (payload `<last id>:<1 if stale keys, else 0>:<xid>`).
 * Returns the last log id and the transaction's xid, or null when there was nothing.
 */
export async function appendEvents(
  tx: RawTx,
  realmId: number,
  events: LoggedEvent[],
  invalidate: string[],
): Promise<Appended | null> {
  const rows: {
    type: string;
    event: ZulipEvent;
    users: number[];
    user_data: Record<string, unknown> | null;
    invalidate: string[];
    all_public: boolean;
  }[] = events.map((e) => ({
    type: e.event.type,
    event: e.event,
    users: e.users,
    user_data: storedUserData(e.userData),
    invalidate: [],
    all_public: e.allPublic ?? false,
  }));
  // Keys ride on the first row; a change with keys but no events gets a row of its own.
  if (invalidate.length) {
    if (rows[0]) rows[0].invalidate = invalidate;
    else
      rows.push({
        type: "",
        event: { type: "" },
        users: [],
        user_data: null,
        invalidate,
        all_public: false,
      });
  }
  if (rows.length === 0) return null;
  const result = await tx.$queryRaw<{ last: bigint | null; xid: bigint }[]>`
    WITH ins AS (
      INSERT INTO event_log (realm_id, type, event, user_ids, user_data, invalidate, all_public)
      SELECT ${realmId}::int, e->>'type', e->'event',
             ARRAY(SELECT jsonb_array_elements_text(e->'users')::int),
             NULLIF(e->'user_data', 'null'::jsonb),
             ARRAY(SELECT jsonb_array_elements_text(e->'invalidate')),
             (e->>'all_public')::boolean
      FROM jsonb_array_elements(${storableJson(rows)}::jsonb) WITH ORDINALITY AS t(e, n)
      ORDER BY n
      RETURNING id),
    last AS (SELECT max(id) AS id, pg_current_xact_id()::text::bigint AS xid FROM ins),
    notified AS (SELECT pg_notify(${NOTIFY_CHANNEL}, (SELECT id::text || ${invalidate.length ? ":1:" : ":0:"} || xid::text FROM last)))
    SELECT last.id AS last, last.xid FROM last, notified`;
  const row = result[0];
  return row && row.last !== null ? { lastId: BigInt(row.last), xid: BigInt(row.xid) } : null;
}

export interface LogRow {
  id: bigint;
  realmId: number;
  userIds: number[];
  invalidate: string[];
  allPublic: boolean;
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
      all_public: boolean | null;
    }[]
  >`
    WITH h AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS hi)
    SELECT h.hi, l.id, l.realm_id, ARRAY(SELECT u FROM unnest(l.user_ids) AS u WHERE u = ANY (${waiting}::int[])) AS user_ids, l.invalidate, l.all_public
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
        allPublic: r.all_public ?? false,
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
