/**
 * The authorization matrix's notation: callers (the columns), cells (Zulip's status and `msg`),
 * rows (one operation of the spec each), and the fixtures rows build their requests from.
 */
import http from "node:http";
import { createZulipClient, type ZulipClient } from "../../../client/src/index.ts";
import { untyped } from "../../helpers/builders.ts";
import { specCheckMiddleware } from "../../helpers/spec-check.ts";
import type { TestServer } from "../../helpers/server.ts";

/** The per-role columns every row states explicitly. */
export const ROLES = ["owner", "admin", "mod", "member", "guest", "bot", "other"] as const;
export type Role = (typeof ROLES)[number];
/** The columns a row may leave to the defaults below (authenticated operations). */
export const COMMON = ["deactivated", "foreignHost", "anonymous"] as const;
export type Caller = Role | (typeof COMMON)[number];
export const CALLERS: Caller[] = [...ROLES, ...COMMON];

/**
 * Who calls in the first organization (and owns the objects a row's setup makes for the caller).
 * `other` is the owner of a second organization naming the first one's objects; the callers
 * that cannot act (deactivated, foreign Host, none) get hamlet's objects to name.
 */
export const ACTOR: Record<Caller, string> = {
  owner: "desdemona",
  admin: "iago",
  mod: "shiva",
  member: "hamlet",
  guest: "polonius",
  bot: "default-bot",
  other: "hamlet",
  deactivated: "hamlet",
  foreignHost: "hamlet",
  anonymous: "hamlet",
};
/** The fixture user deactivated in setup (its key is the deactivated caller's). */
export const DEACTIVATED = "aaron";

export interface Cell {
  status: number;
  msg: string;
}
export const ok: Cell = { status: 200, msg: "" };
export const err = (status: number, msg: string): Cell => ({ status, msg });
export const bad = (msg: string): Cell => err(400, msg);

export const ADMIN_ONLY = bad("Must be an organization administrator");
export const OWNER_ONLY = bad("Must be an organization owner");
export const NOT_GUEST = bad("Not allowed for guest users");
export const NO_BOTS = bad("This endpoint does not accept bot requests.");
export const INSUFFICIENT = bad("Insufficient permission");
export const NOT_LOGGED_IN = err(401, "Not logged in: API authentication or user session required");
export const DEACTIVATED_ACCOUNT = err(401, "Account is deactivated");
export const WRONG_SUBDOMAIN = err(401, "Account is not associated with this subdomain");

export type Cells = Record<Role, Cell> & Partial<Record<(typeof COMMON)[number], Cell>>;

/**
 * "Same for these roles": keys are space-separated role names, e.g.
 * `by({ "owner admin": ok, "mod member guest bot": ADMIN_ONLY, other: bad("No such user") })`.
 * Each role must be named exactly once; the common columns may be given too (for operations
 * without authentication).
 */
export function by(spec: Record<string, Cell>): Cells {
  const out: Partial<Record<Caller, Cell>> = {};
  for (const [keys, cell] of Object.entries(spec))
    for (const key of keys.split(/\s+/)) {
      if (!CALLERS.includes(key as Caller)) throw new Error(`by(): unknown caller '${key}'`);
      if (out[key as Caller]) throw new Error(`by(): caller '${key}' named twice`);
      out[key as Caller] = cell;
    }
  const missing = ROLES.filter((r) => !out[r]);
  if (missing.length) throw new Error(`by(): no cell for ${missing.join(", ")}`);
  return out as Cells;
}

/** The request of one call: path, query (GET) or body parameters, valid for the operation. */
export interface Req {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: Record<string, unknown>;
  /** Send the body as multipart/form-data (file uploads); Blob values are files. */
  multipart?: boolean;
}

export interface Call {
  caller: Caller;
  /** The first organization's user acting as (or standing in for) the caller. */
  actor: string;
  fx: Fixtures;
}

export interface Row {
  /** `METHOD /path` exactly as in the spec. */
  op: string;
  /** The call's parameters; a row whose call consumes state makes fresh objects here. */
  req: (call: Call) => Req | Promise<Req>;
  /** The cells, or a function giving them (texts naming the fixtures' ids). */
  expect: Cells | ((fx: Fixtures) => Cells);
  /** Puts back what a successful call took from the caller (its account, its key). */
  after?: (call: Call) => Promise<void>;
}

export interface Fixtures {
  server: TestServer;
  uid: (name: string) => number;
  sid: (name: string) => number;
  realmId: number;
  /** A fresh number for unique names. */
  next: () => number;
  /** A client for a first-organization user or bot, by short name. */
  as: (name: string) => ZulipClient;
  /** The second organization's owner, on its own Host. */
  otherOrg: { id: number; email: string; apiKey: string; host: string };
}

/**
 * fetch with an explicit Host header (Node's fetch sends the URL's), so the typed client can
 * address an organization by its subdomain on the loopback server.
 */
export function fetchOnHost(host: string): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = { Host: host };
    request.headers.forEach((value, name) => (headers[name] = value));
    headers.host = host;
    if (body) headers["content-length"] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method: request.method,
          path: url.pathname + url.search,
          headers,
          setHost: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers))
              if (typeof value === "string") responseHeaders.set(name, value);
              else if (value) for (const v of value) responseHeaders.append(name, v);
            resolve(
              new Response(Buffer.concat(chunks), {
                status: res.statusCode,
                headers: responseHeaders,
              }),
            );
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  };
}

export function clientOnHost(
  baseUrl: string,
  host: string,
  email: string,
  apiKey: string,
): ZulipClient {
  return createZulipClient({
    baseUrl,
    email,
    apiKey,
    fetch: fetchOnHost(host),
    middleware: [specCheckMiddleware],
  });
}

/** The multipart body of an upload (the typed client's form encoding cannot carry a file). */
export function formData(body: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body))
    if (value instanceof Blob) form.append(name, value, name === "file" ? "matrix.png" : name);
    else form.append(name, typeof value === "string" ? value : JSON.stringify(value));
  return form;
}

/** The typed client's request options for a multipart body (its default is a form). */
export function multipart(body: Record<string, unknown>) {
  return {
    // A file is outside the form encoding the generated types model: deliberately untyped.
    body: untyped(body),
    bodySerializer: untyped(formData),
    headers: { "Content-Type": null },
  };
}

/** A 1×1 transparent PNG. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
