/**
 * What real Zulip clients put on the wire, and hostile bytes, sent exactly (node:http, not
 * fetch, which would re-encode the URL, drop a fragment and refuse some headers). Each case
 * was a defect on main: a refused request, a 500, or a row half-written. Every response is
 * validated against the spec.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { clientIdFor } from "../../server/lib/clients.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { startTestServer, useTestServer, type TestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";

const server = useTestServer();

interface Sent {
  method: string;
  path: string;
  as?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  on?: TestServer;
}

/** Sends the request as written; the response must be JSON that matches the spec. */
function send({
  method,
  path,
  as,
  headers = {},
  body,
  on = server,
}: Sent): Promise<{ status: number; body: any }> {
  const url = new URL(on.baseUrl);
  const auth: Record<string, string> = {};
  // Node sends a DELETE body only with an explicit length (no chunking by default).
  if (body !== undefined) auth["Content-Length"] = String(Buffer.byteLength(body));
  if (as) {
    const c = on.creds.users[as] ?? on.creds.bots[as]!;
    auth.Authorization = "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64");
  }
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `/api/v1${path}`,
        headers: { ...auth, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: any;
          try {
            parsed = JSON.parse(text);
          } catch {
            return reject(
              new Error(
                `${method} ${path.slice(0, 100)} → ${res.statusCode}: not JSON: ${text.slice(0, 200)}`,
              ),
            );
          }
          // The checker matches operations by URL path; a fragment is not part of it, and
          // repeated slashes are one (nginx's merge_slashes, as the server merges them).
          const problem = checkResponse(
            method,
            `http://x/api/v1${path.split("#")[0]!.replace(/\/{2,}/g, "/")}`,
            res.statusCode!,
            parsed,
          );
          if (problem) return reject(new Error(`${path.slice(0, 100)}: ${problem.slice(0, 500)}`));
          resolve({ status: res.statusCode!, body: parsed });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const messageCount = () => server.db.message.count();

describe("query strings as clients encode them", () => {
  it("reads spaces sent as '+' and JSON with unencoded brackets and quotes", async () => {
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "channel", to: "Verona", topic: "two words", content: "plus" },
      }),
    );
    // URLSearchParams and python-zulip-api (requests) write spaces as '+'.
    const narrow = JSON.stringify([
      { operator: "channel", operand: "Verona" },
      { operator: "topic", operand: "two words" },
    ]);
    const encoded = await send({
      method: "GET",
      path: `/messages?${form({ anchor: "newest", num_before: "5", narrow })}`,
      as: "hamlet",
    });
    expect(encoded.status).toBe(200);
    expect(encoded.body.messages.map((m: { id: number }) => m.id)).toEqual([id]);
    // curl -G without --data-urlencode leaves brackets, quotes and colons as they are.
    const rawNarrow = `[{"operator":"topic","operand":"two+words"}]`;
    const unencoded = await send({
      method: "GET",
      path: `/messages?anchor=newest&num_before=5&narrow=${rawNarrow}`,
      as: "hamlet",
    });
    expect(unencoded.body.messages.map((m: { id: number }) => m.id)).toEqual([id]);
    const byIds = await send({
      method: "GET",
      path: `/messages?message_ids=[${id},+${id}]`,
      as: "hamlet",
    });
    expect(byIds.body.messages.map((m: { id: number }) => m.id)).toEqual([id]);
    const users = await send({
      method: "GET",
      path: `/users?user_ids=[${server.creds.users.iago!.user_id}]`,
      as: "hamlet",
    });
    expect(users.body.members).toHaveLength(1);
  });

  it("reads everything after the first '?' as the query, '?' included", async () => {
    const r = await send({
      method: "GET",
      path: `/users?user_ids=[${server.creds.users.iago!.user_id}]&x={"?":1}`,
      as: "hamlet",
    });
    expect(r).toMatchObject({ status: 200, body: { ignored_parameters_unsupported: ["x"] } });
    expect(r.body.members).toHaveLength(1);
    const list = await send({ method: "GET", path: `/users?x=?&user_ids={"?":""}`, as: "hamlet" });
    expect(list).toMatchObject({ status: 400, body: { msg: "user_ids is not a list" } });
  });

  it("ignores the body of a GET, whatever it holds", async () => {
    const r = await send({
      method: "GET",
      path: "/server_settings",
      headers: { "Content-Type": "application/json", "Content-Encoding": "xyz" },
      body: "{" + "[".repeat(5000),
    });
    expect(r).toMatchObject({ status: 200, body: { result: "success" } });
  });

  it("answers a queue id with reserved characters as an unknown queue", async () => {
    const r = await send({
      method: "GET",
      path: "/events?queue_id=1:2&dont_block=true",
      as: "hamlet",
    });
    expect(r).toMatchObject({ status: 400, body: { code: "BAD_EVENT_QUEUE_ID", queue_id: "1:2" } });
  });

  it("takes JSON query values strictly, without coercing inside them", async () => {
    const r = await send({
      method: "GET",
      path: `/messages?anchor=newest&narrow=${encodeURIComponent('[{"operator":"topic","operand":true}]')}`,
      as: "hamlet",
    });
    expect(r).toMatchObject({ status: 400, body: { msg: "operand is not a string" } });
    const ids = await send({
      method: "GET",
      path: `/messages?message_ids=${encodeURIComponent('["1"]')}`,
      as: "hamlet",
    });
    expect(ids).toMatchObject({ status: 400, body: { msg: "message_ids[0] is not an integer" } });
  });
});

describe("what Zulip's mobile app (zulip-mobile's api/) sends", () => {
  it("takes its LAST_MESSAGE_ANCHOR and any other integer anchor, clamped as Zulip's parse_anchor_value does", async () => {
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "channel", to: "Verona", topic: "anchors", content: "latest" },
      }),
    );
    const narrow = encodeURIComponent(JSON.stringify([{ operator: "topic", operand: "anchors" }]));
    const get = (anchor: string) =>
      send({
        method: "GET",
        path: `/messages?anchor=${anchor}&num_before=1&num_after=0&narrow=${narrow}`,
        as: "hamlet",
      });
    // 10^16 is what the app sends for "newest"; longer digit strings are clamped to it too.
    for (const anchor of [
      "10000000000000000",
      "10000000000000001",
      "99999999999999999999999999999",
      "1" + "0".repeat(400),
    ]) {
      const r = await get(anchor);
      expect(r).toMatchObject({
        status: 200,
        body: { anchor: 10_000_000_000_000_000, found_newest: true, found_anchor: false },
      });
      expect(r.body.messages.map((m: { id: number }) => m.id)).toEqual([id]);
    }
    // Below 0 is 0; Python's int() takes a sign, surrounding spaces and digit separators.
    expect((await get("-5")).body).toMatchObject({ anchor: 0, found_oldest: true });
    expect((await get("%20%2B" + String(id).split("").join("_") + "%20")).body).toMatchObject({
      anchor: id,
      found_anchor: true,
    });
    // What int() refuses is refused, where a number parser would read 1e3 or 0x10.
    for (const anchor of ["1e3", "0x10", "1.0", "abc", "", "-"])
      expect(await get(anchor)).toMatchObject({
        status: 400,
        body: { result: "error", msg: "Invalid anchor", code: "BAD_REQUEST" },
      });
  });

  it("reaches the operation through repeated slashes, as nginx's merge_slashes lets it", async () => {
    const channel = server.creds.channels.Verona!.stream_id;
    const body = form({ stream_id: String(channel), topic: "slashes", visibility_policy: "1" });
    const r = await send({
      method: "POST",
      path: "//user_topics",
      as: "cordelia",
      headers: FORM,
      body,
    });
    expect(r).toMatchObject({ status: 200, body: { result: "success" } });
    expect(
      await server.db.userTopic.count({
        where: { userProfileId: server.creds.users.cordelia!.user_id, topicName: "slashes" },
      }),
    ).toBe(1);
    const me = await send({ method: "GET", path: "///users//me?x=a//b", as: "cordelia" });
    expect(me).toMatchObject({
      status: 200,
      body: {
        user_id: server.creds.users.cordelia!.user_id,
        ignored_parameters_unsupported: ["x"],
      },
    });
    // An operation this server does not have answers in JSON, not with Express's HTML page.
    const missing = await send({
      method: "POST",
      path: "//no_such_resource/operation",
      as: "cordelia",
      headers: FORM,
      body: form({ anchor: "newest" }),
    });
    expect(missing).toMatchObject({
      status: 404,
      body: { result: "error", msg: "Endpoint not found", code: "BAD_REQUEST" },
    });
    // One it has, reached through repeated slashes too.
    const flags = await send({
      method: "POST",
      path: "//messages/flags/narrow",
      as: "cordelia",
      headers: FORM,
      body: form({ anchor: "newest" }),
    });
    expect(flags).toMatchObject({ status: 400, body: { msg: "Missing 'num_before' argument" } });
  });

  it("gets local_message_id on the sending queue only, for a send with queue_id and local_id", async () => {
    const register = async (who: string) =>
      (
        await send({
          method: "POST",
          path: "/register",
          as: who,
          headers: FORM,
          body: form({ event_types: '["message"]' }),
        })
      ).body.queue_id as string;
    const [sending, other, recipient] = [
      await register("hamlet"),
      await register("hamlet"),
      await register("othello"),
    ];
    const sent = await send({
      method: "POST",
      path: "/messages",
      as: "hamlet",
      headers: FORM,
      body: form({
        type: "private",
        to: JSON.stringify([server.creds.users.othello!.user_id]),
        content: "echo",
        queue_id: sending,
        local_id: "1234.01",
      }),
    });
    expect(sent.status).toBe(200);
    const events = async (who: string, queue: string) => {
      const r = await send({
        method: "GET",
        path: `/events?queue_id=${encodeURIComponent(queue)}&last_event_id=-1&dont_block=true`,
        as: who,
      });
      return (r.body.events as { type: string; message: { id: number } }[]).filter(
        (e) => e.type === "message" && e.message.id === sent.body.id,
      );
    };
    const [mine] = await events("hamlet", sending);
    expect(mine).toMatchObject({ local_message_id: "1234.01" });
    for (const [who, queue] of [
      ["hamlet", other],
      ["othello", recipient],
    ] as const) {
      const [event] = await events(who, queue);
      expect(event).toBeDefined();
      expect(event).not.toHaveProperty("local_message_id");
      expect(event).not.toHaveProperty("local_id");
      expect(event).not.toHaveProperty("sender_queue_id");
    }
    // A queue_id without local_id, or of another queue, gives no local_message_id.
    const noLocal = await send({
      method: "POST",
      path: "/messages",
      as: "hamlet",
      headers: FORM,
      body: form({ type: "stream", to: "Verona", topic: "echo", content: "x", queue_id: sending }),
    });
    const later = await send({
      method: "GET",
      path: `/events?queue_id=${encodeURIComponent(sending)}&last_event_id=-1&dont_block=true`,
      as: "hamlet",
    });
    const plain = (later.body.events as { type: string; message: { id: number } }[]).find(
      (e) => e.type === "message" && e.message.id === noLocal.body.id,
    );
    expect(plain).toBeDefined();
    expect(plain).not.toHaveProperty("local_message_id");
  });
});

describe("Zulip's error texts, as zulip-js (parameters in the query string) and forms send the values", () => {
  it("words a union-typed value as pydantic does, and parameters that exclude each other with BAD_REQUEST", async () => {
    const ts = String(Math.floor(Date.now() / 1000) + 86400);
    const query = form({
      type: "direct",
      to: '["othello@zulip.com"]',
      content: "x",
      scheduled_delivery_timestamp: ts,
    });
    const zulipJs = await send({
      method: "POST",
      path: `/scheduled_messages?${query}`,
      as: "hamlet",
    });
    expect(zulipJs).toMatchObject({
      status: 400,
      body: { result: "error", msg: 'to["int"] is not an integer', code: "BAD_REQUEST" },
    });
    const formBody = await send({
      method: "POST",
      path: "/scheduled_messages",
      as: "hamlet",
      headers: FORM,
      body: query,
    });
    expect(formBody.body).toEqual(zulipJs.body);
    const both = await send({
      method: "GET",
      path: "/messages?anchor=newest&message_ids=[1]",
      as: "hamlet",
    });
    expect(both).toMatchObject({
      status: 400,
      body: {
        msg: "Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor",
        code: "BAD_REQUEST",
      },
    });
    const topics = await send({
      method: "PATCH",
      path: `/users/me/subscriptions/muted_topics?${form({ stream_id: "1", stream: "Verona", topic: "t", op: "add" })}`,
      as: "hamlet",
    });
    expect(topics).toMatchObject({
      status: 400,
      body: {
        msg: "Unsupported parameter combination: stream_id, stream",
        code: "BAD_REQUEST",
        parameters: "stream_id, stream",
      },
    });
  });
});

describe("DELETE /events as each client sends it", () => {
  it("reads queue_id from a form body (python-zulip-api) and from the query string (zulip-js)", async () => {
    for (const where of ["body", "query"] as const) {
      const { queue_id } = await expectSuccess(
        server.as("hamlet").POST("/register", { body: { event_types: ["message"] } }),
      );
      const r =
        where === "body"
          ? await send({
              method: "DELETE",
              path: "/events",
              as: "hamlet",
              headers: FORM,
              body: form({ queue_id: queue_id! }),
            })
          : await send({ method: "DELETE", path: `/events?queue_id=${queue_id}`, as: "hamlet" });
      expect(r).toMatchObject({ status: 200, body: { result: "success" } });
      const gone = await send({
        method: "GET",
        path: `/events?queue_id=${queue_id}&dont_block=true`,
        as: "hamlet",
      });
      expect(gone.body.code).toBe("BAD_EVENT_QUEUE_ID");
    }
  });
});

describe("a fragment sent on the wire", () => {
  it("is not part of the path: validation and handling agree on the operation", async () => {
    const r = await send({ method: "GET", path: "/users/me#frag", as: "hamlet" });
    expect(r).toMatchObject({
      status: 200,
      body: { user_id: server.creds.users.hamlet!.user_id, max_message_id: expect.any(Number) },
    });
  });
});

describe("bodies the server cannot read are refused with a 4xx, and nothing changes", () => {
  const message = form({
    type: "stream",
    to: "Verona",
    topic: "encoding",
    content: "must not be stored",
  });

  it("refuses an unsupported or lying Content-Encoding", async () => {
    const before = await messageCount();
    for (const [encoding, msg] of [
      ["xyz", "Unsupported Content-Encoding: xyz"],
      ["gzip, gzip", "Unsupported Content-Encoding: gzip, gzip"],
      ["gzip", "The request body is not encoded as its Content-Encoding says"],
      ["deflate", "The request body is not encoded as its Content-Encoding says"],
      ["br", "The request body is not encoded as its Content-Encoding says"],
    ]) {
      const r = await send({
        method: "POST",
        path: "/messages",
        as: "hamlet",
        headers: { ...FORM, "Content-Encoding": encoding! },
        body: message,
      });
      expect(r, encoding).toMatchObject({ status: 400, body: { result: "error", msg } });
    }
    expect(await messageCount()).toBe(before);
    // A body that really is gzip-compressed is read.
    const gz = await send({
      method: "POST",
      path: "/messages",
      as: "hamlet",
      headers: { ...FORM, "Content-Encoding": "gzip" },
      body: gzipSync(message),
    });
    expect(gz.status).toBe(200);
  });

  it("refuses it only after the route and the credentials: a wrong method is 405, no key is 401", async () => {
    const json = { "Content-Type": "application/json" };
    const wrongMethod = await send({
      method: "POST",
      path: "/users/me",
      as: "hamlet",
      headers: json,
      body: "{",
    });
    expect(wrongMethod).toMatchObject({ status: 405, body: { msg: "Method Not Allowed" } });
    const noKey = await send({
      method: "POST",
      path: "/messages",
      headers: { ...FORM, "Content-Encoding": "xyz" },
      body: message,
    });
    expect(noKey.status).toBe(401);
    const unknown = await send({
      method: "POST",
      path: "/no_such_thing",
      as: "hamlet",
      headers: json,
      body: "{",
    });
    expect(unknown.status).toBe(404);
  });

  it("refuses an unknown charset", async () => {
    const before = await messageCount();
    const r = await send({
      method: "POST",
      path: "/messages",
      as: "hamlet",
      headers: { "Content-Type": "application/x-www-form-urlencoded; charset=xyz" },
      body: message,
    });
    expect(r).toMatchObject({ status: 400, body: { msg: "Unsupported charset: xyz" } });
    expect(await messageCount()).toBe(before);
  });

  it("refuses JSON nested deeper than Zulip's parser takes, even where nobody reads it", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    // Unauthenticated, in an undeclared field of a JSON body.
    const json = await send({
      method: "POST",
      path: "/fetch_api_key",
      headers: { "Content-Type": "application/json" },
      body: `{"username":"a","password":"b","x":${deep}}`,
    });
    expect(json).toMatchObject({
      status: 400,
      body: { msg: "Malformed JSON", code: "INVALID_JSON" },
    });
    const field = await send({
      method: "POST",
      path: "/messages",
      as: "hamlet",
      headers: FORM,
      body: form({ type: "direct", to: deep, content: "x" }),
    });
    expect(field).toMatchObject({ status: 400 });
    // A URL carries less (Node takes 16 KB of headers), but enough to nest too deeply.
    const deepUrl = "[".repeat(2000) + "]".repeat(2000);
    const query = await send({
      method: "GET",
      path: `/messages?anchor=newest&narrow=${deepUrl}`,
      as: "hamlet",
    });
    expect(query).toMatchObject({ status: 400, body: { msg: "narrow is not valid JSON" } });
    // 1024 levels are still JSON (and still the wrong shape).
    const ok = await send({
      method: "POST",
      path: "/fetch_api_key",
      headers: { "Content-Type": "application/json" },
      body: `{"username":"a@zulip.com","password":"b","x":${"[".repeat(1000) + "]".repeat(1000)}}`,
    });
    expect(ok.body.msg).not.toBe("Malformed JSON");
    expect(ok.status).toBe(401);
  });

  it("refuses path ids no client can represent, and treats large valid ones as unknown", async () => {
    for (const id of ["9223372036854775808", "9.2e18", "-Infinity", "Infinity", "-1", "1.5"]) {
      const r = await send({ method: "GET", path: `/messages/${id}`, as: "hamlet" });
      expect(r.status, id).toBe(400);
      expect(r.body.msg, id).toMatch(/^(Invalid message_id|message_id is not an integer)$/);
    }
    const unknown = await send({ method: "GET", path: "/messages/9007199254740991", as: "hamlet" });
    expect(unknown).toMatchObject({ status: 400, body: { msg: "Invalid message(s)" } });
  });
});

describe("requests Node's HTTP parser refuses", () => {
  /** Writes raw bytes on a new connection and returns the status line and the parsed body. */
  const rawExchange = (bytes: string) =>
    new Promise<{ statusLine: string; body: unknown }>((resolve, reject) => {
      const url = new URL(server.baseUrl);
      const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
      let out = "";
      socket.on("data", (d) => (out += String(d)));
      socket.on("end", () =>
        resolve({ statusLine: out.split("\r\n")[0]!, body: JSON.parse(out.split("\r\n\r\n")[1]!) }),
      );
      socket.on("error", reject);
    });

  it("are answered with a JSON error envelope", async () => {
    expect(
      await rawExchange(`GET /api/v1/users/me?x=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    ).toEqual({
      statusLine: "HTTP/1.1 431 Request Header Fields Too Large",
      body: { result: "error", msg: "Request headers too large", code: "BAD_REQUEST" },
    });
    expect(
      await rawExchange("GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"),
    ).toEqual({
      statusLine: "HTTP/1.1 400 Bad Request",
      body: { result: "error", msg: "Malformed HTTP request", code: "BAD_REQUEST" },
    });
  });
});

describe("the sending client's name", () => {
  it("is cut to Zulip's 30 characters, however long the User-Agent", async () => {
    const agent = "Z".repeat(3000) + "/1.0";
    const r = await send({
      method: "POST",
      path: "/messages",
      as: "hamlet",
      headers: { ...FORM, "User-Agent": agent },
      body: form({ type: "stream", to: "Verona", topic: "ua", content: "long agent" }),
    });
    expect(r.status).toBe(200);
    const { message } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/messages/{message_id}", { params: { path: { message_id: r.body.id } } }),
    );
    expect(message.client).toBe("Z".repeat(30));
  });

  it("is created once when many first sends race for it", async () => {
    const agent = `RaceClient${Date.now()}/1.0`;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send({
          method: "POST",
          path: "/messages",
          as: "hamlet",
          headers: { ...FORM, "User-Agent": agent },
          body: form({ type: "stream", to: "Verona", topic: "race", content: `race ${i}` }),
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await server.db.client.count({ where: { name: agent.split("/")[0]! } })).toBe(1);
    // A tighter burst than HTTP produces: every call misses the cache and races to insert.
    const name = `Burst${Date.now()}`;
    const burst = await Promise.all(Array.from({ length: 50 }, () => clientIdFor(server.db, name)));
    expect(new Set(burst).size).toBe(1);
  });

  it("creates a new direct-message group once when its first messages race", async () => {
    const u = server.creds.users;
    const to = JSON.stringify([
      u.iago!.user_id,
      u.othello!.user_id,
      u.prospero!.user_id,
      u.aaron!.user_id,
    ]);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        send({
          method: "POST",
          path: "/messages",
          as: "cordelia",
          headers: FORM,
          body: form({ type: "direct", to, content: `group ${i}` }),
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const recipients = await server.db.message.findMany({
      where: { id: { in: results.map((r) => r.body.id) } },
      select: { recipientId: true },
    });
    expect(new Set(recipients.map((m) => m.recipientId)).size).toBe(1);
  });
});

describe("a client that goes away mid-body", () => {
  it("is logged as what it is, not as an unexpected error", async () => {
    const logged: { level: number; msg: string }[] = [];
    const log = pino(
      { level: "debug" },
      { write: (line: string) => logged.push(JSON.parse(line)) },
    );
    const own = await startTestServer({}, { log });
    try {
      const url = new URL(own.baseUrl);
      await new Promise<void>((resolve) => {
        const req = request({
          host: url.hostname,
          port: url.port,
          method: "POST",
          path: "/api/v1/messages",
          headers: { ...FORM, "Content-Length": "1000" },
        });
        req.on("error", () => resolve());
        req.write("type=stream&to=Ver");
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 100);
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(logged.filter((l) => l.level >= 50)).toEqual([]);
      expect(logged).toContainEqual(
        expect.objectContaining({ level: 20, msg: "client disconnected before sending its body" }),
      );
    } finally {
      await own.close();
    }
  });
});

describe("python-zulip-api 0.9.1's calls, as its call_endpoint encodes them", () => {
  // call_endpoint: values that are not strings become JSON text; GET sends them in the query
  // string, every other method as a form body (requests writes spaces as '+').
  const encode = (request: Record<string, unknown>) =>
    new URLSearchParams(
      Object.entries(request).map(([k, v]): [string, string] => [
        k,
        typeof v === "string" ? v : JSON.stringify(v),
      ]),
    ).toString();
  const py = (method: string, url: string, as: string, request: Record<string, unknown> = {}) => {
    const headers = { "User-Agent": "ZulipPython/0.9.1", ...FORM };
    return method === "GET"
      ? send({
          method,
          path: `/${url}${Object.keys(request).length ? `?${encode(request)}` : ""}`,
          as,
          headers,
        })
      : send({ method, path: `/${url}`, as, headers, body: encode(request) });
  };

  it("get_attachments and a removal of one", async () => {
    const upload = new FormData();
    upload.append("file", new Blob(["py"], { type: "text/plain" }), "py.txt");
    const { url } = await expectSuccess(
      server.as("iago").POST("/user_uploads", {
        body: upload,
        bodySerializer: (b: unknown) => b,
        headers: { "Content-Type": null },
      }),
    );
    const listed = await py("GET", "attachments", "iago");
    expect(listed.status).toBe(200);
    const mine = listed.body.attachments.find(
      (a: { path_id: string }) => `/user_uploads/${a.path_id}` === url,
    );
    expect(mine).toMatchObject({ name: "py.txt", size: 2, message_ids: [] });
    expect(typeof listed.body.upload_space_used).toBe("number");
    expect((await py("DELETE", `attachments/${mine.id}`, "iago")).body).toEqual({
      result: "success",
      msg: "",
    });
  });

  it("update_notification_settings and update_display_settings", async () => {
    const notifications = await py("PATCH", "settings/notifications", "cordelia", {
      enable_offline_push_notifications: false,
      enable_sounds: true,
      notification_sound: "ding",
    });
    expect(notifications).toEqual({ status: 200, body: { result: "success", msg: "" } });
    const display = await py("PATCH", "settings/display", "cordelia", {
      left_side_userlist: true,
      emojiset: "google",
      default_language: "en",
    });
    expect(display).toEqual({ status: 200, body: { result: "success", msg: "" } });
    const user = await server.db.userProfile.findUniqueOrThrow({
      where: { id: server.creds.users.cordelia!.user_id },
    });
    expect(user).toMatchObject({
      enableOfflinePushNotifications: false,
      notificationSound: "ding",
      leftSideUserlist: true,
    });
  });

  it("get_stream_email_address and add_default_stream", async () => {
    const verona = server.creds.channels.Verona!.stream_id;
    const email = await py("GET", `streams/${verona}/email_address`, "hamlet");
    expect(email.status).toBe(200);
    expect(typeof email.body.email).toBe("string");
    const added = await py("POST", "default_streams", "iago", { stream_id: verona });
    expect(added).toEqual({ status: 200, body: { result: "success", msg: "" } });
  });
});
