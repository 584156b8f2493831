/**
 * A typed Zulip API client on openapi-fetch and the generated types. It authenticates with
 * HTTP Basic (email, API key) and encodes parameters the Zulip way: strings as they are,
 * everything else (lists, objects, numbers, booleans) as JSON text, in a form body for
 * POST/PATCH/DELETE and in the query string for GET.
 *
 *   const zulip = createZulipClient({ baseUrl: "http://127.0.0.1:9991", email, apiKey });
 *   const { message } = await unwrap(zulip.GET("/messages/{message_id}", { params: { path: { message_id: 42 } } }));
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "../generated/openapi.d.ts";

export type { components, paths };
export type ZulipClient = Client<paths>;
export type JsonErrorBody = components["schemas"]["CodedErrorBase"] & Record<string, unknown>;

export interface ZulipClientOptions {
  /** The server's address, e.g. `http://127.0.0.1:9991` (`/api/v1` is added unless present). */
  baseUrl: string;
  email?: string;
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
  /** Extra openapi-fetch middleware (the test suite validates every response with one). */
  middleware?: Middleware[];
}

/** Zulip's wire encoding of one parameter value. */
export function encodeParam(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function toSearchParams(values: unknown): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries((values ?? {}) as Record<string, unknown>)) if (v !== undefined) params.append(k, encodeParam(v));
  return params;
}

export function createZulipClient(options: ZulipClientOptions): ZulipClient {
  const root = options.baseUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
  if (options.email !== undefined && options.apiKey !== undefined)
    headers.Authorization = "Basic " + Buffer.from(`${options.email}:${options.apiKey}`).toString("base64");
  const client = createClient<paths>({
    baseUrl: root.endsWith("/api/v1") ? root : `${root}/api/v1`,
    headers,
    fetch: options.fetch,
    bodySerializer: (body) => toSearchParams(body).toString(),
    querySerializer: (query) => toSearchParams(query).toString(),
  });
  for (const m of options.middleware ?? []) client.use(m);
  return client;
}

/** An error envelope (`{result: "error", msg, code, ...}`) with its HTTP status. */
export class ZulipApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: JsonErrorBody,
  ) {
    super(body.msg);
    this.name = "ZulipApiError";
  }
  get code() {
    return this.body.code;
  }
}

/** Returns the success body, or throws ZulipApiError for an error envelope. */
export async function unwrap<T, E>(request: Promise<{ data?: T; error?: E; response: Response }>): Promise<T> {
  const { data, error, response } = await request;
  if (error !== undefined || data === undefined) throw new ZulipApiError(response.status, error as JsonErrorBody);
  return data;
}
