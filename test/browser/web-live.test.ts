/**
 * The web app in headless Chromium, two people at once: King Hamlet and Othello each log in
 * through the login page in a browser context of their own. What one does reaches the other
 * live (a channel message with its unread count, a direct message after "is typing…", edits and
 * reactions made through the API), reading clears the counts and the server's flags, views
 * survive a reload and back/forward, and logging out ends the session.
 */
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import {
  byRole,
  chromiumInstalled,
  CHROMIUM,
  launchBrowser,
  loggedInPage,
  screenshot,
  waitForNoRole,
  typingNotice,
  waitForFeedText,
  waitForRole,
  waitInPage,
  warnIfNoChromium,
} from "../helpers/browser.ts";
import { useTestServer } from "../helpers/server.ts";

warnIfNoChromium("test/browser/web-live.test.ts");

/** Scrolls the feed's scroller (the feed's parent) to its top or bottom. */
async function scrollFeed(page: Page, to: "top" | "bottom") {
  await page.$eval(
    "[role=feed]",
    (feed, where) => {
      const scroller = feed.parentElement!;
      scroller.scrollTop = where === "top" ? 0 : scroller.scrollHeight;
    },
    to,
  );
}

async function newestId(server: ReturnType<typeof useTestServer>, who: string): Promise<number> {
  const { messages } = await expectSuccess(
    server
      .as(who)
      .GET("/messages", { params: { query: { anchor: "newest", num_before: 1, num_after: 0 } } }),
  );
  return messages[0]!.id;
}

describe.skipIf(!chromiumInstalled)(`the web app, live, in headless Chromium (${CHROMIUM})`, () => {
  const server = useTestServer();
  let browser: Browser;
  let hamlet: Page;
  let othello: Page;
  let veronaId: number;

  beforeAll(async () => {
    veronaId = server.creds.channels.Verona!.stream_id;
    // History enough that Othello's feed scrolls, all of it read by him.
    const iago = server.as("iago");
    for (let i = 0; i < 40; i++)
      await expectSuccess(
        iago.POST("/messages", {
          body: { type: "stream", to: veronaId, topic: "filler", content: `Filler message ${i}` },
        }),
      );
    await expectSuccess(server.as("othello").POST("/mark_all_as_read"));
    await expectSuccess(server.as("hamlet").POST("/mark_all_as_read"));
    browser = await launchBrowser();
    ({ page: othello } = await loggedInPage(
      browser,
      server.baseUrl,
      "othello@zulip.com",
      server.creds.users.othello!.password!,
    ));
    ({ page: hamlet } = await loggedInPage(
      browser,
      server.baseUrl,
      "hamlet@zulip.com",
      server.creds.users.hamlet!.password!,
    ));
  });
  afterAll(() => browser?.close());

  it("delivers Hamlet's channel message to Othello's feed within a second, unread until seen", async () => {
    await byRole(othello, "feed", "All messages");
    await scrollFeed(othello, "top");

    const channel = await byRole(hamlet, "combobox", "Channel");
    await channel.select(String(veronaId));
    const topic = await byRole(hamlet, "textbox", "Topic");
    await topic.click({ clickCount: 3 });
    await topic.type("greetings");
    await (await byRole(hamlet, "textbox", "Message")).type("Hello from the **browser**");
    const started = performance.now();
    await hamlet.keyboard.press("Enter");
    // Local echo: Hamlet's own feed shows it before the server answers; the compose box empties.
    await waitForFeedText(hamlet, "Hello from the browser");
    expect(
      await hamlet.$eval(
        "textarea[aria-label=Message]",
        (t) => (t as unknown as { value: string }).value,
      ),
    ).toBe("");

    await waitForFeedText(othello, "Hello from the browser");
    await waitForRole(othello, "link", "greetings, 1 unread");
    const elapsed = performance.now() - started;
    console.log(`channel message visible to Othello after ${Math.round(elapsed)} ms`);
    expect(elapsed).toBeLessThan(1000);
    await byRole(othello, "link", "All messages, 1 unread");
    await screenshot(othello, "feed-unread");

    const id = await newestId(server, "othello");
    const before = await expectSuccess(
      server.as("othello").GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    expect(before.message.flags).not.toContain("read");

    await scrollFeed(othello, "bottom");
    await waitForRole(othello, "link", "greetings");
    await waitForNoRole(othello, "link", "All messages, 1 unread");
    // The server has it read too (the flags request is batched: give it its moment).
    await expect
      .poll(async () => {
        const { message } = await expectSuccess(
          server
            .as("othello")
            .GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
        );
        return message.flags;
      })
      .toContain("read");
    await screenshot(othello, "feed-read");
  });

  it("shows 'King Hamlet is typing…' to Othello, then the direct message with its count", async () => {
    await (await byRole(hamlet, "link", "Othello, the Moor of Venice, Active")).click();
    await byRole(hamlet, "feed", "Messages with Othello, the Moor of Venice");
    const box = await byRole(hamlet, "textbox", "Message");
    await box.type("Are you there");
    await expect.poll(() => typingNotice(othello)).toBe("King Hamlet is typing…");
    await box.type("?");
    const started = performance.now();
    await hamlet.keyboard.press("Enter");
    await waitForRole(othello, "link", "King Hamlet, 1 unread");
    const elapsed = performance.now() - started;
    console.log(`direct message visible to Othello after ${Math.round(elapsed)} ms`);
    expect(elapsed).toBeLessThan(1000);
    // Sending stops the typing notice.
    await expect.poll(() => typingNotice(othello)).toBe("");

    await (await byRole(othello, "link", "King Hamlet, 1 unread")).click();
    await byRole(othello, "feed", "Messages with King Hamlet");
    await waitForRole(othello, "link", "King Hamlet");
    await screenshot(othello, "dm");
  });

  it("applies an edit and a reaction made through the API, and toggles the reaction on click", async () => {
    const id = await newestId(server, "hamlet");
    await expectSuccess(
      server.as("hamlet").PATCH("/messages/{message_id}", {
        params: { path: { message_id: id } },
        body: { content: "Are you there? *Edited*" },
      }),
    );
    await waitInPage(
      othello,
      `(() => { const a = document.querySelector('[role=feed] article[data-id="${id}"]');
        return a?.querySelector("em")?.textContent === "Edited" && a.textContent.includes("(edited)"); })()`,
    );
    await expectSuccess(
      server.as("iago").POST("/messages/{message_id}/reactions", {
        params: { path: { message_id: id } },
        body: { emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji" },
      }),
    );
    const reaction = await byRole(othello, "button", "octopus: 1 reaction by Iago");
    expect(await reaction.evaluate((b) => b.getAttribute("aria-pressed"))).toBe("false");
    await reaction.click();
    const mine = await byRole(othello, "button", "octopus: 2 reactions by Iago, You");
    expect(await mine.evaluate((b) => b.getAttribute("aria-pressed"))).toBe("true");
    const { message } = await expectSuccess(
      server.as("hamlet").GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    expect(message.reactions.map((r) => r.emoji_name)).toEqual(["octopus", "octopus"]);
  });

  it("edits Hamlet's own message inline", async () => {
    const id = await newestId(server, "hamlet");
    await (await hamlet.waitForSelector(`[role=feed] article[data-id="${id}"]`))!.click();
    const edit = await hamlet.waitForSelector(
      `[role=feed] article[data-id="${id}"] ::-p-aria([name="Edit"][role="button"])`,
    );
    await edit!.click();
    const content = await byRole(hamlet, "textbox", "Message content");
    await waitInPage(
      hamlet,
      `document.querySelector("textarea[aria-label='Message content']").value !== ""`,
    );
    await screenshot(hamlet, "edit");
    await content.click({ clickCount: 3 });
    await hamlet.keyboard.down("Control");
    await hamlet.keyboard.press("a");
    await hamlet.keyboard.up("Control");
    await content.type("Rewritten in the browser");
    await (await byRole(hamlet, "button", "Save")).click();
    await expect
      .poll(async () => {
        const { message } = await expectSuccess(
          server.as("hamlet").GET("/messages/{message_id}", {
            params: { path: { message_id: id }, query: { apply_markdown: false } },
          }),
        );
        return message.content;
      })
      .toBe("Rewritten in the browser");
    await waitForFeedText(othello, "Rewritten in the browser");
  });

  it("restores a narrow on reload, and goes back and forward between views", async () => {
    await othello.goto(`${server.baseUrl}/#narrow/channel/${veronaId}-Verona/topic/greetings`);
    await byRole(othello, "feed", "#Verona > greetings");
    await othello.reload();
    await byRole(othello, "feed", "#Verona > greetings");
    await waitForFeedText(othello, "Hello from the browser");
    await (await byRole(othello, "link", "All messages")).click();
    await byRole(othello, "feed", "All messages");
    expect(new URL(othello.url()).hash).toBe("#feed");
    await othello.goBack();
    await byRole(othello, "feed", "#Verona > greetings");
    await othello.goForward();
    await byRole(othello, "feed", "All messages");
  });

  it("logs out: back to the login page, and the session's cookie is refused from then on", async () => {
    const cookies = await hamlet.cookies();
    const session = cookies.find((c) => c.name === "sessionid");
    expect(session?.httpOnly).toBe(true);
    await Promise.all([
      hamlet.waitForNavigation(),
      (await byRole(hamlet, "button", "Log out")).click(),
    ]);
    expect(new URL(hamlet.url()).pathname).toBe("/login/");
    const res = await fetch(`${server.baseUrl}/json/users/me`, {
      headers: { Cookie: `sessionid=${session!.value}` },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      result: "error",
      code: "UNAUTHORIZED",
      msg: "Not logged in: API authentication or user session required",
    });
  });
});
