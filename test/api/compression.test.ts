/**
 * Responses gzip-compressed for clients that accept it, as Zulip's nginx does (server/http/
 * compression.ts): a register's state arrives compressed and reads back as the same JSON; a
 * client that does not ask gets it as is; a short answer and a range of an upload are never
 * compressed. Raw HTTP (node:http), so that nothing decompresses behind the test's back.
 */
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";

const server = useTestServer();

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function raw(method: string, path: string, headers: Record<string, string>, body?: string) {
  const { email, api_key } = server.creds.users["hamlet"]!;
  const url = new URL(server.baseUrl + path);
  return new Promise<Raw>((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
          ...(body ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("response compression", () => {
  it("gzips a register for a client that accepts gzip, and not for one that does not", async () => {
    const body = "fetch_event_types=" + encodeURIComponent('["realm_user","subscription"]');
    const zipped = await raw("POST", "/api/v1/register", { "Accept-Encoding": "gzip" }, body);
    expect(zipped.status).toBe(200);
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.headers["vary"]).toContain("Accept-Encoding");
    const state = JSON.parse(gunzipSync(zipped.body).toString("utf8"));
    expect(checkResponse("POST", `${server.baseUrl}/api/v1/register`, 200, state)).toBeNull();
    expect(state.realm_users.length).toBeGreaterThan(5);
    expect(zipped.body.length).toBeLessThan(gunzipSync(zipped.body).length / 2);

    const plain = await raw("POST", "/api/v1/register", { "Accept-Encoding": "identity" }, body);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const same = JSON.parse(plain.body.toString("utf8"));
    expect(checkResponse("POST", `${server.baseUrl}/api/v1/register`, 200, same)).toBeNull();
    expect(same.realm_users).toEqual(state.realm_users);
  });

  it("leaves a short answer as it is", async () => {
    const res = await raw("GET", "/api/v1/users/me/alert_words", { "Accept-Encoding": "gzip" });
    expect(res.status).toBe(200);
    expect(res.body.length).toBeLessThan(1024);
    expect(res.headers["content-encoding"]).toBeUndefined();
    const answer = JSON.parse(res.body.toString("utf8"));
    expect(
      checkResponse("GET", `${server.baseUrl}/api/v1/users/me/alert_words`, 200, answer),
    ).toBeNull();
    expect(answer).toMatchObject({ result: "success" });
  });

  it("answers a range of an uploaded text file with those bytes, uncompressed", async () => {
    const text = "0123456789".repeat(300);
    const form = new FormData();
    form.append("file", new Blob([text], { type: "text/plain" }), "digits.txt");
    const { email, api_key } = server.creds.users["hamlet"]!;
    const auth = "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64");
    const posted = await fetch(`${server.baseUrl}/api/v1/user_uploads`, {
      method: "POST",
      headers: { Authorization: auth },
      body: form,
    });
    const uploaded = await posted.json();
    expect(
      checkResponse("POST", `${server.baseUrl}/api/v1/user_uploads`, posted.status, uploaded),
    ).toBeNull();
    const { url } = uploaded as { url: string };
    const whole = await raw("GET", url, { "Accept-Encoding": "gzip" });
    expect(whole.status).toBe(200);
    expect(whole.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(whole.body).toString("utf8")).toBe(text);
    const part = await raw("GET", url, { "Accept-Encoding": "gzip", Range: "bytes=5-14" });
    expect(part.status).toBe(206);
    expect(part.headers["content-encoding"]).toBeUndefined();
    expect(part.body.toString("utf8")).toBe("5678901234");
  });
});
