/**
 * PATCH /streams/{stream_id}: Zulip's update_stream_backend checks and texts, the `stream` events
 * by who may see the channel before and after, Notification Bot's notices, and access lost at once
 * (zerver/tests/test_subs.py StreamAdminTest, test_channel_permissions.py).
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body } from "../helpers/builders.ts";

const server = useTestServer({ webPublicStreamsEnabled: true });
const realmId = () => server.creds.realm.id;
const id = (name: string) => server.creds.users[name]!.user_id;
let counter = 0;

/** A new channel created by `as` (creator: its channel administrator), with these subscribers. */
async function channel(
  as: string,
  subscribers: string[],
  options: Record<string, unknown> = {},
): Promise<{ streamId: number; name: string }> {
  const name = `settings ${++counter}`;
  const { id: streamId } = await expectSuccess(
    server.as(as).POST("/channels/create", {
      body: { name, subscribers: subscribers.map(id), ...options },
    }),
  );
  return { streamId, name };
}

const patch = (as: string, streamId: number, body: Body<"/streams/{stream_id}", "patch">) =>
  server.as(as).PATCH("/streams/{stream_id}", {
    params: { path: { stream_id: streamId } },
    body: body,
  });

/** The same request as python-zulip-api puts it on the wire: a form body, JSON text for non-strings. */
async function formPatch(as: string, streamId: number, body: string) {
  const user = server.creds.users[as]!;
  const response = await fetch(`${server.baseUrl}/api/v1/streams/${streamId}`, {
    method: "PATCH",
    headers: {
      Authorization: "Basic " + Buffer.from(`${user.email}:${user.api_key}`).toString("base64"),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const row = (streamId: number) => server.db.stream.findUniqueOrThrow({ where: { id: streamId } });

/** Notification Bot's latest message in the channel's "channel events" topic. */
async function lastNotice(streamId: number) {
  const stream = await row(streamId);
  const message = await server.db.message.findFirstOrThrow({
    where: { recipientId: stream.recipientId!, subject: "channel events" },
    orderBy: { id: "desc" },
    include: { sender: true },
  });
  expect(message.sender.deliveryEmail).toBe("notification-bot@zulip.com");
  return message.content;
}

const streamEvents = (events: Record<string, any>[]) =>
  events.filter((e) => e.type === "stream" || e.type === "subscription");

describe("who may change a channel", () => {
  it("refuses a member who cannot administer it, and hides a private channel from outsiders", async () => {
    const { streamId } = await channel("iago", ["iago", "hamlet"]);
    await expectError(
      patch("cordelia", streamId, { description: "x" }),
      400,
      "You do not have permission to administer this channel.",
    );
    const secret = await channel("iago", ["iago"], { invite_only: true });
    await expectError(
      patch("cordelia", secret.streamId, { description: "x" }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      patch("polonius", secret.streamId, { description: "x" }),
      400,
      "Invalid channel ID",
    );
    await expectError(patch("iago", 987654, { description: "x" }), 400, "Invalid channel ID");
  });

  it("lets the creator (in can_administer_channel_group) and an administrator change it", async () => {
    const { streamId } = await channel("hamlet", ["hamlet"]);
    await expectSuccess(patch("hamlet", streamId, { description: "by the creator" }));
    await expectSuccess(patch("iago", streamId, { description: "by an administrator" }));
    expect((await row(streamId)).description).toBe("by an administrator");
  });
});

describe("name and description", () => {
  it("renames with Zulip's checks, tells everyone who sees the channel, and posts the notice", async () => {
    const { streamId, name } = await channel("iago", ["iago", "hamlet"]);
    const hamlet = await queueOf(server, "hamlet", ["stream"]);
    const cordelia = await queueOf(server, "cordelia", ["stream"]);
    await expectError(
      patch("iago", streamId, { new_name: ` ${name} ` }),
      400,
      "Channel already has that name.",
    );
    await expectError(
      patch("iago", streamId, { new_name: "Verona" }),
      409,
      "Channel 'Verona' already exists",
      { code: "CHANNEL_ALREADY_EXISTS" },
    );
    await expectError(
      patch("iago", streamId, { new_name: "verona" }),
      409,
      "Channel 'verona' already exists",
      { code: "CHANNEL_ALREADY_EXISTS" },
    );
    await expectError(
      patch("iago", streamId, { new_name: "x".repeat(61) }),
      400,
      "Channel name too long (limit: 60 characters).",
    );
    await expectError(
      patch("iago", streamId, { new_name: "  " }),
      400,
      "Channel name can't be empty.",
    );
    await expectSuccess(patch("iago", streamId, { new_name: "  Renamed one  " }));
    expect((await row(streamId)).name).toBe("Renamed one");
    const expected = {
      type: "stream",
      op: "update",
      stream_id: streamId,
      name,
      property: "name",
      value: "Renamed one",
    };
    expect(await hamlet()).toEqual([expected]);
    expect(await cordelia()).toEqual([expected]);
    expect(await lastNotice(streamId)).toBe(
      `@_**Iago|${id("iago")}** renamed channel **${name}** to **Renamed one**.`,
    );
    // Only the case changes: allowed.
    await expectSuccess(patch("iago", streamId, { new_name: "RENAMED ONE" }));
    expect((await row(streamId)).name).toBe("RENAMED ONE");
  });

  it("takes python-zulip-api's form body (`+` for spaces)", async () => {
    const { streamId } = await channel("iago", ["iago"]);
    const answer = await formPatch(
      "iago",
      streamId,
      "new_name=New+name+here&description=A+b&is_private=true",
    );
    expect(answer).toEqual({ status: 200, body: { result: "success", msg: "" } });
    expect(await row(streamId)).toMatchObject({
      name: "New name here",
      description: "A b",
      inviteOnly: true,
    });
  });

  it("changes the description, rendered, with the notice quoting old and new", async () => {
    const { streamId, name } = await channel("iago", ["iago", "hamlet"]);
    const hamlet = await queueOf(server, "hamlet", ["stream"]);
    await expectSuccess(patch("iago", streamId, { description: "Now **bold**\nand one line" }));
    expect(await hamlet()).toEqual([
      {
        type: "stream",
        op: "update",
        stream_id: streamId,
        name,
        property: "description",
        value: "Now **bold** and one line",
        rendered_description: "<p>Now <strong>bold</strong> and one line</p>",
      },
    ]);
    expect(await lastNotice(streamId)).toBe(
      `@_**Iago|${id("iago")}** changed the description for this channel.\n\n` +
        "* **Old description:**\n```` quote\n*No description.*\n````\n" +
        "* **New description:**\n```` quote\nNow **bold** and one line\n````",
    );
  });

  it("posts no notice when the organization turned channel event messages off", async () => {
    const { streamId } = await channel("iago", ["iago"]);
    await server.db.realm.update({
      where: { id: realmId() },
      data: { sendChannelEventsMessages: false },
    });
    try {
      const before = await server.db.message.count();
      await expectSuccess(patch("iago", streamId, { description: "quiet" }));
      expect(await server.db.message.count()).toBe(before);
    } finally {
      await server.db.realm.update({
        where: { id: realmId() },
        data: { sendChannelEventsMessages: true },
      });
    }
  });
});

describe("privacy", () => {
  it("refuses Zulip's invalid combinations with its texts", async () => {
    const { streamId } = await channel("iago", ["iago"]);
    await expectError(
      patch("iago", streamId, { history_public_to_subscribers: false }),
      400,
      "Invalid parameters",
    );
    await expectError(
      patch("iago", streamId, { is_private: false, history_public_to_subscribers: false }),
      400,
      "Invalid parameters",
    );
    await expectError(
      patch("iago", streamId, { is_private: true, is_web_public: true }),
      400,
      "Invalid parameters",
    );
    await expectError(
      patch("iago", streamId, { is_web_public: true }),
      400,
      "Web-public channels are not enabled.",
    );
    await expectSuccess(patch("iago", streamId, { is_default_stream: true }));
    await expectError(
      patch("iago", streamId, { is_private: true }),
      400,
      "A default channel cannot be private.",
    );
  });

  it("keeps the moderation request channel private", async () => {
    const { streamId } = await channel("iago", ["iago"], { invite_only: true });
    await server.db.realm.update({
      where: { id: realmId() },
      data: { moderationRequestChannelId: streamId },
    });
    try {
      await expectError(
        patch("iago", streamId, { is_private: false }),
        400,
        "Moderation request channel must be private.",
      );
    } finally {
      await server.db.realm.update({
        where: { id: realmId() },
        data: { moderationRequestChannelId: null },
      });
    }
  });

  it("making a channel private: outsiders get `stream` delete and lose its messages at once; subscribers an update", async () => {
    const { streamId, name } = await channel("iago", ["iago", "hamlet"]);
    const sent = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: streamId, topic: "before", content: "public words" },
      }),
    );
    const narrow = [{ operator: "channel", operand: streamId }];
    const read = (as: string) =>
      server.as(as).GET("/messages", {
        params: { query: { anchor: "newest", num_before: 5, num_after: 0, narrow } },
      });
    expect((await expectSuccess(read("cordelia"))).messages.length).toBeGreaterThan(0);
    const hamlet = await queueOf(server, "hamlet", ["stream", "subscription"]);
    const cordelia = await queueOf(server, "cordelia", ["stream", "subscription"]);
    const { queue_id: publicQueue } = await expectSuccess(
      server.as("cordelia").POST("/register", {
        body: { event_types: ["message"], all_public_streams: true },
      }),
    );

    await expectSuccess(patch("iago", streamId, { is_private: true }));

    expect(streamEvents(await hamlet())).toEqual([
      {
        type: "stream",
        op: "update",
        stream_id: streamId,
        name,
        property: "invite_only",
        value: true,
        history_public_to_subscribers: false,
        is_web_public: false,
      },
    ]);
    expect(streamEvents(await cordelia())).toEqual([
      {
        type: "stream",
        op: "delete",
        streams: [{ stream_id: streamId }],
        stream_ids: [streamId],
      },
    ]);
    expect(await row(streamId)).toMatchObject({
      inviteOnly: true,
      historyPublicToSubscribers: false,
    });
    expect(await lastNotice(streamId)).toBe(
      `@_**Iago|${id("iago")}** changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, protected history**.`,
    );
    // Reads: the narrow (empty: she never received its messages), the message by id, matches_narrow.
    expect((await expectSuccess(read("cordelia"))).messages).toEqual([]);
    await expectError(
      server.as("cordelia").GET("/messages/{message_id}", {
        params: { path: { message_id: sent.id } },
      }),
      400,
      "Invalid message(s)",
    );
    const matches = await expectSuccess(
      server.as("cordelia").GET("/messages/matches_narrow", {
        params: { query: { msg_ids: [sent.id], narrow: [] } },
      }),
    );
    expect(matches.messages).toEqual({});
    expect((await expectSuccess(read("hamlet"))).messages.map((m) => m.id)).toContain(sent.id);
    // Events: a message sent now no longer reaches cordelia's all_public_streams queue.
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: streamId, topic: "after", content: "private words" },
      }),
    );
    const polled = await expectSuccess(
      server.as("cordelia").GET("/events", {
        params: { query: { queue_id: publicQueue!, last_event_id: -1, dont_block: true } },
      }),
    );
    expect(
      polled.events.filter(
        (e: Record<string, any>) => e.type === "message" && e.message.stream_id === streamId,
      ),
    ).toEqual([]);
  });

  it("making a private channel public: newcomers get `stream` create and its subscribers", async () => {
    const { streamId, name } = await channel("iago", ["iago", "hamlet"], { invite_only: true });
    const cordelia = await queueOf(server, "cordelia", ["stream", "subscription"]);
    const polonius = await queueOf(server, "polonius", ["stream", "subscription"]);
    const hamlet = await queueOf(server, "hamlet", ["stream", "subscription"]);
    await expectSuccess(patch("iago", streamId, { is_private: false }));
    const [create, peers] = streamEvents(await cordelia());
    expect(create).toMatchObject({ type: "stream", op: "create" });
    // The queue strips the archiving marker, as Zulip does.
    expect(create).not.toHaveProperty("for_unarchiving");
    expect(create!.streams[0]).toMatchObject({ stream_id: streamId, name, invite_only: false });
    expect(peers).toEqual({
      type: "subscription",
      op: "peer_add",
      stream_ids: [streamId],
      user_ids: [id("iago"), id("hamlet")].sort((a, b) => a - b),
    });
    // Guests do not see public channels they are not subscribed to.
    expect(streamEvents(await polonius())).toEqual([]);
    expect(streamEvents(await hamlet())).toMatchObject([
      { op: "update", property: "invite_only", value: false, history_public_to_subscribers: true },
    ]);
    expect(await lastNotice(streamId)).toContain(
      "for this channel from **Private, protected history** to **Public**.",
    );
  });

  it("needs content access to change privacy", async () => {
    const { streamId } = await channel("iago", ["iago"], { invite_only: true });
    // Hamlet administers the channel without being subscribed.
    await expectSuccess(
      patch("iago", streamId, {
        can_administer_channel_group: {
          new: { direct_members: [id("hamlet")], direct_subgroups: [] },
        },
      }),
    );
    await expectError(
      patch("hamlet", streamId, { is_private: false }),
      400,
      "Channel content access is required.",
    );
    await expectSuccess(patch("hamlet", streamId, { description: "metadata is enough" }));
  });
});

describe("retention, topics policy, folder, default channel", () => {
  it("message_retention_days: owners only, Zulip's values, event and notice", async () => {
    const { streamId, name } = await channel("iago", ["iago", "desdemona"]);
    await expectError(
      patch("iago", streamId, { message_retention_days: 30 }),
      400,
      "Must be an organization owner",
    );
    await expectError(
      patch("desdemona", streamId, { message_retention_days: "soon" }),
      400,
      "Bad value for 'message_retention_days': soon",
    );
    const desdemona = await queueOf(server, "desdemona", ["stream"]);
    await expectSuccess(patch("desdemona", streamId, { message_retention_days: 30 }));
    await expectSuccess(patch("desdemona", streamId, { message_retention_days: "unlimited" }));
    expect(await desdemona()).toEqual([
      {
        type: "stream",
        op: "update",
        stream_id: streamId,
        name,
        property: "message_retention_days",
        value: 30,
      },
      {
        type: "stream",
        op: "update",
        stream_id: streamId,
        name,
        property: "message_retention_days",
        value: -1,
      },
    ]);
    expect(await lastNotice(streamId)).toBe(
      `@_**Desdemona|${id("desdemona")}** has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
        "* **Old retention period**: 30 days\n* **New retention period**: Forever\n\n" +
        "Messages in this channel will now be retained forever.",
    );
    await expectSuccess(patch("desdemona", streamId, { message_retention_days: "realm_default" }));
    expect((await row(streamId)).messageRetentionDays).toBeNull();
  });

  it("topics_policy: event with the policy's name and the notice", async () => {
    const { streamId, name } = await channel("iago", ["iago"]);
    const iago = await queueOf(server, "iago", ["stream"]);
    await expectSuccess(patch("iago", streamId, { topics_policy: "disable_empty_topic" }));
    expect(await iago()).toEqual([
      {
        type: "stream",
        op: "update",
        stream_id: streamId,
        name,
        property: "topics_policy",
        value: "disable_empty_topic",
      },
    ]);
    expect(await lastNotice(streamId)).toBe(
      `@_**Iago|${id("iago")}** changed the "Allow posting to the *general chat* topic?" setting from **Automatic** to **No *(no topic)* topic**.`,
    );
  });

  it("folder_id: into a folder and out of it; an unknown folder is refused", async () => {
    const { streamId } = await channel("iago", ["iago"]);
    const { channel_folder_id: folderId } = await expectSuccess(
      server.as("iago").POST("/channel_folders/create", {
        body: { name: `folder ${counter}`, description: "" },
      }),
    );
    await expectError(
      patch("iago", streamId, { folder_id: 99999 }),
      400,
      "Invalid channel folder ID",
    );
    await expectSuccess(patch("iago", streamId, { folder_id: folderId }));
    expect((await row(streamId)).folderId).toBe(folderId);
    await expectSuccess(patch("iago", streamId, { folder_id: null }));
    expect((await row(streamId)).folderId).toBeNull();
  });

  it("is_default_stream: administrators only, with the default_streams event", async () => {
    const { streamId } = await channel("hamlet", ["hamlet"]);
    await expectError(
      patch("hamlet", streamId, { is_default_stream: true }),
      400,
      "You do not have permission to change default channels.",
    );
    const cordelia = await queueOf(server, "cordelia", ["default_streams"]);
    await expectSuccess(patch("iago", streamId, { is_default_stream: true }));
    const [event] = (await cordelia()) as Record<string, any>[];
    expect(event!.default_streams).toContain(streamId);
  });
});

describe("group settings", () => {
  it("can_send_message_group as JSON text in a form body: events, legacy policy events and the notice", async () => {
    const { streamId, name } = await channel("iago", ["iago", "hamlet"]);
    const admins = (
      await server.db.namedUserGroup.findFirstOrThrow({
        where: { realmId: realmId(), name: "role:administrators" },
      })
    ).id;
    const everyone = (
      await server.db.namedUserGroup.findFirstOrThrow({
        where: { realmId: realmId(), name: "role:everyone" },
      })
    ).id;
    const hamlet = await queueOf(server, "hamlet", ["stream"]);
    const mismatch = await formPatch(
      "iago",
      streamId,
      `can_send_message_group=${encodeURIComponent(JSON.stringify({ new: admins, old: admins }))}`,
    );
    expect(mismatch).toEqual({
      status: 400,
      body: {
        result: "error",
        msg: "'old' value does not match the expected value.",
        code: "EXPECTATION_MISMATCH",
      },
    });
    const answer = await formPatch(
      "iago",
      streamId,
      `can_send_message_group=${encodeURIComponent(JSON.stringify({ new: admins, old: everyone }))}`,
    );
    expect(answer.status).toBe(200);
    const base = { type: "stream", op: "update", stream_id: streamId, name };
    expect(await hamlet()).toEqual([
      { ...base, property: "can_send_message_group", value: admins },
      { ...base, property: "stream_post_policy", value: 2 },
      { ...base, property: "is_announcement_only", value: true },
    ]);
    expect(await lastNotice(streamId)).toBe(
      `@_**Iago|${id("iago")}** changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
        "* **Old**: @_*role:everyone*\n* **New**: @_*role:administrators*",
    );
    await expectError(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: streamId, topic: "t", content: "hi" },
      }),
      400,
      "You do not have permission to post in this channel.",
    );
  });

  it("a setting granting sight of a private channel sends `stream` create to who gains it, delete to who loses it", async () => {
    const { streamId } = await channel("iago", ["iago"], { invite_only: true });
    const cordelia = await queueOf(server, "cordelia", ["stream", "subscription"]);
    const anonymous = { direct_members: [id("cordelia")], direct_subgroups: [] };
    // The queue is read from its start each time: what the second change adds comes after.
    await expectSuccess(patch("iago", streamId, { can_subscribe_group: { new: anonymous } }));
    const events = streamEvents(await cordelia());
    expect(events.map((e) => `${e.type}/${e.op}`)).toEqual([
      "stream/create",
      "subscription/peer_add",
    ]);
    expect(events[0]!.streams[0].can_subscribe_group).toEqual(anonymous);
    await expectSuccess(
      patch("iago", streamId, {
        can_subscribe_group: { new: { direct_members: [], direct_subgroups: [] }, old: anonymous },
      }),
    );
    expect(streamEvents(await cordelia()).slice(2)).toEqual([
      { type: "stream", op: "delete", streams: [{ stream_id: streamId }], stream_ids: [streamId] },
    ]);
    await expectError(
      patch("iago", streamId, {
        can_subscribe_group: {
          new: (
            await server.db.namedUserGroup.findFirstOrThrow({
              where: { realmId: realmId(), name: "role:everyone" },
            })
          ).id,
        },
      }),
      400,
      "'can_subscribe_group' setting cannot be set to 'role:everyone' group.",
    );
  });

  it("a channel whose topics only some may start cannot get protected history", async () => {
    const { streamId } = await channel("iago", ["iago"]);
    await expectSuccess(
      patch("iago", streamId, {
        can_create_topic_group: { new: { direct_members: [id("iago")], direct_subgroups: [] } },
      }),
    );
    await expectError(
      patch("iago", streamId, { is_private: true }),
      400,
      "Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group",
    );
    await expectSuccess(
      patch("iago", streamId, { is_private: true, history_public_to_subscribers: true }),
    );
  });

  it("can_create_topic_group must stay role:everyone in a channel with protected history", async () => {
    const { streamId } = await channel("iago", ["iago"], { invite_only: true });
    await expectError(
      patch("iago", streamId, {
        can_create_topic_group: { new: { direct_members: [id("iago")], direct_subgroups: [] } },
      }),
      400,
      "Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group",
    );
  });
});

describe("statement budget", () => {
  it("a description change costs the same statements with 2 subscribers as with 10, within its budget", async () => {
    const seen: { operationId?: string; statements: number }[] = [];
    const observe = server.deps.observe;
    server.deps.observe = (info) => seen.push(info);
    const many = [
      "iago",
      "hamlet",
      "othello",
      "cordelia",
      "desdemona",
      "prospero",
      "aaron",
      "zoe",
      "polonius",
      "shiva",
    ];
    try {
      const count = async (subscribers: string[]) => {
        const { streamId } = await channel("iago", subscribers);
        await expectSuccess(patch("iago", streamId, { description: "warm" }));
        seen.length = 0;
        await expectSuccess(patch("iago", streamId, { description: "counted" }));
        const info = seen.filter((i) => i.operationId === "update-stream");
        expect(info).toHaveLength(1);
        return info[0]!.statements;
      };
      const few = await count(["iago", "hamlet"]);
      expect(await count(many.filter((n) => server.creds.users[n]))).toBe(few);
      expect(few).toBeLessThanOrEqual(15);
      if (process.env.SHOW_STATEMENTS) console.log("update-stream description", few);
    } finally {
      server.deps.observe = observe;
    }
  });
});
