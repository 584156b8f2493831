/**
 * A request as Zulip's real clients send it: a form body (`application/x-www-form-urlencoded`,
 * `+` for spaces), strings raw and everything else as JSON text, or the same parameters in the
 * query string (zulip-js sends PATCH that way). The answer is checked against the spec.
 */
import { expect } from "vitest";
import type { TestServer } from "./server.ts";
import { checkResponse } from "./spec-check.ts";

export function formOf(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    form.set(key, typeof value === "string" ? value : JSON.stringify(value));
  return form.toString().replace(/%20/g, "+");
}

export async function realClient(
  server: TestServer,
  as: string | null,
  method: string,
  path: string,
  params: Record<string, unknown> = {},
  options: { inQuery?: boolean } = {},
) {
  const who = as === null ? undefined : (server.creds.users[as] ?? server.creds.bots[as]);
  const headers: Record<string, string> = who
    ? {
        Authorization: "Basic " + Buffer.from(`${who.email}:${who.api_key}`).toString("base64"),
      }
    : {};
  const encoded = formOf(params);
  const inQuery = options.inQuery || method === "GET";
  if (!inQuery) headers["Content-Type"] = "application/x-www-form-urlencoded";
  const url = `${server.baseUrl}/api/v1${path}${inQuery && encoded ? `?${encoded}` : ""}`;
  const response = await fetch(url, { method, headers, body: inQuery ? undefined : encoded });
  const body = (await response.json()) as Record<string, any>;
  expect(checkResponse(method, response.url, response.status, body)).toBeNull();
  return { status: response.status, body };
}
