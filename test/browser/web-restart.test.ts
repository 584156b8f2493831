/**
 * The web app through a server restart, in headless Chromium: while the server is down a banner
 * says so and retries; once it is back the page goes on with its queue (queues live in the
 * database), and when the queue itself is gone (BAD_EVENT_QUEUE_ID) it registers again and
 * reloads the view, without a page reload and without losing a message sent meanwhile.
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
  waitForFeedText,
  waitInPage,
  warnIfNoChromium,
} from "../helpers/browser.ts";
import { useTestServer } from "../helpers/server.ts";

warnIfNoChromium("test/browser/web-restart.test.ts");

const feedShows = (page: Page, text: string) => waitForFeedText(page, text, 10_000);
const bannerShown = `[...document.querySelectorAll("[role=alert]")].some((a) => a.textContent.includes("Unable to connect to the server"))`;

describe.skipIf(!chromiumInstalled)(`the web app through a server restart (${CHROMIUM})`, () => {
  const server = useTestServer();
  let browser: Browser;
  let page: Page;
  let veronaId: number;

  beforeAll(async () => {
    veronaId = server.creds.channels.Verona!.stream_id;
    browser = await launchBrowser();
    ({ page } = await loggedInPage(
      browser,
      server.baseUrl,
      "othello@zulip.com",
      server.creds.users.othello!.password!,
      `#narrow/channel/${veronaId}-Verona`,
    ));
    await byRole(page, "feed", "#Verona");
    // The page does not reload: a mark on its window would be gone if it did.
    await page.evaluate("window.mark = 1");
  });
  afterAll(() => browser?.close());

  const send = (content: string) =>
    expectSuccess(
      server
        .as("iago")
        .POST("/messages", { body: { type: "stream", to: veronaId, topic: "restart", content } }),
    );

  it("shows the banner while the server is down, then goes on with the same queue", async () => {
    const restarted = server.restart(3000);
    await waitInPage(page, bannerShown, 8000);
    await restarted;
    await send("Sent right after the restart");
    await feedShows(page, "Sent right after the restart");
    await waitInPage(page, `!${bannerShown}`, 15_000);
  });

  it("registers again when its queue is gone, and shows what was sent meanwhile", async () => {
    const othelloId = server.creds.users.othello!.user_id;
    await server.db.eventQueue.deleteMany({ where: { userProfileId: othelloId } });
    await send("Sent while the queue was gone");
    await feedShows(page, "Sent while the queue was gone");
    const queues = await server.db.eventQueue.count({ where: { userProfileId: othelloId } });
    expect(queues).toBe(1);
    expect(await page.evaluate("window.mark")).toBe(1);

    // And it still sends.
    await (await byRole(page, "textbox", "Topic")).type("restart");
    await (await byRole(page, "textbox", "Message")).type("Still here after the restart");
    await page.keyboard.press("Enter");
    await expect
      .poll(async () => {
        const { messages } = await expectSuccess(
          server.as("iago").GET("/messages", {
            params: { query: { anchor: "newest", num_before: 1, num_after: 0 } },
          }),
        );
        return messages[0]?.content;
      })
      .toBe("<p>Still here after the restart</p>");
  });
});
