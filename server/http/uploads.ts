/**
 * Uploaded files over HTTP, mounted before the API's body parsing:
 *
 * - POST /api/v1/user_uploads: its multipart body is streamed to disk here (at most one file,
 *   at most the configured size, stopping as soon as either is exceeded); the operation's handler
 *   receives what arrived through `receivedUpload(body)`. Its refusals come from the handler,
 *   after authentication, as Zulip's do.
 * - GET /api/v1/user_uploads/{realm_id_str}/{filename}: the filename holds slashes
 *   (`4e/m2A3…/zulip.txt`), which an OpenAPI path parameter cannot; they are escaped here so
 *   that the spec's operation matches.
 * - GET /user_uploads/<realm_id>/<…> (and /user_uploads/download/…, which always downloads):
 *   the file itself, outside /api/v1 as in Zulip, authenticated by HTTP Basic or an `api_key`
 *   query parameter (Zulip's mobile apps), served to those who may see it.
 * - GET /user_uploads/temporary/<token>/<name>: the file for anyone holding a fresh token from
 *   the JSON operation above.
 *
 * Files come from the upload store (lib/uploads/upload-storage.ts): sent from the local disk, or, from
 * S3, a redirect to a presigned URL once the request passed the same checks.
 */
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import type { NextFunction, Request, Response } from "express";
import multer from "multer";
import type { AppDeps } from "../context.ts";
import type { UserProfile } from "../db/index.ts";
import { JsonableError, ResourceNotFoundError, UnauthorizedError } from "../errors.ts";
import { accessAttachment, type StoredAttachment } from "../lib/uploads/attachments.ts";
import {
  contentDisposition,
  guessType,
  incomingDir,
  pathIdFromToken,
  removeFile,
  servesInline,
  uploadContentType,
  uploadedFileName,
  type ReceivedFile,
} from "../lib/uploads/uploads.ts";
import { emojiPathId } from "../lib/realm/realm-emoji.ts";
import { exportPathId } from "../lib/realm/export.ts";
import { storedThumbnail, thumbnailPathId } from "../lib/uploads/thumbnails.ts";
import { uploadStorage, type ServeAs } from "../lib/uploads/upload-storage.ts";
import { AVATAR_CONTENT_TYPES, avatarPathId, mediumAvatarPathId } from "../lib/users/avatars.ts";
import { avatarUrl, gravatarUrl } from "../lib/users/users.ts";
import { canAccessUser, INACCESSIBLE_USER_AVATAR, viewerAccess } from "../lib/access/users.ts";
import { isStorableId } from "../lib/ids.ts";
import { iexact } from "../lib/text.ts";
import { API_KEY_FORMAT, checkApiKey, checkSession, parseBasicAuth } from "./auth.ts";
import { cookieValue, SESSION_COOKIE } from "../lib/auth/sessions.ts";

/** What the multipart body of an upload held, for the handler to judge. */
export interface ReceivedUpload {
  files: ReceivedFile[];
  /** A second file was sent (reading stopped there). */
  tooMany: boolean;
  /** A file exceeded the size limit (reading stopped there). */
  tooLarge: boolean;
}

// Not enumerable and a symbol: parameter validation and the ignored-parameters list never see it.
const RECEIVED = Symbol("received upload");

/** The upload that arrived with this body; nothing for a body that was not multipart. */
export function receivedUpload(body: object): ReceivedUpload {
  return (
    (body as { [RECEIVED]?: ReceivedUpload })[RECEIVED] ?? {
      files: [],
      tooMany: false,
      tooLarge: false,
    }
  );
}

class SecondFile extends Error {}

/** The operations whose multipart body is a file streamed here, with their size limits (MiB). */
function uploadLimitMib(config: AppDeps["config"], path: string): number | null {
  if (/^\/api\/v1\/user_uploads\/?$/i.test(path)) return config.maxFileUploadSizeMib;
  if (/^\/api\/v1\/realm\/emoji\/[^/]+$/.test(path)) return config.maxEmojiFileSizeMib;
  if (/^\/api\/v1\/users\/me\/avatar\/?$/.test(path)) return config.maxAvatarFileSizeMib;
  return null;
}

const MAX_FIELD_SIZE = 25 * 1024 * 1024;

function uploadBodyParser(deps: AppDeps) {
  const dir = incomingDir(deps.config);
  const storage = multer.diskStorage({
    destination: (_req, _file, cb) =>
      void mkdir(dir, { recursive: true }).then(
        () => cb(null, dir),
        (err: Error) => cb(err, dir),
      ),
    filename: (_req, _file, cb) => cb(null, randomBytes(16).toString("hex")),
  });
  return function parseUpload(req: Request, res: Response, next: NextFunction) {
    const limitMib = req.method === "POST" ? uploadLimitMib(deps.config, req.path) : null;
    if (limitMib === null || !req.is("multipart/form-data")) return next();
    const received: ReceivedUpload = { files: [], tooMany: false, tooLarge: false };
    let accepted = 0;
    const parse = multer({
      storage,
      defParamCharset: "utf8",
      limits: {
        fileSize: limitMib * 1024 * 1024,
        fieldSize: MAX_FIELD_SIZE,
      },
      // Parts that name no file are skipped, as Django skips them; a second file stops the upload.
      fileFilter: (_req, file, cb) => {
        if (uploadedFileName(file.originalname) === null) return cb(null, false);
        if (++accepted > 1) return cb(new SecondFile());
        cb(null, true);
      },
    }).any();
    parse(req, res, (err?: unknown) => {
      const files = (req.files ?? []) as Express.Multer.File[];
      // Whatever the handler does not keep is removed once the response is sent.
      res.on("close", () => void Promise.all(files.map((f) => removeFile(f.path))));
      if (err) {
        // A client that went away mid-body needs no answer (as for the API's other bodies).
        if (req.socket.destroyed)
          return next(
            Object.assign(new Error("request aborted"), {
              type: "request.aborted",
              expose: true,
              status: 400,
            }),
          );
        if (err instanceof SecondFile) received.tooMany = true;
        else if (err instanceof multer.MulterError && err.code === "LIMIT_FILE_SIZE")
          received.tooLarge = true;
        // The upload store failing (a full disk, a directory it may not write) is the server's fault.
        else if ((err as NodeJS.ErrnoException).syscall) return next(err);
        else res.locals.bodyError = new JsonableError("Invalid multipart body");
      }
      for (const f of files) {
        const name = uploadedFileName(f.originalname)!;
        received.files.push({
          path: f.path,
          name,
          contentType: uploadContentType(f.mimetype, name),
          size: f.size,
        });
      }
      // Django's QueryDict: the last value of a repeated field wins.
      const body: Record<string, unknown> = {};
      if (!res.locals.bodyError)
        for (const [k, v] of Object.entries((req.body ?? {}) as Record<string, unknown>))
          body[k] = Array.isArray(v) ? v.at(-1) : v;
      Object.defineProperty(body, RECEIVED, { value: received, enumerable: false });
      req.body = body;
      // The body is read: the API's parsers take it as the form it now is (see http/form.ts).
      req.headers["content-type"] = "application/x-www-form-urlencoded";
      next();
    });
  };
}

/**
 * Who asks for a file: HTTP Basic as for the API, the `api_key` query parameter Zulip's mobile
 * apps send, or else, outside /api/v1, the web app's session cookie (a file is only read: no
 * CSRF token is asked), so that images in messages show in the browser, as Zulip serves them to
 * its web app.
 */
export async function fileRequester(req: Request, deps: AppDeps): Promise<UserProfile> {
  const header = req.headers.authorization;
  const at = req.originalUrl.indexOf("?");
  const queryKey = new URLSearchParams(at < 0 ? "" : req.originalUrl.slice(at + 1)).get("api_key");
  let email: string | null = null;
  let key: string;
  if (header) ({ username: email, password: key } = parseBasicAuth(header));
  else if (queryKey !== null) key = queryKey;
  else if (
    (req.method === "GET" || req.method === "HEAD") &&
    !req.originalUrl.startsWith("/api/")
  ) {
    if (cookieValue(req.headers.cookie, SESSION_COOKIE) === undefined)
      throw new UnauthorizedError();
    return (await checkSession(deps, req, req.headers.host ?? deps.config.externalHost)).user;
  } else throw new UnauthorizedError();
  if (!API_KEY_FORMAT.test(key))
    throw new UnauthorizedError(header ? "Malformed API key" : "Invalid API key");
  return (await checkApiKey(deps, req.headers.host ?? deps.config.externalHost, email, key)).user;
}

/**
 * Sends a stored file with these headers (Zulip's serve_local), or, from S3, redirects to a
 * presigned URL whose response carries them (serve_s3). `extra` only reaches a local file's
 * response: S3 cannot be told to add other headers.
 */
async function sendStored(
  res: Response,
  next: NextFunction,
  deps: AppDeps,
  pathId: string,
  as: ServeAs,
  extra: Record<string, string> = {},
) {
  const served = await (await uploadStorage(deps.config)).serve(pathId, as);
  if (!served) return next(new ResourceNotFoundError("File not found"));
  if ("redirect" in served) return res.redirect(302, served.redirect);
  res.set({
    "Content-Type": as.contentType,
    ...(as.contentDisposition && { "Content-Disposition": as.contentDisposition }),
    "Cache-Control": as.cacheControl,
    ...extra,
  });
  res.sendFile(
    served.file,
    { dotfiles: "allow", cacheControl: false },
    (err?: Error & { code?: string }) => {
      // A client that went away mid-download needs no answer.
      if (!err || res.headersSent || err.code === "ECONNABORTED") return;
      res.removeHeader("Content-Disposition");
      next(
        err.code === "ENOENT" || err.code === "ENOTDIR"
          ? new ResourceNotFoundError("File not found")
          : err,
      );
    },
  );
}

/** What an uploaded file may do when opened in place (Zulip's serve_local). */
const UPLOAD_CSP =
  "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self'; object-src 'self'";

/** An attachment: its stored type, shown in place only when that is safe, never cached by shared caches. */
function sendAttachment(
  res: Response,
  next: NextFunction,
  deps: AppDeps,
  attachment: StoredAttachment,
  forceDownload: boolean,
) {
  return sendStored(
    res,
    next,
    deps,
    attachment.pathId,
    {
      contentType: attachment.contentType ?? "application/octet-stream",
      contentDisposition: contentDisposition(
        forceDownload || !servesInline(attachment.contentType),
        attachment.fileName,
      ),
      cacheControl: "private, immutable",
    },
    {
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": UPLOAD_CSP,
    },
  );
}

async function serveFile(
  req: Request,
  res: Response,
  next: NextFunction,
  deps: AppDeps,
  pathId: string,
  forceDownload: boolean,
) {
  const user = await fileRequester(req, deps);
  await sendAttachment(
    res,
    next,
    deps,
    await accessAttachment(deps.db, user, pathId),
    forceDownload,
  );
}

/**
 * `/user_uploads/thumbnail/<path_id>/<format>` (Zulip's serve_file with a thumbnail format): the
 * same access check as the original's, with its refusals; then the thumbnail of that name, if
 * the image has one, with the type of its format and the original's caching.
 */
async function serveThumbnail(
  req: Request,
  res: Response,
  next: NextFunction,
  deps: AppDeps,
  pathId: string,
  name: string,
) {
  const user = await fileRequester(req, deps);
  const attachment = await accessAttachment(deps.db, user, pathId);
  const thumbnail = await storedThumbnail(deps.db, attachment.pathId, name);
  if (!thumbnail) throw new ResourceNotFoundError("File not found");
  await sendStored(
    res,
    next,
    deps,
    thumbnailPathId(attachment.pathId, name),
    { contentType: thumbnail.content_type, cacheControl: "private, immutable" },
    { "X-Content-Type-Options": "nosniff", "Content-Security-Policy": UPLOAD_CSP },
  );
}

async function serveTemporary(
  res: Response,
  next: NextFunction,
  deps: AppDeps,
  token: string,
  filename: string,
) {
  const pathId = await pathIdFromToken(deps.db, token, deps.now());
  if (pathId === null) throw new JsonableError("Invalid token");
  if (pathId.split("/").at(-1) !== filename) throw new JsonableError("Invalid filename");
  const attachment = await deps.db.attachment.findUnique({
    where: { pathId },
    select: { id: true, pathId: true, fileName: true, contentType: true },
  });
  if (!attachment) throw new JsonableError("Invalid token");
  await sendAttachment(res, next, deps, attachment, false);
}

/**
 * `/user_uploads/…` (Zulip's URL patterns, in their order): `temporary/<token>/<name>`,
 * `download/<realm_id>/<path>`, `thumbnail/<realm_id>/<path>/<format>`, `<realm_id>/<path>`. Segments are decoded here, so that one
 * that is not valid percent-encoding names no file instead of failing the request.
 */
function fileRoutes(deps: AppDeps) {
  return async function userUploads(req: Request, res: Response, next: NextFunction) {
    const m = /^\/user_uploads\/(.+)$/.exec(req.path);
    if (!m || (req.method !== "GET" && req.method !== "HEAD")) return next();
    try {
      let segments: string[];
      try {
        segments = m[1]!.split("/").map(decodeURIComponent);
      } catch {
        throw new ResourceNotFoundError("This file does not exist or has been deleted.");
      }
      const [first, ...rest] = segments;
      if (first === "temporary" && rest.length === 2)
        await serveTemporary(res, next, deps, rest[0]!, rest[1]!);
      else if (first === "download" && rest.length >= 2)
        await serveFile(req, res, next, deps, rest.join("/"), true);
      else if (first === "thumbnail" && rest.length >= 3)
        await serveThumbnail(req, res, next, deps, rest.slice(0, -1).join("/"), rest.at(-1)!);
      else if (rest.length >= 1) await serveFile(req, res, next, deps, segments.join("/"), false);
      else next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * `/user_avatars/<realm_id>/emoji/images/<file>`: custom emoji images, public as Zulip serves
 * them (no authentication; the hashed names are not enumerable), only those types a browser may
 * show in place.
 */
function emojiImages(deps: AppDeps) {
  return async function userAvatars(req: Request, res: Response, next: NextFunction) {
    const m = /^\/user_avatars\/([0-9]+)\/emoji\/images\/([0-9a-f]+\.[a-z]+)$/.exec(req.path);
    if (!m || (req.method !== "GET" && req.method !== "HEAD")) return next();
    const contentType = guessType(m[2]!);
    if (!servesInline(contentType)) return next(new ResourceNotFoundError("File not found"));
    try {
      await sendStored(
        res,
        next,
        deps,
        emojiPathId(Number(m[1]), m[2]!),
        { contentType: contentType!, cacheControl: "public, max-age=86400" },
        { "X-Content-Type-Options": "nosniff" },
      );
    } catch (err) {
      next(err);
    }
  };
}

/**
 * `/user_avatars/exports/<realm_id>/<secret>/<name>.tar.gz`: a data export's file (workers/
 * realm-exports.ts), downloaded without credentials as Zulip serves it: the secret path is the
 * permission, handed only to the organization's administrators (GET /export/realm).
 */
function exportTarballs(deps: AppDeps) {
  return async function exportTarball(req: Request, res: Response, next: NextFunction) {
    const m = /^\/user_avatars\/(exports\/[0-9]+\/[A-Za-z0-9_-]+\/[A-Za-z0-9_.-]+\.tar\.gz)$/.exec(
      req.path,
    );
    if (!m || (req.method !== "GET" && req.method !== "HEAD")) return next();
    try {
      await sendStored(res, next, deps, exportPathId(m[1]!), {
        contentType: "application/gzip",
        contentDisposition: contentDisposition(true, m[1]!.split("/").at(-1)!),
        cacheControl: "private, no-store",
      });
    } catch (err) {
      next(err);
    }
  };
}

/**
 * `/user_avatars/<realm_id>/<hash>.png` and `<hash>-medium.png`: uploaded avatars, 100×100 and
 * 500×500 (lib/users/avatars.ts), public as Zulip serves them (no authentication; the random names
 * are not enumerable). Avatars uploaded before they were resized keep their own extension and
 * have no medium file: their medium URL serves the one image. Each upload gets a new name and the
 * URL carries `?version=`, so the answer may be cached for long. The `.original` is never served.
 */
function avatarImages(deps: AppDeps) {
  return async function userAvatarImages(req: Request, res: Response, next: NextFunction) {
    const m = /^\/user_avatars\/([0-9]+)\/([0-9a-f]{40})(-medium)?(\.[a-z]+)$/.exec(req.path);
    if (!m || (req.method !== "GET" && req.method !== "HEAD")) return next();
    const contentType = AVATAR_CONTENT_TYPES[m[4]!];
    if (!contentType) return next(new ResourceNotFoundError("File not found"));
    try {
      const realmId = Number(m[1]);
      const hash = m[2]! + m[4]!;
      let pathId = avatarPathId(realmId, hash);
      if (m[3]) {
        const medium = mediumAvatarPathId(realmId, hash);
        if (await (await uploadStorage(deps.config)).exists(medium)) pathId = medium;
      }
      await sendStored(
        res,
        next,
        deps,
        pathId,
        { contentType, cacheControl: "public, max-age=31536000, immutable" },
        { "X-Content-Type-Options": "nosniff", "Content-Security-Policy": UPLOAD_CSP },
      );
    } catch (err) {
      next(err);
    }
  };
}

/**
 * `/avatar/<email_or_id>` and `/avatar/<email_or_id>/medium` (Zulip's avatar and avatar_medium
 * views): a redirect to the avatar of a user of the requester's organization, by id or API email
 * address; for a user the requester may not access, Zulip's unknown-user image; for nobody, the
 * Gravatar of what was asked for. The request's query string is carried over. Authenticated as a
 * file is (session cookie, HTTP Basic or `api_key`); spectators are not served.
 */
function avatarRedirects(deps: AppDeps) {
  return async function avatarRedirect(req: Request, res: Response, next: NextFunction) {
    const m = /^\/avatar\/([^/]+)(\/medium)?\/?$/.exec(req.path);
    if (!m || (req.method !== "GET" && req.method !== "HEAD")) return next();
    try {
      const viewer = await fileRequester(req, deps);
      let emailOrId: string;
      try {
        emailOrId = decodeURIComponent(m[1]!);
      } catch {
        return next(new ResourceNotFoundError("File not found"));
      }
      const medium = m[2] !== undefined;
      const select = {
        id: true,
        isBot: true,
        realmId: true,
        deliveryEmail: true,
        avatarSource: true,
        avatarVersion: true,
        avatarHash: true,
      } as const;
      const realmId = viewer.realmId;
      const target = /^\d+$/.test(emailOrId)
        ? isStorableId(Number(emailOrId))
          ? await deps.db.userProfile.findFirst({
              where: { id: Number(emailOrId), realmId },
              select,
            })
          : null
        : await deps.db.userProfile.findFirst({
            where: { realmId, email: iexact(emailOrId) },
            select,
          });
      let url: string;
      if (!target) url = gravatarUrl(emailOrId, 1, medium);
      else {
        const realm = await deps.db.realm.findUniqueOrThrow({
          where: { id: realmId },
          select: { canAccessAllUsersGroupId: true },
        });
        url = (await canAccessUser(deps.db, await viewerAccess(deps.db, viewer, realm), target))
          ? avatarUrl(target, medium)
          : INACCESSIBLE_USER_AVATAR;
      }
      const at = req.originalUrl.indexOf("?");
      const query = at < 0 ? "" : req.originalUrl.slice(at + 1);
      if (query) url += (url.includes("?") ? "&" : "?") + query;
      res.redirect(302, url);
    } catch (err) {
      next(err);
    }
  };
}

/** Escapes the slashes of the filename part so that `{filename}` matches it (see the file comment). */
function escapeFilenameSlashes(req: Request, _res: Response, next: NextFunction) {
  if (req.method === "GET" || req.method === "HEAD") {
    const m = /^(\/api\/v1\/user_uploads\/[^/?]+\/)([^?]*\/[^?]*)(\?.*)?$/i.exec(req.url);
    if (m) req.url = req.originalUrl = m[1] + m[2]!.replace(/\//g, "%2F") + (m[3] ?? "");
  }
  next();
}

/** Plain middleware, not an Express router, which would answer OPTIONS for its paths by itself. */
export function uploadRoutes(deps: AppDeps) {
  return [
    uploadBodyParser(deps),
    escapeFilenameSlashes,
    fileRoutes(deps),
    emojiImages(deps),
    exportTarballs(deps),
    avatarImages(deps),
    avatarRedirects(deps),
  ];
}
