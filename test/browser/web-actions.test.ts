/**
 * Everything one does on a message, in headless Chromium, King Hamlet and Othello each in a
 * browser context of their own: reacting through the emoji picker (search) and the `+` key, starring
 * (button and Ctrl+S), editing, moving a whole topic with a notice, resolving a topic, deleting
 * after a confirmation, marking unread from a message, copying a message's link, quoting and
 * replying, the message's source, its edit history and its read receipts, and what a member
 * without the right is not offered. What changes on the server is checked through the API, what
 * reaches the other person live in his page. axe-core finds no serious or critical violation on
 * the open menu, the picker and each dialog. Screenshots go to .tmp/screenshots/.
 */
import type { Page } from "puppeteer-core";
import { afterEach, beforeAll, expect, it } from "vitest";
import { expectNoSeriousAxeViolations as audit } from "../helpers/browser-axe.ts";
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
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

/** The names of the items of the open menu. */
async function menuItems(page: Page): Promise<string[]> {
  await byRole(page, "menu", "Message actions");
  return page.$$eval("[role=menu] [role=menuitem]", (els) => els.map((e) => e.textContent ?? ""));
}

async function openMenu(page: Page, text: string) {
  const row = await articleWith(page, text);
  await (await inside(row, "button", "Message actions")).click();
  return menuItems(page);
}

async function choose(page: Page, text: string, item: string) {
  await openMenu(page, text);
  await (await byRole(page, "menuitem", item)).click();
}

describePages("message actions, two people", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is injected as an inline script, which the page's CSP (rightly) forbids.
    bypassCSP: true,
    setup: async () => {
      verona = server.creds.channels.Verona!.stream_id;
      await send("first", "actions", "First action message");
      await send("second", "actions", "Second action message");
      await send("third", "actions", "Third action message");
      await send("move1", "to move", "Please move me");
      await send("move2", "to move", "Move me too");
      await send("resolve", "resolve me", "Resolve this topic");
      await expectSuccess(
        server.as("iago").PATCH("/realm", { body: { enable_read_receipts: true } }),
      );
      await expectSuccess(server.as("othello").POST("/mark_all_as_read"));
      await expectSuccess(server.as("hamlet").POST("/mark_all_as_read"));
    },
    prepare: async (p, user) => {
      if (user === "hamlet")
        await p
          .browserContext()
          .overridePermissions(server.baseUrl, ["clipboard-read", "clipboard-write"]);
      p.on("console", (m) => {
        if (m.type() === "error" && !m.text().includes("ERR_NAME_NOT_RESOLVED"))
          console.error("console:", m.text());
      });
    },
  });
  const server = s.server;
  let hamlet: Page;
  let othello: Page;
  let verona: number;
  const ids: Record<string, number> = {};
  const shots = s.shots;

  const send = async (key: string, topic: string, content: string) => {
    const r = await expectSuccess(
      server
        .as("hamlet")
        .POST("/messages", { body: { type: "stream", to: verona, topic, content } }),
    );
    ids[key] = r.id;
  };
  const flagsOf = async (who: string, id: number) => {
    const r = await expectSuccess(
      server.as(who).GET("/messages", {
        params: { query: { anchor: id, num_before: 0, num_after: 0 } },
      }),
    );
    return r.messages[0]?.flags ?? [];
  };
  const subjectOf = async (id: number) => {
    const r = await expectSuccess(
      server.as("hamlet").GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    return r.message.subject;
  };

  beforeAll(async () => {
    hamlet = s.page("hamlet");
    othello = s.page("othello");
    await Promise.all([waitForFeed(hamlet, "All messages"), waitForFeed(othello, "All messages")]);
  });
  // A test that fails leaves no dialog open (a modal one makes the rest of the page inert).
  afterEach(async () => {
    for (const page of [hamlet, othello]) {
      if (await page?.$("[role=menu]")) await page.keyboard.press("Escape");
      await page?.evaluate(() =>
        document.querySelectorAll("dialog[open]").forEach((d) => (d as HTMLDialogElement).close()),
      );
    }
  });

  it("offers a member only what he may do on another's message: no Edit, no Delete", async () => {
    const items = await openMenu(othello, "First action message");
    expect(items).toContain("Quote and reply");
    expect(items).toContain("Copy link to message");
    expect(items).toContain("View message source");
    expect(items).toContain("Mark as unread from here");
    expect(items).not.toContain("Edit message");
    expect(items).not.toContain("Delete message");
    const row = await articleWith(othello, "First action message");
    expect(await row.$("::-p-aria([name='Edit'][role='button'])")).toBeNull();
    await audit(othello, "the message actions menu");
    await othello.keyboard.press("Escape");
    await waitForNoRole(othello, "menu", "Message actions");

    const mine = await openMenu(hamlet, "First action message");
    expect(mine).toEqual(
      expect.arrayContaining(["Edit message", "Delete message", "Move messages"]),
    );
    shots.push(await screenshot(hamlet, "actions-menu"));
    await hamlet.keyboard.press("Escape");
  });

  it("reacts through the picker (search tada) and the + key; Othello sees both live", async () => {
    const row = await articleWith(hamlet, "First action message");
    await (await inside(row, "button", "Add emoji reaction")).click();
    const picker = await byRole(hamlet, "dialog", "Add emoji reaction");
    await inside(picker, "button", "tada"); // Frequently used
    await byRole(hamlet, "button", "octopus");
    await audit(hamlet, "the emoji picker");
    shots.push(await screenshot(hamlet, "emoji-picker"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(hamlet, "emoji-picker-dark"));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);
    await (await byRole(hamlet, "searchbox", "Search emoji")).type("tada");
    await hamlet.keyboard.press("ArrowDown");
    const focused = await hamlet.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    expect(focused).toBe("tada");
    await hamlet.keyboard.press("Enter");
    await waitForNoRole(hamlet, "dialog", "Add emoji reaction");
    await byRole(othello, "button", "tada: 1 reaction by King Hamlet", 5000);

    // `+` on the selected message: :+1:.
    await (await articleWith(hamlet, "Second action message")).click();
    await hamlet.keyboard.press("+");
    await byRole(othello, "button", "+1: 1 reaction by King Hamlet", 5000);
    // `:` opens the picker on the selected message.
    await hamlet.keyboard.press(":");
    await byRole(hamlet, "dialog", "Add emoji reaction");
    await hamlet.keyboard.press("Escape");
    await waitForNoRole(hamlet, "dialog", "Add emoji reaction");
  });

  it("stars with the button and with Ctrl+S", async () => {
    const row = await articleWith(hamlet, "First action message");
    await (await inside(row, "button", "Star")).click();
    const unstar = await inside(row, "button", "Unstar");
    expect(await unstar.evaluate((b) => b.getAttribute("aria-pressed"))).toBe("true");
    expect(await flagsOf("hamlet", ids.first!)).toContain("starred");

    await (await articleWith(hamlet, "Second action message")).click();
    await hamlet.keyboard.down("Control");
    await hamlet.keyboard.press("s");
    await hamlet.keyboard.up("Control");
    await eventually(
      async () => (await flagsOf("hamlet", ids.second!)).includes("starred"),
      "Ctrl+S to star",
    );
    await inside(await articleWith(hamlet, "Second action message"), "button", "Unstar");
  });

  it("edits the content; Othello sees (edited); the edit history lists both versions", async () => {
    const row = await articleWith(hamlet, "Second action message");
    await (await inside(row, "button", "Edit")).click();
    const area = await byRole(hamlet, "textbox", "Message content");
    await hamlet.waitForFunction((e) => (e as HTMLTextAreaElement).value !== "", {}, area);
    await area.click({ count: 3 });
    await area.type("Second action message, revised");
    await hamlet.keyboard.press("Enter");
    await waitForNoRole(hamlet, "form", "Edit message");
    const seen = await articleWith(othello, "Second action message, revised", 5000);
    expect(await seen.evaluate((a) => a.textContent)).toContain("(edited)");

    await choose(hamlet, "Second action message, revised", "View edit history");
    const dialog = await byRole(hamlet, "dialog", "Message edit history");
    await inside(dialog, "list", "Versions");
    await eventually(
      async () => (await dialog.$$("li")).length === 2,
      "two versions in the edit history",
    );
    const text = await dialog.evaluate((d) => d.textContent ?? "");
    expect(text).toContain("Posted by King Hamlet");
    expect(text).toContain("Edited by King Hamlet");
    expect(text).toContain("Second action message, revised");
    await audit(hamlet, "the edit history dialog");
    shots.push(await screenshot(hamlet, "edit-history"));
    await hamlet.keyboard.press("Escape");
    await waitForNoRole(hamlet, "dialog", "Message edit history");
  });

  it("shows the message source to someone who cannot edit it", async () => {
    await choose(othello, "First action message", "View message source");
    const box = await byRole(othello, "textbox", "Message source");
    await othello.waitForFunction(
      (e) => (e as HTMLTextAreaElement).value === "First action message",
      { timeout: 5000 },
      box,
    );
    await audit(othello, "the message source dialog");
    await othello.keyboard.press("Escape");
    await waitForNoRole(othello, "dialog", "Message source");
  });

  it("lists Othello in the read receipts once he has read the message", async () => {
    await eventually(
      async () => (await flagsOf("othello", ids.first!)).includes("read"),
      "Othello's read flag",
    );
    await choose(hamlet, "First action message", "View read receipts");
    const dialog = await byRole(hamlet, "dialog", "Read receipts");
    const list = await inside(dialog, "list", "Read by");
    expect(await list.evaluate((l) => l.textContent)).toContain("Othello, the Moor of Venice");
    await audit(hamlet, "the read receipts dialog");
    await hamlet.keyboard.press("Escape");
  });

  it("copies a link to the message", async () => {
    // The clipboard is written by the focused page only.
    await hamlet.bringToFront();
    await choose(hamlet, "First action message", "Copy link to message");
    // The notice is a live region (role=status), which takes no name from its text.
    await hamlet.waitForFunction(
      () =>
        [...document.querySelectorAll("[role=status]")].some((e) => e.textContent === "Copied!"),
      { timeout: 5000 },
    );
    const link = await hamlet.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(
      `${server.baseUrl}/#narrow/channel/${verona}-Verona/topic/actions/near/${ids.first}`,
    );
  });

  it("quotes and replies: the compose box holds Zulip's quote block", async () => {
    await choose(hamlet, "First action message", "Quote and reply");
    const box = await byRole(hamlet, "textbox", "Message");
    await hamlet.waitForFunction(
      (e) => (e as HTMLTextAreaElement).value.includes("```quote"),
      { timeout: 5000 },
      box,
    );
    const value = await box.evaluate((e) => (e as HTMLTextAreaElement).value);
    const hamletId = server.creds.users.hamlet!.user_id;
    expect(value).toBe(
      `@_**King Hamlet|${hamletId}** [said](${server.baseUrl}/#narrow/channel/${verona}-Verona/topic/actions/near/${ids.first}):\n` +
        "```quote\nFirst action message\n```\n",
    );
    await box.click();
    await hamlet.keyboard.down("Control");
    await hamlet.keyboard.press("a");
    await hamlet.keyboard.up("Control");
    await hamlet.keyboard.press("Backspace");
    await hamlet.keyboard.press("Escape");
  });

  it("marks unread from a message: Othello's unread count comes back, on the server too", async () => {
    await choose(othello, "Second action message, revised", "Mark as unread from here");
    await eventually(
      async () => !(await flagsOf("othello", ids.second!)).includes("read"),
      "the read flag removed",
    );
    expect(await flagsOf("othello", ids.third!)).not.toContain("read");
    expect(await flagsOf("othello", ids.first!)).toContain("read");
    // What is on screen stays unread: the title counts them.
    await othello.waitForFunction(() => /^\(\d+\) /.test(document.title), { timeout: 5000 });
    await sleep(500);
    expect(await othello.title()).toMatch(/^\(\d+\) /);
  });

  it("moves a whole topic with a notice: both see the new topic", async () => {
    await choose(hamlet, "Please move me", "Move messages");
    const dialog = await byRole(hamlet, "dialog", "Move messages");
    await audit(hamlet, "the move messages dialog");
    const topic = await inside(dialog, "textbox", "Topic");
    await topic.click({ count: 3 });
    await topic.type("moved away");
    await (await inside(dialog, "combobox", "Which messages")).select("change_all");
    const notifyNew = await inside(dialog, "checkbox", "Send automated notice to new topic");
    expect(await notifyNew.evaluate((c) => (c as HTMLInputElement).checked)).toBe(true);
    shots.push(await screenshot(hamlet, "move-messages"));
    await (await inside(dialog, "button", "Confirm")).click();
    await waitForNoRole(hamlet, "dialog", "Move messages");
    await eventually(async () => (await subjectOf(ids.move2!)) === "moved away", "the move");
    expect(await subjectOf(ids.move1!)).toBe("moved away");
    for (const page of [hamlet, othello]) {
      await articleWith(page, "This topic was moved here from", 5000);
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll("article")].some(
            (a) =>
              a.textContent?.includes("moved away") && a.textContent.includes("Please move me"),
          ),
        { timeout: 5000 },
      );
    }
  });

  it("resolves a topic and unresolves it", async () => {
    const items = await openMenu(hamlet, "Resolve this topic");
    expect(items).toContain("Mark as resolved");
    await (await byRole(hamlet, "menuitem", "Mark as resolved")).click();
    await eventually(async () => (await subjectOf(ids.resolve!)) === "✔ resolve me", "resolved");
    await othello.waitForFunction(
      () =>
        [...document.querySelectorAll("article")].some(
          (a) =>
            a.textContent?.includes("✔ resolve me") && a.textContent.includes("Resolve this topic"),
        ),
      { timeout: 5000 },
    );
    await eventually(
      async () => (await openMenu(hamlet, "Resolve this topic")).includes("Mark as unresolved"),
      "the menu to offer unresolving",
    );
    await (await byRole(hamlet, "menuitem", "Mark as unresolved")).click();
    await eventually(async () => (await subjectOf(ids.resolve!)) === "resolve me", "unresolved");
  });

  it("deletes after a confirmation: gone for Othello", async () => {
    await choose(hamlet, "Third action message", "Delete message");
    const dialog = await byRole(hamlet, "dialog", "Delete message?");
    await audit(hamlet, "the delete confirmation");
    shots.push(await screenshot(hamlet, "delete-confirm"));
    await (await inside(dialog, "button", "Delete")).click();
    await othello.waitForFunction(
      () =>
        ![...document.querySelectorAll("article")].some((a) =>
          a.textContent?.includes("Third action message"),
        ),
      { timeout: 5000 },
    );
    const r = await server.as("hamlet").GET("/messages/{message_id}", {
      params: { path: { message_id: ids.third! } },
    });
    expect(r.response.status).toBe(400);
  });

  it("screenshots the toolbar in both themes", async () => {
    const row = await articleWith(hamlet, "First action message");
    await row.hover();
    shots.push(await screenshot(hamlet, "message-toolbar"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    await (await inside(row, "button", "Message actions")).click();
    shots.push(await screenshot(hamlet, "actions-menu-dark"));
    await hamlet.keyboard.press("Escape");
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);
  });
});
