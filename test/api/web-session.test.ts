/**
 * The web session (Zulip's web app's way in): the login form, the session cookie, `/json/*` with
 * its CSRF token, the app page at `/` and its assets, logging out; over real HTTP with a cookie
 * jar kept by hand and the typed client as the web app makes it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { sessionIdOf } from "../../server/lib/auth/sessions.ts";
import { CookieJar } from "../helpers/browser-session.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const webDistDir = mkdtempSync(join(os.tmpdir(), "chat-test-web-"));
mkdirSync(join(webDistDir, "assets"));
writeFileSync(join(webDistDir, "assets", "app-TEST1234.js"), "console.log('app');\n");
writeFileSync(join(webDistDir, "assets", "app-TEST1234.css"), "body{margin:0}\n");
writeFileSync(join(webDistDir, "assets", "chunk-TEST5678.js"), "export const x = 1;\n");
writeFileSync(
  join(webDistDir, "manifest.json"),
  JSON.stringify({
    entry: "/static/web/app-TEST1234.js",
    css: ["/static/web/app-TEST1234.css"],
    preload: ["/static/web/chunk-TEST5678.js"],
  }),
);

let server: TestServer;
const seen: RequestInfo[] = [];
beforeAll(async () => {
  server = await startTestServer({ rateLimiting: true, webDistDir });
  server.deps.observe = (info) => seen.push(info);
});
afterAll(async () => {
  await server?.close();
  rmSync(webDistDir, { recursive: true, force: true });
});

const cred = (name: string) => server.creds.users[name]!;
const jar = () => new CookieJar(server.baseUrl);

async function loggedIn(name: string): Promise<{ jar: CookieJar; csrf: string }> {
  const j = jar();
  const res = await j.login(cred(name).email, cred(name).password!);
  expect(res.status).toBe(302);
  return { jar: j, csrf: await j.csrfToken() };
}

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; connect-src 'self'; font-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
};
const headersOf = (res: Response, names: string[]) =>
  Object.fromEntries(names.map((n) => [n, res.headers.get(n)]));

describe("the login page", () => {
  it("has the form's fields, the organization's name, the API reference and a login CSRF cookie", async () => {
    const j = jar();
    const res = await j.fetch("/login/");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(headersOf(res, Object.keys(SECURITY_HEADERS))).toEqual(SECURITY_HEADERS);
    const html = await res.text();
    expect(html).toContain("<title>Log in | Zulip Dev</title>");
    expect(html).toContain("<h1>Zulip Dev</h1>");
    expect(html).toContain('<label for="id_username">Email</label>');
    expect(html).toMatch(
      /<input type="email" id="id_username" name="username"[^>]*autocomplete="username"/,
    );
    expect(html).toContain('<label for="id_password">Password</label>');
    expect(html).toMatch(/<input type="password" id="id_password" name="password"/);
    expect(html).toMatch(/<input type="hidden" name="next" value="\/">/);
    expect(html).toContain('<button type="submit" id="login_button">Log in</button>');
    expect(html).toContain('<a href="/api/docs">API reference</a>');
    const token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(html)![1];
    expect(j.cookies.get("csrftoken")).toBe(token);
    expect(j.setCookies[0]).toMatch(/^csrftoken=[^;]+; HttpOnly; SameSite=Lax; Path=\//);
    // /accounts/login/ is the same page.
    expect((await j.fetch("/accounts/login/")).status).toBe(200);
  });

  it("refuses a form without the login CSRF cookie's token (403)", async () => {
    const j = jar();
    await j.loginToken();
    const res = await j.fetch("/accounts/login/", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        csrfmiddlewaretoken: "x".repeat(43),
        username: cred("hamlet").email,
        password: cred("hamlet").password!,
      }),
    });
    expect(res.status).toBe(403);
    expect(j.cookies.has("sessionid")).toBe(false);
  });

  it("shows the form again with Zulip's text and the email kept after a wrong password", async () => {
    const j = jar();
    const res = await j.login(cred("hamlet").email, "wrong password");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(
      "Please enter a correct email and password. Note that both fields may be case-sensitive.",
    );
    expect(html).toContain(`value="${cred("hamlet").email}"`);
    expect(j.cookies.has("sessionid")).toBe(false);
  });

  it("logs in: a new HttpOnly, SameSite=Lax session cookie for two weeks, then `next` if it is local", async () => {
    const j = jar();
    const res = await j.login(cred("hamlet").email, cred("hamlet").password!, "/#narrow/channel/1");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/#narrow/channel/1");
    const line = j.setCookies.find((c) => c.startsWith("sessionid="))!;
    expect(line).toMatch(
      /^sessionid=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/; Max-Age=1209600$/,
    );
    // Only the key's hash is stored.
    const key = j.cookies.get("sessionid")!;
    const row = await server.db.session.findUnique({ where: { id: sessionIdOf(key) } });
    expect(row).toMatchObject({ userProfileId: cred("hamlet").user_id });
    expect(await server.db.session.count({ where: { id: key } })).toBe(0);
    // A logged-in visitor of the login page goes to the app.
    const again = await j.fetch("/login/");
    expect(again.status).toBe(302);
    expect(again.headers.get("location")).toBe("/");

    for (const next of ["//evil.example/", "/\\evil.example", "https://evil.example/"]) {
      const other = await jar().login(cred("hamlet").email, cred("hamlet").password!, next);
      expect(other.headers.get("location"), next).toBe("/");
    }
  });

  it("marks the cookie Secure when the request came over HTTPS through a trusted proxy", async () => {
    const j = jar();
    const token = await j.loginToken();
    const res = await j.fetch("/accounts/login/", {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Forwarded-Proto": "https",
      },
      body: new URLSearchParams({
        csrfmiddlewaretoken: token,
        username: cred("hamlet").email,
        password: cred("hamlet").password!,
      }),
    });
    expect(res.status).toBe(302);
    expect(j.setCookies.find((c) => c.startsWith("sessionid="))).toMatch(/; Secure$/);
  });
});

describe("the app page", () => {
  it("serves the shell with the session's CSRF token and the manifest's assets", async () => {
    const { jar: j } = await loggedIn("hamlet");
    const res = await j.fetch("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(headersOf(res, Object.keys(SECURITY_HEADERS))).toEqual(SECURITY_HEADERS);
    const html = await res.text();
    const key = j.cookies.get("sessionid")!;
    const { csrfToken } = (await server.db.session.findUnique({
      where: { id: sessionIdOf(key) },
    }))!;
    expect(html).toBe(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
        `<title>Zulip Dev</title><meta name="csrf-token" content="${csrfToken}"><meta name="realm-name" content="Zulip Dev">` +
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' +
        '<link rel="stylesheet" href="/static/web/app-TEST1234.css"><link rel="modulepreload" href="/static/web/chunk-TEST5678.js">' +
        '<script type="module" src="/static/web/app-TEST1234.js"></script></head><body><div id="app"></div></body></html>',
    );
    for (const [path, type] of [
      ["/static/web/app-TEST1234.js", "javascript"],
      ["/static/web/app-TEST1234.css", "text/css"],
      ["/static/web/chunk-TEST5678.js", "javascript"],
    ] as const) {
      const asset = await fetch(server.baseUrl + path);
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get("content-type")).toContain(type);
      expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    }
    for (const path of [
      "/static/web/",
      "/static/web/nope.js",
      "/static/web/../manifest.json",
      "/static/nope.svg",
    ])
      expect((await fetch(server.baseUrl + path)).status, path).toBe(404);
  });

  it("follows a new build's manifest, and says how to build when there is none", async () => {
    const { jar: j } = await loggedIn("hamlet");
    const manifest = join(webDistDir, "manifest.json");
    const before = JSON.stringify({
      entry: "/static/web/app-TEST1234.js",
      css: ["/static/web/app-TEST1234.css"],
      preload: ["/static/web/chunk-TEST5678.js"],
    });
    try {
      writeFileSync(
        manifest,
        JSON.stringify({ entry: "/static/web/app-NEW<x>.js", css: [], preload: [] }),
      );
      const html = await (await j.fetch("/")).text();
      expect(html).toContain(
        '<script type="module" src="/static/web/app-NEW&lt;x&gt;.js"></script>',
      );
      expect(html).not.toContain("stylesheet");
      rmSync(manifest);
      const missing = await j.fetch("/");
      expect(missing.status).toBe(503);
      expect(await missing.text()).toContain("The web app is not built: run npm run build");
    } finally {
      writeFileSync(manifest, before);
    }
    expect((await j.fetch("/")).status).toBe(200);
  });

  it("sends a logged-out visitor to /login/", async () => {
    const res = await jar().fetch("/");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login/");
  });
});

describe("/json with the session", () => {
  it("answers GET /json/users/me with the session alone, for one statement more than the API key", async () => {
    const { jar: j, csrf } = await loggedIn("hamlet");
    const me = await expectSuccess(j.client(csrf).GET("/users/me"));
    expect(me.user_id).toBe(cred("hamlet").user_id);
    // Warm: the session's row (joined to the user's API key; the user then comes from the cache)
    // is the only statement authentication adds; the API key's lookup is cached.
    const statements = async (request: () => Promise<unknown>) => {
      await request();
      seen.length = 0;
      await request();
      const info = seen.filter((i) => i.operationId === "get-own-user");
      expect(info).toHaveLength(1);
      return info[0]!.statements;
    };
    const viaJson = await statements(() => expectSuccess(j.client(csrf).GET("/users/me")));
    const viaApi = await statements(() => expectSuccess(server.as("hamlet").GET("/users/me")));
    if (process.env.SHOW_STATEMENTS) console.log("GET /users/me", { viaJson, viaApi });
    expect(viaJson).toBe(viaApi + 1);
  });

  it("needs the session's X-CSRFToken on a POST: missing or wrong is 403 CSRF_FAILED, right sends", async () => {
    const { jar: j, csrf } = await loggedIn("hamlet");
    const body = new URLSearchParams({
      type: "stream",
      to: "Denmark",
      topic: "web",
      content: "from the web",
    });
    const post = (headers: Record<string, string>) =>
      j.fetch("/json/messages", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
        body,
      });
    const missing = await post({});
    expect(missing.status).toBe(403);
    expect(await missing.json()).toEqual({
      result: "error",
      msg: "CSRF error: CSRF token missing.",
      code: "CSRF_FAILED",
    });
    const wrong = await post({ "X-CSRFToken": "x" + csrf.slice(1) });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual({
      result: "error",
      msg: "CSRF error: CSRF token from the 'X-Csrftoken' HTTP header incorrect.",
      code: "CSRF_FAILED",
    });
    // Through the typed client (its answers checked against the spec) the 403 is declared too.
    await expectError(
      jar()
        .client("nope")
        .POST("/messages", { body: { type: "stream", to: "Denmark", topic: "web", content: "x" } }),
      401,
      "Not logged in: API authentication or user session required",
    );
    const sent = await expectSuccess(
      j.client(csrf).POST("/messages", {
        body: { type: "stream", to: "Denmark", topic: "web", content: "from the web" },
      }),
    );
    const stored = await server.db.message.findUnique({ where: { id: sent.id } });
    expect(stored).toMatchObject({ senderId: cred("hamlet").user_id, content: "from the web" });
    const badClient = j.client("y".repeat(43));
    await expectError(
      badClient.POST("/messages", {
        body: { type: "stream", to: "Denmark", topic: "web", content: "x" },
      }),
      403,
      "CSRF error: CSRF token from the 'X-Csrftoken' HTTP header incorrect.",
      { code: "CSRF_FAILED" },
    );
    // GET needs no token.
    expect((await j.fetch("/json/users/me")).status).toBe(200);
  });

  it("keeps each path to its own credentials: no session on /api/v1, no Basic on /json", async () => {
    const { jar: j } = await loggedIn("hamlet");
    const api = await j.fetch("/api/v1/users/me");
    expect(api.status).toBe(401);
    expect(api.headers.get("www-authenticate")).toBe('Basic realm="zulip"');
    const basic = await fetch(`${server.baseUrl}/json/users/me`, {
      headers: {
        Authorization:
          "Basic " +
          Buffer.from(`${cred("hamlet").email}:${cred("hamlet").api_key}`).toString("base64"),
      },
    });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toBe('Session realm="zulip"');
    expect(await basic.json()).toEqual({
      result: "error",
      msg: "Not logged in: API authentication or user session required",
      code: "UNAUTHORIZED",
    });
    // Public operations need nothing on either.
    expect((await fetch(`${server.baseUrl}/json/server_settings`)).status).toBe(200);
  });

  it("counts /json requests in the user's rate limit, as the API key's", async () => {
    const { jar: j } = await loggedIn("hamlet");
    const first = await j.fetch("/json/users/me");
    const second = await j.fetch("/json/users/me");
    expect(first.headers.get("x-ratelimit-limit")).toBe("200");
    expect(Number(second.headers.get("x-ratelimit-remaining"))).toBe(
      Number(first.headers.get("x-ratelimit-remaining")) - 1,
    );
    const api = await server.as("hamlet").GET("/users/me");
    expect(Number(api.response.headers.get("x-ratelimit-remaining"))).toBe(
      Number(second.headers.get("x-ratelimit-remaining")) - 1,
    );
  });

  it("registers and long-polls events with the session", async () => {
    const { jar: j, csrf } = await loggedIn("othello");
    const web = j.client(csrf);
    const { queue_id, last_event_id } = await expectSuccess(
      web.POST("/register", { body: { event_types: ["message"], apply_markdown: true } }),
    );
    const waiting = web.GET("/events", {
      params: { query: { queue_id: queue_id!, last_event_id: last_event_id } },
    });
    await new Promise((r) => setTimeout(r, 100));
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [cred("othello").user_id], content: "to the web app" },
      }),
    );
    const { events } = await expectSuccess(waiting);
    expect(events).toEqual([
      expect.objectContaining({
        type: "message",
        message: expect.objectContaining({ content: "<p>to the web app</p>" }),
      }),
    ]);
  });
});

describe("ending sessions", () => {
  it("logs out: the row goes, the cookie is cleared and refused after; another session of the user lives on", async () => {
    const first = await loggedIn("iago");
    const second = await loggedIn("iago");
    const key = first.jar.cookies.get("sessionid")!;
    // Without the token: refused, nothing deleted.
    const refused = await first.jar.fetch("/accounts/logout/", { method: "POST" });
    expect(refused.status).toBe(403);
    expect(await server.db.session.count({ where: { id: sessionIdOf(key) } })).toBe(1);
    const res = await first.jar.fetch("/accounts/logout/", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrfmiddlewaretoken: first.csrf }),
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login/");
    expect(first.jar.setCookies.at(-1)).toMatch(
      /^sessionid=; HttpOnly; SameSite=Lax; Path=\/; Max-Age=0/,
    );
    expect(await server.db.session.count({ where: { id: sessionIdOf(key) } })).toBe(0);
    // The same cookie, sent again, is refused.
    const stale = await fetch(`${server.baseUrl}/json/users/me`, {
      headers: { Cookie: `sessionid=${key}` },
    });
    expect(stale.status).toBe(401);
    expect(stale.headers.get("www-authenticate")).toBe('Session realm="zulip"');
    await expectSuccess(second.jar.client(second.csrf).GET("/users/me"));
    // The header form (a script) works too.
    const viaHeader = await second.jar.fetch("/accounts/logout/", {
      method: "POST",
      headers: { "X-CSRFToken": second.csrf },
    });
    expect(viaHeader.status).toBe(302);
    expect((await second.jar.fetch("/json/users/me")).status).toBe(401);
  });

  it("refuses an expired session, and a login prunes the user's expired ones", async () => {
    const { jar: j, csrf } = await loggedIn("cordelia");
    const id = sessionIdOf(j.cookies.get("sessionid")!);
    await server.db.session.update({
      where: { id },
      data: { expires: new Date(Date.now() - 1000) },
    });
    await expectError(
      j.client(csrf).GET("/users/me"),
      401,
      "Not logged in: API authentication or user session required",
    );
    expect((await j.fetch("/")).status).toBe(302);
    await loggedIn("cordelia");
    expect(await server.db.session.count({ where: { id } })).toBe(0);
  });

  it("refuses a deactivated user's session", async () => {
    const { jar: j, csrf } = await loggedIn("aaron");
    await expectSuccess(
      server
        .as("iago")
        .DELETE("/users/{user_id}", { params: { path: { user_id: cred("aaron").user_id } } }),
    );
    await expectError(j.client(csrf).GET("/users/me"), 401, "Account is deactivated");
    expect((await j.fetch("/")).status).toBe(302);
  });
});

describe("failed logins (authenticate_by_username: 5 in 30 minutes)", () => {
  it("limits the form and POST /fetch_api_key together", async () => {
    const email = cred("prospero").email;
    for (let i = 0; i < 3; i++) expect((await jar().login(email, "wrong")).status).toBe(200);
    for (let i = 0; i < 2; i++)
      await expectError(
        server.client().POST("/fetch_api_key", { body: { username: email, password: "wrong" } }),
        401,
        "Your username or password is incorrect",
      );
    // The sixth attempt, even with the right password, on either.
    const page = await jar().login(email, cred("prospero").password!);
    expect(page.status).toBe(429);
    const seconds = Number(page.headers.get("retry-after"));
    expect(seconds).toBeGreaterThan(0);
    expect(await page.text()).toContain(`Try again in ${seconds} seconds`);
    await expectError(
      server.client().POST("/fetch_api_key", {
        body: { username: email, password: cred("prospero").password! },
      }),
      429,
      "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers",
    );
  });
});
