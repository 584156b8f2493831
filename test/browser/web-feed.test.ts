/**
 * The feed's correctness (issue 33), King Hamlet and Othello in browser contexts of their own:
 * Othello's new avatar and name show at once on his messages already in Hamlet's feed; a search
 * highlights its matches in the topic as in the content, and an edit drops a stale highlight;
 * Hamlet's Recent conversations follows Othello's topic moves and a deletion, live. (A muted
 * user's message revealed by one click: web-people.test.ts.) axe-core on the search results; screenshots (light and dark)
 * in .tmp/screenshots/.
 */
import type { ElementHandle, Page } from "puppeteer-core";
import { afterEach, beforeAll, expect, it } from "vitest";
import {
  articleWith,
  byRole,
  eventually,
  inside,
  screenshot,
  waitForFeed,
  waitForNoRole,
} from "../helpers/browser.ts";
import { expectNoSeriousAxeViolations } from "../helpers/browser-axe.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { basicAuth } from "../helpers/upload.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

const OTHELLO = "Othello, the Moor of Venice";

/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

/** The time in an article's name ("Sender, 12:46 PM"). */
async function timeOf(row: ElementHandle): Promise<string> {
  const name = (await row.evaluate((a) => a.getAttribute("aria-label"))) ?? "";
  return name.slice(name.lastIndexOf(", ") + 2);
}

describePages("the web app's feed", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is injected as an inline script, which the page's CSP forbids.
    bypassCSP: ["hamlet"],
    setup: async () => {
      verona = server.creds.channels.Verona!.stream_id;
      await expectSuccess(server.as("hamlet").POST("/mark_all_as_read"));
    },
  });
  const server = s.server;
  let hamlet: Page;
  let othello: Page;
  let verona: number;
  const othelloId = () => server.creds.users.othello!.user_id;
  const shots = s.shots;

  beforeAll(async () => {
    hamlet = s.page("hamlet");
    othello = s.page("othello");
    await waitForFeed(hamlet, "All messages");
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    const name = ctx.task.name.slice(0, 20).replace(/\W+/g, "-");
    console.log(`failed at ${hamlet.url()}`);
    await screenshot(hamlet, `feed-failed-${name}-hamlet`);
    await screenshot(othello, `feed-failed-${name}-othello`);
  });

  const send = async (who: string, topic: string, content: string): Promise<number> =>
    (
      await expectSuccess(
        server.as(who).POST("/messages", { body: { type: "stream", to: verona, topic, content } }),
      )
    ).id;

  it("Othello's new avatar and name show at once on his messages already in Hamlet's feed", async () => {
    await send("othello", "faces", "Othello's face before the change");
    const row = await articleWith(hamlet, "Othello's face before the change");
    const avatarOf = (a: ElementHandle) =>
      a.evaluate((el) => el.querySelector("img")?.getAttribute("src") ?? "");
    expect(await avatarOf(row)).not.toContain("/user_avatars/");
    expect(await row.evaluate((a) => a.getAttribute("aria-label"))).toMatch(/^Othello, the Moor/);

    // Othello uploads an avatar and changes his name: the realm_user events, no new message.
    const form = new FormData();
    form.append("file", new Blob([PNG], { type: "image/png" }), "face.png");
    const response = await fetch(`${server.baseUrl}/api/v1/users/me/avatar`, {
      method: "POST",
      headers: { Authorization: basicAuth(server, "othello") },
      body: form,
    });
    expect(response.status).toBe(200);
    await expectSuccess(
      server.as("othello").PATCH("/settings", { body: { full_name: "Othello the Renamed" } }),
    );
    try {
      const { user } = await expectSuccess(
        server.as("hamlet").GET("/users/{email}", {
          params: { path: { email: String(othelloId()) } },
        }),
      );
      expect(user.avatar_url).toContain("/user_avatars/");
      // The row already shown follows at once (the same message object: its own avatar_url and
      // sender_full_name are the old ones).
      await eventually(
        async () => (await avatarOf(row)) === user.avatar_url,
        "the new avatar on the old message",
      );
      await byRole(hamlet, "article", `Othello the Renamed, ${await timeOf(row)}`);
      await byRole(hamlet, "button", "Othello the Renamed");
      shots.push(await screenshot(hamlet, "feed-new-avatar"));
    } finally {
      await expectSuccess(
        server.as("othello").PATCH("/settings", { body: { full_name: OTHELLO } }),
      );
    }
  });

  it("a search highlights its matches in the topic and the content; an edit drops a stale highlight", async () => {
    const id = await send("othello", "balcony scene", "The balcony is high above the garden");
    await articleWith(hamlet, "The balcony is high above the garden");
    await hamlet.evaluate(() => void (location.hash = "#narrow/search/balcony"));
    await waitForFeed(hamlet, "Search results for balcony");
    const row = await articleWith(hamlet, "The balcony is high above the garden");
    // The topic's link in the conversation's bar, its match marked; and the content's.
    const topic = await inside(row, "link", "balcony scene");
    expect(
      await topic.evaluate((a) => [...a.querySelectorAll("mark")].map((m) => m.textContent)),
    ).toEqual(["balcony"]);
    expect(
      await row.evaluate((a) => [...a.querySelectorAll(".content mark")].map((m) => m.textContent)),
    ).toEqual(["balcony"]);
    await expectNoSeriousAxeViolations(hamlet, "the search results");
    shots.push(await screenshot(hamlet, "feed-search-topic-highlight"));
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    await expectNoSeriousAxeViolations(hamlet, "the search results (dark)");
    shots.push(await screenshot(hamlet, "feed-search-topic-highlight-dark"));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);

    // Othello edits it: the new content shows, not the search's highlighting of the old one.
    await expectSuccess(
      server.as("othello").PATCH("/messages/{message_id}", {
        params: { path: { message_id: id } },
        body: { content: "The wall is high above the garden" },
      }),
    );
    await articleWith(hamlet, "The wall is high above the garden");
    expect(
      await hamlet.$$eval("[role=feed] article", (as) =>
        as.some((a) => a.textContent?.includes("The balcony is high")),
      ),
    ).toBe(false);
    await hamlet.evaluate(() => void (location.hash = "#feed"));
    await waitForFeed(hamlet, "All messages");
  });

  it("Hamlet's Recent conversations follows Othello's topic moves and a deletion, live", async () => {
    const first = await send("othello", "old plot", "The first act of the old plot");
    await send("hamlet", "old plot", "Hamlet's word on the old plot");
    const last = await send("othello", "old plot", "Othello's last word on the old plot");
    await articleWith(hamlet, "Othello's last word on the old plot");
    await hamlet.keyboard.press("t");
    await byRole(hamlet, "region", "Recent conversations");
    // No notification-bot message in either topic: the rows show the users' own messages.
    const QUIET = {
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: false,
    };
    const rowText = async (topic: string) =>
      (await byRole(hamlet, "link", topic)).evaluate((a) => a.closest("tr")?.textContent ?? "");
    expect(await rowText("old plot")).toContain(OTHELLO);

    // Othello's last message alone moves: the old row's newest is Hamlet's, the new row Othello's.
    await expectSuccess(
      server.as("othello").PATCH("/messages/{message_id}", {
        params: { path: { message_id: last } },
        body: { topic: "side plot", propagate_mode: "change_one", ...QUIET },
      }),
    );
    await byRole(hamlet, "link", "side plot");
    expect(await rowText("side plot")).toContain(OTHELLO);
    await eventually(
      async () => (await rowText("old plot")).includes("King Hamlet"),
      "the old row's last sender to be Hamlet",
    );
    shots.push(await screenshot(hamlet, "feed-recent-after-move"));

    // The whole topic moves: its row goes, the new topic's row takes its messages.
    await expectSuccess(
      server.as("othello").PATCH("/messages/{message_id}", {
        params: { path: { message_id: first } },
        body: { topic: "new plot", propagate_mode: "change_all", ...QUIET },
      }),
    );
    await byRole(hamlet, "link", "new plot");
    await waitForNoRole(hamlet, "link", "old plot");
    expect(await rowText("new plot")).toContain("King Hamlet");
    const moved = await expectSuccess(
      server.as("hamlet").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 10,
            num_after: 0,
            narrow: [
              { operator: "channel", operand: verona },
              { operator: "topic", operand: "new plot" },
            ],
          },
        },
      }),
    );
    expect(moved.messages.map((m) => m.id)).toHaveLength(2);

    // To another channel: the row follows it there.
    await expectSuccess(
      server.as("othello").PATCH("/messages/{message_id}", {
        params: { path: { message_id: first } },
        body: {
          stream_id: server.creds.channels.Denmark!.stream_id,
          propagate_mode: "change_all",
          ...QUIET,
        },
      }),
    );
    await eventually(
      async () => (await rowText("new plot")).startsWith("Denmark"),
      "the row to move to Denmark",
    );

    // A deletion: the side plot's only message goes, and its row with it.
    await expectSuccess(
      server.as("iago").DELETE("/messages/{message_id}", {
        params: { path: { message_id: last } },
      }),
    );
    await waitForNoRole(hamlet, "link", "side plot");
    await byRole(hamlet, "link", "new plot");
  });
});
