/**
 * Zulip's rate limiter (zerver/lib/rate_limiter.py), kept in the database instead of Redis so that
 * every server process counts the same requests. Rules come from RATE_LIMITING_RULES (config.ts):
 * per domain, [seconds, max] pairs, each allowing `max` requests per key within `seconds`.
 *
 * Two mechanisms, for two kinds of traffic:
 *
 * - **Logins** (`authenticate_by_username`, takeHit/giveBack): few, and each failure must count
 *   exactly. The row of (domain, key) holds the times of its latest hits, and each change is ONE
 *   statement (the row lock of INSERT … ON CONFLICT DO UPDATE orders concurrent hits, so two
 *   processes cannot both take the last one). A sliding window, as Zulip's Redis backend.
 * - **API requests** (`api_by_user`, `api_by_ip`, RateLimiter): every request, so no statement in
 *   the common case. Per (rule, key) a fixed window starts with its first request; a row holds the
 *   window and how many of its requests were granted to processes. A process takes a slice of the
 *   allowance (5% of max, at least 1) in one statement, serves that many requests from memory, and
 *   only then takes another slice; once the whole allowance is granted, requests get 429 until the
 *   window ends. What is counted is at least what was served (unused slices are lost when the
 *   window ends), so the limit can only be stricter, never looser; a process serving all traffic
 *   alone sees its Remaining drop by exactly one per request. On the embedded database (one
 *   process) the same logic runs on an in-memory store.
 */
import type { Logger } from "pino";
import type { RateLimitDomain, RateLimitingRules } from "../../config.ts";
import type { Db } from "../../db/index.ts";
import { uncounted } from "../../db/statements.ts";
import { RateLimitedError } from "../../errors.ts";

export interface RateLimitRule {
  /** Zulip's domain: the name of the rule in RATE_LIMITING_RULES. */
  domain: string;
  max: number;
  windowSeconds: number;
}

/** The rules of one domain, shortest window first; none when the domain is configured unlimited. */
export function rulesOf(rules: RateLimitingRules, domain: RateLimitDomain): RateLimitRule[] {
  return rules[domain].map(([windowSeconds, max]) => ({ domain, max, windowSeconds }));
}

/** What the X-RateLimit-* headers report (zerver/middleware.py RateLimitMiddleware). */
export interface RateLimitStatus {
  limit: number;
  remaining: number;
  /** When the key has its whole allowance again, in seconds since the epoch. */
  reset: number;
}

/**
 * The status to report when several rules apply (Zulip's RateLimitMiddleware takes the minimum
 * remaining): the one with the fewest requests left, then the lowest limit.
 */
export function strictest(
  ...statuses: (RateLimitStatus | undefined)[]
): RateLimitStatus | undefined {
  let best: RateLimitStatus | undefined;
  for (const s of statuses)
    if (
      s &&
      (!best ||
        s.remaining < best.remaining ||
        (s.remaining === best.remaining && s.limit < best.limit))
    )
      best = s;
  return best;
}

export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(status.limit),
    "X-RateLimit-Remaining": String(status.remaining),
    "X-RateLimit-Reset": String(status.reset),
  };
}

/** 429 with `secs` until a request may succeed, and the headers of the exhausted rule. */
function refusal(rule: RateLimitRule, secs: number, atSeconds: number): RateLimitedError {
  const secsToFreedom = Math.max(0.001, Math.round(secs * 1000) / 1000);
  const error = new RateLimitedError(secsToFreedom);
  Object.assign(
    error.headers,
    rateLimitHeaders({
      limit: rule.max,
      remaining: 0,
      reset: Math.floor(atSeconds + secsToFreedom),
    }),
  );
  return error;
}

// ---------------------------------------------------------------------------------------------
// Logins: a sliding log of hits per key, one statement per attempt.

/** A hit taken, which giveBack can return. */
export interface RateLimitHit {
  rules: RateLimitRule[];
  key: string;
  /** The hit's time, in seconds since the epoch (as stored). */
  at: number;
  status: RateLimitStatus;
}

const PRUNE_EVERY_MS = 60_000;
let nextHistoryPruneAt = 0;

function statusOf(rules: RateLimitRule[], hits: number[], at: number): RateLimitStatus {
  return strictest(
    ...rules.map((rule) => {
      const live = hits.filter((h) => h > at - rule.windowSeconds).sort((a, b) => a - b);
      const newest = live.at(-1);
      return {
        limit: rule.max,
        remaining: Math.max(0, rule.max - live.length),
        reset: Math.floor(newest === undefined ? at : newest + rule.windowSeconds),
      };
    }),
  )!;
}

/**
 * Takes one hit for `key` if every rule of its domain allows it, else throws RateLimitedError
 * (429, with the seconds until the oldest counted hit of each exceeded rule leaves its window, and
 * the X-RateLimit-* headers). Undefined when the domain has no rules.
 */
export async function takeHit(
  db: Db,
  rules: RateLimitRule[],
  key: string,
  now: Date,
): Promise<RateLimitHit | undefined> {
  if (rules.length === 0) return undefined;
  const domain = rules[0]!.domain;
  const at = now.getTime() / 1000;
  const longest = Math.max(...rules.map((r) => r.windowSeconds));
  const windows = rules.map((r) => r.windowSeconds);
  const maxes = rules.map((r) => r.max);
  if (now.getTime() >= nextHistoryPruneAt) {
    nextHistoryPruneAt = now.getTime() + PRUNE_EVERY_MS;
    await db.$executeRaw`DELETE FROM rate_limit_history WHERE expires_at < ${now}`;
  }
  const taken = await db.$queryRaw<{ hits: number[] }[]>`
    INSERT INTO rate_limit_history AS h (domain, key, hits, expires_at)
    VALUES (${domain}, ${key}, ARRAY[${at}::float8], to_timestamp(${at}::float8 + ${longest}::float8))
    ON CONFLICT (domain, key) DO UPDATE
    SET hits = ARRAY(SELECT x FROM unnest(h.hits) x WHERE x > ${at}::float8 - ${longest}::float8 ORDER BY x) || ${at}::float8,
        expires_at = GREATEST(h.expires_at, excluded.expires_at)
    WHERE NOT EXISTS (
      SELECT 1 FROM unnest(${windows}::int[], ${maxes}::int[]) AS r(w, m)
      WHERE (SELECT count(*) FROM unnest(h.hits) x WHERE x > ${at}::float8 - r.w) >= r.m)
    RETURNING hits`;
  if (taken[0]) return { rules, key, at, status: statusOf(rules, taken[0].hits, at) };

  const [row] = await db.$queryRaw<{ hits: number[] }[]>`
    SELECT hits FROM rate_limit_history WHERE domain = ${domain} AND key = ${key}`;
  const hits = row?.hits ?? [];
  // Free once, for every exceeded rule, the oldest of its last `max` hits leaves its window
  // (the Redis backend's is_ratelimited).
  let worst = rules[0]!;
  let secs = 0;
  for (const rule of rules) {
    const live = hits.filter((h) => h > at - rule.windowSeconds).sort((a, b) => a - b);
    if (live.length < rule.max) continue;
    const free = live[live.length - rule.max]! + rule.windowSeconds - at;
    if (free > secs) [worst, secs] = [rule, free];
  }
  throw refusal(worst, secs, at);
}

/** Returns a hit taken by takeHit (it should not count after all); the key's status after it. */
export async function giveBack(db: Db, hit: RateLimitHit): Promise<RateLimitStatus> {
  const [row] = await db.$queryRaw<{ hits: number[] }[]>`
    UPDATE rate_limit_history
    SET hits = hits[:array_position(hits, ${hit.at}::float8) - 1] || hits[array_position(hits, ${hit.at}::float8) + 1:]
    WHERE domain = ${hit.rules[0]!.domain} AND key = ${hit.key} AND ${hit.at}::float8 = ANY(hits)
    RETURNING hits`;
  return statusOf(hit.rules, row?.hits ?? [], hit.at);
}

// ---------------------------------------------------------------------------------------------
// API requests: slices of a fixed window's allowance, served from memory.

/** A slice of a window's allowance granted to this process. Times in milliseconds. */
export interface Lease {
  windowEnd: number;
  /** Requests of the window granted to all processes so far, this slice included. */
  granted: number;
  /** The size of this slice: 0 when the allowance is exhausted. */
  leased: number;
}

export interface LeaseStore {
  take(rule: RateLimitRule, key: string, nowMs: number, slice: number): Promise<Lease>;
}

/** The allowance one lease takes: 5% of the rule's max, at least one request. */
export const sliceOf = (rule: RateLimitRule) => Math.max(1, Math.floor(rule.max / 20));

/** The grant of `want` more requests on a window holding `granted` of `max`. */
const grant = (want: number, granted: number, max: number) =>
  Math.max(0, Math.min(want, max - granted));

/** The embedded database's store: one process owns it, so memory is the whole truth. */
export function memoryLeaseStore(): LeaseStore {
  const windows = new Map<string, { windowEnd: number; granted: number }>();
  let nextPruneAt = 0;
  return {
    take(rule, key, nowMs, slice) {
      if (nowMs >= nextPruneAt) {
        nextPruneAt = nowMs + PRUNE_EVERY_MS;
        for (const [k, w] of windows) if (w.windowEnd <= nowMs) windows.delete(k);
      }
      const id = `${rule.domain}\0${rule.windowSeconds}\0${key}`;
      let w = windows.get(id);
      if (!w || w.windowEnd <= nowMs) {
        w = { windowEnd: nowMs + rule.windowSeconds * 1000, granted: 0 };
        windows.set(id, w);
      }
      const leased = grant(slice, w.granted, rule.max);
      w.granted += leased;
      return Promise.resolve({ windowEnd: w.windowEnd, granted: w.granted, leased });
    },
  };
}

/**
 * PostgreSQL's store, shared by every process: ONE statement per lease, on the pool (outside any
 * transaction; the row lock of ON CONFLICT DO UPDATE orders concurrent leases, so the grants
 * never exceed max). A window that has ended is restarted by the lease that finds it so.
 * Ended windows are deleted at most once a minute per process, in the background.
 */
export function databaseLeaseStore(db: Db, log?: Logger): LeaseStore {
  let nextPruneAt = 0;
  return {
    async take(rule, key, nowMs, slice) {
      const now = new Date(nowMs);
      if (nowMs >= nextPruneAt) {
        nextPruneAt = nowMs + PRUNE_EVERY_MS;
        // Maintenance, not the request's work: not awaited, and outside its statement count
        // (a Prisma query runs when it is awaited, so it is awaited inside `uncounted`).
        void uncounted(async () => {
          try {
            await db.$executeRaw`DELETE FROM rate_limit_window WHERE expires_at < ${now}`;
          } catch (err) {
            log?.warn({ err }, "pruning rate_limit_window failed");
          }
        });
      }
      const want = Math.min(slice, rule.max);
      const expires = new Date(nowMs + rule.windowSeconds * 1000);
      const [row] = await db.$queryRaw<{ expires_at: Date; granted: number; leased: number }[]>`
        INSERT INTO rate_limit_window AS w (domain, seconds, key, window_start, expires_at, granted, leased)
        VALUES (${rule.domain}, ${rule.windowSeconds}::int, ${key}, ${now}, ${expires}, ${want}::int, ${want}::int)
        ON CONFLICT (domain, seconds, key) DO UPDATE SET
          window_start = CASE WHEN w.expires_at <= excluded.window_start THEN excluded.window_start ELSE w.window_start END,
          expires_at = CASE WHEN w.expires_at <= excluded.window_start THEN excluded.expires_at ELSE w.expires_at END,
          granted = CASE WHEN w.expires_at <= excluded.window_start THEN excluded.granted
                    ELSE w.granted + GREATEST(0, LEAST(excluded.leased, ${rule.max}::int - w.granted)) END,
          leased = CASE WHEN w.expires_at <= excluded.window_start THEN excluded.leased
                   ELSE GREATEST(0, LEAST(excluded.leased, ${rule.max}::int - w.granted)) END
        RETURNING expires_at, granted, leased`;
      return { windowEnd: row!.expires_at.getTime(), granted: row!.granted, leased: row!.leased };
    },
  };
}

/** This process's view of one (rule, key) window: its unspent slice and what it last learned. */
interface Bucket {
  windowEnd: number;
  /** Requests of the current slice not yet served. */
  tokens: number;
  /** The window's grants to all processes as of the last lease. */
  granted: number;
  /** The last lease found the allowance exhausted: refuse until the window ends. */
  exhausted: boolean;
  /** The lease being taken, which concurrent requests for the same key wait for. */
  taking?: Promise<void>;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private nextPruneAt = 0;

  constructor(
    private readonly store: LeaseStore,
    private readonly rules: RateLimitingRules,
    private readonly clock: () => Date,
  ) {}

  /**
   * Counts one request of `key` against every rule of `domain`: its status (the strictest rule),
   * or RateLimitedError once a rule's allowance is exhausted. Undefined when the domain has no rules.
   */
  async hit(domain: RateLimitDomain, key: string): Promise<RateLimitStatus | undefined> {
    const rules = rulesOf(this.rules, domain);
    if (rules.length === 0) return undefined;
    for (;;) {
      const nowMs = this.clock().getTime();
      this.prune(nowMs);
      const buckets = rules.map((rule) => this.bucket(rule, key, nowMs));
      let refused: RateLimitedError | undefined;
      let latest = 0;
      buckets.forEach((b, i) => {
        if (b.exhausted && b.tokens === 0 && b.windowEnd > latest) {
          latest = b.windowEnd;
          refused = refusal(rules[i]!, (b.windowEnd - nowMs) / 1000, nowMs / 1000);
        }
      });
      if (refused) throw refused;
      const empty = buckets.findIndex((b) => b.tokens === 0);
      if (empty < 0) {
        // Every rule has a request left in this process's slice: serve it from memory.
        return strictest(
          ...buckets.map((b, i) => {
            b.tokens--;
            return {
              limit: rules[i]!.max,
              remaining: Math.max(0, rules[i]!.max - b.granted + b.tokens),
              reset: Math.floor(b.windowEnd / 1000),
            };
          }),
        );
      }
      await this.lease(rules[empty]!, key, buckets[empty]!, nowMs);
    }
  }

  private bucket(rule: RateLimitRule, key: string, nowMs: number): Bucket {
    const id = `${rule.domain}\0${rule.windowSeconds}\0${key}`;
    let b = this.buckets.get(id);
    if (!b || (b.windowEnd <= nowMs && !b.taking)) {
      // A window that ended takes its unused slice with it.
      b = { windowEnd: 0, tokens: 0, granted: 0, exhausted: false };
      this.buckets.set(id, b);
    }
    return b;
  }

  /** Takes a slice into `b`; requests that find one being taken wait for it instead. */
  private lease(rule: RateLimitRule, key: string, b: Bucket, nowMs: number): Promise<void> {
    b.taking ??= this.store
      .take(rule, key, nowMs, sliceOf(rule))
      .then((lease) => {
        b.windowEnd = lease.windowEnd;
        b.granted = lease.granted;
        b.tokens += lease.leased;
        b.exhausted = lease.leased === 0;
      })
      .finally(() => (b.taking = undefined));
    return b.taking;
  }

  private prune(nowMs: number) {
    if (nowMs < this.nextPruneAt) return;
    this.nextPruneAt = nowMs + PRUNE_EVERY_MS;
    for (const [id, b] of this.buckets)
      if (b.windowEnd <= nowMs && !b.taking) this.buckets.delete(id);
  }
}
