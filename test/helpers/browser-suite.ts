/**
 * The one set-up of a browser test file: the test server and headless Chromium started together,
 * a browser context and a page per user of the development organization, each already logged in
 * (a session cookie minted through the real login form over HTTP, set on the context: no login
 * page to load and type into) and on the view asked for; everything closed after the file, and
 * the screenshots taken listed.
 *
 *   const s = useBrowserSession({ users: ["hamlet", "othello"], setup: async (server) => ... });
 *   const server = s.server;
 *   ... s.page("hamlet"), s.shots.push(await screenshot(...)), await s.logInAs("iago") ...
 *
 * Tests of the login form itself use `logIn` (test/helpers/browser.ts). A web-app page test file
 * wraps its tests in `describePages` (below).
 */
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { Config } from "../../server/config.ts";
import { byRole, CHROMIUM, launchBrowser, pageTestsHere, warnIfNoChromium } from "./browser.ts";
import { CookieJar } from "./browser-session.ts";
import { startTestServer, type TestServer, type TestServerOptions } from "./server.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface BrowserSessionOptions<U extends string> {
  /** Short names of the development organization's users, each logged in in a context of his own. */
  users: readonly U[];
  /** The test server's settings (as useTestServer's; a function is called when the server starts). */
  server?: Partial<Config> | (() => Partial<Config>);
  serverOptions?: TestServerOptions;
  /** Runs once the server is up, before any page loads (seeding what the pages' register must see). */
  setup?: (server: TestServer) => Promise<void>;
  /** The fragment each page opens on: `#feed` (All messages, loaded) unless told. */
  hash?: string | Partial<Record<U, string>>;
  /**
   * Pages that bypass the app's Content-Security-Policy, which axe-core needs (it is injected as an
   * inline script): all of them with `true`.
   */
  bypassCSP?: boolean | readonly U[];
  /**
   * Runs on each user's page before it loads the app (stubs by evaluateOnNewDocument, the context's
   * permissions, timeouts).
   */
  prepare?: (page: Page, user: U) => Promise<void> | void;
  /** Extra Chromium switches (given the server's base URL, e.g. for host-resolver rules). */
  launchArgs?: (baseUrl: string) => string[];
}

export interface BrowserSession<U extends string> {
  /** The test server (usable inside tests and hooks). */
  readonly server: TestServer;
  readonly browser: Browser;
  /** The page of a user of `users`, logged in and on its view. */
  page(user: U): Page;
  /** Screenshot paths to list after the file. */
  readonly shots: string[];
  /**
   * Another page logged in as `user` (any user of the organization): in a new context unless one
   * is given, on `hash` (`#feed` unless told).
   */
  logInAs(
    user: string,
    options?: {
      hash?: string;
      context?: BrowserContext;
      bypassCSP?: boolean;
      prepare?: (page: Page) => Promise<void> | void;
    },
  ): Promise<Page>;
}

/**
 * The describe of a web-app page test file: skipped where its pages do not run (no Chromium, or
 * the PostgreSQL pass), saying why; its title names the Chromium.
 */
export function describePages(title: string, tests: () => void) {
  // The file being collected, named from the repository's root as a person would type it.
  const file = expect.getState().testPath;
  warnIfNoChromium(file ? relative(ROOT, file) : "a browser test file");
  describe.skipIf(!pageTestsHere)(`${title} (${CHROMIUM})`, tests);
}

/** The cookies a login through `/accounts/login/` sets, minted over HTTP. */
export async function sessionCookies(
  baseUrl: string,
  email: string,
  password: string,
): Promise<Map<string, string>> {
  const jar = new CookieJar(baseUrl);
  const answer = await jar.login(email, password);
  if (answer.status !== 302 || !jar.cookies.has("sessionid"))
    throw new Error(`Login of ${email} failed: ${answer.status} ${await answer.text()}`);
  return jar.cookies;
}

/** Puts `page` on the app at `hash`, and waits for it as logIn does (the feed loaded, or the page). */
export async function openApp(page: Page, baseUrl: string, hash = "#feed") {
  await page.goto(`${baseUrl}/${hash}`);
  if (page.url().includes("/login/")) throw new Error(`Not logged in: ${page.url()}`);
  await byRole(page, "button", "Log out", 15_000);
  if (!/^#(inbox|recent|channels|drafts|scheduled|settings|organization|user)\b/.test(hash))
    await page.waitForSelector("::-p-aria([role='feed'])", { timeout: 15_000 });
}

export function useBrowserSession<U extends string>(
  options: BrowserSessionOptions<U>,
): BrowserSession<U> {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  const pages = new Map<string, Page>();
  const shots: string[] = [];

  const started = (): TestServer => {
    if (!server)
      throw new Error("The test server is not started yet (use it inside tests or hooks)");
    return server;
  };
  const serverProxy = new Proxy({} as TestServer, {
    get(_target, property) {
      // eslint-disable-next-line @typescript-eslint/unbound-method -- the started server's members as they are; its functions use no `this`
      return started()[property as keyof TestServer];
    },
  });

  const logInAs: BrowserSession<U>["logInAs"] = async (user, opts = {}) => {
    const s = started();
    const cred = s.creds.users[user];
    if (!cred?.password) throw new Error(`No user '${user}' with a password`);
    const context = opts.context ?? (await browser!.createBrowserContext());
    const [cookies, page] = await Promise.all([
      sessionCookies(s.baseUrl, cred.email, cred.password),
      context.newPage(),
    ]);
    const domain = new URL(s.baseUrl).hostname;
    await context.setCookie(
      ...[...cookies].map(([name, value]) => ({
        name,
        value,
        domain,
        path: "/",
        httpOnly: true,
        sameSite: "Lax" as const,
      })),
    );
    page.on("pageerror", (e) => console.error(`page error (${user}): ${String(e)}`));
    // A loaded machine (the suite's files share two CPUs) can take long to load the app.
    page.setDefaultNavigationTimeout(60_000);
    if (opts.bypassCSP) await page.setBypassCSP(true);
    await opts.prepare?.(page);
    await openApp(page, s.baseUrl, opts.hash ?? "#feed");
    return page;
  };

  beforeAll(async () => {
    const t0 = performance.now();
    const lap: string[] = [];
    const mark = (what: string) => lap.push(`${what} ${Math.round(performance.now() - t0)} ms`);
    // The server (a copy of the populated database) and Chromium start at the same time.
    const [srv, b] = await Promise.all([
      startTestServer(
        typeof options.server === "function" ? options.server() : options.server,
        options.serverOptions,
      ),
      options.launchArgs ? undefined : launchBrowser(),
    ]);
    server = srv;
    browser = b ?? (await launchBrowser(options.launchArgs!(srv.baseUrl)));
    mark("server and browser");
    await options.setup?.(srv);
    mark("setup");
    const hashOf = (u: U) =>
      typeof options.hash === "string" ? options.hash : (options.hash?.[u] ?? "#feed");
    const bypass = (u: U) =>
      options.bypassCSP === true ||
      (Array.isArray(options.bypassCSP) && options.bypassCSP.includes(u));
    await Promise.all(
      options.users.map(async (u) =>
        pages.set(
          u,
          await logInAs(u, {
            hash: hashOf(u),
            bypassCSP: bypass(u),
            prepare: options.prepare && ((p) => options.prepare!(p, u)),
          }),
        ),
      ),
    );
    mark("pages");
    // BROWSER_TIMING=1 prints where the set-up's time went.
    if (process.env.BROWSER_TIMING) console.log(`browser session set-up: ${lap.join(", ")}`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (shots.length) console.log(`Screenshots:\n  ${shots.join("\n  ")}`);
  });

  return {
    server: serverProxy,
    get browser() {
      if (!browser)
        throw new Error("The browser is not launched yet (use it inside tests or hooks)");
      return browser;
    },
    page(user: U) {
      const p = pages.get(user);
      if (!p) throw new Error(`No page for ${user} (not in users, or not logged in yet)`);
      return p;
    },
    shots,
    logInAs,
  };
}
