/** What a request can fail with, beside network errors from fetch itself. */
import type { components } from "./openapi.js";

/** An error envelope: `{result: "error", msg, code, ...}` plus the fields some errors add. */
export type JsonErrorBody = components["schemas"]["CodedErrorBase"] & Record<string, unknown>;

/** An error envelope (`{result: "error", msg, code, ...}`) with its HTTP status. */
export class ZulipApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: JsonErrorBody,
  ) {
    super(body.msg);
    this.name = "ZulipApiError";
  }
  get code(): string {
    return this.body.code;
  }
}

/**
 * An answer that is not a Zulip envelope: not JSON, or JSON without `result`. Usually a wrong
 * `baseUrl` (another web server's page) or a proxy in between. `body` is the start of the text.
 */
export class ZulipUnexpectedResponseError extends Error {
  constructor(
    readonly status: number,
    readonly contentType: string | null,
    readonly body: string,
    readonly url: string,
  ) {
    const what = contentType ? contentType.split(";")[0]!.trim() : "no content type";
    super(
      `Expected a Zulip JSON response from ${url}, got HTTP ${status} (${what}): ${body.slice(0, 200) || "empty body"}`,
    );
    this.name = "ZulipUnexpectedResponseError";
  }
}

/** Returns the success body, or throws ZulipApiError for an error envelope. */
export async function unwrap<T, E>(
  request: Promise<{ data?: T; error?: E; response: Response }>,
): Promise<T> {
  const { data, error, response } = await request;
  if (error !== undefined || data === undefined)
    throw new ZulipApiError(response.status, error as JsonErrorBody);
  return data;
}
