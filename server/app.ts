/**
 * createApp(deps) builds the Express application; it reads no environment and opens no
 * socket, so tests build it on a database of their own. Middleware order is fixed:
 * body parsing and Zulip's parameter merging → the validator's route lookup → authentication
 * → rate limits → JSON-in-form decoding → request validation (http/validator.ts) → response validation → the operation's
 * handler → the error handler.
 */
import express from "express";
import type { NextFunction, Request, Response } from "express";
import type { AppDeps } from "./context.ts";
import { authMiddleware } from "./http/auth.ts";
import { docsRoutes } from "./http/docs.ts";
import { errorHandler } from "./http/error-handler.ts";
import { emojiDataRoutes } from "./http/emoji-data.ts";
import { health } from "./http/health.ts";
import { compressResponses } from "./http/compression.ts";
import { joinRoutes } from "./handlers/join.ts";
import { loginRoutes } from "./handlers/login.ts";
import { unsubscribeRoutes } from "./handlers/unsubscribe.ts";
import { webAppRoutes } from "./http/web-app.ts";
import { jsonPrefix } from "./http/json-prefix.ts";
import { mergeSlashes } from "./http/merge-slashes.ts";
import { rateLimitMiddleware } from "./http/rate-limit.ts";
import { requestLog } from "./http/request-log.ts";
import { bodyError, bodyParsers, decodeJsonFields, parseParams, sentQuery } from "./http/form.ts";
import { loadSpec, operationFor, type LoadedSpec } from "./http/spec.ts";
import { uploadRoutes } from "./http/uploads.ts";
import { validatorChain } from "./http/validator.ts";
import { videoCallRoutes } from "./handlers/video-call-pages.ts";
import { dispatcher } from "./routes.ts";

function jsonFormDecoder(spec: LoadedSpec) {
  return function decodeJsonForm(req: Request, res: Response, next: NextFunction) {
    const op = operationFor(spec, req);
    try {
      if (bodyError(res)) throw bodyError(res);
      const query = op
        ? decodeJsonFields(
            spec,
            op,
            req.body && typeof req.body === "object" ? (req.body as Record<string, unknown>) : {},
            sentQuery(res),
          )
        : undefined;
      // Express computes req.query from the URL on every read; the decoded values replace it.
      if (query)
        Object.defineProperty(req, "query", {
          value: query,
          writable: true,
          configurable: true,
          enumerable: true,
        });
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * Any path that names user uploads, uploads a custom emoji or an avatar, names their images, or
 * asks for a user's avatar (`/avatar/…`), as http/uploads.ts matches them.
 */
const USER_UPLOADS =
  /^(\/api\/v1)?\/user_uploads|^\/api\/v1\/realm\/emoji\/|^\/api\/v1\/users\/me\/avatar|^\/user_avatars\/|^\/avatar\//i;

export function createApp(deps: AppDeps) {
  const spec = loadSpec();
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // Which peers may name the client in X-Forwarded-For (req.ip, counted by the per-address limit).
  app.set("trust proxy", deps.config.trustedProxies);
  // Django's QueryDict: the last value of a repeated key wins.
  app.set("query parser", (q: string) => parseParams(q));
  // A fragment is never part of a request target (RFC 9112 §3.2); a client that sends one
  // anyway means the URL before it, as Node's URL parser reads it.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const hash = req.url.indexOf("#");
    if (hash >= 0) req.url = req.originalUrl = req.url.slice(0, hash);
    next();
  });
  app.use(mergeSlashes);
  // `/json/…` is `/api/v1/…` authenticated by the web session: from here on, the same route.
  app.use(jsonPrefix(spec.basePath));
  // HEAD on the API is its GET without the body, as Django answers it (Zulip's desktop app checks
  // a server is up with HEAD /api/v1/server_settings). Node leaves out the body of a response to
  // a HEAD request whatever the method is called later, so the GET operation runs.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    if (req.method === "HEAD" && req.url.startsWith(spec.basePath + "/")) req.method = "GET";
    next();
  });

  // Every request is logged (and counted) once it is answered, whatever answers it.
  app.use(requestLog(spec, deps.log, deps.metrics));
  app.use(compressResponses());
  app.get("/health", health(deps));
  app.use(docsRoutes());
  app.get("/api/openapi.json", (_req, res) => res.json(spec.doc));
  // The sign-up page (HTML forms outside the API, with their own body parser).
  app.use(joinRoutes(deps));
  // Notification emails' unsubscribe links (a page, and mail clients' one-click POST).
  app.use(unsubscribeRoutes(deps));
  // The web app: logging in and out (HTML forms), the app page at `/` and its static files.
  app.use(loginRoutes(deps));
  // Register's server_emoji_data_url, before the web app's /static (whose catch-all is a 404).
  app.use(emojiDataRoutes());
  app.use(webAppRoutes(deps));
  // Video calls' browser-facing pages: the OAuth provider's register and callback, BigBlueButton's join.
  app.use(videoCallRoutes(deps));

  // Uploaded files: the upload's multipart body, and serving files outside /api/v1 (only
  // requests that name user_uploads go through these).
  const uploads = uploadRoutes(deps);
  app.use(function userUploads(req: Request, res: Response, next: NextFunction) {
    if (!USER_UPLOADS.test(req.url)) return next();
    let i = 0;
    const step = (err?: unknown) =>
      err !== undefined || i === uploads.length ? next(err) : uploads[i++]!(req, res, step);
    step();
  });
  app.use(bodyParsers());
  const { chain: validator, requestAt } = validatorChain(spec, deps.config.validateResponses);
  validator.splice(
    requestAt,
    0,
    authMiddleware(spec, deps),
    ...rateLimitMiddleware(spec, deps),
    jsonFormDecoder(spec),
  );
  app.use(validator);

  app.use(dispatcher(spec, deps));
  app.use(errorHandler(spec, deps.log));
  return app;
}
