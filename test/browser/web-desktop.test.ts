/**
 * Zulip's desktop app (Electron) adding this server: it asks `/api/v1/server_settings` (GET and
 * HEAD, without credentials) for the organization's URL, name and icon, fetches the icon, then
 * loads the organization's URL in its window, where the web app must log in and run. Reproduced
 * in headless Chromium with the desktop app's user agent, the organization's host
 * (`zulip.testserver`) resolved to the test server, so that everything happens under its origin.
 * Skipped, saying why, when Chromium is not installed.
 */
import { request } from "node:http";
import { expect, it } from "vitest";
import { createZulipClient } from "../../client/src/index.ts";
import { byRole } from "../helpers/browser.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";

const USER_AGENT =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) ZulipElectron/5.12.4 Chrome/130.0.6723.191 Electron/33.4.11 Safari/537.36";

/** A GET of `url` sent to the test server with `url`'s host in the Host header. */
function getOnHost(
  baseUrl: string,
  url: string,
): Promise<{ status: number; type: string; body: Buffer }> {
  const target = new URL(url);
  const local = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: local.hostname,
        port: local.port,
        path: target.pathname + target.search,
        headers: { Host: target.host, "User-Agent": USER_AGENT },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            type: String(res.headers["content-type"] ?? ""),
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describePages("Zulip's desktop app adding this server", () => {
  // The organization's host reaches the test server.
  const s = useBrowserSession({
    users: [],
    launchArgs: (baseUrl) => [
      `--host-resolver-rules=MAP zulip.testserver:80 127.0.0.1:${new URL(baseUrl).port}`,
    ],
  });
  const server = s.server;

  it("finds the organization through server_settings, shows its icon, and logs in at its URL", async () => {
    const anonymous = createZulipClient({
      baseUrl: server.baseUrl,
      userAgent: USER_AGENT,
      middleware: [specCheckMiddleware],
    });
    const settings = await expectSuccess(anonymous.GET("/server_settings"));
    expect(settings.realm_uri).toBe("http://zulip.testserver");
    expect(settings.realm_uri.endsWith("/")).toBe(false);
    expect(settings.realm_url).toBe(settings.realm_uri);
    expect(settings.realm_name).toBeTruthy();
    expect(settings.realm_icon).toBe("/static/images/realm-icon.svg");
    // The desktop app first checks the server with HEAD (no body to validate: the status and type).
    const head = await fetch(`${server.baseUrl}/api/v1/server_settings`, {
      method: "HEAD",
      headers: { "User-Agent": USER_AGENT },
    });
    // Soft: a failure here is reported, and the rest of the desktop app's steps still run.
    expect.soft(head.status, "HEAD /api/v1/server_settings").toBe(200);
    expect.soft(head.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await head.text()).toBe("");

    const icon = await getOnHost(server.baseUrl, settings.realm_uri + settings.realm_icon);
    expect(icon.status).toBe(200);
    expect(icon.type).toMatch(/^image\/svg\+xml/);
    expect(icon.body.toString("utf8")).toMatch(/<svg[\s>]/);

    const page = await s.browser.newPage();
    await page.setUserAgent(USER_AGENT);
    const requested: { url: string; type: string }[] = [];
    page.on("request", (r) => requested.push({ url: r.url(), type: r.resourceType() }));
    const opened = await page.goto(settings.realm_uri);
    expect(opened?.status()).toBe(200);
    const atLogin = new URL(page.url());
    expect(atLogin.origin).toBe("http://zulip.testserver");
    expect(atLogin.pathname).toBe("/login/");
    // The icon the app showed loads in the page too.
    const iconInPage = await page.evaluate(async (src) => {
      const r = await fetch(src);
      return { ok: r.ok, type: r.headers.get("content-type") };
    }, settings.realm_icon);
    expect(iconInPage).toMatchObject({ ok: true, type: expect.stringMatching(/^image\/svg/) });

    await (await byRole(page, "textbox", "Email")).type("iago@zulip.com");
    await (await byRole(page, "textbox", "Password")).type(server.creds.users.iago!.password!);
    await Promise.all([page.waitForNavigation(), (await byRole(page, "button", "Log in")).click()]);
    // An empty fragment opens the user's home view: the inbox.
    await byRole(page, "region", "Inbox", 10_000);
    expect(new URL(page.url()).origin).toBe("http://zulip.testserver");
    expect(new URL(page.url()).pathname).toBe("/");
    // The session cookie is the organization's (HttpOnly: not readable by the page).
    const cookies = await page.browserContext().cookies();
    expect(cookies.find((c) => c.name === "sessionid")).toMatchObject({
      domain: "zulip.testserver",
      httpOnly: true,
    });
    expect(await page.evaluate(() => document.cookie)).not.toContain("sessionid");
    // The title carries the organization's name, as the desktop app's window and badge read it.
    expect(await page.title()).toContain(settings.realm_name);
    await byRole(page, "button", "Log out");
    // The page, its code and every API call stayed under the organization's origin; only
    // images may come from elsewhere (users' Gravatar pictures, as Zulip shows them).
    expect(requested.length).toBeGreaterThan(3);
    const elsewhere = requested.filter((r) => !r.url.startsWith("http://zulip.testserver/"));
    expect(elsewhere.filter((r) => r.type !== "image")).toEqual([]);
    if (elsewhere.length)
      console.log(
        `images from other origins: ${[...new Set(elsewhere.map((r) => new URL(r.url).origin))].join(", ")}`,
      );
  });
});
