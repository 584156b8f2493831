/**
 * Zulip's API rate limits (zerver/lib/rate_limiter.py, zerver/middleware.py RateLimitMiddleware;
 * zerver/tests/test_external.py RateLimitTests): api_by_user per user, api_by_ip per client
 * address for requests without valid credentials, the X-RateLimit-* headers on every answer,
 * 429 RATE_LIMIT_HIT with Retry-After past a limit, RATE_LIMITING_RULES and RATE_LIMITING=false.
 */
import { describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { DEFAULT_RATE_LIMITING_RULES } from "../../server/config.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { untyped } from "../helpers/builders.ts";

const RATE_LIMIT_MSG =
  "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers";

const headers = (response: Response) => ({
  limit: response.headers.get("X-RateLimit-Limit"),
  remaining: response.headers.get("X-RateLimit-Remaining"),
  reset: response.headers.get("X-RateLimit-Reset"),
});

/** Asserts a 429 with its body, both forms of Retry-After, and returns the seconds to wait. */
async function expectLimited(
  request: Promise<{ data?: unknown; error?: unknown; response: Response }>,
): Promise<{ retryAfter: number; response: Response }> {
  const { error, response } = await expectError(request, 429, RATE_LIMIT_MSG, {
    code: "RATE_LIMIT_HIT",
  });
  const retryAfter = error["retry-after"] as number;
  expect(typeof retryAfter).toBe("number");
  expect(response.headers.get("Retry-After")).toBe(String(retryAfter));
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(headers(response).remaining).toBe("0");
  return { retryAfter, response };
}

describe("with Zulip's default rules", () => {
  const server = useTestServer({ rateLimiting: true });
  const seen: RequestInfo[] = [];

  it("every answer carries the headers of api_by_user; Remaining drops by exactly 1 per request", async () => {
    const start = Date.now() / 1000;
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { response } = await server.as("hamlet").GET("/users/me");
      expect(response.status).toBe(200);
      const h = headers(response);
      expect(h.limit).toBe("200");
      // The window started with the first request and ends a minute later.
      expect(Number(h.reset)).toBeGreaterThanOrEqual(Math.floor(start + 60) - 1);
      expect(Number(h.reset)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000 + 60));
      remaining.push(Number(h.remaining));
    }
    expect(remaining[0]).toBe(199);
    expect(remaining).toEqual([199, 198, 197, 196]);
  });

  it("a request refused for its parameters counts and carries the headers too", async () => {
    const { response } = await expectError(
      server.as("aaron").POST("/users/me/alert_words", { body: untyped({}) }),
      400,
      "Missing 'alert_words' argument",
    );
    expect(headers(response)).toMatchObject({ limit: "200", remaining: "199" });
    const next = await server.as("aaron").GET("/users/me");
    expect(headers(next.response)).toMatchObject({ limit: "200", remaining: "198" });
  });

  it("a request without valid credentials counts against api_by_ip (100 per minute per address)", async () => {
    const { response } = await expectError(
      server.client().GET("/users/me"),
      401,
      "Not logged in: API authentication or user session required",
    );
    expect(headers(response)).toMatchObject({ limit: "100", remaining: "99" });
    const wrongKey = await expectError(
      server.client("hamlet@zulip.com", "x".repeat(32)).GET("/users/me"),
      401,
      "Invalid API key",
    );
    expect(headers(wrongKey.response)).toMatchObject({ limit: "100", remaining: "98" });
    // So does an operation that needs none.
    const settings = await server.client().GET("/server_settings");
    expect(settings.response.status).toBe(200);
    expect(headers(settings.response)).toMatchObject({ limit: "100", remaining: "97" });
  });

  it("POST /fetch_api_key reports the stricter of api_by_ip and authenticate_by_username", async () => {
    const { response } = await expectError(
      server.client().POST("/fetch_api_key", {
        body: { username: "cordelia@zulip.com", password: "wrong" },
      }),
      401,
      "Your username or password is incorrect",
    );
    expect(headers(response)).toMatchObject({ limit: "5", remaining: "4" });
  });

  it("an unknown path is not an operation: no count, no headers", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/no_such_endpoint`);
    expect(response.status).toBe(404);
    expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
  });

  it("GET /events counts in this process's own buckets, not against the user's API allowance", async () => {
    const client = server.as("cordelia");
    const queue = await expectSuccess(client.POST("/register", { body: {} }));
    const before = headers((await client.GET("/users/me")).response);
    const poll = await client.GET("/events", {
      params: { query: { queue_id: queue.queue_id!, dont_block: true } },
    });
    expect(poll.response.status).toBe(200);
    expect(headers(poll.response)).toMatchObject({ limit: "200", remaining: "199" });
    const after = headers((await client.GET("/users/me")).response);
    expect(Number(after.remaining)).toBe(Number(before.remaining) - 1);
  });

  it("costs no statement on 9 of 10 requests: a lease of 10 (5% of 200) is served from memory", async () => {
    const client = server.as("othello");
    // The first ten take the first lease and warm the caches.
    for (let i = 0; i < 10; i++) await expectSuccess(client.GET("/users/me"));
    seen.length = 0;
    server.deps.observe = (info) => seen.push(info);
    try {
      for (let i = 0; i < 10; i++) await expectSuccess(client.GET("/users/me"));
    } finally {
      server.deps.observe = undefined;
    }
    const counts = seen.map((i) => i.statements);
    expect(counts).toHaveLength(10);
    const base = Math.min(...counts);
    if (server.deps.databaseKind === "postgres")
      // The eleventh request takes the next lease: one statement, counted in its request.
      expect(counts).toEqual([base + 1, ...Array<number>(9).fill(base)]);
    // The embedded database's count lives in memory: no statement at all.
    else expect(counts).toEqual(Array<number>(10).fill(base));
  });
});

describe("with custom RATE_LIMITING_RULES", () => {
  /** The server's clock, moved forward to see a window pass. */
  let clockOffsetMs = 0;
  const server = useTestServer(
    {
      rateLimiting: true,
      rateLimitingRules: {
        ...DEFAULT_RATE_LIMITING_RULES,
        // Two rules in one domain: 3 per 10 s and 5 per hour.
        api_by_user: [
          [10, 3],
          [3600, 5],
        ],
        api_by_ip: [[60, 3]],
      },
    },
    { now: () => new Date(Date.now() + clockOffsetMs) },
  );
  const now = () => (Date.now() + clockOffsetMs) / 1000;

  it("refuses past a limit with 429, reports the strictest rule, and lets the user in again when its window ends", async () => {
    const hamlet = server.as("hamlet");
    const start = now();
    const seen: (string | null)[][] = [];
    for (let i = 0; i < 3; i++) {
      const h = headers((await hamlet.GET("/users/me")).response);
      seen.push([h.limit, h.remaining]);
      // The 10-second rule is the stricter: it is reported.
      expect(Number(h.reset)).toBeLessThanOrEqual(Math.ceil(start + 10));
    }
    expect(seen).toEqual([
      ["3", "2"],
      ["3", "1"],
      ["3", "0"],
    ]);
    const { retryAfter, response } = await expectLimited(hamlet.GET("/users/me"));
    expect(headers(response).limit).toBe("3");
    // Until the 10-second window that began with the first request ends.
    expect(retryAfter).toBeGreaterThan(5);
    expect(retryAfter).toBeLessThanOrEqual(10);

    // Another user is not affected.
    const othello = await server.as("othello").GET("/users/me");
    expect(othello.response.status).toBe(200);
    expect(headers(othello.response)).toMatchObject({ limit: "3", remaining: "2" });

    clockOffsetMs += 10_500;
    // A new 10-second window; the hour's rule (5) has 2 left and is now the stricter.
    const fourth = await hamlet.GET("/users/me");
    expect(fourth.response.status).toBe(200);
    expect(headers(fourth.response)).toMatchObject({ limit: "5", remaining: "1" });
    expect(Number(headers(fourth.response).reset)).toBeGreaterThanOrEqual(
      Math.floor(start + 3600) - 1,
    );
    await expectSuccess(hamlet.GET("/users/me"));
    const hour = await expectLimited(hamlet.GET("/users/me"));
    expect(headers(hour.response).limit).toBe("5");
    expect(hour.retryAfter).toBeGreaterThan(3500);
    expect(hour.retryAfter).toBeLessThanOrEqual(3600 - 10);
  });

  it("counts by client address, from X-Forwarded-For when the peer is a trusted proxy (loopback by default)", async () => {
    const from = (address: string) =>
      server.client().GET("/server_settings", { headers: { "X-Forwarded-For": address } });
    for (let i = 0; i < 3; i++) expect((await from("203.0.113.5")).response.status).toBe(200);
    await expectLimited(from("203.0.113.5"));
    // Another address has its own allowance, as does the proxy itself.
    const other = await from("203.0.113.6");
    expect(other.response.status).toBe(200);
    expect(headers(other.response)).toMatchObject({ limit: "3", remaining: "2" });
    await expectSuccess(server.client().GET("/server_settings"));
  });
});

describe("X-Forwarded-For from a peer that is not a trusted proxy", () => {
  const server = useTestServer({
    rateLimiting: true,
    trustedProxies: "192.0.2.1",
    rateLimitingRules: { ...DEFAULT_RATE_LIMITING_RULES, api_by_ip: [[60, 2]] },
  });

  it("is ignored: every claimed address counts as the peer's", async () => {
    const from = (address: string) =>
      server.client().GET("/server_settings", { headers: { "X-Forwarded-For": address } });
    expect((await from("203.0.113.7")).response.status).toBe(200);
    expect((await from("203.0.113.8")).response.status).toBe(200);
    await expectLimited(from("203.0.113.9"));
  });
});

describe("RATE_LIMITING=false", () => {
  const server = useTestServer({
    rateLimiting: false,
    rateLimitingRules: {
      api_by_user: [[60, 1]],
      api_by_ip: [[60, 1]],
      authenticate_by_username: [[60, 1]],
    },
  });

  it("limits nothing and sends no X-RateLimit-* header", async () => {
    for (let i = 0; i < 3; i++) {
      const { response } = await server.as("hamlet").GET("/users/me");
      expect(response.status).toBe(200);
      expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
      expect(response.headers.get("X-RateLimit-Remaining")).toBeNull();
      expect(response.headers.get("X-RateLimit-Reset")).toBeNull();
      const anonymous = await server.client().GET("/server_settings");
      expect(anonymous.response.status).toBe(200);
      expect(anonymous.response.headers.get("X-RateLimit-Limit")).toBeNull();
    }
  });
});
