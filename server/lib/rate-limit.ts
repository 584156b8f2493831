/**
 * Zulip's rate limiter (zerver/lib/rate_limiter.py), kept in the database instead of Redis so
 * that every server process counts the same hits: a rule allows `max` hits per key within any
 * `windowSeconds`. The row of (rule's domain, key) holds the times of its latest hits, at most
 * `max` of them, and each change is ONE statement (the row lock of INSERT … ON CONFLICT DO
 * UPDATE orders concurrent hits, so two processes cannot both take the last one). Plain SQL,
 * so it runs on PGlite as on PostgreSQL. Rows whose window has passed are pruned as hits are
 * written (at most once a minute per process).
 */
import type { Db } from "../db.ts";
import { RateLimitedError } from "../errors.ts";

export interface RateLimitRule {
  /** Zulip's domain: the name of the rule in RATE_LIMITING_RULES. */
  domain: string;
  max: number;
  windowSeconds: number;
}

/** DEFAULT_RATE_LIMITING_RULES["authenticate_by_username"]: 5 attempts per username in 30 minutes. */
export const AUTHENTICATE_BY_USERNAME: RateLimitRule = {
  domain: "authenticate_by_username",
  max: 5,
  windowSeconds: 1800,
};

/** What the X-RateLimit-* headers report (zerver/middleware.py RateLimitMiddleware). */
export interface RateLimitStatus {
  limit: number;
  remaining: number;
  /** When the key has its whole allowance again, in seconds since the epoch. */
  reset: number;
}

/** A hit taken, which giveBack can return. */
export interface RateLimitHit {
  rule: RateLimitRule;
  key: string;
  /** The hit's time, in seconds since the epoch (as stored). */
  at: number;
  status: RateLimitStatus;
}

export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(status.limit),
    "X-RateLimit-Remaining": String(status.remaining),
    "X-RateLimit-Reset": String(status.reset),
  };
}

const PRUNE_EVERY_MS = 60_000;
let nextPruneAt = 0;

/** The hits of `hits` still inside the rule's window at `at`, oldest first. */
const inWindow = (rule: RateLimitRule, hits: number[], at: number) =>
  hits.filter((h) => h > at - rule.windowSeconds).sort((a, b) => a - b);

function statusOf(rule: RateLimitRule, hits: number[], at: number): RateLimitStatus {
  const live = inWindow(rule, hits, at);
  const newest = live.at(-1);
  return {
    limit: rule.max,
    remaining: Math.max(0, rule.max - live.length),
    reset: Math.floor(newest === undefined ? at : newest + rule.windowSeconds),
  };
}

/**
 * Takes one hit for `key` if the rule allows it, else throws RateLimitedError (429, with the
 * seconds until the oldest counted hit leaves the window, and the X-RateLimit-* headers).
 */
export async function takeHit(
  db: Db,
  rule: RateLimitRule,
  key: string,
  now: Date,
): Promise<RateLimitHit> {
  const at = now.getTime() / 1000;
  if (now.getTime() >= nextPruneAt) {
    nextPruneAt = now.getTime() + PRUNE_EVERY_MS;
    await db.$executeRaw`DELETE FROM rate_limit_history WHERE expires_at < ${now}`;
  }
  const taken = await db.$queryRaw<{ hits: number[] }[]>`
    INSERT INTO rate_limit_history AS h (domain, key, hits, expires_at)
    VALUES (${rule.domain}, ${key}, ARRAY[${at}::float8], to_timestamp(${at}::float8 + ${rule.windowSeconds}::float8))
    ON CONFLICT (domain, key) DO UPDATE
    SET hits = ARRAY(SELECT x FROM unnest(h.hits) x WHERE x > ${at}::float8 - ${rule.windowSeconds}::float8 ORDER BY x) || ${at}::float8,
        expires_at = GREATEST(h.expires_at, excluded.expires_at)
    WHERE (SELECT count(*) FROM unnest(h.hits) x WHERE x > ${at}::float8 - ${rule.windowSeconds}::float8) < ${rule.max}::int
    RETURNING hits`;
  if (taken[0]) return { rule, key, at, status: statusOf(rule, taken[0].hits, at) };

  const [row] = await db.$queryRaw<{ hits: number[] }[]>`
    SELECT hits FROM rate_limit_history WHERE domain = ${rule.domain} AND key = ${key}`;
  const live = inWindow(rule, row?.hits ?? [], at);
  // Free once the oldest of the last `max` hits leaves the window (Redis backend's is_ratelimited).
  const oldest = live[live.length - rule.max] ?? at;
  const secsToFreedom = Math.max(
    0.001,
    Math.round((oldest + rule.windowSeconds - at) * 1000) / 1000,
  );
  const error = new RateLimitedError(secsToFreedom);
  Object.assign(
    error.headers,
    rateLimitHeaders({ limit: rule.max, remaining: 0, reset: Math.floor(at + secsToFreedom) }),
  );
  throw error;
}

/** Returns a hit taken by takeHit (it should not count after all); the key's status after it. */
export async function giveBack(db: Db, hit: RateLimitHit): Promise<RateLimitStatus> {
  const [row] = await db.$queryRaw<{ hits: number[] }[]>`
    UPDATE rate_limit_history
    SET hits = hits[:array_position(hits, ${hit.at}::float8) - 1] || hits[array_position(hits, ${hit.at}::float8) + 1:]
    WHERE domain = ${hit.rule.domain} AND key = ${hit.key} AND ${hit.at}::float8 = ANY(hits)
    RETURNING hits`;
  return statusOf(hit.rule, row?.hits ?? [], hit.at);
}
