/**
 * A typed Zulip API client on openapi-fetch and the types generated from the server's spec.
 * It authenticates with HTTP Basic (email, API key), or in a browser with the web session (a
 * `csrfToken`: `/json`, the session cookie and X-CSRFToken), and encodes parameters the Zulip way:
 * strings as they are, everything else (lists, objects, numbers, booleans) as JSON text, in a
 * form body for POST/PATCH/DELETE and in the query string for GET. It uses only what browsers,
 * Node (20.19+) and other runtimes share: fetch, URLSearchParams, TextEncoder, btoa.
 *
 *   const zulip = createZulipClient({ baseUrl: "http://127.0.0.1:9991", email, apiKey });
 *   const { message } = await unwrap(zulip.GET("/messages/{message_id}", { params: { path: { message_id: 42 } } }));
 *
 * Every answer that is not a Zulip JSON envelope (an HTML 404 from a wrong `baseUrl`, a proxy's
 * error page, JSON from some other API) rejects with a ZulipUnexpectedResponseError.
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import { ZulipUnexpectedResponseError } from "./errors.js";
import type { components, operations, paths } from "./openapi.js";

export type { components, operations, paths };
export type ZulipClient = Client<paths>;

export interface ZulipClientOptions {
  /** The server's address, e.g. `http://127.0.0.1:9991` (`/api/v1` is added unless present). */
  baseUrl: string;
  email?: string;
  apiKey?: string;
  /** Sent as User-Agent where the runtime allows it (Zulip derives the client name from it). */
  userAgent?: string;
  fetch?: typeof globalThis.fetch;
  /** Extra openapi-fetch middleware (the server's test suite validates every response with one). */
  middleware?: Middleware[];
  /**
   * The web session's CSRF token (the app page's `<meta name="csrf-token">`). Given, the client
   * talks to `${baseUrl}/json` as Zulip's web app does: the browser's session cookie
   * authenticates (`credentials: "same-origin"`), the token goes in `X-CSRFToken` on every
   * request, and no Authorization header is sent (email and API key are ignored).
   */
  csrfToken?: string;
}

/** Zulip's wire encoding of one parameter value: strings as they are, anything else as JSON. */
export function encodeParam(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The parameters of a request in Zulip's encoding (undefined values are left out). */
export function encodeParams(values: unknown): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries((values ?? {}) as Record<string, unknown>))
    if (v !== undefined) params.append(k, encodeParam(v));
  return params;
}

/** `/api/v1` under the site, accepting a site given with `/api` or `/api/v1` already. */
export function apiBaseUrl(site: string): string {
  const root = site.replace(/\/+$/, "");
  if (root.endsWith("/api/v1")) return root;
  if (root.endsWith("/api")) return `${root}/v1`;
  return `${root}/api/v1`;
}

/** Basic credentials, UTF-8 encoded as servers decode them (btoa alone takes only Latin-1). */
export function basicAuthorization(email: string, apiKey: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(`${email}:${apiKey}`))
    binary += String.fromCharCode(byte);
  return "Basic " + btoa(binary);
}

/** `/json` under the site: the web app's mount of the API (session cookie and CSRF token). */
export function sessionBaseUrl(site: string): string {
  return `${site.replace(/\/+$/, "")}/json`;
}

export function createZulipClient(options: ZulipClientOptions): ZulipClient {
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
  const session = options.csrfToken !== undefined;
  if (session) headers["X-CSRFToken"] = options.csrfToken!;
  else if (options.email !== undefined && options.apiKey !== undefined)
    headers.Authorization = basicAuthorization(options.email, options.apiKey);
  if (options.userAgent !== undefined) headers["User-Agent"] = options.userAgent;
  const client = createClient<paths>({
    baseUrl: session ? sessionBaseUrl(options.baseUrl) : apiBaseUrl(options.baseUrl),
    headers,
    ...(session ? { credentials: "same-origin" as const } : {}),
    fetch: options.fetch,
    bodySerializer: (body) => encodeParams(body).toString(),
    querySerializer: (query) => encodeParams(query).toString(),
  });
  client.use(requireZulipEnvelope);
  for (const m of options.middleware ?? []) client.use(m);
  return client;
}

const BODY_KEPT = 2000;

function isEnvelope(value: unknown): value is { result: "success" | "error"; msg: string } {
  if (typeof value !== "object" || value === null) return false;
  const { result, msg } = value as Record<string, unknown>;
  return (result === "success" || result === "error") && typeof msg === "string";
}

/**
 * An answer whose body was read and parsed once (by requireZulipEnvelope), as openapi-fetch reads
 * it: `json()` answers the parsed value and `text()` the text, so that a register of 10,000 users
 * (8 MB) is neither parsed twice nor read through a clone (a tee of the stream: slow), nor copied
 * into a new body. Status, headers, `url` and `redirected` are the original's.
 */
function parsedResponse(text: string, original: Response, parsed: unknown): Response {
  const response = new Response(null, {
    status: original.status,
    statusText: original.statusText,
    headers: original.headers,
  });
  Object.defineProperties(response, {
    url: { value: original.url },
    redirected: { value: original.redirected },
    json: { value: () => Promise.resolve(parsed) },
    text: { value: () => Promise.resolve(text) },
  });
  return response;
}

/** Rejects any answer that is not a JSON envelope; the body is parsed once, here. */
const requireZulipEnvelope: Middleware = {
  async onResponse({ response }) {
    const contentType = response.headers.get("Content-Type");
    const text = await response.text();
    let parsed: unknown;
    if (contentType !== null && /^application\/json\b/i.test(contentType)) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // falls through: JSON in name only
      }
    }
    if (!isEnvelope(parsed) || (parsed.result === "error") === response.ok)
      throw new ZulipUnexpectedResponseError(
        response.status,
        contentType,
        text.slice(0, BODY_KEPT),
        response.url,
      );
    return parsedResponse(text, response, parsed);
  },
};

export {
  unwrap,
  ZulipApiError,
  ZulipUnexpectedResponseError,
  type JsonErrorBody,
} from "./errors.js";
export { parseZuliprc, type Zuliprc } from "./zuliprc.js";
export {
  eventQueue,
  type EventQueueOptions,
  type RegisterParams,
  type RegisterState,
  type ZulipEvent,
  type ZulipEventOf,
} from "./events.js";
