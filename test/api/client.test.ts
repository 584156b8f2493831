/** The typed client as an importer uses it: unwrap() returns data or throws ZulipApiError. */
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  apiBaseUrl,
  basicAuthorization,
  createZulipClient,
  encodeParam,
  eventQueue,
  parseZuliprc,
  unwrap,
  ZulipApiError,
  ZulipUnexpectedResponseError,
  type ZulipEvent,
} from "../../client/src/index.ts";
import { loadZuliprc } from "../../client/src/node.ts";
import { useTestServer } from "../helpers/server.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";

const server = useTestServer();

describe("client/", () => {
  it("accepts the server address with or without /api/v1 and unwraps success bodies", async () => {
    const hamlet = server.creds.users.hamlet!;
    for (const baseUrl of [server.baseUrl, `${server.baseUrl}/api/v1/`]) {
      const zulip = createZulipClient({
        baseUrl,
        email: hamlet.email,
        apiKey: hamlet.api_key,
        middleware: [specCheckMiddleware],
      });
      const me = await unwrap(zulip.GET("/users/me"));
      expect(me.user_id).toBe(hamlet.user_id);
    }
  });

  it("parses a body once and still answers its text, url and status", async () => {
    const zulip = server.as("hamlet");
    const { data, response } = await zulip.GET("/users/me");
    expect(data?.email).toBe(server.creds.users.hamlet!.email);
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(new URL(response.url).pathname).toBe("/api/v1/users/me");
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(JSON.parse(await response.text())).toEqual(data);
  });

  it("throws ZulipApiError with the status, code and extra fields of an error", async () => {
    const zulip = createZulipClient({
      baseUrl: server.baseUrl,
      email: "hamlet@zulip.com",
      apiKey: server.creds.users.hamlet!.api_key,
      middleware: [specCheckMiddleware],
    });
    const error = await unwrap(
      zulip.POST("/messages", { body: { type: "channel", to: 4242, topic: "t", content: "c" } }),
    ).catch((e) => e);
    expect(error).toBeInstanceOf(ZulipApiError);
    expect(error).toMatchObject({
      status: 400,
      code: "STREAM_DOES_NOT_EXIST",
      message: "Channel with ID '4242' does not exist",
      body: { stream_id: 4242 },
    });
  });

  it("encodes parameters the Zulip way", () => {
    expect([
      encodeParam("Verona"),
      encodeParam(7),
      encodeParam(true),
      encodeParam([1, 2]),
      encodeParam({ new: 5 }),
    ]).toEqual(["Verona", "7", "true", "[1,2]", '{"new":5}']);
  });

  it("turns an answer that is not a Zulip envelope into ZulipUnexpectedResponseError", async () => {
    // JSON, but not Zulip's: a proxy or another API in front of the server.
    const foreign = createZulipClient({
      baseUrl: server.baseUrl,
      fetch: async () =>
        new Response(JSON.stringify({ error: "not found" }), {
          status: 404,
          headers: { "Content-Type": "application/json" },
        }),
    });
    const error = await unwrap(foreign.GET("/users/me")).catch((e) => e);
    expect(error).toBeInstanceOf(ZulipUnexpectedResponseError);
    expect(error).toMatchObject({
      status: 404,
      contentType: "application/json",
      body: '{"error":"not found"}',
    });
    expect(error.message).toContain("got HTTP 404 (application/json)");
    const emptyOk = createZulipClient({
      baseUrl: server.baseUrl,
      fetch: async () =>
        new Response("", { status: 200, headers: { "Content-Type": "text/plain" } }),
    });
    await expect(emptyOk.GET("/users/me")).rejects.toThrow(
      /got HTTP 200 \(text\/plain\): empty body/,
    );
  });

  it("sends credentials UTF-8 encoded and accepts the site with /api or /api/v1", () => {
    expect(basicAuthorization("jos\u00e9@zulip.com", "k")).toBe(
      "Basic " + Buffer.from("jos\u00e9@zulip.com:k", "utf8").toString("base64"),
    );
    expect(
      [
        "https://chat.example.com",
        "https://chat.example.com/",
        "https://chat.example.com/api",
        "https://chat.example.com/api/v1/",
      ].map(apiBaseUrl),
    ).toEqual(Array(4).fill("https://chat.example.com/api/v1"));
  });

  it("reads a zuliprc as python-zulip-api does, with ZULIP_* overrides", () => {
    const rc = parseZuliprc(
      "# mine\n[api]\nemail = hamlet@zulip.com\nkey: abc\nsite=chat.example.com/\n\n[other]\nx=1\n",
    );
    expect(rc).toMatchObject({
      email: "hamlet@zulip.com",
      apiKey: "abc",
      baseUrl: "https://chat.example.com",
    });
    expect(parseZuliprc("[api]\nemail=a@b.c\nkey=k\nsite=localhost:9991").baseUrl).toBe(
      "http://localhost:9991",
    );
    expect(() => parseZuliprc("[api]\nemail=a@b.c\nsite=x")).toThrow(
      "zuliprc: the [api] section has no key",
    );
    expect(() => parseZuliprc("email=a@b.c")).toThrow(/cannot read the line/);
    const dir = mkdtempSync(join(tmpdir(), "zuliprc-"));
    try {
      writeFileSync(join(dir, "rc"), "[api]\nemail=a@b.c\nkey=k\nsite=https://one.example\n");
      expect(
        loadZuliprc({ env: { ZULIP_CONFIG: join(dir, "rc"), ZULIP_SITE: "https://two.example" } }),
      ).toMatchObject({ email: "a@b.c", baseUrl: "https://two.example" });
      expect(
        loadZuliprc({
          env: {
            HOME: dir,
            ZULIP_CONFIG: join(dir, "none"),
            ZULIP_EMAIL: "e@x.y",
            ZULIP_API_KEY: "k",
            ZULIP_SITE: "http://h",
          },
        }),
      ).toMatchObject({ email: "e@x.y", apiKey: "k" });
      expect(() => loadZuliprc({ path: join(dir, "none"), env: {} })).toThrow(
        /zuliprc: cannot read/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("eventQueue registers again when the server drops the queue, and hands the new state to onRegister", async () => {
    const hamlet = server.as("hamlet");
    const stop = new AbortController();
    const queues: string[] = [];
    const seen: ZulipEvent[] = [];
    const loop = (async () => {
      for await (const event of eventQueue(hamlet, {
        register: { event_types: ["message"] },
        signal: stop.signal,
        onRegister: (s) => void queues.push(s.queue_id!),
      })) {
        seen.push(event);
        if (seen.length === 2) stop.abort();
      }
    })();
    const until = async (ok: () => boolean) => {
      while (!ok()) await new Promise((r) => setTimeout(r, 10));
    };
    await until(() => queues.length === 1);
    await unwrap(
      server.as("othello").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "loop", content: "one" },
      }),
    );
    await until(() => seen.length === 1);
    // The queue disappears (as after 10 idle minutes): the next poll gets BAD_EVENT_QUEUE_ID.
    await unwrap(hamlet.DELETE("/events", { body: { queue_id: queues[0]! } }));
    await until(() => queues.length === 2);
    await unwrap(
      server.as("othello").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "loop", content: "two" },
      }),
    );
    await loop;
    expect(queues[1]).not.toBe(queues[0]);
    expect(seen.map((e) => (e as { message?: { content: string } }).message?.content)).toEqual([
      "one",
      "two",
    ]);
  });

  it("eventQueue takes a registration already under way as its first, and its failure as its own", async () => {
    const hamlet = server.as("hamlet");
    const pending = unwrap(hamlet.POST("/register", { body: { event_types: ["message"] } }));
    const early = await pending;
    const stop = new AbortController();
    const queues: string[] = [];
    const seen: string[] = [];
    const loop = (async () => {
      for await (const event of eventQueue(hamlet, {
        register: { event_types: ["message"] },
        pending,
        signal: stop.signal,
        onRegister: (s) => void queues.push(s.queue_id!),
      })) {
        if (event.type === "message") seen.push(event.message.content);
        stop.abort();
      }
    })();
    while (queues.length === 0) await new Promise((r) => setTimeout(r, 10));
    // No second registration: the loop polls the queue registered early.
    expect(queues).toEqual([early.queue_id]);
    await unwrap(
      server.as("othello").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "early", content: "early bird" },
      }),
    );
    await loop;
    expect(seen).toEqual(["early bird"]);

    const wrongKey = server.client("hamlet@zulip.com", "x".repeat(32));
    const refused = unwrap(wrongKey.POST("/register", { body: {} }));
    const error = await eventQueue(wrongKey, { pending: refused })
      .next()
      .catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
  });

  it("eventQueue throws a 4xx it cannot fix and backs off while the server is unreachable", async () => {
    const wrongKey = server.client("hamlet@zulip.com", "x".repeat(32));
    const error = await eventQueue(wrongKey)
      .next()
      .catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const stop = new AbortController();
    const waits: number[] = [];
    const gone = createZulipClient({ baseUrl: "http://127.0.0.1:9", email: "a@b.c", apiKey: "k" });
    const loop = eventQueue(gone, {
      signal: stop.signal,
      retry: { initialMs: 10, maxMs: 40 },
      onRetry: (_e, ms) => waits.push(ms),
    }).next();
    while (waits.length < 4) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    await expect(loop).resolves.toEqual({ done: true, value: undefined });
    expect(waits[0]).toBeGreaterThanOrEqual(5);
    expect(waits[0]).toBeLessThanOrEqual(10);
    expect(waits[3]).toBeGreaterThanOrEqual(20);
    expect(waits[3]).toBeLessThanOrEqual(40);
  });
});
