/**
 * GET, POST and DELETE /users/me/alert_words and the has_alert_word flag on send
 * (zerver/tests/test_alert_words.py): stripping, case-insensitivity, the length limit, the
 * `alert_words` events and register state, Zulip's word boundaries, and the per-process cache of
 * an organization's words (a send reads none once known; a change is seen at once).
 */
import { describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { asUser, sendToChannel, untyped } from "../helpers/builders.ts";
import { useTestServer } from "../helpers/server.ts";
import { formOf, realClient } from "../helpers/real-client.ts";

const server = useTestServer();
const words = (as: string) => server.as(as).GET("/users/me/alert_words");
const add = (as: string, alert_words: string[]) =>
  server.as(as).POST("/users/me/alert_words", { body: { alert_words } });
const remove = (as: string, alert_words: string[]) =>
  server.as(as).DELETE("/users/me/alert_words", { body: { alert_words } });
const userId = (name: string) => server.creds.users[name]!.user_id;
/** Othello, subscribed to Scotland (with iago, hamlet and shiva). */
const othello = () => asUser(server, "othello");

const flagsOf = async (as: string, id: number) =>
  (
    await expectSuccess(
      server.as(as).GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    )
  ).message.flags;
const alerts = async (content: string) =>
  (
    await flagsOf(
      "hamlet",
      (await sendToChannel(othello(), { to: "Scotland", topic: "alerts", content })).id,
    )
  ).includes("has_alert_word");

describe("alert words", () => {
  it("starts empty, adds stripped words case-insensitively, removes them case-insensitively, with events and register state", async () => {
    expect((await expectSuccess(words("cordelia"))).alert_words).toEqual([]);
    const events = await queueOf(server, "cordelia", ["alert_words"]);
    const added = await expectSuccess(add("cordelia", ["one ", "\n two", "three", "", "  "]));
    expect(added.alert_words).toEqual(["one", "two", "three"]);
    // Words already there in any case are skipped; of repeats in one request the last spelling wins.
    const again = await expectSuccess(
      add("cordelia", ["ONE", "Four", "FOUR", "multi-word word", "☃"]),
    );
    expect(again.alert_words).toEqual(["one", "two", "three", "FOUR", "multi-word word", "☃"]);
    const removed = await expectSuccess(remove("cordelia", ["TWO", "not there", "☃"]));
    expect(removed.alert_words).toEqual(["one", "three", "FOUR", "multi-word word"]);
    expect((await expectSuccess(words("cordelia"))).alert_words).toEqual(removed.alert_words);
    expect(await events()).toEqual([
      { type: "alert_words", alert_words: ["one", "two", "three"] },
      { type: "alert_words", alert_words: ["one", "two", "three", "FOUR", "multi-word word", "☃"] },
      { type: "alert_words", alert_words: ["one", "three", "FOUR", "multi-word word"] },
    ]);
    const state = await expectSuccess(
      server.as("cordelia").POST("/register", { body: { fetch_event_types: ["alert_words"] } }),
    );
    expect((state as { alert_words?: string[] }).alert_words).toEqual(removed.alert_words);
    // Another user's words are their own.
    expect((await expectSuccess(words("othello"))).alert_words).toEqual([]);
  });

  it("refuses a word over 100 characters, a missing list and a list of non-strings with Zulip's texts", async () => {
    await expectError(
      add("aaron", ["fine", "x".repeat(101)]),
      400,
      "alert_words[1] is too long (limit: 100 characters)",
    );
    expect((await expectSuccess(add("aaron", ["x".repeat(100)]))).alert_words).toEqual([
      "x".repeat(100),
    ]);
    await expectError(
      server.as("aaron").POST("/users/me/alert_words", { body: untyped({}) }),
      400,
      "Missing 'alert_words' argument",
      { code: "REQUEST_VARIABLE_MISSING", var_name: "alert_words" },
    );
    // PostgreSQL cannot store NUL: refused when added, matching nothing when removed.
    await expectError(
      add("aaron", ["ok", "bad\0"]),
      400,
      "Invalid character in alert_words[1], at position 4.",
    );
    expect((await expectSuccess(remove("aaron", ["x\0"]))).alert_words).toEqual(["x".repeat(100)]);
    await expectError(
      server.as("aaron").DELETE("/users/me/alert_words", { body: { alert_words: untyped([1]) } }),
      400,
      "alert_words[0] is not a string",
    );
  });

  it("takes form bodies with a JSON list and '+' for spaces, as python-zulip-api sends them", async () => {
    const words = ["red alert", "Blue"];
    expect(formOf({ alert_words: words })).toContain("red+alert");
    expect(
      await realClient(server, "prospero", "POST", "/users/me/alert_words", { alert_words: words }),
    ).toMatchObject({
      status: 200,
      body: { result: "success", alert_words: ["red alert", "Blue"] },
    });
    expect(
      await realClient(server, "prospero", "DELETE", "/users/me/alert_words", {
        alert_words: ["RED ALERT"],
      }),
    ).toMatchObject({
      status: 200,
      body: { result: "success", alert_words: ["Blue"] },
    });
    const get = await realClient(server, "prospero", "GET", "/users/me/alert_words");
    expect(get.body.alert_words).toEqual(["Blue"]);
  });
});

describe("the has_alert_word flag on send", () => {
  it("follows Zulip's boundaries: punctuation and the content's ends, not inside words or URLs, any case", async () => {
    await expectSuccess(add("hamlet", ["one", "two", "three"]));
    expect(await alerts("Normal alert one time")).toBe(true);
    expect(await alerts("Normal alert one")).toBe(true);
    expect(await alerts("two normal alerts")).toBe(true);
    expect(await alerts("This one? should alert")).toBe(true);
    expect(await alerts("Definitely time for three.")).toBe(true);
    expect(await alerts("One two three o'clock")).toBe(true);
    expect(await alerts("Case of ONE, won't stop me")).toBe(true);
    expect(await alerts("Don't alert on http://t.co/one/ URLs")).toBe(false);
    expect(await alerts("Don't alert on http://t.co/one URLs")).toBe(false);
    expect(await alerts("Don't alert on clone, twofold or seventytwofold")).toBe(false);
    await expectSuccess(remove("hamlet", ["one", "two", "three"]));
  });

  it("appears in GET /messages and in each recipient's message event, only for users whose word it has", async () => {
    await expectSuccess(add("hamlet", ["kumquat"]));
    await expectSuccess(add("iago", ["Marmalade"]));
    // Cordelia is not subscribed to Scotland: her word flags nothing there.
    await expectSuccess(add("cordelia", ["kumquat"]));
    const hamletEvents = await queueOf(server, "hamlet", ["message"]);
    const iagoEvents = await queueOf(server, "iago", ["message"]);
    const { id } = await sendToChannel(othello(), {
      to: "Scotland",
      topic: "alerts",
      content: "A KUMQUAT, not a marmalade",
    });
    const flagsIn = async (read: () => Promise<Record<string, unknown>[]>) =>
      (await read()).find((e) => (e.message as { id: number }).id === id)!.flags;
    expect(await flagsIn(hamletEvents)).toEqual(["has_alert_word"]);
    expect(await flagsIn(iagoEvents)).toEqual(["has_alert_word"]);
    expect(await flagsOf("othello", id)).toEqual([]);
    expect(
      await server.db.userMessage.count({
        where: { messageId: id, userProfileId: userId("cordelia") },
      }),
    ).toBe(0);
    // GET /messages, and the is:alerted narrow.
    const { messages } = await expectSuccess(
      server.as("hamlet").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 5,
            num_after: 0,
            narrow: [{ operator: "is", operand: "alerted" }],
          },
        },
      }),
    );
    expect(messages.find((m) => m.id === id)?.flags).toEqual(["has_alert_word"]);
    // A word removed flags nothing from then on (the cache follows at once).
    await expectSuccess(remove("iago", ["marmalade"]));
    const { id: later } = await sendToChannel(othello(), {
      to: "Scotland",
      topic: "alerts",
      content: "more marmalade",
    });
    expect(await flagsOf("iago", later)).toEqual([]);
  });

  it("flags the sender's own message too, as Zulip does, and direct messages", async () => {
    await expectSuccess(add("othello", ["moorish"]));
    const { id: own } = await sendToChannel(othello(), {
      to: "Scotland",
      topic: "alerts",
      content: "a moorish arch",
    });
    expect(await flagsOf("othello", own)).toEqual(["has_alert_word"]);
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [userId("othello")], content: "Moorish?" },
      }),
    );
    expect(await flagsOf("othello", id)).toEqual(["has_alert_word"]);
  });

  it("follows an edit of the content, as Zulip's update_user_message_flags", async () => {
    await expectSuccess(add("hamlet", ["ALERT"]));
    const { id } = await sendToChannel(othello(), {
      to: "Scotland",
      topic: "alerts",
      content: "this is an alert for you",
    });
    expect(await flagsOf("hamlet", id)).toEqual(["has_alert_word"]);
    const edit = (content: string) =>
      expectSuccess(
        server.as("othello").PATCH("/messages/{message_id}", {
          params: { path: { message_id: id } },
          body: { content },
        }),
      );
    await edit("new ALERT for you");
    expect(await flagsOf("hamlet", id)).toEqual(["has_alert_word"]);
    await edit("sorry false alarm");
    expect(await flagsOf("hamlet", id)).toEqual([]);
    await edit("alert again");
    expect(await flagsOf("hamlet", id)).toEqual(["has_alert_word"]);
    await expectSuccess(remove("hamlet", ["alert"]));
  });

  it("costs a send no statement once the organization's words are known", async () => {
    await expectSuccess(add("hamlet", ["budgetword"]));
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      await sendToChannel(othello(), { to: "Scotland", topic: "alerts", content: "warm up" });
      seen.length = 0;
      const { id: plain } = await sendToChannel(othello(), {
        to: "Scotland",
        topic: "alerts",
        content: "nothing here",
      });
      const { id: alerted } = await sendToChannel(othello(), {
        to: "Scotland",
        topic: "alerts",
        content: "a budgetword here",
      });
      const [a, b] = seen.filter((i) => i.operationId === "send-message").map((i) => i.statements);
      if (process.env.SHOW_STATEMENTS) console.log("send-message", a, b);
      expect(b).toBe(a);
      expect(b).toBeLessThanOrEqual(6);
      expect(await flagsOf("hamlet", alerted)).toEqual(["has_alert_word"]);
      expect(await flagsOf("hamlet", plain)).toEqual([]);
    } finally {
      server.deps.observe = undefined;
    }
  });
});
