/**
 * The left sidebar at scale and its navigation (issue 33), in headless Chromium with King Hamlet
 * (subscribed to 500 more channels, unread messages in many) and Othello: topics are listed only
 * under the channel in view, and the channel rows stay cheap (an element bound); a muted user's
 * direct messages leave the list and the counts; the Drafts link counts the drafts; Shift+N goes
 * to the next unread followed topic; an administrator demoted by another loses the "Organization
 * settings" link at once (and gets it back when promoted). axe-core on the sidebar, light and
 * dark; screenshots go to .tmp/screenshots/.
 */
import type { Page } from "puppeteer-core";
import { beforeAll, expect, it } from "vitest";
import {
  byRole,
  feedName,
  screenshot,
  sleep,
  waitForFeed,
  waitForNoRole,
} from "../helpers/browser.ts";
import { axeViolations } from "../helpers/browser-axe.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";
import { invalidateCaches } from "../../server/lib/caches.ts";

/** The channels Hamlet is subscribed to beyond the populated organization's. */
const SCALE_CHANNELS = 500;
/** Of them, those with unread messages (two topics each). */
const UNREAD_CHANNELS = 10;
/** A channel's row in the sidebar: its <li>, link, name and count (6 allows a swatch and an icon). */
const ELEMENTS_PER_CHANNEL = 6;

describePages("the left sidebar at scale", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is injected as an inline script, which the page's CSP forbids.
    bypassCSP: ["hamlet"],
    // Starred messages: a view where no new message shows, so none is read meanwhile.
    hash: { hamlet: "#narrow/is/starred" },
    setup: () => seed(),
  });
  const server = s.server;
  const shots = s.shots;
  let hamlet: Page;
  let othello: Page;
  let verona: number;
  const id = (who: string) => server.creds.users[who]!.user_id;
  const send = (who: string, to: number, topic: string, content: string) =>
    expectSuccess(
      server.as(who).POST("/messages", { body: { type: "stream", to, topic, content } }),
    );
  const expectAxeClean = async (page: Page, where: string) =>
    expect(
      (await axeViolations(page, where, ".left-sidebar"))
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => v.id),
      where,
    ).toEqual([]);

  /** The names of the sidebar's topic lists ("Topics in Verona"). */
  const topicLists = () =>
    hamlet.$$eval("[aria-label^='Topics in ']", (ls) =>
      ls.map((l) => l.getAttribute("aria-label")),
    );
  /** Whether a link whose accessible name starts with `prefix` is there. */
  const linkStarting = (prefix: string) =>
    hamlet.evaluate(
      (p) =>
        [...document.querySelectorAll(".left-sidebar a")].some((a) =>
          (a.getAttribute("aria-label") ?? a.textContent ?? "").startsWith(p),
        ),
      prefix,
    );

  /** 500 more channels for Hamlet and Othello, unread messages in 10, a muted user, an admin. */
  async function seed() {
    verona = server.creds.channels.Verona!.stream_id;
    const started = Date.now();
    await expectSuccess(server.as("hamlet").POST("/mark_all_as_read"));
    // Copies of Denmark's row in three SQL statements: the API's 500 creations (each announced)
    // take most of a minute on the embedded database, the actions one by one as long.
    const denmark = server.creds.channels.Denmark!.stream_id;
    await server.db.$transaction(async (tx) => {
      const cols = `realm_id, description, rendered_description, creator_id, invite_only, history_public_to_subscribers,
        can_add_subscribers_group_id, can_administer_channel_group_id, can_create_topic_group_id,
        can_delete_any_message_group_id, can_delete_own_message_group_id, can_move_messages_out_of_channel_group_id,
        can_move_messages_within_channel_group_id, can_remove_subscribers_group_id, can_resolve_topics_group_id,
        can_send_message_group_id, can_subscribe_group_id`;
      await tx.$executeRawUnsafe(
        `INSERT INTO stream (name, subscriber_count, ${cols})
         SELECT 'scale ' || lpad(g::text, 3, '0'), 2, ${cols} FROM stream, generate_series(0, $2::int - 1) g
         WHERE id = $1::int ORDER BY g`,
        denmark,
        SCALE_CHANNELS,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO recipient (realm_id, type, type_id)
         SELECT realm_id, 2, id FROM stream WHERE name LIKE 'scale %' ORDER BY id`,
      );
      await tx.$executeRawUnsafe(
        `UPDATE stream s SET recipient_id = r.id FROM recipient r
         WHERE r.type = 2 AND r.type_id = s.id AND s.name LIKE 'scale %'`,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO subscription (realm_id, user_profile_id, recipient_id, color)
         SELECT s.realm_id, u, s.recipient_id, '#76ce90' FROM stream s, unnest($1::int[]) u
         WHERE s.name LIKE 'scale %'`,
        [id("hamlet"), id("othello")],
      );
    });
    invalidateCaches(["*"]);
    const made = Date.now();
    const { subscriptions } = await expectSuccess(
      server.as("hamlet").GET("/users/me/subscriptions"),
    );
    const scale = subscriptions.filter((s) => s.name.startsWith("scale "));
    for (let i = 0; i < UNREAD_CHANNELS; i += 10)
      await Promise.all(
        scale
          .slice(i, i + 10)
          .flatMap((s) => [
            send("othello", s.stream_id, "first topic", `Hello ${s.name}`),
            send("othello", s.stream_id, "second topic", `Hello again ${s.name}`),
          ]),
      );
    await expectSuccess(
      server.as("hamlet").POST("/users/me/muted_users/{muted_user_id}", {
        params: { path: { muted_user_id: id("cordelia") } },
      }),
    );
    // Othello is an administrator for the demotion test.
    await expectSuccess(
      server.as("desdemona").PATCH("/users/{user_id}", {
        params: { path: { user_id: id("othello") } },
        body: { role: 200 },
      }),
    );
    console.log(
      `set-up: ${SCALE_CHANNELS} channels in ${made - started} ms, the rest in ${Date.now() - made} ms`,
    );
  }
  beforeAll(async () => {
    hamlet = s.page("hamlet");
    othello = s.page("othello");
    await waitForFeed(hamlet, "Starred messages");
  });

  it("lists topics only under the channel in view; 500 channel rows stay within an element bound", async () => {
    await send("othello", verona, "sidebar news", "News for the sidebar");
    await byRole(hamlet, "link", "Verona, 1 unread");
    await byRole(hamlet, "link", "scale 009, 2 unread");
    // No channel is in view: none lists its topics.
    expect(await topicLists()).toEqual([]);
    expect(await hamlet.$("::-p-aria([name='sidebar news, 1 unread'][role='link'])")).toBeNull();
    expect(await hamlet.$("::-p-aria([name='first topic, 1 unread'][role='link'])")).toBeNull();

    const measure = () =>
      hamlet.evaluate(() => ({
        channels: document.querySelectorAll("nav[aria-label=Channels] > ul > li").length,
        sidebar: document.querySelectorAll("nav[aria-label=Channels] *").length,
        document: document.querySelectorAll("*").length,
      }));
    const m = await measure();
    console.log(
      `sidebar with ${m.channels} channels: ${m.sidebar} elements in the channel list, ${m.document} in the document`,
    );
    expect(m.channels).toBeGreaterThanOrEqual(SCALE_CHANNELS);
    expect(m.sidebar).toBeLessThanOrEqual(m.channels * ELEMENTS_PER_CHANNEL + 10);

    // Verona in view: its topics, and only its.
    await (await byRole(hamlet, "link", "Verona, 1 unread")).click();
    await waitForFeed(hamlet, "#Verona");
    await byRole(hamlet, "list", "Topics in Verona");
    // (Read at once, now that it shows.)
    await hamlet.waitForFunction(
      () =>
        !!document.querySelector("[aria-label='Topics in Verona'] a[aria-label^='sidebar news']"),
      { timeout: 5000 },
    );
    expect(await topicLists()).toEqual(["Topics in Verona"]);
    expect(await hamlet.$("::-p-aria([name='first topic, 1 unread'][role='link'])")).toBeNull();
    const inView = await measure();
    expect(inView.sidebar).toBeLessThanOrEqual(m.channels * ELEMENTS_PER_CHANNEL + 12 * 8 + 20);

    // Another channel in view: Verona's topics go, its own come.
    await (await byRole(hamlet, "link", "scale 009, 2 unread")).click();
    await byRole(hamlet, "list", "Topics in scale 009");
    // (Their counts go as the channel's view shows the messages.)
    await hamlet.waitForFunction(
      () => {
        const links = document.querySelectorAll("[aria-label='Topics in scale 009'] a");
        const names = [...links].map((a) => a.getAttribute("aria-label")?.split(",")[0]);
        return names.includes("first topic") && names.includes("second topic");
      },
      { timeout: 5000 },
    );
    await waitForNoRole(hamlet, "list", "Topics in Verona");

    await expectAxeClean(hamlet, "the left sidebar");
    shots.push(await screenshot(hamlet, "sidebar"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    await expectAxeClean(hamlet, "the left sidebar (dark)");
    shots.push(await screenshot(hamlet, "sidebar-dark"));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);
  }, 60_000); // two axe-core audits of a 500-channel sidebar: slow on a loaded machine

  it("hides a muted user's direct messages from the list", async () => {
    await expectSuccess(
      server.as("othello").POST("/messages", {
        body: { type: "direct", to: [id("hamlet")], content: "A word from Othello" },
      }),
    );
    await expectSuccess(
      server.as("cordelia").POST("/messages", {
        body: { type: "direct", to: [id("hamlet")], content: "A word from Cordelia" },
      }),
    );
    await byRole(hamlet, "link", "Othello, the Moor of Venice, 1 unread");
    // Cordelia was muted before: her conversation is not listed.
    await sleep(300);
    expect(await linkStarting("Cordelia")).toBe(false);
    // Hamlet mutes Othello: his conversation leaves the list (and, read by the server, the counts).
    await expectSuccess(
      server.as("hamlet").POST("/users/me/muted_users/{muted_user_id}", {
        params: { path: { muted_user_id: id("othello") } },
      }),
    );
    await waitForNoRole(hamlet, "link", "Othello, the Moor of Venice, 1 unread");
    expect(await linkStarting("Othello")).toBe(false);
    // Unmuted: back in the list.
    await expectSuccess(
      server.as("hamlet").DELETE("/users/me/muted_users/{muted_user_id}", {
        params: { path: { muted_user_id: id("othello") } },
      }),
    );
    await byRole(hamlet, "link", "Othello, the Moor of Venice");
  });

  it("counts the drafts on the Drafts link once one is saved", async () => {
    expect(await linkStarting("Drafts,")).toBe(false);
    await byRole(hamlet, "link", "Drafts");
    await hamlet.evaluate(
      (h) => (location.hash = h),
      `#narrow/channel/${verona}-Verona/topic/drafting`,
    );
    await waitForFeed(hamlet, "#Verona > drafting");
    await (await byRole(hamlet, "textbox", "Message")).type("A thought to finish later");
    await byRole(hamlet, "link", "Drafts, 1", 5000);
  });

  it("Shift+N goes to the next unread followed topic (n to the oldest unread topic)", async () => {
    await expectSuccess(
      server.as("hamlet").POST("/user_topics", {
        body: { stream_id: verona, topic: "followed one", visibility_policy: 3 },
      }),
    );
    // Hamlet reads his starred messages, where the new messages do not show (nor get read).
    const quiet = "#narrow/is/starred";
    await hamlet.evaluate((h) => (location.hash = h), quiet);
    await waitForFeed(hamlet, "Starred messages");
    await hamlet.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await send("othello", verona, "plain one", "Unread, not followed");
    await send("othello", verona, "followed one", "Unread and followed");
    // Both arrived (Verona's count names them; it may count older ones too).
    await hamlet.waitForFunction(
      () =>
        Number(
          /^Verona, (\d+) unread$/.exec(
            document.querySelector("nav a[aria-label^='Verona, ']")?.getAttribute("aria-label") ??
              "",
          )?.[1] ?? 0,
        ) >= 2,
      { timeout: 5000 },
    );
    await hamlet.keyboard.down("Shift");
    await hamlet.keyboard.press("N");
    await hamlet.keyboard.up("Shift");
    await waitForFeed(hamlet, "#Verona > followed one");
    await hamlet.evaluate((h) => (location.hash = h), quiet);
    await waitForFeed(hamlet, "Starred messages");
    // n: the oldest unread topic, followed or not (Othello's older messages were read when muted).
    await hamlet.keyboard.press("n");
    await hamlet.waitForFunction(() => location.hash.includes("plain"));
    expect(await feedName(hamlet)).toBe("#Verona > plain one");
    // Listed in the keyboard shortcuts.
    await hamlet.keyboard.press("?");
    await byRole(hamlet, "dialog", "Keyboard shortcuts");
    expect(await hamlet.$eval("dialog[open]", (d) => d.textContent ?? "")).toContain(
      "Next unread followed topic",
    );
    await hamlet.keyboard.press("Escape");
  });

  it("an administrator demoted by another loses the Organization settings link at once", async () => {
    await waitForFeed(othello, "All messages");
    await byRole(othello, "link", "Organization settings");
    // A mark that a reload would lose: the change is live, not a new page.
    await othello.evaluate(
      () => ((window as unknown as { unreloaded: boolean }).unreloaded = true),
    );
    await expectSuccess(
      server.as("iago").PATCH("/users/{user_id}", {
        params: { path: { user_id: id("othello") } },
        body: { role: 400 },
      }),
    );
    await waitForNoRole(othello, "link", "Organization settings");
    await expectSuccess(
      server.as("iago").PATCH("/users/{user_id}", {
        params: { path: { user_id: id("othello") } },
        body: { role: 200 },
      }),
    );
    await byRole(othello, "link", "Organization settings");
    expect(
      await othello.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded),
    ).toBe(true);
  });
});
