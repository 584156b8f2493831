/**
 * The web app over time, in headless Chromium: a server restart mid-session (the page shows the
 * connection alert, registers a new queue by itself when its old one is gone, and shows what was
 * sent meanwhile without a reload; sending from it still works), a long topic (1,200 messages)
 * scrolled through to its beginning and back with never more than 400 rows in the DOM, and
 * logging out (the cookie is refused at once; on PostgreSQL, across two server processes).
 * Skipped, saying why, when Chromium is not installed.
 */
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  articleCount,
  articleWith,
  byRole,
  chromiumInstalled,
  cookieClient,
  launchBrowser,
  logIn,
  scrollFeed,
  sessionCookie,
  waitForFeed,
  waitForNoRole,
} from "../helpers/browser.ts";
import { bulkChannelMessages } from "../helpers/bulk-messages.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { processCluster, type ProcessCluster } from "../helpers/processes.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

/** The most message rows the feed may hold in the DOM (its window is 250, plus a shift). */
const DOM_BUDGET = 400;
const LONG = 1200;

/** The numbers of the "Long history N" messages in the DOM, in order. */
async function shownNumbers(page: Page): Promise<number[]> {
  return page.$$eval("[role=feed] article", (rows) =>
    rows
      .map((r) => /Long history (\d+)/.exec(r.textContent ?? "")?.[1])
      .filter((x) => x !== undefined)
      .map(Number),
  );
}

describePages("the web app over time", () => {
  const s = useBrowserSession({ users: ["othello"] });
  const server = s.server;
  let page: Page;
  let verona: number;

  beforeAll(async () => {
    verona = server.creds.channels.Verona!.stream_id;
    page = s.page("othello");
    await waitForFeed(page, "All messages");
  });

  it("survives a server restart that loses its event queue: the alert, then what was sent meanwhile, without a reload", async () => {
    const othelloId = server.creds.users.othello!.user_id;
    const queues = await server.db.eventQueue.findMany({ where: { userProfileId: othelloId } });
    expect(queues).toHaveLength(1);
    // Marks the document: a reload would lose it.
    await page.evaluate(
      () => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true),
    );

    // Down for 4 s, then a new app and event bus on the same port and database.
    const restarted = server.restart(4000);
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("[role=alert]")].some((e) =>
          e.textContent?.startsWith("Unable to connect to the server."),
        ),
      { timeout: 8000 },
    );
    await byRole(page, "button", "Try now");
    // The restarted server has lost the page's queue (as Zulip's Tornado loses its queues), and
    // messages are sent before the page reaches it again (the page is kept offline meanwhile).
    await page.setOfflineMode(true);
    await server.db.eventQueue.deleteMany({ where: { userProfileId: othelloId } });
    await restarted;
    await expectSuccess(
      server.as("iago").POST("/messages", {
        body: {
          type: "stream",
          to: verona,
          topic: "while away",
          content: "Sent while you were away",
        },
      }),
    );
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [othelloId], content: "A DM sent while you were away" },
      }),
    );
    const back = performance.now();
    await page.setOfflineMode(false);
    await articleWith(page, "Sent while you were away", 20_000);
    await articleWith(page, "A DM sent while you were away", 5000);
    console.log(
      `restart: back online to the missed messages shown: ${(performance.now() - back).toFixed(0)} ms`,
    );
    await byRole(page, "link", "King Hamlet, 1 unread").catch(async () => {
      // Shown on screen at the bottom of All messages, it may be read already.
      await byRole(page, "link", "King Hamlet");
    });
    await page.waitForFunction(
      () =>
        ![...document.querySelectorAll("[role=alert]")].some((e) =>
          e.textContent?.startsWith("Unable to connect"),
        ),
      { timeout: 10_000 },
    );
    expect(
      await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument),
    ).toBe(true);
    // A new queue, registered by the page itself.
    const after = await server.db.eventQueue.findMany({ where: { userProfileId: othelloId } });
    expect(after).toHaveLength(1);
    expect(after[0]!.id).not.toBe(queues[0]!.id);

    // Live again: a message sent now arrives by event, and the page's own send works.
    await expectSuccess(
      server.as("iago").POST("/messages", {
        body: { type: "stream", to: verona, topic: "while away", content: "And now live again" },
      }),
    );
    await articleWith(page, "And now live again", 3000);
    await (await byRole(page, "combobox", "Channel")).select(String(verona));
    const topic = await byRole(page, "textbox", "Topic");
    await topic.click({ count: 3 });
    await topic.type("while away");
    await (await byRole(page, "textbox", "Message")).type("Back, and sending from the page.");
    await page.keyboard.press("Enter");
    await articleWith(page, "Back, and sending from the page.");
    // The echo gave way to the real message (the article first shown is the local echo, there
    // before the server has stored the message).
    await page.waitForFunction(
      () =>
        ![...document.querySelectorAll("article")].some((a) => a.textContent?.includes("Sending…")),
      { timeout: 5000 },
    );
    const { messages } = await expectSuccess(
      server.as("iago").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 1,
            num_after: 0,
            narrow: [{ operator: "channel", operand: verona }],
          },
        },
      }),
    );
    expect(messages[0]).toMatchObject({
      sender_id: othelloId,
      subject: "while away",
      content: "<p>Back, and sending from the page.</p>",
    });
  }, 60_000);

  it(`keeps at most ${DOM_BUDGET} rows in the DOM through a topic of ${LONG} messages, loading older ones up to the beginning and back`, async () => {
    const othello = server.as("othello");
    const ids = await bulkChannelMessages(server, {
      sender: "iago",
      streamId: verona,
      topic: "long history",
      count: LONG,
      prefix: "Long history",
      beforeCopy: async (id) => {
        await expectSuccess(
          othello.POST("/messages/flags", { body: { messages: [id], op: "add", flag: "read" } }),
        );
      },
    });
    expect(ids).toHaveLength(LONG);
    const started = performance.now();
    await page.goto(`${server.baseUrl}/#narrow/channel/${verona}-Verona/topic/long.20history`);
    await waitForFeed(page, "#Verona > long history");
    await page.waitForFunction(() => document.querySelectorAll("[role=feed] article").length > 0);
    let shown = await shownNumbers(page);
    expect(shown.at(-1)).toBe(LONG - 1);
    expect(await articleCount(page)).toBeLessThanOrEqual(DOM_BUDGET);

    // Up to the beginning.
    let oldest = shown[0]!;
    let steps = 0;
    const counts: number[] = [];
    while (!(await page.$("::-p-text(This is the beginning of the conversation.)"))) {
      steps += 1;
      expect(steps, "steps to the beginning").toBeLessThan(60);
      await scrollFeed(page, "top");
      await page
        .waitForFunction(
          (before) => {
            const first = [...document.querySelectorAll("[role=feed] article")][0];
            const n = /Long history (\d+)/.exec(first?.textContent ?? "")?.[1];
            return n !== undefined && Number(n) < before;
          },
          { timeout: 5000 },
          oldest,
        )
        .catch(() => undefined);
      const count = await articleCount(page);
      counts.push(count);
      expect(count).toBeLessThanOrEqual(DOM_BUDGET);
      shown = await shownNumbers(page);
      // Contiguous: nothing skipped.
      expect(shown).toEqual(shown.map((_, i) => shown[0]! + i));
      if (shown[0]! < oldest) oldest = shown[0]!;
      else if (!(await page.$("::-p-text(This is the beginning of the conversation.)")))
        throw new Error(`Scrolling to the top loaded nothing older than ${oldest}`);
    }
    expect(shown[0]).toBe(0);
    const upSteps = steps;

    // And back down to the newest.
    let newest = shown.at(-1)!;
    while (newest < LONG - 1) {
      steps += 1;
      expect(steps, "steps back down").toBeLessThan(120);
      await scrollFeed(page, "bottom");
      await page
        .waitForFunction(
          (before) => {
            const rows = [...document.querySelectorAll("[role=feed] article")];
            const n = /Long history (\d+)/.exec(rows.at(-1)?.textContent ?? "")?.[1];
            return n !== undefined && Number(n) > before;
          },
          { timeout: 5000 },
          newest,
        )
        .catch(() => undefined);
      const count = await articleCount(page);
      counts.push(count);
      expect(count).toBeLessThanOrEqual(DOM_BUDGET);
      shown = await shownNumbers(page);
      expect(shown).toEqual(shown.map((_, i) => shown[0]! + i));
      if (shown.at(-1)! <= newest) throw new Error(`Scrolling down showed nothing after ${newest}`);
      newest = shown.at(-1)!;
    }
    const metrics = await page.metrics();
    console.log(
      `long topic: ${upSteps} scrolls up to the beginning, ${steps - upSteps} back down, ` +
        `${(performance.now() - started).toFixed(0)} ms; rows in the DOM at most ${Math.max(...counts)}; ` +
        `JS heap used ${((metrics.JSHeapUsedSize ?? 0) / 1048576).toFixed(1)} MiB`,
    );
  }, 120_000);

  it("logs out: the button lands on /login/ and the old cookie is refused at once", async () => {
    await page.goto(`${server.baseUrl}/#feed`);
    await waitForFeed(page, "All messages");
    const cookie = await sessionCookie(page);
    const before = await expectSuccess(cookieClient(server.baseUrl, cookie).GET("/users/me"));
    expect(before.email).toBe(server.creds.users.othello!.email);

    await Promise.all([
      page.waitForNavigation(),
      (await byRole(page, "button", "Log out")).click(),
    ]);
    expect(new URL(page.url()).pathname).toBe("/login/");
    await byRole(page, "button", "Log in");
    const { response } = await cookieClient(server.baseUrl, cookie).GET("/users/me");
    expect(response.status).toBe(401);
    // And the app page itself sends the browser back to the login page.
    await page.goto(`${server.baseUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/login/");
    await waitForNoRole(page, "feed", "All messages", 100);
  });
});

describe.skipIf(!chromiumInstalled || !process.env.DATABASE_URL)(
  "logging out across two server processes on one PostgreSQL database",
  () => {
    let cluster: ProcessCluster;
    let browser: Browser;
    beforeAll(async () => {
      cluster = await processCluster();
      browser = await launchBrowser();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await cluster?.close();
    });

    it("a session logged out through process B is refused by process A at once", async () => {
      const [a, b] = await Promise.all([cluster.start(), cluster.start()]);
      const context = await browser.createBrowserContext();
      const pageA = await context.newPage();
      await logIn(pageA, a.baseUrl, "hamlet@zulip.com", cluster.creds.users.hamlet!.password!);
      await waitForFeed(pageA, "All messages");
      const cookie = await sessionCookie(pageA);
      const me = await expectSuccess(cookieClient(a.baseUrl, cookie).GET("/users/me"));
      expect(me.email).toBe("hamlet@zulip.com");
      // The same session through B (cookies are per host, not per port): B's page, B's Log out.
      await expectSuccess(cookieClient(b.baseUrl, cookie).GET("/users/me"));
      const pageB = await context.newPage();
      await pageB.goto(`${b.baseUrl}/#feed`);
      await waitForFeed(pageB, "All messages");
      await Promise.all([
        pageB.waitForNavigation(),
        (await byRole(pageB, "button", "Log out")).click(),
      ]);
      expect(new URL(pageB.url()).pathname).toBe("/login/");
      expect((await cookieClient(a.baseUrl, cookie).GET("/users/me")).response.status).toBe(401);
      expect((await cookieClient(b.baseUrl, cookie).GET("/users/me")).response.status).toBe(401);
      await Promise.all([a.stop(), b.stop()]);
    }, 90_000);
  },
);
