/**
 * POST /messages/flags, /messages/flags/narrow, /mark_all_as_read, /mark_stream_as_read and
 * /mark_topic_as_read (zerver/tests/test_message_flags.py): Zulip's texts, historical rows, the
 * subscription rule for unread messages, the `update_message_flags` events and register's
 * `unread_msgs` after each change.
 */
import { describe, expect, it } from "vitest";
import {
  doMarkAllAsRead,
  doMarkChannelAsRead,
} from "../../server/actions/messages/message-flags.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { sendDirect, sendToChannel, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const userId = (name: string) => server.creds.users[name]!.user_id;

const flags = (as: string, op: string, flag: string, messages: number[]) =>
  server.as(as).POST("/messages/flags", { body: { op, flag, messages } });
async function flagsOf(as: string, id: number) {
  const { message } = await expectSuccess(
    server.as(as).GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
  );
  return message.flags;
}
/** What an action takes to run as this user (the server's dependencies, realm and profile). */
async function actionContext(name: string) {
  const db = server.deps.db;
  return {
    ...server.deps,
    realm: await db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } }),
    user: await db.userProfile.findUniqueOrThrow({ where: { id: userId(name) } }),
  };
}

async function unread(as: string) {
  const state = await expectSuccess(
    server.as(as).POST("/register", {
      body: {
        fetch_event_types: ["message", "update_message_flags"],
        client_capabilities: { empty_topic_name: true },
      },
    }),
  );
  return (state as any).unread_msgs;
}

describe("POST /messages/flags", () => {
  it("refuses unknown and bookkeeping flags and unknown operations with Zulip's texts", async () => {
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "flag errors",
      content: "hello",
    });
    await expectError(flags("othello", "add", "bogus", [id]), 400, "Invalid flag: 'bogus'");
    await expectError(
      flags("othello", "add", "is_private", [id]),
      400,
      "Invalid flag: 'is_private'",
    );
    await expectError(
      flags("othello", "add", "wildcard_mentioned", [id]),
      400,
      "Invalid flag: 'wildcard_mentioned'",
    );
    for (const flag of [
      "mentioned",
      "has_alert_word",
      "historical",
      "group_mentioned",
      "force_expand",
    ])
      await expectError(flags("othello", "add", flag, [id]), 400, `Flag not editable: '${flag}'`);
    await expectError(
      flags("othello", "toggle", "read", [id]),
      400,
      "Invalid message flag operation: 'toggle'",
    );
    await expectError(
      server.as("othello").POST("/messages/flags", { body: untyped({ op: "add", flag: "read" }) }),
      400,
      "Missing 'messages' argument",
    );
    expect(await flagsOf("othello", id)).toEqual([]);
  });

  it("marks read and unread, echoing the ids sent, with events and unread_msgs to match", async () => {
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "flag read",
      content: "hello",
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "flag read",
      content: "@**Othello, the Moor of Venice** look",
    });
    const events = await queueOf(server, "othello", ["update_message_flags"]);
    const before = await unread("othello");
    expect(before.streams).toContainEqual({
      stream_id: channel("Denmark"),
      topic: "flag read",
      unread_message_ids: [a, b],
    });
    expect(before.mentions).toContain(b);

    // An id nobody has (read needs no access: ignored) and a repeat are answered as sent.
    const read = await expectSuccess(flags("othello", "add", "read", [b, a, 999999, b]));
    expect(read).toEqual({ result: "success", msg: "", messages: [b, a, 999999, b] });
    const after = await unread("othello");
    expect(after.streams.some((s: any) => s.topic === "flag read")).toBe(false);
    expect(after.mentions).not.toContain(b);
    expect(after.count).toBe(before.count - 2);
    // Reading again changes nothing: the event lists no message.
    await expectSuccess(flags("othello", "add", "read", [a]));

    const unreadAgain = await expectSuccess(flags("othello", "remove", "read", [b]));
    expect(unreadAgain).toEqual({
      result: "success",
      msg: "",
      messages: [b],
      ignored_because_not_subscribed_channels: [],
    });
    expect(await events()).toEqual([
      {
        type: "update_message_flags",
        op: "add",
        operation: "add",
        flag: "read",
        messages: [b, a],
        all: false,
      },
      {
        type: "update_message_flags",
        op: "add",
        operation: "add",
        flag: "read",
        messages: [],
        all: false,
      },
      {
        type: "update_message_flags",
        op: "remove",
        operation: "remove",
        flag: "read",
        messages: [b],
        all: false,
        message_details: {
          [String(b)]: {
            type: "stream",
            stream_id: channel("Denmark"),
            topic: "flag read",
            unmuted_stream_msg: true,
            mentioned: true,
          },
        },
      },
    ]);
    const last = await unread("othello");
    expect(last.streams).toContainEqual({
      stream_id: channel("Denmark"),
      topic: "flag read",
      unread_message_ids: [b],
    });
    expect(last.mentions).toContain(b);
  });

  it("describes direct messages marked unread by their other participants", async () => {
    const { id: dm } = await sendDirect(server.as("hamlet"), {
      type: "private",
      to: [userId("othello")],
      content: "psst",
    });
    const { id: group } = await sendDirect(server.as("hamlet"), {
      type: "private",
      to: [userId("othello"), userId("cordelia")],
      content: "psst",
    });
    const { id: self } = await sendDirect(server.as("othello"), {
      type: "private",
      to: [userId("othello")],
      content: "psst",
    });
    await expectSuccess(flags("othello", "add", "read", [dm, group, self]));
    const events = await queueOf(server, "othello", ["update_message_flags"]);
    await expectSuccess(flags("othello", "remove", "read", [dm, group, self]));
    const [event] = (await events()) as any[];
    expect(event.messages).toEqual([dm, group, self]);
    expect(event.message_details).toEqual({
      [String(dm)]: { type: "private", user_ids: [userId("hamlet")] },
      [String(group)]: {
        type: "private",
        user_ids: [userId("hamlet"), userId("cordelia")].sort((x, y) => x - y),
      },
      [String(self)]: { type: "private", user_ids: [] },
    });
    const state = await unread("othello");
    expect(state.pms).toContainEqual(
      expect.objectContaining({
        other_user_id: userId("hamlet"),
        unread_message_ids: expect.arrayContaining([dm]),
      }),
    );
    expect(state.huddles.some((h: any) => h.unread_message_ids.includes(group))).toBe(true);
  });

  it("stars a message of a channel's shared history, adding it to the caller's history", async () => {
    // Hamlet is not subscribed to Venice (public, shared history).
    const { id } = await sendToChannel(server.as("iago"), {
      to: "Venice",
      topic: "history",
      content: "hello",
    });
    expect(await flagsOf("hamlet", id)).toEqual(["read", "historical"]);
    const events = await queueOf(server, "hamlet", ["update_message_flags"]);
    await expectSuccess(flags("hamlet", "add", "starred", [id]));
    expect(await flagsOf("hamlet", id)).toEqual(["read", "starred", "historical"]);
    // Unstarring keeps the row (and its historical flag).
    await expectSuccess(flags("hamlet", "remove", "starred", [id]));
    expect(await flagsOf("hamlet", id)).toEqual(["read", "historical"]);
    expect(((await events()) as any[]).map((e) => [e.op, e.messages])).toEqual([
      ["add", [id]],
      ["remove", [id]],
    ]);
    const starred = await expectSuccess(
      server.as("hamlet").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 5,
            narrow: [{ operator: "is", operand: "starred" }],
          },
        },
      }),
    );
    expect(starred.messages.map((m) => m.id)).not.toContain(id);
  });

  it("refuses messages the caller may not read, changing none of the list", async () => {
    const { id: secret } = await sendToChannel(server.as("iago"), {
      to: "core team",
      topic: "secret",
      content: "hello",
    });
    const { id: open } = await sendToChannel(server.as("iago"), {
      to: "Verona",
      topic: "open",
      content: "hello",
    });
    await expectError(flags("hamlet", "add", "starred", [open, secret]), 400, "Invalid message(s)");
    await expectError(
      flags("hamlet", "add", "collapsed", [2 ** 31 + 5]),
      400,
      "Invalid message(s)",
    );
    await expectError(flags("hamlet", "add", "starred", [999999]), 400, "Invalid message(s)");
    expect(await flagsOf("hamlet", open)).not.toContain("starred");
    // Reading, or unstarring, what one cannot see is a no-op, as in Zulip.
    await expectSuccess(flags("hamlet", "add", "read", [secret]));
    await expectSuccess(flags("hamlet", "remove", "starred", [secret]));
  });

  it("does not mark as unread the messages of channels the caller is not subscribed to", async () => {
    const { id: venice } = await sendToChannel(server.as("iago"), {
      to: "Venice",
      topic: "not subscribed",
      content: "hello",
    });
    const { id: verona } = await sendToChannel(server.as("iago"), {
      to: "Verona",
      topic: "subscribed",
      content: "hello",
    });
    await expectSuccess(flags("hamlet", "add", "read", [verona]));
    const answer = await expectSuccess(flags("hamlet", "remove", "read", [venice, verona]));
    expect(answer.ignored_because_not_subscribed_channels).toEqual([channel("Venice")]);
    expect(await flagsOf("hamlet", venice)).toEqual(["read", "historical"]);
    expect(await flagsOf("hamlet", verona)).toEqual([]);
  });

  it("marks unread a message received before subscribing, as a historical row", async () => {
    const { id } = await sendToChannel(server.as("iago"), {
      to: "Venice",
      topic: "before subscribing",
      content: "hello",
    });
    await expectSuccess(
      server.as("cordelia").POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name: "Venice" }] },
      }),
    );
    expect(await flagsOf("cordelia", id)).toEqual(["read", "historical"]);
    await expectSuccess(flags("cordelia", "remove", "read", [id]));
    expect(await flagsOf("cordelia", id)).toEqual(["historical"]);
    expect((await unread("cordelia")).streams).toContainEqual({
      stream_id: channel("Venice"),
      topic: "before subscribing",
      unread_message_ids: [id],
    });
  });
});

describe("POST /messages/flags/narrow", () => {
  it("marks a range of a narrow, with Zulip's counts", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (
          await sendToChannel(server.as("hamlet"), {
            to: "Scotland",
            topic: "narrow range",
            content: "hello",
          })
        ).id,
      );
    const narrow = [
      { operator: "channel", operand: "Scotland" },
      { operator: "topic", operand: "narrow range" },
    ];
    await expectSuccess(flags("othello", "add", "read", [ids[1]!]));
    const first = await expectSuccess(
      server.as("othello").POST("/messages/flags/narrow", {
        body: {
          anchor: String(ids[2]),
          num_before: 2,
          num_after: 1,
          narrow,
          op: "add",
          flag: "read",
        },
      }),
    );
    expect(first).toEqual({
      result: "success",
      msg: "",
      processed_count: 4,
      updated_count: 3,
      first_processed_id: ids[0],
      last_processed_id: ids[3],
      found_oldest: false,
      found_newest: false,
    });
    const rest = await expectSuccess(
      server.as("othello").POST("/messages/flags/narrow", {
        body: {
          anchor: "first_unread",
          num_before: 0,
          num_after: 10,
          narrow,
          op: "add",
          flag: "read",
        },
      }),
    );
    expect(rest).toMatchObject({
      processed_count: 1,
      updated_count: 1,
      first_processed_id: ids[4],
      found_newest: true,
    });
    const unmark = await expectSuccess(
      server.as("othello").POST("/messages/flags/narrow", {
        body: {
          anchor: "newest",
          include_anchor: false,
          num_before: 10,
          num_after: 0,
          narrow,
          op: "remove",
          flag: "read",
        },
      }),
    );
    expect(unmark).toMatchObject({
      processed_count: 5,
      updated_count: 5,
      found_oldest: true,
      found_newest: true,
      ignored_because_not_subscribed_channels: [],
    });
    const empty = await expectSuccess(
      server.as("othello").POST("/messages/flags/narrow", {
        body: {
          anchor: "oldest",
          num_before: 0,
          num_after: 0,
          narrow: [
            { operator: "channel", operand: "Scotland" },
            { operator: "topic", operand: "nothing here" },
          ],
          op: "add",
          flag: "starred",
        },
      }),
    );
    expect(empty).toMatchObject({
      processed_count: 0,
      updated_count: 0,
      first_processed_id: null,
      last_processed_id: null,
    });
  });

  it("refuses a bad anchor, an excluded anchor inside the range, a bad flag and a bad narrow", async () => {
    const post = (body: Record<string, unknown>) =>
      server.as("othello").POST("/messages/flags/narrow", {
        body: {
          anchor: "newest",
          num_before: 1,
          num_after: 0,
          narrow: [],
          op: "add",
          flag: "read",
          ...body,
        },
      });
    await expectError(post({ anchor: "latest" }), 400, "Invalid anchor");
    await expectError(
      post({ anchor: "5", num_after: 1, include_anchor: false }),
      400,
      "The anchor can only be excluded at an end of the range",
    );
    await expectError(post({ flag: "mentioned" }), 400, "Flag not editable: 'mentioned'");
    await expectError(post({ op: "flip" }), 400, "Invalid message flag operation: 'flip'");
    await expectError(
      post({ narrow: [{ operator: "channel", operand: "Atlantis" }] }),
      400,
      "Invalid narrow operator: unknown channel Atlantis",
      { code: "BAD_NARROW" },
    );
  });
});

describe("mark as read", () => {
  it("POST /mark_stream_as_read and /mark_topic_as_read", async () => {
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Rome",
      topic: "pizza",
      content: "hello",
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Rome",
      topic: "Pasta",
      content: "hello",
    });
    await expectError(
      server
        .as("cordelia")
        .POST("/mark_stream_as_read", { body: { stream_id: channel("core team") } }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      server
        .as("cordelia")
        .POST("/mark_topic_as_read", { body: { stream_id: channel("Rome"), topic_name: "lunch" } }),
      400,
      "No such topic 'lunch'",
    );
    const events = await queueOf(server, "cordelia", ["update_message_flags"]);
    await expectSuccess(
      server
        .as("cordelia")
        .POST("/mark_topic_as_read", { body: { stream_id: channel("Rome"), topic_name: "pasta" } }),
    );
    expect(await flagsOf("cordelia", b)).toEqual(["read"]);
    expect(await flagsOf("cordelia", a)).toEqual([]);
    await expectSuccess(
      server.as("cordelia").POST("/mark_stream_as_read", { body: { stream_id: channel("Rome") } }),
    );
    // Nothing left unread: no event.
    await expectSuccess(
      server.as("cordelia").POST("/mark_stream_as_read", { body: { stream_id: channel("Rome") } }),
    );
    expect(await events()).toEqual([
      {
        type: "update_message_flags",
        op: "add",
        operation: "add",
        flag: "read",
        messages: [b],
        all: false,
      },
      {
        type: "update_message_flags",
        op: "add",
        operation: "add",
        flag: "read",
        messages: expect.arrayContaining([a]),
        all: false,
      },
    ]);
    expect(
      (await unread("cordelia")).streams.some((s: any) => s.stream_id === channel("Rome")),
    ).toBe(false);
  });

  it("mark_stream_as_read marks a channel in batches, newest first, each with its event", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (
          await sendToChannel(server.as("hamlet"), {
            to: "Verona",
            topic: `batched ${i % 2}`,
            content: "hello",
          })
        ).id,
      );
    const { id: elsewhere } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "not this channel",
      content: "hello",
    });
    const db = server.deps.db;
    const ctx = await actionContext("cordelia");
    const verona = await db.stream.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name: "Verona" },
    });
    // Whatever else of Verona was unread before, these five are its newest.
    const [row] = await db.$queryRaw<{ before: number }[]>`
      SELECT count(*)::int AS before FROM user_message um JOIN message m ON m.id = um.message_id
      WHERE um.user_profile_id = ${userId("cordelia")} AND m.recipient_id = ${verona.recipientId!}`;
    const before = row!.before;
    expect(before).toBeGreaterThanOrEqual(5);
    const events = await queueOf(server, "cordelia", ["update_message_flags"]);
    const marked = await doMarkChannelAsRead(ctx, verona.recipientId!, null, { batchSize: 2 });
    expect(marked).toBeGreaterThanOrEqual(5);
    const batches = (await events()).map((e: any) => e.messages as number[]);
    // Batches of two, newest first, each committed with the event naming its messages.
    expect(batches.slice(0, 2)).toEqual([ids.slice(3, 5), ids.slice(1, 3)]);
    expect(batches[2]).toContain(ids[0]);
    expect(batches.every((b) => b.length >= 1 && b.length <= 2)).toBe(true);
    expect(new Set(batches.flat()).size).toBe(marked);
    expect((await unread("cordelia")).streams.some((s: any) => s.stream_id === verona.id)).toBe(
      false,
    );
    // The other channel's message is still unread.
    expect(
      (await unread("cordelia")).streams.some((s: any) => s.unread_message_ids.includes(elsewhere)),
    ).toBe(true);
  });

  it("POST /mark_all_as_read marks everything, in batches, with one `all` event", async () => {
    await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "all read 1",
      content: "hello",
    });
    await sendDirect(server.as("hamlet"), {
      type: "private",
      to: [userId("prospero")],
      content: "psst",
    });
    expect((await unread("prospero")).count).toBeGreaterThan(1);
    const events = await queueOf(server, "prospero", ["update_message_flags"]);
    const ctx = await actionContext("prospero");
    // Out of time before the first batch: nothing done, not complete.
    expect(await doMarkAllAsRead(ctx, { timeoutMs: 0 })).toBe(false);
    expect((await unread("prospero")).count).toBeGreaterThan(1);
    // Batches of one: each its own transaction, one event at the end.
    expect(await doMarkAllAsRead(ctx, { batchSize: 1 })).toBe(true);
    const state = await unread("prospero");
    expect(state).toMatchObject({
      count: 0,
      pms: [],
      streams: [],
      huddles: [],
      mentions: [],
      old_unreads_missing: false,
    });
    expect(await events()).toEqual([
      {
        type: "update_message_flags",
        op: "add",
        operation: "add",
        flag: "read",
        messages: [],
        all: true,
      },
    ]);
    await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "all read 2",
      content: "hello",
    });
    expect(await expectSuccess(server.as("prospero").POST("/mark_all_as_read"))).toEqual({
      result: "success",
      msg: "",
      complete: true,
    });
    expect((await unread("prospero")).count).toBe(0);
  });
});

describe("real clients' encodings", () => {
  it("form bodies with JSON text lists and `+` for spaces", async () => {
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "form body topic",
      content: "hello",
    });
    const post = async (path: string, body: string) => {
      const c = server.creds.users.othello!;
      const res = await fetch(`${server.baseUrl}/api/v1${path}`, {
        method: "POST",
        headers: {
          Authorization: "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64"),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    expect(await post("/messages/flags", `messages=%5B${id}%5D&op=add&flag=starred`)).toEqual({
      status: 200,
      body: { result: "success", msg: "", messages: [id] },
    });
    expect(await flagsOf("othello", id)).toEqual(["starred"]);
    expect(
      (
        await post(
          "/messages/flags/narrow",
          `anchor=${id}&num_before=0&num_after=0&narrow=%5B%5D&op=add&flag=read`,
        )
      ).body,
    ).toMatchObject({ result: "success", processed_count: 1, updated_count: 1 });
    await expectSuccess(flags("othello", "remove", "read", [id]));
    expect(
      await post(
        "/mark_topic_as_read",
        `stream_id=${channel("Verona")}&topic_name=form+body+topic`,
      ),
    ).toEqual({ status: 200, body: { result: "success", msg: "" } });
    expect(await flagsOf("othello", id)).toEqual(["read", "starred"]);
    expect((await post("/mark_stream_as_read", `stream_id=${channel("Verona")}`)).status).toBe(200);
    expect((await post("/mark_all_as_read", "")).body).toEqual({
      result: "success",
      msg: "",
      complete: true,
    });
  });
});

describe("statements and the unread cap", () => {
  /** The statements of the one request of `operationId` that `request` makes. */
  async function statementsOf(operationId: string, request: () => Promise<unknown>) {
    const seen: { operationId: string; statements: number }[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      await request();
    } finally {
      server.deps.observe = undefined;
    }
    const info = seen.filter((i) => i.operationId === operationId);
    expect(info).toHaveLength(1);
    if (process.env.SHOW_STATEMENTS) console.log(operationId, info[0]!.statements);
    return info[0]!.statements;
  }

  it("marking 60 messages costs the statements of marking 3; mark_all_as_read a handful", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 63; i++)
      ids.push(
        (
          await sendToChannel(server.as("hamlet"), {
            to: "Denmark",
            topic: `budget ${i % 2}`,
            content: "hello",
          })
        ).id,
      );
    await expectSuccess(flags("othello", "add", "starred", ids.slice(0, 1))); // warms the caches
    const few = await statementsOf("update-message-flags", () =>
      expectSuccess(flags("othello", "add", "read", ids.slice(0, 3))),
    );
    const many = await statementsOf("update-message-flags", () =>
      expectSuccess(flags("othello", "add", "read", ids.slice(3))),
    );
    expect(many).toBe(few);
    // BEGIN, the UPDATE … RETURNING, the event, COMMIT.
    expect(many).toBeLessThanOrEqual(4);
    const marksUnread = await statementsOf("update-message-flags", () =>
      expectSuccess(flags("othello", "remove", "read", ids)),
    );
    // Marking unread also reads subscriptions and access, and the details of the event.
    expect(marksUnread).toBeLessThanOrEqual(6);
    const all = await statementsOf("mark-all-as-read", () =>
      expectSuccess(server.as("othello").POST("/mark_all_as_read")),
    );
    expect(all).toBeLessThanOrEqual(4);
    const narrow = await statementsOf("update-message-flags-for-narrow", () =>
      expectSuccess(
        server.as("othello").POST("/messages/flags/narrow", {
          body: {
            anchor: "newest",
            num_before: 100,
            num_after: 0,
            narrow: [{ operator: "channel", operand: "Denmark" }],
            op: "add",
            flag: "starred",
          },
        }),
      ),
    );
    // The narrow's lookup and range, then the flag change (starring reads access first).
    expect(narrow).toBeLessThanOrEqual(7);
  });

  it("unread_msgs holds the newest 50,000 unread messages, and says older ones are missing", async () => {
    const { id: template } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "many unread",
      content: "hello",
    });
    const columns = (
      await server.db.$queryRaw<{ name: string }[]>`
        SELECT column_name AS name FROM information_schema.columns
        WHERE table_name = 'message' AND column_name <> 'id' AND is_generated = 'NEVER'`
    ).map((c) => `"${c.name}"`);
    const list = columns.join(", ");
    const ids = await server.db.$queryRawUnsafe<{ id: number }[]>(
      `INSERT INTO message (${list}) SELECT ${list} FROM message, generate_series(1, 50001) WHERE id = $1 RETURNING id`,
      template,
    );
    const messageIds = ids.map((r) => r.id);
    await server.db.$executeRaw`
      INSERT INTO user_message (user_profile_id, message_id, flags)
      SELECT ${userId("aaron")}, unnest(${messageIds}::int[]), 0`;
    try {
      const state = await unread("aaron");
      expect(state.old_unreads_missing).toBe(true);
      const listed = [
        ...state.streams.flatMap((s: any) => s.unread_message_ids),
        ...state.pms.flatMap((s: any) => s.unread_message_ids),
        ...state.huddles.flatMap((s: any) => s.unread_message_ids),
      ];
      expect(listed).toHaveLength(50000);
      expect(Math.max(...listed)).toBe(Math.max(...messageIds));
      expect(listed).not.toContain(template);
      // mark_all_as_read clears them all, in batches. On a machine busy enough that 50 seconds
      // pass first, it answers complete: false with its progress kept, and the client asks again
      // (as Zulip's API documentation tells clients to): at most a few times.
      let calls = 0;
      for (;;) {
        calls++;
        const answer = await expectSuccess(server.as("aaron").POST("/mark_all_as_read"));
        if (answer.complete) break;
        expect(calls).toBeLessThan(5);
      }
      expect(await unread("aaron")).toMatchObject({
        count: 0,
        streams: [],
        old_unreads_missing: false,
      });
    } finally {
      await server.db.$executeRaw`DELETE FROM message WHERE id = ANY (${messageIds}::int[])`;
    }
  }, 300_000);
});
