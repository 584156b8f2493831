/**
 * Headless Chromium for the web app's tests: Debian's `chromium` driven by puppeteer-core (skipped,
 * saying why, where it is not installed), a browser per test file, a context per user, logging in
 * through the real login page, and finding things as a person does: by role and accessible name.
 */
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import puppeteer, {
  type Browser,
  type BrowserContext,
  type ElementHandle,
  type Page,
} from "puppeteer-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const chromiumInstalled = existsSync(CHROMIUM);
export const SCREENSHOTS = fileURLToPath(new URL("../../.tmp/screenshots/", import.meta.url));

export function warnIfNoChromium(file: string) {
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

/** A fresh context (its own cookies) with one page, logged in through `/login/`. */
export async function loggedInPage(
  browser: Browser,
  baseUrl: string,
  email: string,
  password: string,
  hash = "",
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await logIn(page, baseUrl, email, password, hash);
  return { context, page };
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
  await page.waitForSelector("::-p-aria([role='feed'])");
}

/** The element of a role with exactly this accessible name (waits for it). */
export async function byRole(
  page: Page,
  role: string,
  name: string,
  timeout = 5000,
): Promise<ElementHandle> {
  const found = await page.waitForSelector(
    `::-p-aria([name=${JSON.stringify(name)}][role=${JSON.stringify(role)}])`,
    {
      timeout,
    },
  );
  if (!found) throw new Error(`No ${role} named ${name}`);
  return found;
}

/** Waits until an element of this role and name exists; resolves with the milliseconds waited. */
export async function waitForRole(
  page: Page,
  role: string,
  name: string,
  timeout = 5000,
): Promise<number> {
  const start = performance.now();
  await byRole(page, role, name, timeout);
  return performance.now() - start;
}

/** Waits until no element of this role and name exists. */
export async function waitForNoRole(page: Page, role: string, name: string, timeout = 5000) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const found = await page.$(
      `::-p-aria([name=${JSON.stringify(name)}][role=${JSON.stringify(role)}])`,
    );
    if (!found) return;
    await found.dispose();
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`A ${role} named ${name} is still there`);
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

/**
 * Waits until a page expression (JavaScript text, run in the page, where the DOM is) is true.
 * Text, not a function: these tests are compiled without the DOM's types.
 */
export async function waitInPage(page: Page, expression: string, timeout = 5000) {
  await page.waitForFunction(expression, { timeout });
}

/** Waits until a message of the feed contains this text; resolves with the milliseconds waited. */
export async function waitForFeedText(page: Page, text: string, timeout = 5000): Promise<number> {
  const start = performance.now();
  await waitInPage(
    page,
    `[...document.querySelectorAll("[role=feed] article")].some((a) => a.textContent.includes(${JSON.stringify(text)}))`,
    timeout,
  );
  return performance.now() - start;
}

/** The text of the typing notice (a polite live region). */
export async function typingNotice(page: Page): Promise<string> {
  return page.$eval("[aria-live=polite]", (e) => e.textContent ?? "");
}
