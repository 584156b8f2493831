/**
 * Zulip's API rate limits on every operation (zerver/decorator.py rate_limit, applied by
 * rest_dispatch; headers as zerver/middleware.py RateLimitMiddleware), run right after
 * authentication and before parameters are checked, so a request with bad parameters counts too:
 *
 * - an authenticated request counts against `api_by_user` for its user;
 * - an operation that needs no credentials (GET /server_settings, POST /fetch_api_key), and a
 *   request whose credentials were refused (401), count against `api_by_ip` for the client's
 *   address (`req.ip`: the peer, or the first address in X-Forwarded-For that a trusted proxy
 *   did not add; TRUSTED_PROXIES);
 * - GET and DELETE /events count against `api_by_user` in buckets of this process's own, in memory
 *   (Zulip serves them from Tornado, whose in-memory backend keeps separate buckets for the same
 *   rules): a long-poll costs no statement, and its polls do not eat the user's API allowance.
 *
 * Files served outside /api/v1 (uploads, avatars) are not limited, as Zulip skips them
 * (`override_api_url_scheme` views): a client may fetch many of them at once. The status is set as
 * X-RateLimit-* headers (the strictest rule) and kept on `req.zulip.rateLimit` for handlers that
 * apply a limit of their own; past a limit, 429 RATE_LIMIT_HIT with Retry-After.
 */
import type { NextFunction, Request, Response } from "express";
import type { AppDeps } from "../context.ts";
import { countStatements } from "../db/statements.ts";
import { JsonableError } from "../errors.ts";
import {
  databaseLeaseStore,
  memoryLeaseStore,
  rateLimitHeaders,
  RateLimiter,
  type RateLimitStatus,
} from "../lib/auth/rate-limit.ts";
import { requestCounter } from "./auth.ts";
import { operationFor, type LoadedSpec } from "./spec.ts";

/** Served by Tornado in Zulip, with its own in-memory buckets. */
const EVENT_POLLS = new Set(["get-events", "delete-queue"]);

/** The client's address as counted: IPv4 peers without the IPv6-mapped prefix Node gives them. */
export function clientAddress(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? "unknown";
  return ip.startsWith("::ffff:") && ip.includes(".") ? ip.slice(7) : ip;
}

/**
 * The middleware and its error counterpart (for requests authentication refused); none when
 * RATE_LIMITING is off.
 */
export function rateLimitMiddleware(
  spec: LoadedSpec,
  deps: AppDeps,
): ((req: Request, res: Response, next: NextFunction) => void)[] {
  const { config } = deps;
  if (!config.rateLimiting) return [];
  // The embedded database belongs to one process: its count can live in memory.
  const store =
    deps.databaseKind === "pglite" ? memoryLeaseStore() : databaseLeaseStore(deps.db, deps.log);
  const shared = new RateLimiter(store, config.rateLimitingRules, deps.now);
  const polls = new RateLimiter(memoryLeaseStore(), config.rateLimitingRules, deps.now);

  async function limit(req: Request, res: Response, authenticated: boolean) {
    (res.locals as { rateLimited?: boolean }).rateLimited = true;
    const op = operationFor(spec, req)!;
    const user = authenticated ? req.zulip?.user : undefined;
    const status = await countStatements(requestCounter(res), () =>
      user
        ? (EVENT_POLLS.has(op.operationId) ? polls : shared).hit("api_by_user", `user:${user.id}`)
        : shared.hit("api_by_ip", `ip:${clientAddress(req)}`),
    );
    report(req, res, status);
  }

  function rateLimit(req: Request, res: Response, next: NextFunction) {
    if (!operationFor(spec, req)) return next();
    limit(req, res, true).then(() => next(), next);
  }

  function rateLimitRefused(err: unknown, req: Request, res: Response, next: NextFunction) {
    // Only what authentication refused for a known operation (not an unknown path or method),
    // and only once (not the refusal or failure of the count itself).
    if (
      !(err instanceof JsonableError) ||
      !operationFor(spec, req) ||
      (res.locals as { rateLimited?: boolean }).rateLimited
    )
      return next(err);
    limit(req, res, false).then(
      () => next(err),
      (limited: unknown) => next(limited),
    );
  }
  // Express tells error middleware by its four parameters.
  return [rateLimit, rateLimitRefused as unknown as typeof rateLimit];
}

function report(req: Request, res: Response, status: RateLimitStatus | undefined) {
  if (!status) return;
  if (req.zulip) req.zulip.rateLimit = status;
  res.set(rateLimitHeaders(status));
}
