/**
 * `/json/…`: the API as Zulip's web app calls it (zproject/urls.py mounts the same views twice).
 * One spec, one code path: this early middleware remembers that the request came through
 * `/json` and rewrites its URL to `/api/v1/…`, so the request log, the rate limits, the
 * validator and the handlers are the API's own; only authentication (http/auth.ts) differs:
 * the session cookie and the CSRF header instead of HTTP Basic.
 */
import type { NextFunction, Request, Response } from "express";

export const JSON_PREFIX = "/json";

const throughJson = new WeakSet<Request>();

/** Whether the request came in under `/json` (its URL now reads `/api/v1`). */
export const viaJson = (req: Request): boolean => throughJson.has(req);

export function jsonPrefix(apiBasePath: string) {
  return function rewriteJson(req: Request, _res: Response, next: NextFunction) {
    const url = req.url;
    if (
      url.startsWith(JSON_PREFIX) &&
      (url.length === JSON_PREFIX.length || "/?".includes(url[JSON_PREFIX.length]!))
    ) {
      throughJson.add(req);
      req.url = req.originalUrl = apiBasePath + url.slice(JSON_PREFIX.length);
    }
    next();
  };
}
