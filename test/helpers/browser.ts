/**
 * Headless Chromium for the web app's tests: Debian's `chromium` driven by puppeteer-core (skipped,
 * saying why, where it is not installed), a browser per test file, a context per user, logging in
 * through the real login page, and finding things as a person does: by role and accessible name.
 */
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import puppeteer, { type Browser, type ElementHandle, type Page } from "puppeteer-core";
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { specCheckMiddleware } from "./spec-check.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const chromiumInstalled = existsSync(CHROMIUM);
/**
 * The web app's page tests run once, in the embedded database's pass (`.ci/run` runs the suite
 * twice): they test the page, and the server behind it is the API that the API tests cover on
 * both databases. What needs PostgreSQL (several processes) runs there. `BROWSER_TESTS=always`
 * runs them all on PostgreSQL too.
 */
export const pageTestsHere =
  chromiumInstalled && (!process.env.DATABASE_URL || process.env.BROWSER_TESTS === "always");
export const SCREENSHOTS = fileURLToPath(new URL("../../.tmp/screenshots/", import.meta.url));

export function warnIfNoChromium(file: string) {
  if (chromiumInstalled && !pageTestsHere)
    console.warn(
      `${file}: the web app's page tests run in the embedded database's pass (BROWSER_TESTS=always runs them here)`,
    );
  if (!chromiumInstalled)
    console.warn(
      `${file} skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
    );
}

export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container has no user namespace for Chromium's sandbox.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", ...extraArgs],
    defaultViewport: { width: 1280, height: 800 },
  });
}

export async function logIn(
  page: Page,
  baseUrl: string,
  email: string,
  password: string,
  hash = "",
) {
  await page.goto(`${baseUrl}/${hash}`);
  if (!page.url().includes("/login/"))
    throw new Error(`Expected the login page, got ${page.url()}`);
  await (await byRole(page, "textbox", "Email")).type(email);
  await (await byRole(page, "textbox", "Password")).type(password);
  await Promise.all([page.waitForNavigation(), (await byRole(page, "button", "Log in")).click()]);
  await byRole(page, "button", "Log out");
  // The login form does not carry the fragment; an empty one opens the user's home view (the
  // inbox by default): tests start from the view they name, All messages unless told.
  const want = hash || "#feed";
  if (new URL(page.url()).hash !== want) await page.evaluate((h) => void (location.hash = h), want);
  if (!/^#(inbox|recent|channels|drafts|scheduled|settings|organization|user)\b/.test(want))
    await page.waitForSelector("::-p-aria([role='feed'])");
}

/** The puppeteer selector of the elements of a role with exactly this accessible name. */
function ariaSelector(role: string, name: string): string {
  return `::-p-aria([name=${JSON.stringify(name)}][role=${JSON.stringify(role)}])`;
}

/** The element of a role with exactly this accessible name (waits for it). */
export async function byRole(
  page: Page,
  role: string,
  name: string,
  timeout = 5000,
): Promise<ElementHandle> {
  return inside(page, role, name, timeout);
}

/**
 * The element of a role with exactly this accessible name inside `scope` (a row or a region found
 * by role, or the whole page), waiting for it.
 */
export async function inside(
  scope: Page | ElementHandle,
  role: string,
  name: string,
  timeout = 5000,
): Promise<ElementHandle> {
  const found = await scope.waitForSelector(ariaSelector(role, name), { timeout });
  if (!found) throw new Error(`No ${role} named ${name}`);
  return found;
}

/** Waits until no element of this role and name exists (in `scope`: the page, or a region). */
export async function waitForNoRole(
  scope: Page | ElementHandle,
  role: string,
  name: string,
  timeout = 5000,
) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const found = await scope.$(ariaSelector(role, name));
    if (!found) return;
    await found.dispose();
    await sleep(50);
  }
  throw new Error(`A ${role} named ${name} is still there`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 50 ms until it returns true; fails after `timeout`, naming `what`. */
export async function eventually(check: () => Promise<boolean>, what: string, timeout = 5000) {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(50);
  }
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = `${SCREENSHOTS}${name}.png`;
  await page.screenshot({ path });
  return path;
}

/** How many messages the feed has in the DOM. */
export async function articleCount(page: Page): Promise<number> {
  return page.$$eval("[role=feed] article", (els) => els.length);
}

/** The feed's scrolling box (the nearest ancestor of the feed that scrolls). */
async function feedScroller(page: Page): Promise<ElementHandle<Element>> {
  const feed = await page.waitForSelector("::-p-aria([role='feed'])");
  const box = await feed!.evaluateHandle((el) => {
    for (let e: Element | null = el; e; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (/(auto|scroll)/.test(style.overflowY) && e.scrollHeight > e.clientHeight) return e;
    }
    return el.parentElement ?? el;
  });
  return box;
}

/** Scrolls the feed to its top or bottom; resolves with whether the box can scroll at all. */
export async function scrollFeed(page: Page, to: "top" | "bottom"): Promise<boolean> {
  const box = await feedScroller(page);
  return box.evaluate((e, where) => {
    e.scrollTop = where === "top" ? 0 : e.scrollHeight;
    e.dispatchEvent(new Event("scroll"));
    return e.scrollHeight > e.clientHeight;
  }, to);
}

/** The accessible name of the feed (the view's title). */
export async function feedName(page: Page): Promise<string> {
  return page.$eval("[role=feed]", (e) => e.getAttribute("aria-label") ?? "");
}

/** Waits for the feed named `name`, loaded (not busy). */
export async function waitForFeed(page: Page, name: string, timeout = 5000) {
  await byRole(page, "feed", name, timeout);
  await page.waitForFunction(
    (n) => {
      const f = document.querySelector("[role=feed]");
      return f?.getAttribute("aria-label") === n && f.getAttribute("aria-busy") !== "true";
    },
    { timeout },
    name,
  );
}

/** The article (message row) whose text contains `text`. */
export async function articleWith(
  page: Page,
  text: string,
  timeout = 5000,
): Promise<ElementHandle<Element>> {
  const handle = await page.waitForFunction(
    (t) => [...document.querySelectorAll("article")].find((a) => a.textContent?.includes(t)),
    { timeout },
    text,
  );
  return handle as ElementHandle<Element>;
}

/** The value of the page's `sessionid` cookie. */
export async function sessionCookie(page: Page): Promise<string> {
  const cookies = await page.browserContext().cookies();
  const c = cookies.find((x) => x.name === "sessionid");
  if (!c) throw new Error(`No sessionid cookie (have: ${cookies.map((x) => x.name).join(", ")})`);
  return c.value;
}

/**
 * A typed client that calls `/json/*` with a session cookie, as the web app does (responses
 * validated against the spec like every test client's); for reads, which need no CSRF token.
 */
export function cookieClient(baseUrl: string, sessionid: string): ZulipClient {
  return createZulipClient({
    baseUrl,
    middleware: [specCheckMiddleware],
    fetch: async (input, init) => {
      const request = input instanceof Request ? input : new Request(input, init);
      const headers = new Headers(request.headers);
      headers.set("Cookie", `sessionid=${sessionid}`);
      const body = ["GET", "HEAD"].includes(request.method) ? undefined : await request.text();
      return fetch(request.url.replace("/api/v1/", "/json/"), {
        method: request.method,
        headers,
        body,
        redirect: "manual",
      });
    },
  });
}

/**
 * Starts watching the page for a message row containing `text`; the promise it returns resolves
 * with the wall-clock time (Date.now(), in the page) at which that row first appeared, as the
 * DOM changed, without the test's polling in the measure.
 */
export async function whenRowAppears(
  page: Page,
  text: string,
  timeout = 5000,
): Promise<() => Promise<number>> {
  const key = `__seen_${Math.random().toString(36).slice(2)}`;
  await page.evaluate(
    (t, k) => {
      const w = window as unknown as Record<string, number>;
      const check = () => {
        if (w[k]) return;
        if ([...document.querySelectorAll("article")].some((a) => a.textContent?.includes(t)))
          w[k] = Date.now();
      };
      new MutationObserver(check).observe(document.body, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    },
    text,
    key,
  );
  return async () => {
    const handle = await page.waitForFunction(
      (k) => (window as unknown as Record<string, number>)[k],
      { timeout },
      key,
    );
    return (await handle.jsonValue()) as number;
  };
}
