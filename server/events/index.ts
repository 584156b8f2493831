/**
 * Events, for any number of server processes on one database (Zulip's Tornado event queues).
 *
 * - An action collects its events in `PendingEvents` while its transaction runs; `inTransaction`
 *   appends them to the event log in that transaction (log.ts), so a client never hears
 *   of a change that was rolled back, and never misses one that committed.
 * - Queues live in the database (queues.ts): any process answers any queue's GET /events.
 * - This process follows the log (a window at a time, by transaction id) to wake its waiting
 *   long-polls and drop stale cache entries. It reads the log when one of its own transactions
 *   commits, and when PostgreSQL NOTIFYs that another process's did.
 * - Every announcement names the committing transaction's xid, and this process remembers the
 *   highest one, whether or not anybody waits here at that moment. While its window has not
 *   passed that xid (an older transaction, one that logs nothing included, is still running) and
 *   a long-poll waits here, it reads again shortly: a committed event never waits for the next
 *   unrelated commit, or the heartbeat, to be delivered.
 */
import type { Logger } from "pino";
import type { Database, Db, RawTx, Tx } from "../db/index.ts";
import { invalidateCaches } from "../lib/caches.ts";
import { realmById } from "../lib/auth/identity.ts";
import { emptyTopicDisplayName } from "../lib/messages/topics.ts";
import { isStorableId } from "../lib/ids.ts";
import { isStorableText } from "../lib/text.ts";
import { currentCounter, uncounted, type StatementCounter } from "../db/statements.ts";
import { formatEvent, type FormatContext } from "./format.ts";
import {
  collectLog,
  NOTIFY_CHANNEL,
  readLogWindow,
  type Appended,
  type LogRow,
  type LoggedEvent,
  type ZulipEvent,
} from "./log.ts";
import {
  addHeartbeat,
  collectIdleQueues,
  createQueue,
  deleteQueue,
  pollQueues,
  touchQueues,
  type PollRequest,
  type PollResult,
  type NewQueue,
  type QueueLimits,
} from "./queues.ts";

export type { ZulipEvent, LoggedEvent } from "./log.ts";
export type { QueueOptions, NewQueue } from "./queues.ts";

export interface EventBusOptions {
  /** How long GET /events waits before answering with a heartbeat (Zulip: about 50 s). */
  heartbeatMs?: number;
  /** A queue nobody polled for this long is deleted (Zulip's IDLE_EVENT_QUEUE_TIMEOUT_SECS: 10 minutes). */
  idleQueueMs?: number;
  /** Queues one user may hold; registering one more deletes their least recently polled queue. */
  maxQueuesPerUser?: number;
  /** Unacknowledged events one queue may hold; a queue that overflows is deleted. */
  maxEventsPerQueue?: number;
  /** Log rows are kept at least this long, for processes catching up on cache invalidations. */
  keepLogMs?: number;
  log?: Logger;
}

/**
 * Bounds on what queues hold, so that abandoned or slow clients cannot grow the server without
 * limit. A queue that is deleted for either reason behaves as one that timed out: its next poll
 * gets BAD_EVENT_QUEUE_ID, and the client registers again and reloads its state, which is how
 * every Zulip client already recovers.
 */
export const DEFAULT_MAX_QUEUES_PER_USER = 50;
export const DEFAULT_MAX_EVENTS_PER_QUEUE = 1000;

/**
 * Polls waiting for the next statement are taken together, up to this many a statement: a message
 * to a channel of thousands wakes as many long-polls at once.
 */
const POLL_BATCH = 200;

interface PendingPoll {
  request: PollRequest;
  counter: StatementCounter | undefined;
  resolve: (result: PollResult | null) => void;
  reject: (err: unknown) => void;
}

export type EventDatabase = Pick<Database, "prisma" | "listen">;

interface Waiter {
  userId: number;
  realmId: number;
  /** The queue takes public-channel messages of its organization (`all_public_streams`). */
  allPublic: boolean;
  /** Where the poll that found nothing stopped (its window's end). */
  cursor: bigint;
  wake: (reason: "event" | "stop") => void;
}

export class EventBus {
  private readonly db: Db;
  private readonly heartbeatMs: number;
  private readonly idleQueueMs: number;
  private readonly keepLogMs: number;
  private readonly limits: QueueLimits;
  private readonly log: Logger | undefined;
  /** Long-polls waiting in this process, by queue. */
  private readonly waiters = new Map<string, Waiter>();
  private readonly gcTimer: NodeJS.Timeout;
  private readonly started: Promise<void>;
  private unlisten: (() => Promise<void>) | undefined;
  private closed = false;
  /** The log is read up to this transaction id (exclusive). */
  private horizon: bigint | null = null;
  /** The highest xid announced (by NOTIFY or a local commit): the window must pass it. */
  private announcedXid = -1n;
  /** The highest xid announced by another process with stale cache keys: read even with nobody waiting. */
  private staleXid = -1n;
  private following: Promise<void> | undefined;
  private followAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelay = 1;
  /** Polls asked for in this turn of the event loop, run together at its end (flushPolls). */
  private pendingPolls: PendingPoll[] = [];
  /** Poll statements run, and the queues they polled (the batching's effect, which tests read). */
  readonly pollStats = { statements: 0, queues: 0 };

  constructor(database: EventDatabase, options: EventBusOptions = {}) {
    this.db = database.prisma;
    this.heartbeatMs = options.heartbeatMs ?? 50_000;
    this.idleQueueMs = options.idleQueueMs ?? 10 * 60_000;
    this.keepLogMs = options.keepLogMs ?? 5 * 60_000;
    this.limits = {
      maxQueuesPerUser: options.maxQueuesPerUser ?? DEFAULT_MAX_QUEUES_PER_USER,
      maxEventsPerQueue: options.maxEventsPerQueue ?? DEFAULT_MAX_EVENTS_PER_QUEUE,
    };
    this.log = options.log;
    this.gcTimer = setInterval(() => void this.collect(), Math.min(60_000, this.idleQueueMs));
    this.gcTimer.unref();
    this.started = this.start(database);
    this.started.catch(() => {});
  }

  private async start(database: EventDatabase) {
    this.unlisten = await database.listen(
      NOTIFY_CHANNEL,
      (payload) => {
        const [, stale, xid] = payload.split(":");
        this.announce(xid && /^\d+$/.test(xid) ? BigInt(xid) : null, stale === "1");
      },
      () => {
        // Notifications may have been lost while the connection was down: every cache entry may
        // be stale, and any transaction below the next xid may have committed events.
        invalidateCaches(["*"]);
        void uncounted(() => nextXid(this.db)).then(
          (xid) => this.announce(xid, true),
          () => this.announce(null, true),
        );
      },
    );
    if (this.closed) await this.unlisten();
    this.horizon = (await uncounted(() => readLogWindow(this.db, null))).horizon;
  }

  /** Resolves once the bus follows the log (call before serving). */
  ready(): Promise<void> {
    return this.started;
  }

  /** A queue's idle timeout when its register named none (register's idle_queue_timeout_secs). */
  get defaultIdleQueueSecs(): number {
    return Math.ceil(this.idleQueueMs / 1000);
  }

  async register(queue: NewQueue): Promise<string> {
    return createQueue(this.db, queue, this.limits);
  }

  /**
   * Events after `lastEventId`, waiting up to the heartbeat for one when there is none (unless
   * `dontBlock`). Null when the user has no such queue (or it overflowed and was deleted).
   */
  async fetch(
    queueId: string,
    userId: number,
    lastEventId: number,
    dontBlock: boolean,
  ): Promise<(ZulipEvent & { id: number })[] | null> {
    if (!isStorableText(queueId) || !isStorableId(lastEventId)) return null;
    // Whether a queue takes an event is decided by its poll (queues.ts); the waiter only needs to
    // know which log rows may concern it.
    const deadline = Date.now() + this.heartbeatMs;
    for (;;) {
      const polled = await this.poll({ queueId, userId, ack: lastEventId });
      if (!polled) return null;
      if (polled.overflowed) {
        await deleteQueue(this.db, queueId);
        return null;
      }
      if (polled.events.length > 0 || dontBlock || this.closed) {
        const realm = await realmById(this.db, polled.realmId);
        const ctx: FormatContext = {
          emptyTopicDisplayName: realm ? emptyTopicDisplayName(realm) : "",
          queueId,
        };
        return polled.events.map((e) => ({
          ...formatEvent(e.event, e.userData, polled.options, ctx),
          id: e.id,
        }));
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        await addHeartbeat(this.db, queueId);
        continue;
      }
      const reason = await this.wait(
        queueId,
        { userId, realmId: polled.realmId, allPublic: polled.options.allPublicStreams },
        remaining,
        polled.cursor,
      );
      if (reason === "stop") return [];
    }
  }

  /**
   * Polls a queue together with every other poll asked for in the same turn of the event loop:
   * one statement (queues.ts pollQueues) for all the long-polls one message wakes. Each request's
   * statement count includes the shared statement once.
   */
  private poll(request: PollRequest): Promise<PollResult | null> {
    return new Promise((resolve, reject) => {
      this.pendingPolls.push({ request, counter: currentCounter(), resolve, reject });
      if (this.pendingPolls.length === 1) setImmediate(() => this.flushPolls());
    });
  }

  private flushPolls() {
    const pending = this.pendingPolls;
    this.pendingPolls = [];
    // A queue appears once in a statement (its events are numbered in it); a second poll of the
    // same queue waits for the next one.
    const seen = new Set<string>();
    const batches: PendingPoll[][] = [];
    let batch: PendingPoll[] = [];
    for (const p of pending) {
      if (seen.has(p.request.queueId)) {
        this.pendingPolls.push(p);
        continue;
      }
      seen.add(p.request.queueId);
      batch.push(p);
      if (batch.length === POLL_BATCH) {
        batches.push(batch);
        batch = [];
      }
    }
    if (batch.length) batches.push(batch);
    if (this.pendingPolls.length) setImmediate(() => this.flushPolls());
    for (const b of batches) {
      this.pollStats.statements++;
      this.pollStats.queues += b.length;
      void uncounted(() =>
        pollQueues(
          this.db,
          b.map((p) => p.request),
          this.limits,
        ),
      ).then(
        (results) => {
          for (const p of b) {
            if (p.counter) p.counter.statements++;
            p.resolve(results.get(p.request.queueId) ?? null);
          }
        },
        (err: unknown) => {
          for (const p of b) p.reject(err);
        },
      );
    }
  }

  /**
   * Waits for a log row for the user. `cursor` is where the poll that found nothing stopped: a row
   * above it that this process read before the waiter existed would never wake it, so if the
   * follower is already past the cursor the queue is polled again at once; otherwise the log is
   * read once now (commits announced while nobody waited here were not read).
   */
  private wait(
    queueId: string,
    who: Omit<Waiter, "wake" | "cursor">,
    ms: number,
    cursor: bigint,
  ): Promise<"event" | "stop" | "timeout"> {
    // A newer poll replaces an older one, as Zulip's single-handler queues do.
    this.waiters.get(queueId)?.wake("stop");
    if (this.horizon !== null && this.horizon > cursor) return Promise.resolve("event");
    // With nobody waiting here the log was not read; the rows below the cursor no longer matter
    // to this queue (its poll took them), and none of them names stale caches unread (those are
    // read at once, and tracked by `staleXid` until they are), so the read can start there.
    if (
      this.waiters.size === 0 &&
      !this.following &&
      this.horizon !== null &&
      this.horizon < cursor &&
      this.staleXid < this.horizon
    )
      this.horizon = cursor;
    queueMicrotask(() => this.follow());
    return new Promise((resolve) => {
      const timer = setTimeout(() => done("timeout"), ms);
      const waiter: Waiter = { ...who, cursor, wake: (reason) => done(reason) };
      const done = (reason: "event" | "stop" | "timeout") => {
        clearTimeout(timer);
        if (this.waiters.get(queueId) === waiter) this.waiters.delete(queueId);
        resolve(reason);
      };
      this.waiters.set(queueId, waiter);
    });
  }

  async delete(queueId: string, userId: number): Promise<boolean> {
    if (!isStorableText(queueId)) return false;
    const deleted = await deleteQueue(this.db, queueId, userId);
    if (deleted) this.waiters.get(queueId)?.wake("stop");
    return deleted;
  }

  /**
   * After one of this process's transactions committed: its cache keys are dropped at once (the
   * next request must not see the old values), and the log is read to wake long-polls.
   */
  afterCommit(appended: Appended | null, invalidate: string[]) {
    if (invalidate.length) invalidateCaches(invalidate);
    if (appended !== null) this.announce(appended.xid, false);
  }

  /**
   * A commit (of transaction `xid`) was announced. Its xid is remembered in any case: a poll that
   * comes later may stop below it, and must then know to read again. The log is read now only
   * when that can matter here: a long-poll waits in this process, or the commit names stale cache
   * entries another process made (this process's own were dropped at commit).
   */
  private announce(xid: bigint | null, staleHere: boolean) {
    if (this.closed) return;
    if (xid !== null && xid > this.announcedXid) this.announcedXid = xid;
    if (staleHere && xid !== null && xid > this.staleXid) this.staleXid = xid;
    if (this.waiters.size === 0 && !staleHere) return;
    this.follow();
  }

  /** An announced commit is above the window, and it can matter here: read again shortly. */
  private behind(): boolean {
    if (this.horizon === null) return false;
    return (
      (this.waiters.size > 0 && this.horizon <= this.announcedXid) || this.horizon <= this.staleXid
    );
  }

  /** Reads the log's next window; runs once at a time, again if asked meanwhile. */
  private follow() {
    if (this.following) {
      this.followAgain = true;
      return;
    }
    this.following = uncounted(async () => {
      try {
        await this.started;
        do {
          this.followAgain = false;
          const known = new Set(this.waiters.values());
          const waiting = [...new Set([...known].map((w) => w.userId))];
          const { horizon, rows } = await readLogWindow(this.db, this.horizon, waiting);
          this.horizon = horizon;
          this.deliver(rows);
          // A long-poll that began waiting during this read was not among `waiting`, so the
          // window's rows for it came back without its user; if the window reached past where its
          // poll stopped, the next window starts beyond rows it never saw: it polls again now.
          for (const waiter of [...this.waiters.values()])
            if (!known.has(waiter) && waiter.cursor < horizon) waiter.wake("event");
        } while (this.followAgain && !this.closed);
      } catch (err) {
        if (!this.closed) this.log?.warn({ err }, "reading the event log failed");
      } finally {
        this.following = undefined;
      }
      // An announced transaction above the window committed while an older one is still running:
      // read again shortly, until the window passes it.
      if (this.behind() && !this.closed && !this.retryTimer) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.follow();
        }, this.retryDelay);
        this.retryDelay = Math.min(this.retryDelay * 2, 50);
      } else if (!this.behind()) this.retryDelay = 1;
    });
  }

  private deliver(rows: LogRow[]) {
    for (const row of rows) {
      if (row.invalidate.length) invalidateCaches(row.invalidate);
      // A changed user (`user:<id>`) may have lost their queues (deactivation): their waiting
      // polls look again, and one whose queue is gone ends with BAD_EVENT_QUEUE_ID.
      const changed = row.invalidate.filter((k) => k.startsWith("user:"));
      if (
        this.waiters.size === 0 ||
        (row.userIds.length === 0 && changed.length === 0 && !row.allPublic)
      )
        continue;
      const users = new Set([...row.userIds, ...changed.map((k) => Number(k.slice(5)))]);
      for (const waiter of [...this.waiters.values()])
        if (
          users.has(waiter.userId) ||
          (row.allPublic && waiter.allPublic && waiter.realmId === row.realmId)
        )
          waiter.wake("event");
    }
  }

  private async collect() {
    if (this.closed) return;
    await uncounted(async () => {
      try {
        const waiting = [...this.waiters.keys()];
        await touchQueues(this.db, waiting);
        await collectIdleQueues(this.db, this.idleQueueMs, waiting);
        await collectLog(this.db, this.keepLogMs);
      } catch (err) {
        if (!this.closed) this.log?.warn({ err }, "collecting idle event queues failed");
      }
    });
  }

  /** Answers every waiting long-poll and stops following the log (the database stays open). */
  close() {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.gcTimer);
    clearTimeout(this.retryTimer);
    for (const waiter of [...this.waiters.values()]) waiter.wake("stop");
    void this.unlisten?.();
  }
}

/** The next xid PostgreSQL will assign: every transaction that committed has a smaller one. */
async function nextXid(db: Db): Promise<bigint> {
  const rows = await db.$queryRaw<
    { x: bigint }[]
  >`SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x`;
  return BigInt(rows[0]!.x);
}

/** Events collected by an action during its transaction; `inTransaction` logs them before commit. */
/**
 * One mutation's unit of work, as actions/transaction.ts inTransaction opens it: the transaction
 * and the events it logs when it commits. Helpers that change rows and announce the change take
 * it whole, so the two never part.
 */
export interface UnitOfWork<X extends RawTx = Tx> {
  readonly tx: X;
  readonly events: PendingEvents;
}

export class PendingEvents {
  readonly events: LoggedEvent[] = [];
  readonly keys: string[] = [];
  add(
    event: ZulipEvent,
    users: Iterable<number>,
    userData?: Map<number, Record<string, unknown>>,
    options: { allPublic?: boolean } = {},
  ) {
    this.events.push({ event, users: [...users], userData, allPublic: options.allPublic });
  }
  /** Names a per-process cache entry this change makes stale (see lib/caches.ts). */
  invalidate(key: string) {
    if (!this.keys.includes(key)) this.keys.push(key);
  }
}
