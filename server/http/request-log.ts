/**
 * One JSON log line per request (pino), written once the response is done:
 *
 *   {"level":30,"time":"…","request_id":7,"method":"POST","route":"/messages","operation":"send-message",
 *    "status":200,"responseTime":4,"statements":5,"user_id":10,"client":"ZulipMobile","msg":"POST /messages 200"}
 *
 * `route` is the spec's path template (never the URL: no ids, no query string, no API key in
 * `?api_key=`), the same under `/json` as under `/api/v1` (a `/json` request adds
 * `"via":"json"`; metrics count both as the operation); paths outside the API are logged by their Express route or as `unmatched`. 5xx
 * answers are logged at `error`, everything else at `info`; a request whose client went away
 * before its response gets `aborted: true`; `statements` is the SQL statements the request ran
 * (db/statements.ts; `npm run bench` reads it). The same hook feeds the metrics.
 *
 * Written with pino directly rather than pino-http: pino-http makes three child loggers per
 * request (and serializes the request for them) even when the line is not written, which cost
 * 18% of GET /users/me's throughput; this costs one object and one log call, and nothing when
 * the level is off and metrics are not collected.
 */
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { clientNameFromUserAgent } from "../lib/clients.ts";
import type { Metrics } from "../metrics.ts";
import { viaJson } from "./json-prefix.ts";
import { operationFor, type LoadedSpec } from "./spec.ts";

function describe(spec: LoadedSpec, req: Request): { route: string; operation: string } {
  const op = operationFor(spec, req);
  if (op) return { route: op.specPath, operation: op.operationId };
  const route = (req as { route?: { path?: unknown } }).route?.path;
  return typeof route === "string"
    ? { route, operation: route }
    : { route: "unmatched", operation: "unmatched" };
}

export function requestLog(spec: LoadedSpec, log: Logger, metrics?: Metrics) {
  let lastId = 0;
  return function logRequest(req: Request, res: Response, next: NextFunction) {
    const start = process.hrtime.bigint();
    const requestId = ++lastId;
    res.once("close", () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const aborted = !res.writableFinished;
      const status = res.statusCode;
      const level = status >= 500 ? "error" : "info";
      const logged = log.isLevelEnabled(level);
      if (!logged && !metrics) return;
      const { route, operation } = describe(spec, req);
      if (!aborted) metrics?.observe(operation, req.method, status, seconds);
      if (!logged) return;
      log[level](
        {
          request_id: requestId,
          method: req.method,
          route,
          operation,
          status: aborted && !res.headersSent ? null : status,
          ...(aborted ? { aborted: true } : {}),
          ...(viaJson(req) ? { via: "json" } : {}),
          responseTime: Math.round(seconds * 1000),
          statements: (res.locals as { statements?: { statements: number } }).statements
            ?.statements,
          user_id: req.zulip?.user?.id,
          client: clientNameFromUserAgent(req.headers["user-agent"]),
        },
        `${req.method} ${route} ${aborted ? "aborted" : status}`,
      );
    });
    next();
  };
}
