import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();

/** The request under test (its answer checked by each test). */
const send = (as: string, body: Body<"/messages", "post">) =>
  server.as(as).POST("/messages", { body: body });
const fetchOne = (as: string, id: number, query: Record<string, boolean> = {}) =>
  server.as(as).GET("/messages/{message_id}", { params: { path: { message_id: id }, query } });

describe("POST /messages", () => {
  it("sends to a channel topic by channel id and by name", async () => {
    const verona = server.creds.channels.Verona!.stream_id;
    const { id } = await expectSuccess(
      send("hamlet", { type: "channel", to: verona, topic: "lunch", content: "Who is hungry?" }),
    );
    const { message } = await expectSuccess(fetchOne("othello", id));
    expect(message).toMatchObject({
      type: "stream",
      stream_id: verona,
      display_recipient: "Verona",
      subject: "lunch",
      content: "<p>Who is hungry?</p>",
    });
    const byName = await expectSuccess(
      send("hamlet", { type: "stream", to: "Verona", topic: "lunch", content: "me" }),
    );
    expect(byName.id).toBeGreaterThan(id);
  });

  it("sends a direct message to user ids and to emails", async () => {
    const othello = server.creds.users.othello!;
    const { id } = await expectSuccess(
      send("hamlet", { type: "direct", to: [othello.user_id], content: "Psst." }),
    );
    const { message } = await expectSuccess(fetchOne("othello", id));
    expect(message.type).toBe("private");
    expect(message.subject).toBe("");
    expect((message.display_recipient as { email: string }[]).map((r) => r.email).sort()).toEqual([
      "hamlet@zulip.com",
      "othello@zulip.com",
    ]);
    expect(message.flags).toEqual([]);
    const byEmail = await expectSuccess(
      send("hamlet", {
        type: "private",
        to: ["othello@zulip.com", "iago@zulip.com"],
        content: "Group chat",
      }),
    );
    const group = await expectSuccess(fetchOne("iago", byEmail.id));
    expect(group.message.display_recipient).toHaveLength(3);
  });

  it("refuses an unknown channel with STREAM_DOES_NOT_EXIST and its id", async () => {
    await expectError(
      send("hamlet", { type: "channel", to: 99999, topic: "x", content: "x" }),
      400,
      "Channel with ID '99999' does not exist",
      {
        code: "STREAM_DOES_NOT_EXIST",
        stream_id: 99999,
      },
    );
  });

  it("treats ids beyond the database's range as unknown, as Zulip does", async () => {
    await expectError(
      send("hamlet", { type: "channel", to: 99999999999, topic: "x", content: "x" }),
      400,
      "Channel with ID '99999999999' does not exist",
      {
        code: "STREAM_DOES_NOT_EXIST",
        stream_id: 99999999999,
      },
    );
    await expectError(fetchOne("hamlet", 99999999999), 400, "Invalid message(s)");
    await expectError(
      send("hamlet", { type: "channel", to: "Ver\u0000ona", topic: "x", content: "x" }),
      400,
      "Channel 'Ver\u0000ona' does not exist",
    );
  });

  it("refuses an unknown user id", async () => {
    await expectError(
      send("hamlet", { type: "direct", to: [99999], content: "x" }),
      400,
      "Invalid user ID 99999",
    );
  });

  it("refuses empty content and null bytes", async () => {
    await expectError(
      send("hamlet", { type: "channel", to: "Verona", topic: "x", content: "   " }),
      400,
      "Message must not be empty",
    );
    await expectError(
      send("hamlet", { type: "channel", to: "Verona", topic: "x", content: "a\u0000b" }),
      400,
      "Message must not contain null bytes",
    );
  });

  it("maps '(no topic)' to the empty topic and shows it by the display name unless the client supports it", async () => {
    const { id } = await expectSuccess(
      send("hamlet", { type: "channel", to: "Verona", topic: "(no topic)", content: "general" }),
    );
    expect((await expectSuccess(fetchOne("hamlet", id))).message.subject).toBe("(no topic)");
    expect(
      (await expectSuccess(fetchOne("hamlet", id, { allow_empty_topic_name: true }))).message
        .subject,
    ).toBe("");
  });

  it("truncates a topic over 60 characters with '...'", async () => {
    const { id } = await expectSuccess(
      send("hamlet", {
        type: "channel",
        to: "Verona",
        topic: "t".repeat(70),
        content: "long topic",
      }),
    );
    expect((await expectSuccess(fetchOne("hamlet", id))).message.subject).toBe(
      "t".repeat(57) + "...",
    );
  });

  it("refuses the empty topic when the organization disables it", async () => {
    await expectSuccess(
      server.as("iago").PATCH("/realm", { body: { topics_policy: "disable_empty_topic" } }),
    );
    try {
      await expectError(
        send("hamlet", { type: "channel", to: "Verona", topic: "", content: "x" }),
        400,
        "Sending messages to the (no topic) is not allowed in this channel.",
      );
    } finally {
      await expectSuccess(
        server.as("iago").PATCH("/realm", { body: { topics_policy: "allow_empty_topic" } }),
      );
    }
  });

  it("refuses a guest sending to a channel they are not subscribed to", async () => {
    await expectError(
      send("polonius", { type: "channel", to: "Scotland", topic: "x", content: "x" }),
      400,
      "Not authorized to send to channel 'Scotland'",
    );
  });

  it("renders mentions and sets the mentioned flag for the mentioned user only", async () => {
    const { id } = await expectSuccess(
      send("hamlet", {
        type: "channel",
        to: "Verona",
        topic: "mentions",
        content: "Hi @**Othello, the Moor of Venice**",
      }),
    );
    const { message } = await expectSuccess(fetchOne("othello", id));
    expect(message.content).toBe(
      `<p>Hi <span class="user-mention" data-user-id="${server.creds.users.othello!.user_id}">@Othello, the Moor of Venice</span></p>`,
    );
    expect(message.flags).toContain("mentioned");
    expect((await expectSuccess(fetchOne("cordelia", id))).message.flags).not.toContain(
      "mentioned",
    );
  });
});

describe("GET /messages/{message_id}", () => {
  it("returns the whole message, the raw content and the caller's flags", async () => {
    const { id } = await expectSuccess(
      send("hamlet", {
        type: "channel",
        to: "Verona",
        topic: "fetch",
        content: "**Bold** move",
        read_by_sender: true,
      }),
    );
    const data = await expectSuccess(fetchOne("hamlet", id));
    expect(data.raw_content).toBe("**Bold** move");
    expect(data.message).toMatchObject({
      id,
      sender_id: server.creds.users.hamlet!.user_id,
      sender_email: "hamlet@zulip.com",
      sender_full_name: "King Hamlet",
      sender_realm_str: "zulip",
      content: "<p><strong>Bold</strong> move</p>",
      content_type: "text/html",
      flags: ["read"],
      reactions: [],
      submessages: [],
      topic_links: [],
      is_me_message: false,
    });
    expect(data.message).not.toHaveProperty("last_edit_timestamp");
    expect(data.message).not.toHaveProperty("edit_history");
    expect(typeof data.message.recipient_id).toBe("number");
    expect(Math.abs(data.message.timestamp - Date.now() / 1000)).toBeLessThan(60);
  });

  it("returns raw Markdown with apply_markdown=false", async () => {
    const { id } = await expectSuccess(
      send("hamlet", { type: "channel", to: "Verona", topic: "fetch", content: "*raw*" }),
    );
    const { message } = await expectSuccess(fetchOne("hamlet", id, { apply_markdown: false }));
    expect(message).toMatchObject({ content: "*raw*", content_type: "text/x-markdown" });
  });

  it("shows an unsubscribed user a public channel message as read and historical", async () => {
    const { id } = await expectSuccess(
      send("iago", { type: "channel", to: "Scotland", topic: "history", content: "hi" }),
    );
    const { message } = await expectSuccess(fetchOne("cordelia", id));
    expect(message.flags).toEqual(["read", "historical"]);
  });

  it("answers 'Invalid message(s)' for a missing message, another pair's DM, or a private channel", async () => {
    await expectError(fetchOne("hamlet", 999999), 400, "Invalid message(s)", {
      code: "BAD_REQUEST",
    });
    const dm = await expectSuccess(
      send("hamlet", {
        type: "direct",
        to: [server.creds.users.cordelia!.user_id],
        content: "secret",
      }),
    );
    await expectError(fetchOne("othello", dm.id), 400, "Invalid message(s)");
    const priv = await expectSuccess(
      send("iago", { type: "channel", to: "core team", topic: "private", content: "secret" }),
    );
    await expectError(fetchOne("hamlet", priv.id), 400, "Invalid message(s)");
    await expectError(
      fetchOne(
        "polonius",
        (
          await expectSuccess(
            send("iago", { type: "channel", to: "Rome", topic: "x", content: "x" }),
          )
        ).id,
      ),
      400,
      "Invalid message(s)",
    );
  });

  it("includes edit history, newest first, with topics shown by display name", async () => {
    const { id } = await expectSuccess(
      send("hamlet", { type: "channel", to: "Verona", topic: "", content: "v1" }),
    );
    const t0 = new Date(Date.now() - 60_000);
    await server.db.messageEdit.create({
      data: {
        realmId: server.creds.realm.id,
        messageId: id,
        userId: server.creds.users.hamlet!.user_id,
        editTime: t0,
        prevContent: "v0",
        prevRenderedContent: "<p>v0</p>",
      },
    });
    await server.db.messageEdit.create({
      data: {
        realmId: server.creds.realm.id,
        messageId: id,
        userId: server.creds.users.hamlet!.user_id,
        prevTopic: "",
        topic: "new",
      },
    });
    await server.db.message.update({
      where: { id },
      data: { lastEditTime: new Date(), lastMovedTime: new Date() },
    });
    const { message } = await expectSuccess(fetchOne("hamlet", id));
    expect(message.edit_history).toEqual([
      expect.objectContaining({
        prev_topic: "(no topic)",
        topic: "new",
        user_id: server.creds.users.hamlet!.user_id,
      }),
      expect.objectContaining({
        prev_content: "v0",
        prev_rendered_content: "<p>v0</p>",
        timestamp: Math.floor(t0.getTime() / 1000),
      }),
    ]);
    expect(message.last_edit_timestamp).toBeTypeOf("number");
    expect(message.last_moved_timestamp).toBeTypeOf("number");
    const withEmpty = await expectSuccess(fetchOne("hamlet", id, { allow_empty_topic_name: true }));
    expect(withEmpty.message.edit_history![0]!.prev_topic).toBe("");
    // The organization may show moves only, or no history at all.
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { messageEditHistoryVisibilityPolicy: 2 },
    });
    expect((await expectSuccess(fetchOne("hamlet", id))).message.edit_history).toEqual([
      expect.objectContaining({ topic: "new" }),
    ]);
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { messageEditHistoryVisibilityPolicy: 3 },
    });
    expect((await expectSuccess(fetchOne("hamlet", id))).message).not.toHaveProperty(
      "edit_history",
    );
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { messageEditHistoryVisibilityPolicy: 1 },
    });
  });

  it("lists reactions oldest first", async () => {
    const { id } = await expectSuccess(
      send("hamlet", { type: "channel", to: "Verona", topic: "react", content: "react to me" }),
    );
    for (const [who, name, code] of [
      ["othello", "octopus", "1f419"],
      ["iago", "smile", "1f604"],
    ] as const)
      await server.db.reaction.create({
        data: {
          realmId: server.creds.realm.id,
          messageId: id,
          userProfileId: server.creds.users[who]!.user_id,
          emojiName: name,
          emojiCode: code,
        },
      });
    const { message } = await expectSuccess(fetchOne("hamlet", id));
    expect(message.reactions.map((r) => r.emoji_name)).toEqual(["octopus", "smile"]);
  });

  it("requires authentication", async () => {
    await expectError(
      server.client().GET("/messages/{message_id}", { params: { path: { message_id: 1 } } }),
      401,
      "Not logged in: API authentication or user session required",
    );
  });
});

describe("GET /messages", () => {
  it("returns the newest messages of a channel topic narrow in order", async () => {
    for (const n of [1, 2, 3])
      await expectSuccess(
        send("hamlet", { type: "channel", to: "Denmark", topic: "count", content: `n${n}` }),
      );
    const data = await expectSuccess(
      server.as("othello").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 2,
            num_after: 0,
            narrow: [
              { operator: "channel", operand: "Denmark" },
              { operator: "topic", operand: "count" },
            ],
            apply_markdown: false,
          },
        },
      }),
    );
    expect(data.messages.map((m) => m.content)).toEqual(["n2", "n3"]);
    expect(data).toMatchObject({ found_newest: true, found_oldest: false, history_limited: false });
  });

  it("pages around an integer anchor", async () => {
    const ids = [];
    for (const n of [1, 2, 3])
      ids.push(
        (
          await expectSuccess(
            send("hamlet", { type: "channel", to: "Denmark", topic: "pages", content: `p${n}` }),
          )
        ).id,
      );
    const narrow = [{ operator: "topic", operand: "pages" }];
    const data = await expectSuccess(
      server.as("hamlet").GET("/messages", {
        params: { query: { anchor: ids[1]!, num_before: 5, num_after: 5, narrow } },
      }),
    );
    expect(data.messages.map((m) => m.id)).toEqual(ids);
    expect(data).toMatchObject({
      anchor: ids[1],
      found_anchor: true,
      found_oldest: true,
      found_newest: true,
    });
    const without = await expectSuccess(
      server.as("hamlet").GET("/messages", {
        params: {
          query: { anchor: ids[1]!, num_before: 0, num_after: 1, narrow, include_anchor: false },
        },
      }),
    );
    expect(without.messages.map((m) => m.id)).toEqual([ids[2]]);
    // Zulip excludes the anchor only at an end of the range.
    await expectError(
      server.as("hamlet").GET("/messages", {
        params: {
          query: { anchor: ids[1]!, num_before: 1, num_after: 1, narrow, include_anchor: false },
        },
      }),
      400,
      "The anchor can only be excluded at an end of the range",
    );
  });

  it("narrows by sender, search and direct-message conversation", async () => {
    const unique = `zebra${Date.now()}`;
    await expectSuccess(
      send("cordelia", {
        type: "channel",
        to: "Verona",
        topic: "animals",
        content: `A ${unique} appears`,
      }),
    );
    const search = await expectSuccess(
      server.as("hamlet").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 10,
            narrow: [{ operator: "search", operand: unique }],
          },
        },
      }),
    );
    expect(search.messages).toHaveLength(1);
    expect(search.messages[0]!.sender_email).toBe("cordelia@zulip.com");
    await expectSuccess(
      send("prospero", { type: "direct", to: ["aaron@zulip.com"], content: "between us" }),
    );
    const dm = await expectSuccess(
      server.as("aaron").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 10,
            narrow: [{ operator: "dm", operand: "prospero@zulip.com" }],
          },
        },
      }),
    );
    expect(dm.messages.map((m) => m.content)).toEqual(["<p>between us</p>"]);
    const bySender = await expectSuccess(
      server.as("aaron").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 50,
            narrow: [{ operator: "sender", operand: "prospero@zulip.com" }],
          },
        },
      }),
    );
    expect(bySender.messages.every((m) => m.sender_email === "prospero@zulip.com")).toBe(true);
  });

  it("refuses an unknown narrow operator with BAD_NARROW", async () => {
    await expectError(
      server.as("hamlet").GET("/messages", {
        params: { query: { anchor: "newest", narrow: [{ operator: "bogus", operand: "x" }] } },
      }),
      400,
      "Invalid narrow operator: unknown operator bogus",
      { code: "BAD_NARROW", desc: "unknown operator bogus" },
    );
  });

  it("checks each operator's operand type and value with Zulip's texts", async () => {
    const get = (narrow: unknown) =>
      server.as("hamlet").GET("/messages", {
        params: { query: { anchor: "newest", num_before: 5, narrow: untyped(narrow) } },
      });
    await expectError(
      get([{ operator: "sender", operand: [4] }]),
      400,
      "operand is not a string or integer",
    );
    await expectError(
      get([{ operator: "dm", operand: true }]),
      400,
      "operand is not a string or an integer list",
    );
    await expectError(
      get([{ operator: "dm", operand: [1, "x"] }]),
      400,
      "operand[1] is not an integer",
    );
    await expectError(get([{ operator: "topic", operand: 5 }]), 400, "operand is not a string");
    await expectError(get([{ operator: "search", operand: "" }]), 400, "operand cannot be blank");
    await expectError(
      get([{ operator: "id", operand: "abc" }]),
      400,
      "Invalid narrow operator: Invalid message ID",
      { code: "BAD_NARROW", desc: "Invalid message ID" },
    );
    await expectError(
      get([{ operator: "id", operand: "Denmark" }]),
      400,
      "Invalid narrow operator: Invalid message ID",
    );
    await expectError(
      get([{ operator: "channel", operand: "Nowhere" }]),
      400,
      "Invalid narrow operator: unknown channel Nowhere",
    );
    await expectError(
      get([{ operator: "sender", operand: "nobody@zulip.com" }]),
      400,
      "Invalid narrow operator: unknown user nobody@zulip.com",
    );
    await expectError(
      get([{ operator: "is", operand: "constructor" }]),
      400,
      "Invalid narrow operator: unknown 'is' operand constructor",
    );
    await expectError(
      get([{ operator: "has", operand: "constructor" }]),
      400,
      "Invalid narrow operator: unknown 'has' operand constructor",
    );
    // Digits beyond any message id are refused, as Zulip's by_id refuses ids past MAX_POSSIBLE_MESSAGE_ID.
    for (const operand of ["9223372036854775807", "99999999999999999999999"])
      await expectError(
        get([{ operator: "id", operand }]),
        400,
        "Invalid narrow operator: Invalid message ID",
      );
    const { id } = await expectSuccess(
      send("hamlet", { type: "channel", to: "Verona", topic: "by id", content: "find me" }),
    );
    for (const operand of [id, String(id)])
      expect(
        (await expectSuccess(get([{ operator: "id", operand }]))).messages.map((m) => m.id),
      ).toEqual([id]);
    const bySenderId = await expectSuccess(
      get([
        { operator: "id", operand: id },
        { operator: "sender", operand: server.creds.users.hamlet!.user_id },
      ]),
    );
    expect(bySenderId.messages.map((m) => m.id)).toEqual([id]);
  });

  it("refuses an anchor no message id can have", async () => {
    await expectError(
      server.as("hamlet").GET("/messages", { params: { query: { anchor: Infinity } } }),
      400,
      "Invalid anchor",
    );
  });

  it("takes the deprecated use_first_unread_anchor as anchor=first_unread", async () => {
    const { id } = await expectSuccess(
      send("hamlet", {
        type: "channel",
        to: "Verona",
        topic: "unread anchor",
        content: "unread for othello",
      }),
    );
    const narrow = [{ operator: "topic", operand: "unread anchor" }];
    const legacy = await expectSuccess(
      server.as("othello").GET("/messages", {
        params: { query: { use_first_unread_anchor: true, num_after: 1, narrow } },
      }),
    );
    const modern = await expectSuccess(
      server
        .as("othello")
        .GET("/messages", { params: { query: { anchor: "first_unread", num_after: 1, narrow } } }),
    );
    expect(legacy).toEqual(modern);
    expect(legacy.anchor).toBe(id);
    // It overrides an anchor, and cannot be combined with message_ids.
    const both = await expectSuccess(
      server.as("othello").GET("/messages", {
        params: {
          query: { use_first_unread_anchor: true, anchor: "oldest", num_after: 1, narrow },
        },
      }),
    );
    expect(both.anchor).toBe(id);
    await expectError(
      server.as("othello").GET("/messages", {
        params: { query: { use_first_unread_anchor: true, message_ids: [id] } },
      }),
      400,
      "Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor",
      {
        code: "BAD_REQUEST",
        parameters:
          "num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor",
      },
    );
  });

  it("requires an anchor unless message_ids is given", async () => {
    await expectError(
      server.as("hamlet").GET("/messages", { params: { query: {} } }),
      400,
      "Missing 'anchor' argument.",
    );
    const ids = [
      (
        await expectSuccess(
          send("hamlet", { type: "channel", to: "Verona", topic: "ids", content: "by id" }),
        )
      ).id,
    ];
    const data = await expectSuccess(
      server.as("hamlet").GET("/messages", { params: { query: { message_ids: ids } } }),
    );
    expect(data.messages.map((m) => m.id)).toEqual(ids);
  });
});
