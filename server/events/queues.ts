/**
 * Event queues in the database (Zulip's Tornado ClientDescriptor), so that any process answers
 * any queue's GET /events and queues survive a restart. A queue holds events by reference to the
 * log: a poll takes the log rows of the queue's next window (see log.ts) that are for its user
 * and of its event types, numbers them with the queue's own ids (0, 1, 2, … as Zulip's), and
 * returns everything not yet acknowledged. Each operation is one statement.
 *
 * Which rows a queue takes is Zulip's ClientDescriptor.accepts_event, in SQL (ACCEPTS below):
 * its user's rows (and public-channel messages for `all_public_streams` queues), of its event
 * types, matching its narrow, and in the form its client capabilities ask for.
 */
import { randomUUID } from "node:crypto";
import { Prisma } from "../db/index.ts";
import type { Db } from "../db/index.ts";
import type { ZulipEvent } from "./log.ts";
import { storable, storableJson } from "../lib/text.ts";

export interface QueueOptions {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allPublicStreams: boolean;
  clientCapabilities: Record<string, boolean>;
  /** Presence events without `email` (register's deprecated `slim_presence`). */
  slimPresence?: boolean;
}

/** A term of a queue's narrow, as the register handler normalizes it (channels and senders by name). */
export interface QueueNarrowTerm {
  operator: string;
  operand: string;
  negated: boolean;
}

export interface NewQueue {
  realmId: number;
  userId: number;
  /** null: every type. */
  eventTypes: string[] | null;
  options: QueueOptions;
  narrow: QueueNarrowTerm[];
  /** register's idle_queue_timeout (seconds); undefined: the server's default. */
  idleTimeoutSecs?: number;
}

export interface QueueLimits {
  maxQueuesPerUser: number;
  maxEventsPerQueue: number;
}

/**
 * Creates a queue whose window starts at the oldest running transaction, so every event that
 * commits after this point reaches it (one that had already committed may too: clients apply
 * events idempotently, as with Zulip's queue-before-state order). A user's queues beyond the
 * limit, least recently polled first, are deleted in the same statement.
 */
export async function createQueue(db: Db, queue: NewQueue, limits: QueueLimits): Promise<string> {
  const id = `${Date.now().toString(36)}:${randomUUID()}`;
  await db.$executeRaw`
    WITH evicted AS (
      DELETE FROM event_queue WHERE id IN (
        SELECT id FROM event_queue WHERE user_profile_id = ${queue.userId}
        ORDER BY last_touch DESC OFFSET ${limits.maxQueuesPerUser - 1}::int))
    INSERT INTO event_queue (id, realm_id, user_profile_id, event_types, options, narrow, cursor_xid, idle_timeout_secs)
    VALUES (${id}, ${queue.realmId}, ${queue.userId}, ${queue.eventTypes?.map(storable) ?? null}::text[], ${storableJson(queue.options)}::jsonb,
            ${storableJson(queue.narrow)}::jsonb, pg_snapshot_xmin(pg_current_snapshot())::text::bigint, ${queue.idleTimeoutSecs ?? null}::int)`;
  return id;
}

/**
 * A user's own part of the log row `l` (log.ts storedUserData): their entry, else the one most
 * recipients share ("*"); for a recipient only: a queue that takes a public channel's message
 * without being among its recipients (all_public_streams) gets none.
 */
function userDataSql(userId: Prisma.Sql, recipients = Prisma.raw("l.user_ids")): Prisma.Sql {
  return Prisma.sql`CASE WHEN ${userId} = ANY (${recipients}) THEN COALESCE(l.user_data -> (${userId})::text, l.user_data -> '*') END`;
}

/** In a poll's window (pollQueues' `win`), the row's recipients among the polled queues' users. */
const WINDOW_RECIPIENTS = Prisma.raw("l.users");

/** Whether the queue's client declared a capability (never NULL, so that NOT works on it). */
function capability(name: string, alias = "q"): Prisma.Sql {
  return Prisma.sql`COALESCE(${Prisma.raw(alias)}.caps -> ${name} = 'true'::jsonb, false)`;
}

/**
 * Zulip's ClientDescriptor.accepts_event for log row `l` and queue `q` (with `q.caps`, its client
 * capabilities), beyond the user and realm:
 * - its event types; `muted_topics` not when the queue also takes `user_topic`;
 * - channel typing notifications only with `stream_typing_notifications`;
 * - a group's deactivation as `update` with `include_deactivated_groups`, as `remove` without;
 * - `realm_linkifiers` only with `linkifier_url_template` (level 176: URL templates);
 * - custom emoji changes one at a time (`realm_emoji` `add`, `update_one`) with
 *   `individual_emoji_changes`, the whole set (`realm_emoji` `update`) without (level 491;
 *   Zulip's process_realm_emoji_event);
 * - a channel's archiving as `update` `is_archived` with `archived_channels`, as `delete` (marked
 *   `for_archiving`) without; its unarchiving likewise as `update` or `create` (`for_unarchiving`);
 * - messages matching the queue's narrow (narrow_predicate.py build_narrow_predicate: a topic
 *   operand matches the whole topic or one of its words; unknown `is` operands match all). A
 *   term a message fails, or a negated one it passes, rejects it.
 */
const ACCEPTS = Prisma.sql`
  (q.event_types IS NULL OR (l.type = ANY (q.event_types) AND NOT (l.type = 'muted_topics' AND 'user_topic' = ANY (q.event_types))))
  AND NOT (l.type = 'typing' AND l.event ? 'stream_id' AND NOT ${capability("stream_typing_notifications")})
  AND NOT (l.type = 'user_group' AND l.event ->> 'op' = 'remove' AND ${capability("include_deactivated_groups")})
  AND NOT (l.type = 'realm_linkifiers' AND NOT ${capability("linkifier_url_template")})
  AND NOT (l.type = 'realm_emoji' AND (l.event ->> 'op' = 'update') = ${capability("individual_emoji_changes")})
  AND NOT (l.type = 'stream' AND l.event ->> 'op' = 'update' AND l.event ->> 'property' = 'is_archived'
           AND NOT ${capability("archived_channels")})
  AND NOT (l.type = 'stream' AND ${capability("archived_channels")}
           AND ((l.event ->> 'op' = 'delete' AND COALESCE(l.event -> 'for_archiving' = 'true'::jsonb, false))
             OR (l.event ->> 'op' = 'create' AND COALESCE(l.event -> 'for_unarchiving' = 'true'::jsonb, false))))
  AND NOT (l.type = 'user_group' AND l.event ->> 'op' = 'update' AND COALESCE(l.event -> 'data' ? 'deactivated', false)
           AND NOT ${capability("include_deactivated_groups")})
  AND (l.type <> 'message' OR jsonb_array_length(q.narrow) = 0 OR NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(q.narrow) AS t(term),
      LATERAL (SELECT l.event -> 'message' AS m,
                      COALESCE(${userDataSql(Prisma.raw("q.user_profile_id"), WINDOW_RECIPIENTS)} -> 'flags', '[]'::jsonb) AS f,
                      t.term ->> 'operand' AS v) AS x
    WHERE COALESCE(t.term ->> 'negated' = 'true', false) = COALESCE(CASE t.term ->> 'operator'
      WHEN 'channel' THEN x.m ->> 'type' = 'stream' AND lower(x.m ->> 'display_recipient') = lower(x.v)
      WHEN 'stream' THEN x.m ->> 'type' = 'stream' AND lower(x.m ->> 'display_recipient') = lower(x.v)
      WHEN 'topic' THEN x.m ->> 'type' = 'stream' AND (lower(x.m ->> 'subject') = lower(x.v)
                        OR lower(x.v) = ANY (regexp_split_to_array(lower(x.m ->> 'subject'), '\\s+')))
      WHEN 'exact-topic' THEN x.m ->> 'type' = 'stream' AND x.m ->> 'subject' = x.v
      WHEN 'sender' THEN lower(x.m ->> 'sender_email') = lower(x.v)
      WHEN 'is' THEN CASE x.v
        WHEN 'dm' THEN x.m ->> 'type' = 'private'
        WHEN 'private' THEN x.m ->> 'type' = 'private'
        WHEN 'starred' THEN x.f @> '["starred"]'::jsonb
        WHEN 'unread' THEN NOT x.f @> '["read"]'::jsonb
        WHEN 'alerted' THEN x.f @> '["mentioned"]'::jsonb
        WHEN 'mentioned' THEN x.f @> '["mentioned"]'::jsonb
        WHEN 'resolved' THEN x.m ->> 'type' = 'stream' AND x.m ->> 'subject' LIKE '✔ %'
        ELSE true END
      ELSE true END, false)))`;

/**
 * Zulip's process_deletion_event: a `delete_message` row names its messages in `message_ids`;
 * a queue whose client lacks `bulk_message_deletion` takes one event per message instead, each
 * with `message_id` (stored inline in its queue item, still referencing the log row). Rows of
 * other kinds, and queues with the capability, give one NULL row: the log row itself.
 */
const PER_MESSAGE_DELETIONS = Prisma.sql`
  SELECT (t.event - 'message_ids') || jsonb_build_object('message_id', e.mid) AS inline, e.ord
  FROM jsonb_array_elements(CASE WHEN t.type = 'delete_message' AND NOT ${capability("bulk_message_deletion", "t")}
                                 THEN t.event -> 'message_ids' ELSE '[]'::jsonb END) WITH ORDINALITY AS e(mid, ord)`;

export interface PolledEvent {
  id: number;
  event: ZulipEvent;
  userData: Record<string, unknown> | null;
}

export interface PollResult {
  realmId: number;
  options: QueueOptions;
  /** Unacknowledged events, oldest first. */
  events: PolledEvent[];
  /** More than the queue may hold: the caller deletes it. */
  overflowed: boolean;
  /** The queue has taken every log row below this transaction id. */
  cursor: bigint;
}

export interface PollRequest {
  queueId: string;
  userId: number;
  /** The last event id the client has (GET /events' last_event_id): it and those before are acknowledged. */
  ack: number;
}

/**
 * Acknowledges each queue's events up to its `ack`, takes its next window of the log and returns
 * what is pending, keyed by queue; a queue that is not its user's is left out. One statement for
 * all of them: when a message wakes a thousand long-polls, a process polls them together rather
 * than one statement each. The log is read once, from the oldest of their cursors; each queue
 * takes the rows from its own. Concurrent polls of one queue serialise on its row (FOR UPDATE, in
 * the order of the queue ids so that two batches cannot deadlock), and the cursor only moves
 * forward, so none numbers an event twice.
 */
export async function pollQueues(
  db: Db,
  polls: readonly PollRequest[],
  limits: QueueLimits,
): Promise<Map<string, PollResult>> {
  const results = new Map<string, PollResult>();
  if (polls.length === 0) return results;
  const rows = await db.$queryRaw<
    {
      kind: string;
      queue_id: string;
      event_id: number;
      event: unknown;
      user_data: unknown;
      realm_id: number | null;
      options: unknown;
      over: boolean | null;
      cursor: bigint | null;
    }[]
  >`
    WITH h AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS hi),
    r AS (SELECT * FROM unnest(${polls.map((p) => p.queueId)}::text[], ${polls.map((p) => p.userId)}::int[],
                               ${polls.map((p) => p.ack)}::int[]) AS r(id, user_id, ack)),
    q AS (SELECT e.id, e.realm_id, e.user_profile_id, e.event_types, e.options, e.narrow,
                 e.options -> 'clientCapabilities' AS caps, e.cursor_xid, e.next_event_id, r.ack
          FROM event_queue e JOIN r ON e.id = r.id AND e.user_profile_id = r.user_id
          ORDER BY e.id FOR UPDATE OF e),
    -- The log rows of the window, by the xid index. Materialized, with the bounds as subqueries,
    -- so that they are found by their xid range: planned with the ORDER BY id below, PostgreSQL
    -- walked the whole log by id and filtered (10 ms at 7,500 rows, growing with the log, on
    -- every poll).
    -- Each row's recipients are narrowed once to the polled queues' users ("users"): a message
    -- to a channel of 10,000 lists 10,000 ids, which each queue would otherwise read again.
    win AS MATERIALIZED (
      SELECT l.id, l.xid, l.realm_id, l.type, l.event, l.all_public, l.user_data,
             ARRAY(SELECT u FROM unnest(l.user_ids) AS u WHERE u IN (SELECT user_profile_id FROM q)) AS users
      FROM event_log l
      WHERE l.xid >= (SELECT min(cursor_xid) FROM q) AND l.xid < (SELECT hi FROM h)),
    -- What later steps need of the queue travels with each row: joined again to q (estimated at
    -- one row), a batch's rows were matched to its queues pairwise.
    matched AS (
      SELECT q.id AS queue_id, q.ack, q.next_event_id, q.caps, l.id AS log_id, l.type, l.event,
             ${userDataSql(Prisma.raw("q.user_profile_id"), WINDOW_RECIPIENTS)} AS user_data,
             row_number() OVER (PARTITION BY q.id ORDER BY l.id) AS n
      FROM q JOIN win l ON l.xid >= q.cursor_xid AND l.realm_id = q.realm_id
      WHERE (q.user_profile_id = ANY (l.users) OR (l.all_public AND q.options -> 'allPublicStreams' = 'true'::jsonb))
        AND ${ACCEPTS}),
    fresh AS (
      SELECT t.queue_id, t.ack, t.log_id, t.event, t.user_data, x.inline,
             (t.next_event_id + row_number() OVER (PARTITION BY t.queue_id ORDER BY t.log_id, x.ord) - 1)::int AS event_id
      FROM matched t LEFT JOIN LATERAL (${PER_MESSAGE_DELETIONS}) x ON true
      WHERE t.n <= ${limits.maxEventsPerQueue + 1}::int),
    ins AS (INSERT INTO event_queue_item (queue_id, event_id, log_id, inline) SELECT queue_id, event_id, log_id, inline FROM fresh),
    acked AS (DELETE FROM event_queue_item i USING q WHERE i.queue_id = q.id AND i.event_id <= q.ack),
    counted AS (SELECT queue_id, count(*)::int AS n FROM fresh GROUP BY queue_id),
    upd AS (UPDATE event_queue e SET cursor_xid = GREATEST(q.cursor_xid, h.hi),
                   next_event_id = q.next_event_id + COALESCE(c.n, 0), last_touch = now()
            FROM q CROSS JOIN h LEFT JOIN counted c ON c.queue_id = q.id WHERE e.id = q.id),
    pending AS (
      SELECT q.id AS queue_id, i.event_id, COALESCE(i.inline, l.event) AS event, ${userDataSql(Prisma.raw("q.user_profile_id"))} AS user_data
      FROM q JOIN event_queue_item i ON i.queue_id = q.id AND i.event_id > q.ack LEFT JOIN event_log l ON l.id = i.log_id
      UNION ALL
      SELECT f.queue_id, f.event_id, COALESCE(f.inline, f.event), f.user_data
      FROM fresh f WHERE f.event_id > f.ack)
    SELECT 'queue' AS kind, q.id AS queue_id, -1 AS event_id, NULL::jsonb AS event, NULL::jsonb AS user_data, q.realm_id, q.options,
           COALESCE(c.n, 0) > ${limits.maxEventsPerQueue}::int AS over,
           GREATEST(q.cursor_xid, h.hi) AS cursor
    FROM q CROSS JOIN h LEFT JOIN (SELECT queue_id, count(*) AS n FROM pending GROUP BY queue_id) c ON c.queue_id = q.id
    UNION ALL
    SELECT 'event', p.queue_id, p.event_id, p.event, p.user_data, NULL, NULL, NULL, NULL FROM pending p
    ORDER BY queue_id, event_id`;
  for (const row of rows) {
    if (row.kind === "queue") {
      results.set(row.queue_id, {
        realmId: row.realm_id!,
        options: row.options as QueueOptions,
        overflowed: row.over ?? false,
        cursor: BigInt(row.cursor!),
        events: [],
      });
      continue;
    }
    results.get(row.queue_id)?.events.push({
      id: row.event_id,
      event: row.event as ZulipEvent,
      userData: (row.user_data as Record<string, unknown> | null) ?? null,
    });
  }
  return results;
}

/** Adds a heartbeat to the queue (Zulip sends one when a long-poll has waited long enough). */
export async function addHeartbeat(db: Db, queueId: string): Promise<void> {
  await db.$executeRaw`
    WITH q AS (UPDATE event_queue SET next_event_id = next_event_id + 1, last_touch = now() WHERE id = ${queueId} RETURNING id, next_event_id - 1 AS event_id)
    INSERT INTO event_queue_item (queue_id, event_id, inline) SELECT id, event_id, '{"type":"heartbeat"}'::jsonb FROM q`;
}

export async function deleteQueue(db: Db, queueId: string, userId?: number): Promise<boolean> {
  const deleted =
    userId === undefined
      ? await db.$executeRaw`DELETE FROM event_queue WHERE id = ${queueId}`
      : await db.$executeRaw`DELETE FROM event_queue WHERE id = ${queueId} AND user_profile_id = ${userId}`;
  return deleted > 0;
}

/**
 * Deletes every queue of these users, in the caller's transaction (a deactivated user's). A poll
 * waiting on one is woken by the change's `user:<id>` key (see EventBus) and finds it gone.
 */
export async function deleteUserQueues(db: Db, userIds: number[]): Promise<number> {
  return db.$executeRaw`DELETE FROM event_queue WHERE user_profile_id = ANY (${userIds}::int[])`;
}

/**
 * Deletes queues nobody polled for their idle timeout (register's idle_queue_timeout, else
 * `idleMs`), except those in `waiting` (a long-poll holds them).
 */
export async function collectIdleQueues(
  db: Db,
  idleMs: number,
  waiting: string[],
): Promise<number> {
  return db.$executeRaw`
    DELETE FROM event_queue
    WHERE last_touch < now() - COALESCE(idle_timeout_secs::bigint * 1000, ${idleMs}::int) * interval '1 millisecond'
      AND NOT (id = ANY (${waiting}::text[]))`;
}

/** Keeps queues with a waiting long-poll alive across processes (their pollers touch them). */
export async function touchQueues(db: Db, ids: string[]): Promise<void> {
  if (ids.length)
    await db.$executeRaw`UPDATE event_queue SET last_touch = now() WHERE id = ANY (${ids}::text[])`;
}
