import { request } from "node:http";
import net from "node:net";
import { expect } from "vitest";
import { checkResponse } from "./spec-check.ts";

/** A TCP port free on loopback right now (for a server process a test starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * An API request with an explicit Host header (fetch cannot set one), to reach another
 * organization by its subdomain; the answer is checked against the spec.
 */
export function requestOnHost(
  baseUrl: string,
  method: "GET" | "DELETE" | "POST" | "PATCH",
  path: string,
  host: string,
  email: string,
  apiKey: string,
  /** Form parameters (for POST and PATCH); values that are not strings are sent as JSON. */
  params?: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  const url = new URL(`${baseUrl}/api/v1${path}`);
  const form = params
    ? new URLSearchParams(
        Object.entries(params).map(([k, v]): [string, string] => [
          k,
          typeof v === "string" ? v : JSON.stringify(v),
        ]),
      ).toString()
    : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers: {
          Host: host,
          Authorization: "Basic " + Buffer.from(`${email}:${apiKey}`).toString("base64"),
          ...(form === undefined ? {} : { "Content-Type": "application/x-www-form-urlencoded" }),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => {
          const body = JSON.parse(text);
          expect(checkResponse(method, url.toString(), res.statusCode!, body)).toBeNull();
          resolve({ status: res.statusCode!, body });
        });
      },
    );
    req.on("error", reject);
    req.end(form);
  });
}
