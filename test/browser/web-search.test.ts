/**
 * Search with Zulip's operators, the keyboard-shortcut help and shortcuts, and small screens, in
 * headless Chromium. Othello's messages (sent through the API) are found by King Hamlet's
 * search: the typeahead offers people for `sender:`, `channel:Verona word` narrows to exactly
 * what the server's search answers, the matches are highlighted (<mark>), the `#narrow/...`
 * fragment reloads to the same results, and `-topic:` leaves a topic out. `?` lists the
 * shortcuts. On a phone-sized window (375×740, Othello) nothing scrolls sideways and the sidebars
 * open from the top bar. axe-core on the typeahead and the help dialog; screenshots in both themes.
 */
import type { Page } from "puppeteer-core";
import { beforeAll, expect, it } from "vitest";
import { seriousAxeViolations as axeSerious } from "../helpers/browser-axe.ts";
import { byRole, feedName, screenshot, waitForFeed, waitForNoRole } from "../helpers/browser.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

/** The texts of the search suggestions shown. */
const options = (page: Page) =>
  page.$$eval("[role=listbox] [role=option]", (els) => els.map((e) => e.textContent ?? ""));

/** The texts of the messages the feed shows. */
const articles = (page: Page) =>
  page.$$eval("[role=feed] article", (els) => els.map((e) => e.textContent ?? ""));

async function typeSearch(page: Page, text: string) {
  const box = await byRole(page, "searchbox", "Search");
  await box.click({ count: 3 });
  await page.keyboard.press("Backspace");
  await box.type(text);
}

describePages("search, shortcuts, small screens", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is added as a script tag, which the page's Content-Security-Policy would refuse.
    bypassCSP: true,
    setup: async () => {
      verona = server.creds.channels.Verona!.stream_id;
      const send = (topic: string, content: string) =>
        expectSuccess(
          server.as("othello").POST("/messages", {
            body: { type: "stream", to: verona, topic, content },
          }),
        );
      await send("balcony", `Hello from the balcony, a ${WORD} swims by`);
      await send("garden", `The ${WORD} in the garden pond`);
      await send("garden", "Nothing to find here");
      await expectSuccess(
        server.as("othello").POST("/messages", {
          body: {
            type: "direct",
            to: [server.creds.users.hamlet!.user_id],
            content: `A ${WORD} in a DM`,
          },
        }),
      );
    },
  });
  const server = s.server;
  let hamlet: Page;
  let othello: Page;
  let verona: number;
  const WORD = "zebrafish";
  const shots = s.shots;

  beforeAll(() => {
    hamlet = s.page("hamlet");
    othello = s.page("othello");
  });

  it("the typeahead offers people for sender:, channels for channel:, and is: values", async () => {
    await waitForFeed(hamlet, "All messages");
    await typeSearch(hamlet, "sender:oth");
    await hamlet.waitForSelector("::-p-aria([role=listbox][name='Search suggestions'])");
    expect((await options(hamlet))[0]).toContain("Othello, the Moor of Venice");
    expect(await axeSerious(hamlet, "the search typeahead")).toEqual([]);
    shots.push(await screenshot(hamlet, "search-typeahead"));
    await typeSearch(hamlet, "channel:Ver");
    expect((await options(hamlet))[0]).toContain("Messages in #Verona");
    await typeSearch(hamlet, "is:un");
    expect((await options(hamlet))[0]).toContain("Unread messages");
    // Tab completes the box with the suggestion, without searching.
    await hamlet.keyboard.press("Tab");
    expect(await hamlet.$eval("input[type=search]", (e) => e.value)).toBe("is:unread ");
    await hamlet.keyboard.press("Escape");
  });

  it("channel:Verona word narrows to the server's results, highlighted, at a fragment that reloads", async () => {
    const query = `channel:Verona ${WORD}`;
    await typeSearch(hamlet, query);
    await hamlet.keyboard.press("Enter");
    const title = `Search results for ${query}`;
    await waitForFeed(hamlet, title);
    const res = await expectSuccess(
      server.as("hamlet").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 50,
            num_after: 0,
            narrow: [
              { operator: "channel", operand: verona },
              { operator: "search", operand: WORD },
            ],
          },
        },
      }),
    );
    expect(res.messages).toHaveLength(2);
    await hamlet.waitForFunction(
      (n) => document.querySelectorAll("[role=feed] article").length === n,
      {},
      res.messages.length,
    );
    const shown = await articles(hamlet);
    expect(shown.some((t) => t.includes("balcony"))).toBe(true);
    expect(shown.some((t) => t.includes("garden pond"))).toBe(true);
    expect(shown.some((t) => t.includes("in a DM") || t.includes("Nothing to find"))).toBe(false);
    const marks = await hamlet.$$eval("[role=feed] article mark", (els) =>
      els.map((e) => e.textContent),
    );
    expect(marks.length).toBeGreaterThanOrEqual(2);
    expect(marks.every((m) => m?.toLowerCase() === WORD)).toBe(true);
    const hash = new URL(hamlet.url()).hash;
    expect(hash).toBe(`#narrow/channel/${verona}-Verona/search/${WORD}`);
    shots.push(await screenshot(hamlet, "search-results"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(hamlet, "search-results-dark"));
    await hamlet.reload();
    await waitForFeed(hamlet, title);
    await hamlet.waitForSelector("[role=feed] article mark");
    expect((await articles(hamlet)).length).toBe(2);
    expect(await hamlet.$eval("input[type=search]", (e) => e.value)).toBe(query);
  });

  it("-topic: leaves a topic out", async () => {
    const query = `channel:Verona -topic:garden ${WORD}`;
    await typeSearch(hamlet, query);
    await hamlet.keyboard.press("Enter");
    await waitForFeed(hamlet, `Search results for ${query}`);
    await hamlet.waitForFunction(
      () => document.querySelectorAll("[role=feed] article").length === 1,
    );
    expect((await articles(hamlet))[0]).toContain("balcony");
    expect(new URL(hamlet.url()).hash).toBe(
      `#narrow/channel/${verona}-Verona/-topic/garden/search/${WORD}`,
    );
    expect(await feedName(hamlet)).toBe(`Search results for ${query}`);
  });

  it("? opens the keyboard shortcuts, which list every shortcut; i, q and p work", async () => {
    await hamlet.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await hamlet.keyboard.press("?");
    const dialog = await byRole(hamlet, "dialog", "Keyboard shortcuts");
    const text = (await dialog.evaluate((d) => d.textContent)) ?? "";
    for (const words of [
      "Inbox",
      "Recent conversations",
      "Reply to message",
      "Next unread topic",
      "Filter channels",
      "Next unread direct message conversation",
      "First message",
      "Show keyboard shortcuts",
    ])
      expect(text).toContain(words);
    const keys = await dialog.$$eval("kbd", (els) => els.map((e) => e.textContent));
    for (const k of ["i", "t", "r", "n", "p", "q", "/", "?", "Esc", "Home", "End"])
      expect(keys).toContain(k);
    expect(await axeSerious(hamlet, "the keyboard shortcuts dialog")).toEqual([]);
    shots.push(await screenshot(hamlet, "keyboard-shortcuts"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(hamlet, "keyboard-shortcuts-dark"));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);
    await hamlet.keyboard.press("Escape");
    await waitForNoRole(hamlet, "dialog", "Keyboard shortcuts");

    // i: Inbox; q: the channel filter, which filters the sidebar.
    await hamlet.keyboard.press("i");
    await hamlet.waitForFunction(() => location.hash === "#inbox");
    await hamlet.keyboard.press("q");
    expect(await hamlet.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(
      "Filter channels",
    );
    await hamlet.keyboard.type("ver");
    const channelLinks = () =>
      hamlet.$$eval("::-p-aria([name='Channels'][role='navigation']) a", (els) =>
        els.map((e) => e.getAttribute("aria-label") ?? ""),
      );
    await hamlet.waitForFunction(
      () => !document.querySelector("nav[aria-label=Channels]")?.textContent?.includes("Denmark"),
    );
    const left = await channelLinks();
    expect(left.some((name) => name.startsWith("Verona"))).toBe(true);
    expect(left.some((name) => name.startsWith("Denmark"))).toBe(false);
    await hamlet.keyboard.press("Escape");
    await hamlet.waitForFunction(() =>
      document.querySelector("nav[aria-label=Channels]")?.textContent?.includes("Denmark"),
    );

    // p: the unread direct messages from Othello. His first one may have been read already (it
    // was in view in All messages, the first feed opened), so the link's count goes up by one.
    const dmLink = () =>
      hamlet.$$eval("::-p-aria([name='Direct messages'][role='navigation']) a", (els) =>
        els.map((e) => e.getAttribute("aria-label") ?? "").filter((n) => n.startsWith("Othello")),
      );
    const before = Number((await dmLink())[0]?.match(/, (\d+) unread$/)?.[1] ?? 0);
    await expectSuccess(
      server.as("othello").POST("/messages", {
        body: {
          type: "direct",
          to: [server.creds.users.hamlet!.user_id],
          content: "Are you there?",
        },
      }),
    );
    await byRole(hamlet, "link", `Othello, the Moor of Venice, ${before + 1} unread`);
    await hamlet.keyboard.press("p");
    await waitForFeed(hamlet, "Messages with Othello, the Moor of Venice");
  });

  it("on a phone-sized screen nothing scrolls sideways, and the sidebars open from the top bar", async () => {
    await othello.setViewport({ width: 375, height: 740 });
    const noSideways = () =>
      othello.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    await waitForFeed(othello, "All messages");
    // Othello never had the garden topic in view: read now, so that the sidebar's links bear
    // their plain names.
    await expectSuccess(server.as("othello").POST("/mark_all_as_read"));
    await othello.waitForFunction(() => !document.title.startsWith("("));
    expect(await noSideways()).toBe(true);
    const channels = await byRole(othello, "button", "Show channels");
    expect(await channels.evaluate((b) => b.getAttribute("aria-expanded"))).toBe("false");
    // The sidebars are out of view until asked for.
    expect(await othello.$("::-p-aria([name='Verona'][role='link'])")).toBeNull();
    expect(await othello.$("::-p-aria([name='Users'][role='complementary'])")).toBeNull();
    shots.push(await screenshot(othello, "phone-feed"));
    await channels.click();
    expect(await channels.evaluate((b) => b.getAttribute("aria-expanded"))).toBe("true");
    await (await byRole(othello, "link", "Verona")).click();
    await waitForFeed(othello, "#Verona");
    await waitForNoRole(othello, "link", "Verona");
    expect(await channels.evaluate((b) => b.getAttribute("aria-expanded"))).toBe("false");
    expect(await noSideways()).toBe(true);
    shots.push(await screenshot(othello, "phone-channel"));

    await (await byRole(othello, "button", "Show people")).click();
    await byRole(othello, "link", /King Hamlet/.source, 100).catch(() => undefined);
    shots.push(await screenshot(othello, "phone-people"));
    await othello.keyboard.press("Escape");
    expect(
      await (
        await byRole(othello, "button", "Show people")
      ).evaluate((b) => b.getAttribute("aria-expanded")),
    ).toBe("false");

    // The other views fit too: search results, a page, and in the dark theme.
    await typeSearch(othello, `${WORD}`);
    await othello.keyboard.press("Enter");
    await waitForFeed(othello, `Search results for ${WORD}`);
    expect(await noSideways()).toBe(true);
    await othello.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(othello, "phone-search-dark"));
    await othello.evaluate(() => (location.hash = "#inbox"));
    await othello.waitForFunction(() => location.hash === "#inbox");
    expect(await noSideways()).toBe(true);
  });
});
