import pino from "pino";
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { startTestServer, useTestServer } from "../helpers/server.ts";
import { untyped } from "../helpers/builders.ts";

/** The server's clock, which a test moves forward to see a rate limit's window pass. */
let clockOffsetMs = 0;
const server = useTestServer(
  { rateLimiting: true },
  { now: () => new Date(Date.now() + clockOffsetMs) },
);

describe("POST /fetch_api_key", () => {
  it("exchanges an email and password for the API key, email and user id", async () => {
    const hamlet = server.creds.users.hamlet!;
    const data = await expectSuccess(
      server
        .client()
        .POST("/fetch_api_key", { body: { username: hamlet.email, password: hamlet.password! } }),
    );
    expect(data).toMatchObject({
      api_key: hamlet.api_key,
      email: "hamlet@zulip.com",
      user_id: hamlet.user_id,
    });
    // The key works for API calls.
    const me = await expectSuccess(server.client(data.email, data.api_key).GET("/users/me"));
    expect(me.user_id).toBe(hamlet.user_id);
  });

  it("matches the email case-insensitively and ignores surrounding spaces", async () => {
    const hamlet = server.creds.users.hamlet!;
    const data = await expectSuccess(
      server.client().POST("/fetch_api_key", {
        body: { username: "  HAMLET@zulip.COM ", password: hamlet.password! },
      }),
    );
    expect(data.user_id).toBe(hamlet.user_id);
  });

  it("refuses a wrong password with 401 AUTHENTICATION_FAILED", async () => {
    await expectError(
      server
        .client()
        .POST("/fetch_api_key", { body: { username: "hamlet@zulip.com", password: "wrong" } }),
      401,
      "Your username or password is incorrect",
      {
        code: "AUTHENTICATION_FAILED",
      },
    );
  });

  it("answers an unknown user exactly like a wrong password", async () => {
    await expectError(
      server
        .client()
        .POST("/fetch_api_key", { body: { username: "nobody@zulip.com", password: "x" } }),
      401,
      "Your username or password is incorrect",
      {
        code: "AUTHENTICATION_FAILED",
      },
    );
  });

  it("refuses a username that is not an email address", async () => {
    await expectError(
      server.client().POST("/fetch_api_key", { body: { username: "hamlet", password: "x" } }),
      400,
      "Enter a valid email address.",
      { code: "BAD_REQUEST" },
    );
  });

  it("names a missing argument", async () => {
    await expectError(
      server.client().POST("/fetch_api_key", { body: untyped({ username: "hamlet@zulip.com" }) }),
      400,
      "Missing 'password' argument",
      {
        code: "REQUEST_VARIABLE_MISSING",
        var_name: "password",
      },
    );
  });

  it("refuses a deactivated user with USER_DEACTIVATED", async () => {
    const aaron = server.creds.users.aaron!;
    await server.db.userProfile.update({ where: { id: aaron.user_id }, data: { isActive: false } });
    try {
      await expectError(
        server
          .client()
          .POST("/fetch_api_key", { body: { username: aaron.email, password: aaron.password! } }),
        401,
        "Account is deactivated",
        {
          code: "USER_DEACTIVATED",
        },
      );
    } finally {
      await server.db.userProfile.update({
        where: { id: aaron.user_id },
        data: { isActive: true },
      });
    }
  });

  it("refuses everyone when password authentication is disabled", async () => {
    const hamlet = server.creds.users.hamlet!;
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { passwordAuthEnabled: false },
    });
    try {
      await expectError(
        server
          .client()
          .POST("/fetch_api_key", { body: { username: hamlet.email, password: hamlet.password! } }),
        401,
        "Password authentication is disabled in this organization",
        { code: "PASSWORD_AUTH_DISABLED" },
      );
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { passwordAuthEnabled: true },
      });
    }
  });

  it("stores passwords only as memory-hard hashes", async () => {
    const row = await server.db.userProfile.findUniqueOrThrow({
      where: { id: server.creds.users.hamlet!.user_id },
    });
    expect(row.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(row.passwordHash).not.toContain(server.creds.users.hamlet!.password!);
  });
});

describe("POST /fetch_api_key rate limit (authenticate_by_username: 5 failures in 30 minutes)", () => {
  const RATE_LIMIT_MSG =
    "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers";
  const attempt = (username: string, password: string) =>
    server.client().POST("/fetch_api_key", { body: { username, password } });
  const fail = (username: string) =>
    expectError(
      attempt(username, "not the password"),
      401,
      "Your username or password is incorrect",
    );
  const limited = async (username: string, password = "not the password") => {
    const { error, response } = await expectError(
      attempt(username, password),
      429,
      RATE_LIMIT_MSG,
      {
        code: "RATE_LIMIT_HIT",
      },
    );
    return { error, response };
  };
  const headers = (response: Response) => ({
    limit: response.headers.get("X-RateLimit-Limit"),
    remaining: response.headers.get("X-RateLimit-Remaining"),
    reset: Number(response.headers.get("X-RateLimit-Reset")),
  });

  it("refuses a sixth attempt after five failures, even with the right password, with Retry-After and X-RateLimit-* headers", async () => {
    const othello = server.creds.users.othello!;
    const start = Date.now() / 1000;
    for (let i = 1; i <= 5; i++) {
      const { response } = await fail(othello.email);
      expect(headers(response)).toMatchObject({ limit: "5", remaining: String(5 - i) });
      expect(headers(response).reset).toBeGreaterThanOrEqual(Math.floor(start + 1800));
    }
    const { error, response } = await limited(othello.email, othello.password!);
    const retryAfter = error["retry-after"] as number;
    // The first failure leaves the window 30 minutes after it was made.
    expect(retryAfter).toBeGreaterThan(1700);
    expect(retryAfter).toBeLessThanOrEqual(1800);
    expect(Number(response.headers.get("Retry-After"))).toBe(retryAfter);
    expect(headers(response)).toMatchObject({ limit: "5", remaining: "0" });
    // The reset is when the window ends: now plus Retry-After, to the second (the clock may
    // have ticked over between the server's answer and this line).
    const reset = Date.now() / 1000 + retryAfter;
    expect(headers(response).reset).toBeGreaterThanOrEqual(Math.floor(reset) - 1);
    expect(headers(response).reset).toBeLessThanOrEqual(Math.ceil(reset));
    // The username is matched as the address is, whatever its case.
    await limited(othello.email.toUpperCase());
    // Another username is not affected.
    await fail(server.creds.users.cordelia!.email);
  });

  it("counts unknown usernames too, with the same answers as for an existing account", async () => {
    for (let i = 0; i < 5; i++) await fail("nobody-at-all@zulip.com");
    await limited("nobody-at-all@zulip.com");
  });

  it("counts only failures: a success in between neither counts nor resets the count", async () => {
    const prospero = server.creds.users.prospero!;
    for (let i = 0; i < 3; i++) await fail(prospero.email);
    const { response } = await attempt(prospero.email, prospero.password!);
    expect(response.status).toBe(200);
    // The success gave its attempt back: still two failures left.
    expect(headers(response)).toMatchObject({ limit: "5", remaining: "2" });
    await fail(prospero.email);
    await fail(prospero.email);
    await limited(prospero.email, prospero.password!);
  });

  it("allows attempts again once the window has passed", async () => {
    const aaron = server.creds.users.aaron!;
    // aaron's earlier failure (the deactivated-user test) may still count; make it five.
    const seen = headers((await fail(aaron.email)).response);
    for (let i = Number(seen.remaining); i > 0; i--) await fail(aaron.email);
    await limited(aaron.email, aaron.password!);
    clockOffsetMs += 1801_000;
    try {
      const data = await expectSuccess(attempt(aaron.email, aaron.password!));
      expect(data.user_id).toBe(aaron.user_id);
      // Writing a hit pruned the rows whose window had passed (othello's five failures).
      const row = (key: string) =>
        server.db.rateLimitHistory.findUnique({
          where: { domain_key: { domain: "authenticate_by_username", key } },
        });
      expect(await row("othello@zulip.com")).toBeNull();
      expect(await row("aaron@zulip.com")).not.toBeNull();
    } finally {
      clockOffsetMs -= 1801_000;
    }
  });
});

describe("passwords are never logged", () => {
  it("an unexpected error logs the request's path, not the password or key sent in its query string", async () => {
    const logged: string[] = [];
    const log = pino({ level: "debug" }, { write: (line: string) => logged.push(line) });
    const broken = await startTestServer({ rateLimiting: true }, { log });
    try {
      // Break the limiter's table under the running app: POST /fetch_api_key now fails inside SQL.
      await broken.db.$executeRawUnsafe("ALTER TABLE rate_limit_history RENAME TO gone");
      const hamlet = broken.creds.users.hamlet!;
      const secret = encodeURIComponent(hamlet.password!);
      const response = await fetch(
        `${broken.baseUrl}/api/v1/fetch_api_key?username=hamlet@zulip.com&password=${secret}&api_key=${hamlet.api_key}`,
        { method: "POST" },
      );
      expect(response.status).toBe(500);
      const users = await fetch(`${broken.baseUrl}/api/v1/users?password=${secret}`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: `email=x@zulip.com&full_name=X&password=${secret}`,
      });
      expect(users.status).toBe(401);
      expect(logged.map((l) => JSON.parse(l))).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: "unexpected error",
          url: "/api/v1/fetch_api_key",
        }),
      );
      for (const line of logged) {
        expect(line).not.toContain(hamlet.password!);
        expect(line).not.toContain(secret);
        expect(line).not.toContain(hamlet.api_key);
      }
    } finally {
      await broken.close();
    }
  });
});
