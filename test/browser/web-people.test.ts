/**
 * The web app's people and topics (issue 33), King Hamlet and Othello in browser contexts of
 * their own: Hamlet mutes a topic (it leaves All messages and its count, Othello's new message in
 * it raises nothing) and follows it (its icon), mutes Othello (his next message collapses, with
 * "Click here to reveal."), opens Othello's card from his name (role, local time, "Send direct
 * message") and full profile; the buddy list shows Othello active, then with the status he sets;
 * a desktop notification fires in Hamlet's hidden page for Othello's direct message (the
 * Notification API stubbed), and Zulip's desktop app's electron_bridge gets the unread count and
 * opens the notification settings. axe-core on the card, the status dialog and the profile page;
 * screenshots (light and dark) in .tmp/screenshots/.
 */
import type { ElementHandle, Page } from "puppeteer-core";
import { afterEach, beforeAll, expect, it } from "vitest";
import {
  articleWith,
  byRole,
  eventually,
  inside,
  screenshot,
  sleep,
  waitForFeed,
  waitForNoRole,
} from "../helpers/browser.ts";
import { expectNoSeriousAxeViolations } from "../helpers/browser-axe.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

const OTHELLO = "Othello, the Moor of Venice";

/** In the page before it loads: a Notification recording what it shows, and a desktop bridge. */
function stubs() {
  const w = window as unknown as Record<string, unknown>;
  const notes: { title: string; body?: string; onclick?: () => void }[] = [];
  w.__notes = notes;
  class FakeNotification {
    static permission = "granted";
    static requestPermission() {
      return Promise.resolve("granted");
    }
    title: string;
    body?: string;
    onclick?: () => void;
    constructor(title: string, options?: { body?: string }) {
      this.title = title;
      this.body = options?.body;
      notes.push(this);
    }
    close() {}
  }
  w.Notification = FakeNotification;
  const sent: unknown[][] = [];
  const listeners: Record<string, (...args: unknown[]) => void> = {};
  w.__bridgeSent = sent;
  w.__bridgeListeners = listeners;
  w.electron_bridge = {
    send_event: (name: string, ...args: unknown[]) => sent.push([name, ...args]),
    on_event: (name: string, fn: (...args: unknown[]) => void) => (listeners[name] = fn),
    set_send_notification_reply_message_supported: (v: boolean) => (w.__replySupported = v),
  };
}

describePages("the web app's people and topics", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is injected as an inline script, which the page's CSP forbids.
    bypassCSP: true,
    setup: async () => {
      verona = server.creds.channels.Verona!.stream_id;
      await expectSuccess(
        server.as("othello").PATCH("/settings", { body: { timezone: "Asia/Kolkata" } }),
      );
      await expectSuccess(server.as("othello").POST("/mark_all_as_read"));
      await expectSuccess(server.as("hamlet").POST("/mark_all_as_read"));
    },
    prepare: async (page, user) => {
      if (user === "hamlet") await page.evaluateOnNewDocument(stubs);
    },
  });
  const server = s.server;
  let hamlet: Page;
  let othello: Page;
  let verona: number;
  const othelloId = () => server.creds.users.othello!.user_id;
  const shots = s.shots;

  async function hamletsPolicy(topic: string): Promise<number | undefined> {
    const state = (await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["user_topic"] } }),
    )) as unknown as {
      user_topics: { stream_id: number; topic_name: string; visibility_policy: number }[];
    };
    return state.user_topics.find((u) => u.stream_id === verona && u.topic_name === topic)
      ?.visibility_policy;
  }

  beforeAll(async () => {
    hamlet = s.page("hamlet");
    othello = s.page("othello");
    await waitForFeed(hamlet, "All messages");
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    const name = ctx.task.name.slice(0, 20).replace(/\W+/g, "-");
    console.log(`failed at ${hamlet.url()}`);
    await screenshot(hamlet, `people-failed-${name}-hamlet`);
    await screenshot(othello, `people-failed-${name}-othello`);
  });

  const send = (who: string, topic: string, content: string) =>
    expectSuccess(
      server.as(who).POST("/messages", { body: { type: "stream", to: verona, topic, content } }),
    );

  it("a muted topic leaves All messages and its count; a followed one has its icon; Shift+M mutes again", async () => {
    await send("othello", "tragedy", "Act one of the tragedy");
    const row = await articleWith(hamlet, "Act one of the tragedy");
    await (await inside(row, "button", "Topic actions")).click();
    await (await byRole(hamlet, "menuitem", "Mute topic")).click();
    await eventually(
      async () =>
        (await hamlet.$$eval("article", (as) => as.map((a) => a.textContent ?? ""))).every(
          (t) => !t.includes("Act one of the tragedy"),
        ),
      "the muted topic to leave All messages",
    );
    expect(await hamletsPolicy("tragedy")).toBe(1);

    // Othello writes in it again: Verona counts it, All messages does not show nor count it.
    await send("othello", "tragedy", "Act two of the tragedy");
    await byRole(hamlet, "link", "Verona, 1 unread");
    await byRole(hamlet, "link", "All messages");
    expect(await hamlet.title()).not.toMatch(/^\(/);
    await sleep(200);
    expect(
      await hamlet.$$eval("article", (as) => as.some((a) => a.textContent?.includes("Act two"))),
    ).toBe(false);

    // Its own view still shows it; unmuted and followed from the sidebar's menu there (the
    // sidebar lists topics under the channel in view, with their icons).
    await (await byRole(hamlet, "link", "Verona, 1 unread")).click();
    await byRole(hamlet, "image", "Muted topic");
    // (Its link's count may go meanwhile: the channel's view shows the message.)
    await hamlet.evaluate(
      (h) => (location.hash = h),
      `#narrow/channel/${verona}-Verona/topic/tragedy`,
    );
    await waitForFeed(hamlet, "#Verona > tragedy");
    await articleWith(hamlet, "Act two of the tragedy");
    const header = await articleWith(hamlet, "Act one of the tragedy");
    await (await inside(header, "button", "Topic actions")).click();
    await (await byRole(hamlet, "menuitem", "Unmute topic")).click();
    await waitForNoRole(hamlet, "image", "Muted topic");
    await (await inside(header, "button", "Topic actions")).click();
    await (await byRole(hamlet, "menuitem", "Follow topic")).click();
    await byRole(hamlet, "image", "Followed topic");
    expect(await hamletsPolicy("tragedy")).toBe(3);
    shots.push(await screenshot(hamlet, "people-followed-topic"));

    // Shift+M on the selected message mutes its topic.
    await (await articleWith(hamlet, "Act two of the tragedy")).click();
    await hamlet.keyboard.down("Shift");
    await hamlet.keyboard.press("M");
    await hamlet.keyboard.up("Shift");
    await eventually(async () => (await hamletsPolicy("tragedy")) === 1, "Shift+M to mute");
    await byRole(hamlet, "image", "Muted topic");
  });

  it("Othello's card opens from his name: role, local time, Send direct message; the full profile", async () => {
    const row = await articleWith(hamlet, "Act one of the tragedy");
    await (await inside(row, "button", OTHELLO)).click();
    const card = await byRole(hamlet, "dialog", OTHELLO);
    const text = await card.evaluate((d) => d.textContent ?? "");
    expect(text).toContain("Member");
    expect(text).toContain("Local time");
    expect(text).toContain("othello@zulip.com");
    await inside(card, "button", "Send direct message");
    await inside(card, "button", "View messages sent");
    await expectNoSeriousAxeViolations(hamlet, "the user card");
    shots.push(await screenshot(hamlet, "people-user-card"));

    await (await inside(card, "button", "View full profile")).click();
    await waitForNoRole(hamlet, "dialog", OTHELLO);
    const profile = await byRole(hamlet, "region", "User profile");
    await inside(profile, "heading", OTHELLO);
    expect(hamlet.url()).toContain(`#user/${othelloId()}`);
    await expectNoSeriousAxeViolations(hamlet, "the profile page");
    shots.push(await screenshot(hamlet, "people-profile"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(hamlet, "people-profile-dark"));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);

    // "View messages sent": the sender narrow.
    await (await byRole(hamlet, "button", "View messages sent")).click();
    await waitForFeed(hamlet, `Messages sent by ${OTHELLO}`);
    await articleWith(hamlet, "Act two of the tragedy");
  });

  it("a muted user's new message collapses, with a button that reveals it", async () => {
    const row = await articleWith(hamlet, "Act one of the tragedy");
    await (await inside(row, "button", OTHELLO)).click();
    const card = await byRole(hamlet, "dialog", OTHELLO);
    await (await inside(card, "button", "Mute user")).click();
    await inside(card, "button", "Unmute user");
    await (await inside(card, "button", "Close")).click();
    // Escape goes to the home view (the Inbox): All messages is opened by its link.
    await (await byRole(hamlet, "link", "All messages")).click();
    await waitForFeed(hamlet, "All messages");
    try {
      // Othello's older messages here collapse too (the first "Click here to reveal." of the page
      // is one of theirs): the new message is the feed's last collapsed row.
      const HIDDEN = "This message was hidden because you have muted the sender.";
      const collapsedRows = () =>
        hamlet.$$eval(
          "[role=feed] article",
          (as, t) => as.filter((a) => a.textContent?.includes(t)).length,
          HIDDEN,
        );
      await eventually(async () => (await collapsedRows()) > 0, "Othello's rows to collapse");
      const before = await collapsedRows();
      await send("othello", "plans", "A secret plan from Othello");
      const hidden = (await hamlet.waitForFunction(
        (t, n) => {
          const rows = [...document.querySelectorAll("[role=feed] article")].filter((a) =>
            a.textContent?.includes(t),
          );
          return rows.length > n ? rows[rows.length - 1] : undefined;
        },
        { timeout: 5000 },
        HIDDEN,
        before,
      )) as ElementHandle<Element>;
      expect(await hidden.evaluate((a) => a.textContent)).not.toContain("A secret plan");
      // One click on its own button reveals it, and it stays revealed.
      await (await inside(hidden, "button", "Click here to reveal.")).click();
      await articleWith(hamlet, "A secret plan from Othello", 1500);
      await sleep(300);
      await articleWith(hamlet, "A secret plan from Othello", 100);
    } finally {
      await expectSuccess(
        server.as("hamlet").DELETE("/users/me/muted_users/{muted_user_id}", {
          params: { path: { muted_user_id: othelloId() } },
        }),
      );
    }
  });

  it("the buddy list shows Othello active, then the status he sets, live; w filters people", async () => {
    await byRole(hamlet, "link", `${OTHELLO}, Active`);
    await (await byRole(othello, "button", "Set status")).click();
    const dialog = await byRole(othello, "dialog", "Set status");
    await expectNoSeriousAxeViolations(othello, "the status dialog");
    await (await inside(dialog, "button", "In a meeting")).click();
    shots.push(await screenshot(othello, "people-status-dialog"));
    await (await inside(dialog, "button", "Save")).click();
    await waitForNoRole(othello, "dialog", "Set status");
    await byRole(hamlet, "link", `${OTHELLO}, Active, In a meeting`);
    const { status } = await expectSuccess(
      server.as("hamlet").GET("/users/{user_id}/status", {
        params: { path: { user_id: othelloId() } },
      }),
    );
    expect(status).toMatchObject({ status_text: "In a meeting", emoji_name: "calendar" });

    await hamlet.keyboard.press("w");
    await hamlet.keyboard.type("oth");
    await waitForNoRole(hamlet, "link", "King Hamlet (you), Active");
    await byRole(hamlet, "link", `${OTHELLO}, Active, In a meeting`);
    shots.push(await screenshot(hamlet, "people-buddy-list"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(hamlet, "people-buddy-list-dark"));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);
    await hamlet.keyboard.press("Escape");
  });

  it("a desktop notification fires for Othello's DM while Hamlet's page is hidden; the electron_bridge hooks", async () => {
    await hamlet.evaluate(() => {
      Object.defineProperty(document, "hidden", { value: true, configurable: true });
      Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await expectSuccess(
      server.as("othello").POST("/messages", {
        body: {
          type: "private",
          to: [server.creds.users.hamlet!.user_id],
          content: "Hamlet, a **word** in private",
        },
      }),
    );
    await hamlet.waitForFunction(
      () => (window as unknown as { __notes: unknown[] }).__notes.length > 0,
      { timeout: 5000 },
    );
    const notes = await hamlet.evaluate(() =>
      (window as unknown as { __notes: { title: string; body?: string }[] }).__notes.map((n) => ({
        title: n.title,
        body: n.body,
      })),
    );
    expect(notes).toEqual([{ title: OTHELLO, body: "Hamlet, a word in private" }]);
    // The desktop app's badge got the count.
    await hamlet.waitForFunction(() =>
      (window as unknown as { __bridgeSent: unknown[][] }).__bridgeSent.some(
        ([name, n]) => name === "total_unread_count" && (n as number) >= 1,
      ),
    );
    expect(
      await hamlet.evaluate(
        () => (window as unknown as { __replySupported: boolean }).__replySupported,
      ),
    ).toBe(true);
    // A click on the notification opens the conversation.
    await hamlet.evaluate(() =>
      (window as unknown as { __notes: { onclick(): void }[] }).__notes[0]!.onclick(),
    );
    await waitForFeed(hamlet, `Messages with ${OTHELLO}`);
    // The desktop app's menu: notification settings.
    await hamlet.evaluate(() =>
      (window as unknown as { __bridgeListeners: Record<string, () => void> }).__bridgeListeners[
        "show-notification-settings"
      ]!(),
    );
    await eventually(
      async () => (await hamlet.evaluate(() => location.hash)) === "#settings/notifications",
      "the notification settings",
    );
  });
});
