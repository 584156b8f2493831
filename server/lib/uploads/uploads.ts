/**
 * Uploads (Zulip's zerver/lib/upload/): file names as Zulip sanitizes them, path ids
 * `<realm_id>/<hex>/<random>/<name>`, the incoming directory under `<DATA_DIR>/uploads/`,
 * content types, how a file is served (inline or as a download), and the short-lived tokens of
 * `/user_uploads/temporary/…` URLs. Where files are kept is lib/uploads/upload-storage.ts.
 */
import { createHmac, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import { unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Config } from "../../config.ts";
import type { PrismaClient } from "../../db/index.ts";

/** A file that arrived with an upload, waiting in the incoming directory. */
export interface ReceivedFile {
  /** Where it waits. */
  path: string;
  /** Its name as recorded (percent-decoded, without unprintable characters). */
  name: string;
  contentType: string;
  size: number;
}

/** Most file systems limit a path component to 255 bytes; the sanitized name is the last one. */
const MAX_FILE_NAME_BYTES = 255;
/** How long a temporary URL works (Zulip's SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS). */
export const TEMPORARY_URL_SECONDS = 60;

export function uploadsRoot(config: Pick<Config, "dataDir">): string {
  return resolve(config.dataDir, "uploads");
}

/** Where incoming files wait until their upload is recorded (same file system: a rename places them). */
export function incomingDir(config: Pick<Config, "dataDir">): string {
  return join(uploadsRoot(config), ".incoming");
}

export async function removeFile(path: string): Promise<void> {
  await unlink(path).catch(() => undefined);
}

// Python's str.isspace(), which Zulip's `\s` follows.
const SPACE = String.raw`\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`;
const NOT_NAME_CHAR = new RegExp(String.raw`[^\p{L}\p{N}_${SPACE}.-]`, "gu");
const DASHES_AND_SPACES = new RegExp(String.raw`[-${SPACE}]+`, "gu");
const EDGE_SPACES = new RegExp(String.raw`^[${SPACE}]+|[${SPACE}]+$`, "gu");

/**
 * A name safe in a file system, in S3 and in a URL (Zulip's sanitize_name): Unicode word
 * characters, `.`, `-` and `_`, runs of spaces and dashes made one dash, at most 255 bytes
 * (keeping the extension), and never empty, `.` or `..`.
 */
export function sanitizeName(value: string): string {
  let name = value
    .normalize("NFKC")
    .replace(NOT_NAME_CHAR, "")
    .replace(EDGE_SPACES, "")
    .replace(DASHES_AND_SPACES, "-");
  name = truncateFileName(name, MAX_FILE_NAME_BYTES);
  return name === "" || name === "." || name === ".." ? "uploaded-file" : name;
}

/** Python's os.path.splitext: the extension starts at the last dot that follows some other character. */
function splitExtension(name: string): [string, string] {
  const dot = name.lastIndexOf(".");
  if (dot > 0 && /[^.]/.test(name.slice(0, dot))) return [name.slice(0, dot), name.slice(dot)];
  return [name, ""];
}

const utf8Length = (s: string) => Buffer.byteLength(s, "utf8");

function truncateFileName(name: string, maxBytes: number): string {
  if (utf8Length(name) <= maxBytes) return name;
  let [stem, extension] = splitExtension(name);
  if (utf8Length(extension) >= maxBytes) [stem, extension] = [name, ""];
  let budget = maxBytes - utf8Length(extension);
  let kept = "";
  for (const char of stem) {
    budget -= utf8Length(char);
    if (budget < 0) break;
    kept += char;
  }
  return kept + extension;
}

/** Python's urllib.parse.unquote: %XX runs decoded as UTF-8 (invalid bytes become U+FFFD), the rest kept. */
export function unquote(value: string): string {
  return value.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) =>
    Buffer.from(run.replace(/%/g, ""), "hex").toString("utf8"),
  );
}

/**
 * The name an uploaded file is recorded under, or null for a part that names no file (Django
 * skips those): the multipart filename without control or other unprintable characters,
 * percent-decoded as Zulip's clients encode it, without NUL (which PostgreSQL cannot store).
 */
export function uploadedFileName(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const printable = raw.replace(/[\p{C}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu, "");
  if (printable === "" || printable === "." || printable === "..") return null;
  return unquote(printable).replace(/\u0000/g, "");
}

/** Zulip's local path ids: the realm, one of 256 directories, 18 random bytes, the sanitized name. */
export function newPathId(realmId: number, fileName: string): string {
  return [
    String(realmId),
    randomInt(256).toString(16),
    randomBytes(18).toString("base64url"),
    sanitizeName(fileName),
  ].join("/");
}

const MIME_TYPES: Record<string, string> = {
  aac: "audio/aac",
  apng: "image/apng",
  avi: "video/x-msvideo",
  avif: "image/avif",
  bmp: "image/bmp",
  csv: "text/csv",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  flac: "audio/flac",
  gif: "image/gif",
  gz: "application/gzip",
  heic: "image/heic",
  htm: "text/html",
  html: "text/html",
  ico: "image/vnd.microsoft.icon",
  jpe: "image/jpeg",
  jpeg: "image/jpeg",
  jpg: "image/jpeg",
  js: "text/javascript",
  json: "application/json",
  log: "text/plain",
  m4a: "audio/mp4",
  md: "text/markdown",
  mkv: "video/x-matroska",
  mov: "video/quicktime",
  mp3: "audio/mpeg",
  mp4: "video/mp4",
  odp: "application/vnd.oasis.opendocument.presentation",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  odt: "application/vnd.oasis.opendocument.text",
  oga: "audio/ogg",
  ogg: "audio/ogg",
  ogv: "video/ogg",
  opus: "audio/ogg",
  pdf: "application/pdf",
  png: "image/png",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  svg: "image/svg+xml",
  tar: "application/x-tar",
  text: "text/plain",
  tif: "image/tiff",
  tiff: "image/tiff",
  txt: "text/plain",
  wav: "audio/wav",
  weba: "audio/webm",
  webm: "video/webm",
  webp: "image/webp",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  xml: "text/xml",
  zip: "application/zip",
};

/** Python's mimetypes.guess_type, for the common extensions. */
export function guessType(fileName: string): string | null {
  const [, extension] = splitExtension(fileName);
  return MIME_TYPES[extension.slice(1).toLowerCase()] ?? null;
}

/**
 * The content type to record. The multipart parser reports a part without a Content-Type as
 * text/plain (RFC 7578's default), and python-zulip-api sends none; Zulip then guesses from the
 * name, and so does this, keeping text/plain only for names that say so.
 */
export function uploadContentType(partType: string, fileName: string): string {
  if (partType !== "text/plain") return partType;
  return guessType(fileName) ?? "application/octet-stream";
}

/** Types a browser may show in place: never HTML, SVG or XML, whose scripts would run (Zulip's INLINE_MIME_TYPES). */
const INLINE_MIME_TYPES = new Set([
  "application/pdf",
  "audio/aac",
  "audio/flac",
  "audio/mp4",
  "audio/mpeg",
  "audio/ogg",
  "audio/wav",
  "audio/webm",
  "image/apng",
  "image/avif",
  "image/gif",
  "image/jpeg",
  "image/png",
  "image/webp",
  "text/plain",
  "video/mp4",
  "video/ogg",
  "video/webm",
]);

export function servesInline(contentType: string | null): boolean {
  return (
    contentType !== null && INLINE_MIME_TYPES.has(contentType.split(";")[0]!.trim().toLowerCase())
  );
}

/** Django's content_disposition_header. */
export function contentDisposition(asAttachment: boolean, fileName: string): string {
  const disposition = asAttachment ? "attachment" : "inline";
  if (/^[\t\x20-\x7e]*$/.test(fileName))
    return `${disposition}; filename="${fileName.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  const quoted = encodeURIComponent(fileName).replace(
    /[!'()*]/g,
    (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase(),
  );
  return `${disposition}; filename*=utf-8''${quoted}`;
}

/**
 * The key that signs temporary URLs, shared by every process and machine serving this
 * organization: made once in the database (the first process to insert it wins, every other
 * reads it), then kept by each process. Video calls and emoji file names use it too, under
 * prefixes of their own.
 */
const signingKeys = new WeakMap<PrismaClient, Promise<Buffer>>();

export function signingKey(db: PrismaClient): Promise<Buffer> {
  let key = signingKeys.get(db);
  if (!key) {
    key = loadOrCreateKey(db);
    key.catch(() => signingKeys.delete(db));
    signingKeys.set(db, key);
  }
  return key;
}

const SIGNING_KEY = "url_signing_key";

async function loadOrCreateKey(db: PrismaClient): Promise<Buffer> {
  const read = () => db.serverSecret.findUnique({ where: { name: SIGNING_KEY } });
  let row = await read();
  if (!row) {
    // INSERT … ON CONFLICT DO NOTHING: of processes starting at once, one key is kept.
    await db.serverSecret.createMany({
      data: { name: SIGNING_KEY, value: randomBytes(32) },
      skipDuplicates: true,
    });
    row = await read();
  }
  return Buffer.from(row!.value);
}

const sign = (key: Buffer, text: string) =>
  createHmac("sha256", key).update(`user_uploads:${text}`).digest("base64url");

/** `/user_uploads/temporary/<token>/<name>`: the file without authentication, for TEMPORARY_URL_SECONDS. */
export async function temporaryUrl(db: PrismaClient, pathId: string, now: Date): Promise<string> {
  const signed = `${pathId}:${Math.floor(now.getTime() / 1000) + TEMPORARY_URL_SECONDS}`;
  const token = Buffer.from(`${signed}:${sign(await signingKey(db), signed)}`, "utf8")
    .toString("hex")
    .toUpperCase();
  return `/user_uploads/temporary/${token}/${pathId.split("/").at(-1)}`;
}

/** The path id a temporary URL's token grants, or null for a forged, altered or expired one. */
export async function pathIdFromToken(
  db: PrismaClient,
  token: string,
  now: Date,
): Promise<string | null> {
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(token)) return null;
  const text = Buffer.from(token, "hex").toString("utf8");
  const signatureAt = text.lastIndexOf(":");
  const expiresAt = text.lastIndexOf(":", signatureAt - 1);
  if (expiresAt <= 0) return null;
  const signed = text.slice(0, signatureAt);
  const expected = Buffer.from(sign(await signingKey(db), signed));
  const given = Buffer.from(text.slice(signatureAt + 1));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (Number(text.slice(expiresAt + 1, signatureAt)) < now.getTime() / 1000) return null;
  return text.slice(0, expiresAt);
}
