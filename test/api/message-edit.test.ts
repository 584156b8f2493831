/**
 * PATCH /messages/{message_id}: content edits, topic and channel moves, resolving, time limits,
 * notices, edit history and update_message events, in Zulip's order of checks
 * (zerver/tests/test_message_edit.py, test_message_move_topic.py, test_message_move_stream.py).
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { doSubscribe } from "../../server/actions/channels/subscriptions.ts";
import { doCreateUser } from "../../server/actions/users/users.ts";
import { encodeParam } from "../../client/src/index.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { type Body, sendDirect, sendToChannel, untyped } from "../helpers/builders.ts";

const server = useTestServer();

const id = (shortName: string) =>
  (server.creds.users[shortName] ?? server.creds.bots[shortName])!.user_id;
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const edit = (as: string, messageId: number, body: Body<"/messages/{message_id}", "patch">) =>
  server.as(as).PATCH("/messages/{message_id}", {
    params: { path: { message_id: messageId } },
    body: body,
  });
const fetchMessage = async (as: string, messageId: number, query: Record<string, boolean> = {}) =>
  (
    await expectSuccess(
      server
        .as(as)
        .GET("/messages/{message_id}", { params: { path: { message_id: messageId }, query } }),
    )
  ).message;
const patchRealm = (body: Body<"/realm", "patch">) =>
  expectSuccess(server.as("desdemona").PATCH("/realm", { body: body }));
const systemGroup = async (name: string) =>
  (
    await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name },
    })
  ).id;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
/** Messages of a topic, oldest first, as iago (an administrator subscribed everywhere) reads them. */
const topicMessages = async (stream: string, topic: string, as = "iago") =>
  (
    await expectSuccess(
      server.as(as).GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 100,
            num_after: 0,
            narrow: [
              { operator: "channel", operand: stream },
              { operator: "topic", operand: topic },
            ],
            allow_empty_topic_name: true,
          },
        },
      }),
    )
  ).messages;
/** Moves a message's send time into the past (what the time limits are measured from). */
const backdate = (messageIds: number[], seconds: number) =>
  server.db.message.updateMany({
    where: { id: { in: messageIds } },
    data: { dateSent: new Date(Date.now() - seconds * 1000) },
  });
const registerQueue = async (as: string) =>
  (
    await expectSuccess(
      server.as(as).POST("/register", {
        body: {
          event_types: ["update_message", "message", "delete_message", "user_topic"],
        },
      }),
    )
  ).queue_id!;
const pollEvents = async (as: string, queueId: string) =>
  (
    await expectSuccess(
      server.as(as).GET("/events", {
        params: { query: { queue_id: queueId, last_event_id: -1, dont_block: true } },
      }),
    )
  ).events as Record<string, any>[];

describe("PATCH /messages/{message_id}: content", () => {
  it("edits the sender's content: re-rendered, with last_edit_timestamp and an edit history entry", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "edits",
      content: "Init message",
    });
    const result = await expectSuccess(
      edit("hamlet", messageId, { content: "First **user** edit" }),
    );
    expect(result.detached_uploads).toEqual([]);
    const message = await fetchMessage("othello", messageId);
    expect(message.content).toBe("<p>First <strong>user</strong> edit</p>");
    expect(message.last_edit_timestamp).toEqual(expect.any(Number));
    expect(message.last_moved_timestamp).toBeUndefined();
    expect(message.edit_history).toEqual([
      {
        user_id: id("hamlet"),
        timestamp: message.last_edit_timestamp,
        prev_content: "Init message",
        prev_rendered_content: "<p>Init message</p>",
      },
    ]);
  });

  it("refuses another user's message, and everything when the organization turned editing off", async () => {
    const { id: messageId } = await sendToChannel(server.as("iago"), {
      to: "Verona",
      topic: "edits",
      content: "Iago's words",
    });
    await expectError(
      edit("hamlet", messageId, { content: "Hamlet's words" }),
      400,
      "You don't have permission to edit this message",
    );
    await patchRealm({ allow_message_editing: false });
    try {
      await expectError(
        edit("iago", messageId, { content: "Changed" }),
        400,
        "Your organization has turned off message editing",
      );
    } finally {
      await patchRealm({ allow_message_editing: true });
    }
    expect((await fetchMessage("iago", messageId, { apply_markdown: false })).content).toBe(
      "Iago's words",
    );
  });

  it("refuses content edits after message_content_edit_limit_seconds (plus Zulip's 20 s buffer)", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "edits",
      content: "Old words",
    });
    await backdate([messageId], 600 + 25);
    await expectError(
      edit("hamlet", messageId, { content: "New words" }),
      400,
      "The time limit for editing this message has passed",
    );
    await backdate([messageId], 600 + 10);
    await expectSuccess(edit("hamlet", messageId, { content: "New words" }));
  });

  it("replaces blank content by (deleted), in channels and direct messages", async () => {
    const { id: inChannel } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "edits",
      content: "To be blanked",
    });
    await expectSuccess(edit("hamlet", inChannel, { content: " " }));
    expect((await fetchMessage("hamlet", inChannel, { apply_markdown: false })).content).toBe(
      "(deleted)",
    );
    const { id: direct } = await sendDirect(server.as("hamlet"), {
      to: [id("othello")],
      content: "Secret",
    });
    await expectSuccess(edit("hamlet", direct, { content: "  \n " }));
    expect((await fetchMessage("othello", direct, { apply_markdown: false })).content).toBe(
      "(deleted)",
    );
  });

  it("checks prev_content_sha256 against the stored content and changes nothing on a mismatch", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "edits",
      content: "Init message",
    });
    await expectSuccess(
      edit("hamlet", messageId, {
        content: "First user edit",
        prev_content_sha256: sha256("Init message"),
      }),
    );
    await expectError(
      edit("hamlet", messageId, {
        content: "Second user edit",
        prev_content_sha256: sha256("Init message"),
      }),
      400,
      "'prev_content_sha256' value does not match the expected value.",
      {
        code: "EXPECTATION_MISMATCH",
      },
    );
    expect((await fetchMessage("hamlet", messageId, { apply_markdown: false })).content).toBe(
      "First user edit",
    );
  });

  it("recomputes mentions: a newly mentioned user gets the flag and an update_message event with it", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "mentions",
      content: "Hello everyone",
    });
    const queue = await registerQueue("othello");
    await expectSuccess(
      edit("hamlet", messageId, { content: "Hello @**Othello, the Moor of Venice**" }),
    );
    expect((await fetchMessage("othello", messageId)).flags).toContain("mentioned");
    const events = (await pollEvents("othello", queue)).filter((e) => e.type === "update_message");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      user_id: id("hamlet"),
      message_id: messageId,
      message_ids: [messageId],
      rendering_only: false,
      orig_content: "Hello everyone",
      orig_rendered_content: "<p>Hello everyone</p>",
      content: "Hello @**Othello, the Moor of Venice**",
      stream_id: channel("Verona"),
      stream_name: "Verona",
      is_me_message: false,
    });
    expect(events[0]!.flags).toContain("mentioned");
    expect(events[0]!.rendered_content).toContain(`data-user-id="${id("othello")}"`);
    // Removing the mention removes the flag.
    await expectSuccess(edit("hamlet", messageId, { content: "Hello again" }));
    expect((await fetchMessage("othello", messageId)).flags).not.toContain("mentioned");
  });

  it("refuses a channel wildcard mention in a large channel without can_mention_many_users_group", async () => {
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
    await server.db.$transaction(async (tx) => {
      const extra = [];
      for (let i = 0; i < 8; i++)
        extra.push(
          await doCreateUser(
            tx,
            realm,
            { email: `edit-extra${i}@zulip.com`, fullName: `Edit extra ${i}`, role: 400 },
            "zulip.testserver",
          ),
        );
      const stream = await tx.stream.findUniqueOrThrow({ where: { id: channel("Denmark") } });
      await doSubscribe(
        tx,
        realm.id,
        stream,
        extra.map((u) => u.id),
      );
    });
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "wildcards",
      content: "Hello",
    });
    await patchRealm({
      can_mention_many_users_group: { new: await systemGroup("role:administrators") },
    });
    try {
      await expectError(
        edit("hamlet", messageId, { content: "Hello @**all**" }),
        400,
        "You do not have permission to use channel wildcard mentions in this channel.",
        {
          code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
        },
      );
      // A topic wildcard counts the topic's participants, here only hamlet.
      await expectSuccess(edit("hamlet", messageId, { content: "Hello @**topic**" }));
      expect((await fetchMessage("hamlet", messageId)).flags).toContain("topic_wildcard_mentioned");
    } finally {
      await patchRealm({
        can_mention_many_users_group: { new: await systemGroup("role:everyone") },
      });
    }
  });
});

describe("PATCH /messages/{message_id}: uploads", () => {
  it("answers the caller's uploads the edit left unreferenced as detached_uploads, and claims new links", async () => {
    const hamlet = server.creds.users.hamlet!;
    const upload = async (name: string) => {
      const form = new FormData();
      form.append("file", new Blob(["file body"], { type: "text/plain" }), name);
      const res = await fetch(`${server.baseUrl}/api/v1/user_uploads`, {
        method: "POST",
        headers: {
          Authorization:
            "Basic " + Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString("base64"),
        },
        body: form,
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { url: string }).url;
    };
    const [first, second] = [await upload("first.txt"), await upload("second.txt")];
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "uploads",
      content: `See [first](${first}) and [second](${second})`,
    });
    expect((await fetchMessage("hamlet", messageId)).content).toContain(first);
    const result = await expectSuccess(
      edit("hamlet", messageId, { content: `Only [second](${second})` }),
    );
    const pathId = first.replace("/user_uploads/", "");
    expect(result.detached_uploads).toEqual([
      {
        id: expect.any(Number),
        name: "first.txt",
        path_id: pathId,
        size: 9,
        create_time: expect.any(Number),
        message_ids: [],
      },
    ]);
    const claimed = await server.db.attachmentMessage.findMany({
      where: { messageId },
      include: { attachment: true },
    });
    expect(claimed.map((c) => c.attachment.fileName)).toEqual(["second.txt"]);
    // Linking it again claims it again.
    expect(
      (
        await expectSuccess(edit("hamlet", messageId, { content: `Back: [first](${first})` }))
      ).detached_uploads.map((d) => d.name),
    ).toEqual(["second.txt"]);
  });
});

describe("PATCH /messages/{message_id}: payload checks, in Zulip's order", () => {
  it("answers each refusal with Zulip's text", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "checks",
      content: "Check me",
    });
    const { id: direct } = await sendDirect(server.as("hamlet"), {
      to: [id("othello")],
      content: "Direct",
    });
    await expectError(edit("hamlet", messageId, {}), 400, "Nothing to change");
    await expectError(edit("hamlet", messageId, { topic: "checks" }), 400, "Nothing to change");
    await expectError(
      edit("hamlet", direct, { stream_id: channel("Verona") }),
      400,
      "Direct messages cannot be moved to channels.",
    );
    await expectError(
      edit("hamlet", direct, { topic: "x" }),
      400,
      "Direct messages cannot have topics.",
    );
    await expectError(
      edit("hamlet", messageId, { propagate_mode: "change_all" }),
      400,
      "Nothing to change",
    );
    await expectError(
      edit("hamlet", messageId, { content: "New", propagate_mode: "change_all" }),
      400,
      "Invalid propagate_mode without topic edit",
    );
    await expectError(
      edit("hamlet", messageId, { topic: "x", propagate_mode: untyped("change_some") }),
      400,
      "Invalid propagate_mode",
    );
    await expectError(
      edit("hamlet", messageId, { topic: "✔ " }),
      400,
      "General chat cannot be marked as resolved",
    );
    await expectError(
      edit("hamlet", messageId, { topic: "✔ general chat" }),
      400,
      "General chat cannot be marked as resolved",
    );
    await expectError(
      edit("hamlet", messageId, { topic: "bad\u0007topic" }),
      400,
      "Invalid character in topic, at position 4!",
    );
    await expectError(
      edit("hamlet", messageId, { content: "x", stream_id: channel("Denmark") }),
      400,
      "Cannot change message content while changing channel",
    );
    await expectError(edit("hamlet", 99999999, { content: "x" }), 400, "Invalid message(s)");
    const { id: secret } = await sendToChannel(server.as("iago"), {
      to: "core team",
      topic: "secrets",
      content: "Not for hamlet",
    });
    await expectError(edit("hamlet", secret, { topic: "mine now" }), 400, "Invalid message(s)");
    await expectError(
      edit("hamlet", messageId, { stream_id: channel("core team") }),
      400,
      "Invalid channel ID",
    );
    expect((await fetchMessage("hamlet", messageId)).subject).toBe("checks");
  });

  it("maps the empty-topic names to the empty topic and applies the organization's topics_policy", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "to be emptied",
      content: "Hi",
    });
    const queue = await registerQueue("othello");
    await expectSuccess(edit("hamlet", messageId, { topic: " " }));
    // Clients without the empty_topic_name capability see the display name in events too.
    const [update] = (await pollEvents("othello", queue)).filter(
      (e) => e.type === "update_message",
    );
    expect(update).toMatchObject({
      orig_subject: "to be emptied",
      subject: "(no topic)",
      propagate_mode: "change_one",
    });
    expect(
      (await fetchMessage("hamlet", messageId, { allow_empty_topic_name: true })).subject,
    ).toBe("");
    expect((await fetchMessage("hamlet", messageId)).subject).toBe("(no topic)");
    await expectError(edit("hamlet", messageId, { topic: "(no topic)" }), 400, "Nothing to change");
    await expectSuccess(edit("hamlet", messageId, { topic: "named again" }));
    await patchRealm({ topics_policy: "disable_empty_topic" });
    try {
      for (const topic of ["", "(no topic)", "general chat"])
        await expectError(
          edit("hamlet", messageId, { topic }),
          400,
          "Sending messages to the (no topic) is not allowed in this channel.",
        );
    } finally {
      await patchRealm({ topics_policy: "allow_empty_topic" });
    }
  });
});

describe("PATCH /messages/{message_id}: topic moves", () => {
  it("moves one message, later messages or the whole topic, with notices in the new thread", async () => {
    const ids = [];
    for (const n of [1, 2, 3, 4])
      ids.push(
        (
          await sendToChannel(server.as("hamlet"), {
            to: "Verona",
            topic: "modes",
            content: `Message ${n}`,
          })
        ).id,
      );
    const [first, second, third, fourth] = ids as [number, number, number, number];

    await expectSuccess(
      edit("iago", third, { topic: "modes later", propagate_mode: "change_later" }),
    );
    expect((await topicMessages("Verona", "modes later")).map((m) => m.id).slice(0, 2)).toEqual([
      third,
      fourth,
    ]);
    const laterNotice = (await topicMessages("Verona", "modes later")).at(-1)!;
    expect(laterNotice.sender_email).toBe("notification-bot@zulip.com");
    expect(laterNotice.content).toContain("2 messages were moved here from");
    expect(laterNotice.flags).toContain("read"); // the acting user's copy of the notice starts read

    await expectSuccess(edit("iago", first, { topic: "modes one" }));
    const one = await topicMessages("Verona", "modes one");
    expect(one[0]!.id).toBe(first);
    expect(one[1]!.content).toBe(
      `<p><a href="#narrow/channel/${channel("Verona")}-Verona/topic/modes.20one/near/${first}">A message</a> was moved here from ` +
        `<a class="stream-topic" data-stream-id="${channel("Verona")}" href="/#narrow/channel/${channel("Verona")}-Verona/topic/modes">#Verona &gt; modes</a> by ` +
        `<span class="user-mention silent" data-user-id="${id("iago")}">Iago</span>.</p>`,
    );
    // The last message of a topic moved alone is the whole topic moving.
    await expectSuccess(
      edit("iago", second, { topic: "modes last", send_notification_to_old_thread: true }),
    );
    expect((await topicMessages("Verona", "modes last")).at(-1)!.content).toContain(
      "This topic was moved here from",
    );
    expect((await topicMessages("Verona", "modes")).at(-1)!.content).toContain(
      "This topic was moved to",
    );
    const moved = await fetchMessage("hamlet", first);
    expect(moved.last_moved_timestamp).toEqual(expect.any(Number));
    expect(moved.last_edit_timestamp).toBeUndefined();
    expect(moved.edit_history).toEqual([
      {
        user_id: id("iago"),
        timestamp: moved.last_moved_timestamp,
        prev_topic: "modes",
        topic: "modes one",
      },
    ]);
  });

  it("moves a whole topic with change_all, with notices in both threads when asked", async () => {
    const ids = [];
    for (const n of [1, 2, 3, 4])
      ids.push(
        (
          await sendToChannel(server.as("othello"), {
            to: "Verona",
            topic: "whole",
            content: `Whole ${n}`,
          })
        ).id,
      );
    await expectSuccess(
      edit("iago", ids[1]!, {
        topic: "whole moved",
        propagate_mode: "change_all",
        send_notification_to_old_thread: true,
      }),
    );
    const moved = await topicMessages("Verona", "whole moved");
    expect(moved.slice(0, 4).map((m) => m.id)).toEqual(ids);
    expect(moved[4]!.content).toContain("This topic was moved here from");
    const old = await topicMessages("Verona", "whole");
    expect(old).toHaveLength(1);
    expect(old[0]!.content).toContain("This topic was moved to");
    expect(old[0]!.content).toContain(`#Verona &gt; whole moved`);
    // Every moved message has its own history entry.
    for (const messageId of ids)
      expect((await fetchMessage("othello", messageId)).edit_history?.[0]).toMatchObject({
        prev_topic: "whole",
        topic: "whole moved",
      });
  });

  it("sends no notice when asked not to", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "quiet",
      content: "Quiet",
    });
    await expectSuccess(
      edit("iago", messageId, { topic: "quiet moved", send_notification_to_new_thread: false }),
    );
    expect(await topicMessages("Verona", "quiet moved")).toHaveLength(1);
    expect(await topicMessages("Verona", "quiet")).toHaveLength(0);
  });

  it("resolves and unresolves a topic: renamed everywhere, one notice each, no moved timestamp", async () => {
    const ids = [
      (
        await sendToChannel(server.as("hamlet"), {
          to: "Verona",
          topic: "bug 7",
          content: "It crashes",
        })
      ).id,
      (
        await sendToChannel(server.as("othello"), {
          to: "Verona",
          topic: "bug 7",
          content: "Fixed it",
        })
      ).id,
    ];
    await expectSuccess(edit("iago", ids[0]!, { topic: "✔ bug 7", propagate_mode: "change_all" }));
    const resolved = await topicMessages("Verona", "✔ bug 7");
    expect(resolved.map((m) => m.id).slice(0, 2)).toEqual(ids);
    expect(resolved).toHaveLength(3);
    expect(resolved[2]!.content).toBe(
      `<p><span class="user-mention silent" data-user-id="${id("iago")}">Iago</span> has marked this topic as resolved.</p>`,
    );
    const message = await fetchMessage("hamlet", ids[0]!);
    expect(message.last_moved_timestamp).toBeUndefined();
    expect(message.edit_history?.[0]).toMatchObject({ prev_topic: "bug 7", topic: "✔ bug 7" });
    await expectError(
      edit("iago", ids[0]!, { topic: "✔ bug 7", propagate_mode: "change_all" }),
      400,
      "Nothing to change",
    );

    await expectSuccess(edit("iago", ids[0]!, { topic: "bug 7", propagate_mode: "change_all" }));
    const unresolved = await topicMessages("Verona", "bug 7");
    expect(unresolved.at(-1)!.content).toContain("has marked this topic as unresolved.");
  });

  it("needs can_resolve_topics_group to resolve, and can_move_messages_between_topics_group (or the channel's) to move", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "permissions",
      content: "Whose topic?",
    });
    const nobody = await systemGroup("role:nobody");
    await patchRealm({
      can_resolve_topics_group: { new: nobody },
      can_move_messages_between_topics_group: { new: nobody },
    });
    try {
      await expectError(
        edit("hamlet", messageId, { topic: "✔ permissions", propagate_mode: "change_all" }),
        400,
        "You don't have permission to resolve topics in this channel.",
      );
      await expectError(
        edit("hamlet", messageId, { topic: "elsewhere" }),
        400,
        "You don't have permission to edit this message",
      );
      // Administrators may move messages in any channel; the channel's own group grants it too.
      await expectSuccess(edit("iago", messageId, { topic: "moved by iago" }));
      const group = await server.db.userGroup.create({ data: { realmId: server.creds.realm.id } });
      await server.db.userGroupMembership.create({
        data: { userGroupId: group.id, userProfileId: id("hamlet") },
      });
      await server.db.stream.update({
        where: { id: channel("Verona") },
        data: { canMoveMessagesWithinChannelGroupId: group.id, canResolveTopicsGroupId: group.id },
      });
      await expectSuccess(edit("hamlet", messageId, { topic: "moved by hamlet" }));
      await expectSuccess(
        edit("hamlet", messageId, { topic: "✔ moved by hamlet", propagate_mode: "change_all" }),
      );
    } finally {
      await server.db.stream.update({
        where: { id: channel("Verona") },
        data: { canMoveMessagesWithinChannelGroupId: nobody, canResolveTopicsGroupId: nobody },
      });
      const everyone = await systemGroup("role:everyone");
      await patchRealm({
        can_resolve_topics_group: { new: everyone },
        can_move_messages_between_topics_group: { new: everyone },
      });
    }
  });

  it("applies move_messages_within_stream_limit_seconds, with MOVE_MESSAGES_TIME_LIMIT_EXCEEDED for change_all; moderators are exempt", async () => {
    const ids = [];
    for (const n of [1, 2, 3, 4, 5])
      ids.push(
        (
          await sendToChannel(server.as("hamlet"), {
            to: "Verona",
            topic: "old topic",
            content: `Old ${n}`,
          })
        ).id,
      );
    await backdate(ids.slice(0, 3), 604800 + 3600);
    await expectError(
      edit("hamlet", ids[0]!, { topic: "new topic" }),
      400,
      "The time limit for editing this message's topic has passed.",
    );
    await expectError(
      edit("hamlet", ids[4]!, { topic: "new topic", propagate_mode: "change_all" }),
      400,
      "You only have permission to move the 2/5 most recent messages in this topic.",
      {
        code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
        first_message_id_allowed_to_move: ids[3],
        total_messages_allowed_to_move: 2,
        total_messages_in_topic: 5,
      },
    );
    expect((await topicMessages("Verona", "old topic")).map((m) => m.id)).toEqual(ids);
    // The suggested retry: change_later from the first message allowed to move.
    await expectSuccess(
      edit("hamlet", ids[3]!, {
        topic: "new topic",
        propagate_mode: "change_later",
        send_notification_to_new_thread: false,
      }),
    );
    expect((await topicMessages("Verona", "new topic")).map((m) => m.id)).toEqual(ids.slice(3));
    await expectSuccess(
      edit("shiva", ids[0]!, {
        topic: "new topic",
        propagate_mode: "change_all",
        send_notification_to_new_thread: false,
      }),
    );
    expect((await topicMessages("Verona", "new topic")).map((m) => m.id)).toEqual(ids);
  });

  it("moves the topic's personal preferences with a whole-topic move", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "followed topic",
      content: "Follow me",
    });
    await server.db.userTopic.create({
      data: {
        realmId: server.creds.realm.id,
        userProfileId: id("othello"),
        streamId: channel("Verona"),
        recipientId: (
          await server.db.stream.findUniqueOrThrow({ where: { id: channel("Verona") } })
        ).recipientId!,
        topicName: "followed topic",
        topicNameLower: "followed topic",
        visibilityPolicy: 3,
      },
    });
    const queue = await registerQueue("othello");
    await expectSuccess(
      edit("hamlet", messageId, { topic: "Followed Elsewhere", propagate_mode: "change_all" }),
    );
    // Only these two names: othello follows topics he started in earlier tests (on initiation).
    const rows = await server.db.userTopic.findMany({
      where: {
        userProfileId: id("othello"),
        streamId: channel("Verona"),
        topicNameLower: { in: ["followed topic", "followed elsewhere"] },
      },
    });
    expect(rows.map((r) => [r.topicName, r.visibilityPolicy])).toEqual([["Followed Elsewhere", 3]]);
    const events = (await pollEvents("othello", queue)).filter((e) => e.type === "user_topic");
    expect(events.map((e) => [e.topic_name, e.visibility_policy])).toEqual([
      ["followed topic", 0],
      ["Followed Elsewhere", 3],
    ]);
  });
});

describe("PATCH /messages/{message_id}: channel moves", () => {
  it("moves a topic to another channel: rows of users outside it are removed, guests get delete_message", async () => {
    const ids = [
      (
        await sendToChannel(server.as("cordelia"), {
          to: "Verona",
          topic: "travel",
          content: "To Scotland",
        })
      ).id,
      (
        await sendToChannel(server.as("hamlet"), {
          to: "Verona",
          topic: "travel",
          content: "Indeed",
        })
      ).id,
    ];
    const guestQueue = await registerQueue("polonius");
    const othelloQueue = await registerQueue("othello");
    await expectSuccess(
      edit("iago", ids[0]!, {
        stream_id: channel("Scotland"),
        propagate_mode: "change_all",
        send_notification_to_old_thread: true,
      }),
    );
    const moved = await topicMessages("Scotland", "travel");
    expect(moved.slice(0, 2).map((m) => m.id)).toEqual(ids);
    expect(moved[0]!.edit_history?.[0]).toMatchObject({
      prev_stream: channel("Verona"),
      stream: channel("Scotland"),
    });
    expect(moved[2]!.content).toContain("This topic was moved here from");
    expect((await topicMessages("Verona", "travel"))[0]!.content).toContain(
      "This topic was moved to",
    );
    // cordelia and polonius are not subscribed to Scotland: their rows went.
    const rows = await server.db.userMessage.findMany({
      where: { messageId: { in: ids } },
      select: { userProfileId: true },
    });
    expect(rows.map((r) => r.userProfileId)).not.toContain(id("cordelia"));
    expect(rows.map((r) => r.userProfileId)).not.toContain(id("polonius"));
    const deletions = (await pollEvents("polonius", guestQueue)).filter(
      (e) => e.type === "delete_message",
    );
    // Without bulk_message_deletion, one event per message (Zulip's process_deletion_event).
    expect(deletions).toEqual(
      ids.map((messageId) =>
        expect.objectContaining({
          message_id: messageId,
          message_type: "stream",
          stream_id: channel("Verona"),
          topic: "travel",
        }),
      ),
    );
    const updates = (await pollEvents("othello", othelloQueue)).filter(
      (e) => e.type === "update_message",
    );
    expect(updates[0]).toMatchObject({
      message_ids: ids,
      stream_id: channel("Verona"),
      new_stream_id: channel("Scotland"),
      orig_subject: "travel",
      propagate_mode: "change_all",
    });
  });

  it("gives every subscriber of a private channel without shared history a row (read)", async () => {
    await server.db.stream.update({
      where: { id: channel("core team") },
      data: { historyPublicToSubscribers: false },
    });
    try {
      // desdemona is not in Scotland: she gets a row, read; Scotland's other subscribers lose theirs.
      const { id: messageId } = await sendToChannel(server.as("iago"), {
        to: "Scotland",
        topic: "to the core",
        content: "Core business",
      });
      await expectSuccess(edit("iago", messageId, { stream_id: channel("core team") }));
      expect(
        (
          await server.db.userMessage.findMany({
            where: { messageId },
            orderBy: { userProfileId: "asc" },
          })
        ).map((r) => r.userProfileId),
      ).toEqual([id("desdemona"), id("iago")]);
      const row = await server.db.userMessage.findUniqueOrThrow({
        where: { userProfileId_messageId: { userProfileId: id("desdemona"), messageId } },
      });
      expect(row.flags & 1n).toBe(1n);
      await expectError(edit("hamlet", messageId, { content: "x" }), 400, "Invalid message(s)");
    } finally {
      await server.db.stream.update({
        where: { id: channel("core team") },
        data: { historyPublicToSubscribers: true },
      });
    }
  });

  it("needs permission to move out of the channel and applies move_messages_between_streams_limit_seconds", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "channel limits",
      content: "Move me",
    });
    const admins = await systemGroup("role:administrators");
    await patchRealm({ can_move_messages_between_channels_group: { new: admins } });
    try {
      await expectError(
        edit("hamlet", messageId, { stream_id: channel("Denmark") }),
        400,
        "You don't have permission to move this message",
      );
    } finally {
      await patchRealm({
        can_move_messages_between_channels_group: { new: await systemGroup("role:members") },
      });
    }
    await backdate([messageId], 604800 + 3600);
    await expectError(
      edit("hamlet", messageId, { stream_id: channel("Denmark") }),
      400,
      "The time limit for editing this message's channel has passed",
    );
    await expectSuccess(edit("shiva", messageId, { stream_id: channel("Denmark") }));
  });

  it("moves only the messages the caller received in a channel with protected history, silently", async () => {
    const core = channel("core team");
    await server.db.stream.update({
      where: { id: core },
      data: { historyPublicToSubscribers: false },
    });
    try {
      const { id: early } = await sendToChannel(server.as("desdemona"), {
        to: "core team",
        topic: "history",
        content: "Before shiva joined",
      });
      const stream = await server.db.stream.findUniqueOrThrow({ where: { id: core } });
      await server.db.$transaction((tx) =>
        doSubscribe(tx, server.creds.realm.id, stream, [id("shiva")]),
      );
      const { id: late } = await sendToChannel(server.as("shiva"), {
        to: "core team",
        topic: "history",
        content: "After shiva joined",
      });
      await expectSuccess(
        edit("shiva", late, {
          topic: "shiva's history",
          propagate_mode: "change_all",
          send_notification_to_new_thread: false,
        }),
      );
      expect(
        (await topicMessages("core team", "shiva's history", "desdemona")).map((m) => m.id),
      ).toEqual([late]);
      expect((await topicMessages("core team", "history", "desdemona")).map((m) => m.id)).toEqual([
        early,
      ]);
    } finally {
      await server.db.stream.update({
        where: { id: core },
        data: { historyPublicToSubscribers: true },
      });
    }
  });
});

describe("edit history", () => {
  it("GET /messages/{message_id}/history lists every version, oldest first", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "history",
      content: "Version 1",
    });
    await expectSuccess(edit("hamlet", messageId, { content: "Version 2" }));
    await expectSuccess(edit("hamlet", messageId, { topic: "history moved" }));
    const { message_history } = await expectSuccess(
      server
        .as("othello")
        .GET("/messages/{message_id}/history", { params: { path: { message_id: messageId } } }),
    );
    expect(message_history).toHaveLength(3);
    expect(message_history[0]).toMatchObject({
      content: "Version 1",
      rendered_content: "<p>Version 1</p>",
      topic: "history",
      user_id: id("hamlet"),
      stream: channel("Verona"),
    });
    expect(message_history[1]).toMatchObject({
      content: "Version 2",
      prev_content: "Version 1",
      topic: "history",
      user_id: id("hamlet"),
    });
    expect(message_history[2]).toMatchObject({
      content: "Version 2",
      topic: "history moved",
      prev_topic: "history",
    });
    await expectError(
      server
        .as("othello")
        .GET("/messages/{message_id}/history", { params: { path: { message_id: 99999999 } } }),
      400,
      "Invalid message(s)",
    );
  });

  it("is hidden from messages, and refused, when the organization disables it", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "hidden history",
      content: "One",
    });
    await expectSuccess(edit("hamlet", messageId, { content: "Two" }));
    const setPolicy = (messageEditHistoryVisibilityPolicy: number) =>
      server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { messageEditHistoryVisibilityPolicy },
      });
    await setPolicy(3); // none
    try {
      const message = await fetchMessage("othello", messageId);
      expect(message.edit_history).toBeUndefined();
      expect(message.last_edit_timestamp).toEqual(expect.any(Number));
      await expectError(
        server
          .as("othello")
          .GET("/messages/{message_id}/history", { params: { path: { message_id: messageId } } }),
        400,
        "Message edit history is disabled in this organization",
      );
    } finally {
      await setPolicy(1); // all
    }
  });
});

describe("real clients' encodings", () => {
  it("takes a form body, and parameters in the query string as zulip-js sends them", async () => {
    const { id: messageId } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "encodings",
      content: "Plain",
    });
    const hamlet = server.creds.users.hamlet!;
    const auth = "Basic " + Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString("base64");
    const form = await fetch(`${server.baseUrl}/api/v1/messages/${messageId}`, {
      method: "PATCH",
      headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: "content=Edited+by+form&prev_content_sha256=" + sha256("Plain"),
    });
    const formBody = await form.json();
    expect(checkResponse("PATCH", form.url, form.status, formBody)).toBeNull();
    expect(formBody).toMatchObject({ result: "success", detached_uploads: [] });
    const query = new URLSearchParams({
      topic: "encoded topic",
      propagate_mode: "change_all",
      send_notification_to_new_thread: encodeParam(false),
    });
    const viaQuery = await fetch(`${server.baseUrl}/api/v1/messages/${messageId}?${query}`, {
      method: "PATCH",
      headers: { Authorization: auth },
    });
    expect(viaQuery.status).toBe(200);
    const message = await fetchMessage("hamlet", messageId, { apply_markdown: false });
    expect([message.content, message.subject]).toEqual(["Edited by form", "encoded topic"]);
  });
});
