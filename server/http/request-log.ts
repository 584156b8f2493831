/**
 * One JSON log line per request (pino-http), written when the response is finished:
 *
 *   {"level":30,"time":"…","method":"POST","route":"/messages","operation":"send-message",
 *    "status":200,"responseTime":4,"user_id":10,"client":"ZulipMobile","msg":"POST /messages 200"}
 *
 * `route` is the spec's path template (never the URL: no ids, no query string, no API key in
 * `?api_key=`); paths outside the API are logged by their Express route or as `unmatched`.
 * 5xx answers are logged at `error`, everything else at `info`. The same hook feeds the metrics.
 */
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { pinoHttp } from "pino-http";
import { clientNameFromUserAgent } from "../lib/clients.ts";
import type { Metrics } from "../metrics.ts";
import { operationFor, type LoadedSpec } from "./spec.ts";

interface Described {
  route: string;
  operation: string;
}

function describe(spec: LoadedSpec, req: Request): Described {
  const op = operationFor(spec, req);
  if (op) return { route: op.specPath, operation: op.operationId };
  const route = (req as { route?: { path?: string } }).route?.path;
  return typeof route === "string" ? { route, operation: route } : { route: "unmatched", operation: "unmatched" };
}

export function requestLog(spec: LoadedSpec, log: Logger, metrics?: Metrics) {
  const logger = pinoHttp<Request, Response>({
    logger: log,
    quietReqLogger: true,
    // The request and response objects are not logged whole: only what customProps picks.
    serializers: { req: () => undefined, res: () => undefined },
    customAttributeKeys: { reqId: "request_id" },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? "error" : "info"),
    customSuccessMessage: (req, res) => `${req.method} ${describe(spec, req).route} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${describe(spec, req).route} ${res.statusCode}`,
    // A 5xx's cause is logged once, with its stack, by the error handler; pino-http's stand-in
    // error ("failed with status code 500") would only repeat the status.
    customErrorObject: (_req, _res, _err, loggable: Record<string, unknown>) => {
      const { err: _dropped, ...rest } = loggable;
      return rest;
    },
    customProps: (req, res) => {
      // Called when the request starts too, before routing and authentication: only the final call matters.
      if (!res.writableFinished && !res.headersSent) return {};
      const { route, operation } = describe(spec, req);
      return {
        method: req.method,
        route,
        operation,
        status: res.statusCode,
        user_id: req.zulip?.user?.id,
        client: clientNameFromUserAgent(req.headers["user-agent"]),
      };
    },
  });
  return function logRequest(req: Request, res: Response, next: NextFunction) {
    if (metrics) {
      const start = process.hrtime.bigint();
      res.once("finish", () => {
        const { operation } = describe(spec, req);
        metrics.observe(operation, req.method, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
      });
    }
    logger(req, res, next);
  };
}
