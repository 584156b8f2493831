import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { asUser, type Body, openQueue, untyped } from "../helpers/builders.ts";
import { realClient } from "../helpers/real-client.ts";

const server = useTestServer();

const patch = (as: string, body: Body<"/realm", "patch">) =>
  server.as(as).PATCH("/realm", { body: body });
const realmRow = () => server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });

describe("PATCH /realm", () => {
  it("lets administrators change message editing settings and echoes the changes", async () => {
    const data = await expectSuccess(
      patch("iago", {
        allow_message_editing: false,
        message_content_edit_limit_seconds: 3600,
        move_messages_within_stream_limit_seconds: "unlimited",
      }),
    );
    expect(data).toMatchObject({
      allow_message_editing: false,
      message_content_edit_limit_seconds: 3600,
      move_messages_within_stream_limit_seconds: null,
    });
    expect(await realmRow()).toMatchObject({
      allowMessageEditing: false,
      messageContentEditLimitSeconds: 3600,
      moveMessagesWithinStreamLimitSeconds: null,
    });
  });

  it("refuses text PostgreSQL cannot store (a NUL character) with a 400, changing nothing", async () => {
    const before = await realmRow();
    await expectError(
      patch("iago", { name: "Zulip\u0000Dev", allow_message_editing: !before.allowMessageEditing }),
      400,
      "Invalid name",
    );
    await expectError(patch("iago", { description: "a\u0000b" }), 400, "Invalid description");
    const after = await realmRow();
    expect({ name: after.name, allow: after.allowMessageEditing }).toEqual({
      name: before.name,
      allow: before.allowMessageEditing,
    });
  });

  it("refuses non-administrators and changes nothing", async () => {
    await expectError(
      patch("shiva", { allow_message_editing: true }),
      400,
      "Must be an organization administrator",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
    expect((await realmRow()).allowMessageEditing).toBe(false);
  });

  it("refuses a bad time limit and applies nothing of the request", async () => {
    await expectError(
      patch("iago", { allow_message_editing: true, message_content_edit_limit_seconds: 0 }),
      400,
      "Bad value for 'message_content_edit_limit_seconds': 0",
    );
    expect((await realmRow()).allowMessageEditing).toBe(false);
  });

  it("sets the moderation request channel, checks it exists and is private, and -1 turns it off", async () => {
    const core = server.creds.channels["core team"]!.stream_id;
    expect(
      await expectSuccess(patch("iago", { moderation_request_channel_id: core })),
    ).toMatchObject({ moderation_request_channel_id: core });
    await expectError(
      patch("iago", { moderation_request_channel_id: server.creds.channels.Denmark!.stream_id }),
      400,
      "Moderation request channel must be private.",
    );
    await expectError(
      patch("iago", { moderation_request_channel_id: 98765 }),
      400,
      "Invalid channel ID",
    );
    await expectSuccess(patch("iago", { moderation_request_channel_id: -1 }));
    expect((await realmRow()).moderationRequestChannelId).toBeNull();
  });

  it("changes group settings, checks `old`, and refuses role:internet", async () => {
    const groups = await server.db.namedUserGroup.findMany({
      where: { realmId: server.creds.realm.id, isSystemGroup: true },
    });
    const id = (name: string) => groups.find((g) => g.name === name)!.id;
    const data = await expectSuccess(
      patch("iago", {
        can_resolve_topics_group: { new: id("role:moderators"), old: id("role:everyone") },
      }),
    );
    expect(data.can_resolve_topics_group).toBe(id("role:moderators"));
    await expectError(
      patch("iago", {
        can_resolve_topics_group: { new: id("role:members"), old: id("role:everyone") },
      }),
      400,
      "'old' value does not match the expected value.",
      {
        code: "EXPECTATION_MISMATCH",
      },
    );
    await expectError(
      patch("iago", { can_resolve_topics_group: { new: id("role:internet") } }),
      400,
      "'can_resolve_topics_group' setting cannot be set to 'role:internet' group.",
    );
    // GroupSettingChangeRequest's `new` is int | UserGroupMembersData: the int member's error, by its tag.
    await expectError(
      patch("iago", { can_resolve_topics_group: { new: untyped("role:members") } }),
      400,
      'can_resolve_topics_group["new"]["int"] is not an integer',
    );
    await expectError(
      patch("iago", {
        can_resolve_topics_group: { new: { direct_members: [1.5], direct_subgroups: [] } },
      }),
      400,
      'can_resolve_topics_group["new"]["int"] is not an integer',
    );
    const hamlet = server.creds.users.hamlet!.user_id;
    const anon = await expectSuccess(
      patch("iago", {
        can_mention_many_users_group: {
          new: { direct_members: [hamlet], direct_subgroups: [id("role:administrators")] },
        },
      }),
    );
    expect(anon.can_mention_many_users_group).toEqual({
      direct_members: [hamlet],
      direct_subgroups: [id("role:administrators")],
    });
    await expectError(
      patch("iago", {
        can_mention_many_users_group: { new: { direct_members: [424242], direct_subgroups: [] } },
      }),
      400,
      "Invalid user ID: 424242",
    );
  });

  it("sends a realm update_dict event to the organization after commit", async () => {
    const { queue_id } = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { event_types: ["realm"] } }),
    );
    await expectSuccess(patch("iago", { empty_topic_display_name: "general chat" }));
    const { events } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }),
    );
    expect(events).toEqual([
      expect.objectContaining({
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { empty_topic_display_name: "general chat" },
      }),
    ]);
    const state = await expectSuccess(server.as("hamlet").POST("/register", { body: {} }));
    expect(state.realm_empty_topic_display_name).toBe("general chat");
  });

  it("sets the deletion policy (behind can_set_delete_message_policy_group), read receipts and custom emoji", async () => {
    const group = async (name: string) =>
      (
        await server.db.namedUserGroup.findFirstOrThrow({
          where: { realmId: server.creds.realm.id, name },
        })
      ).id;
    // python-zulip-api's form body: JSON text for numbers, booleans and group values.
    const iago = server.creds.users.iago!;
    const response = await fetch(`${server.baseUrl}/api/v1/realm`, {
      method: "PATCH",
      headers: {
        Authorization: "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        enable_read_receipts: "true",
        message_content_delete_limit_seconds: "600",
        can_delete_own_message_group: JSON.stringify({ new: await group("role:members") }),
        can_add_custom_emoji_group: JSON.stringify({ new: await group("role:administrators") }),
      }).toString(),
    });
    expect(await response.json()).toMatchObject({ result: "success", enable_read_receipts: true });
    expect(await realmRow()).toMatchObject({
      enableReadReceipts: true,
      messageContentDeleteLimitSeconds: 600,
      canDeleteOwnMessageGroupId: await group("role:members"),
      canAddCustomEmojiGroupId: await group("role:administrators"),
    });

    const before = await realmRow();
    await expectSuccess(patch("iago", { enable_read_receipts: false }));
    // Owners only may change the deletion policy now: an administrator is refused, changing nothing.
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { canSetDeleteMessagePolicyGroupId: await group("role:owners") },
    });
    await expectError(
      patch("iago", {
        message_content_delete_limit_seconds: "unlimited",
        enable_read_receipts: true,
      }),
      400,
      "Insufficient permission",
    );
    expect(await realmRow()).toMatchObject({
      enableReadReceipts: false,
      messageContentDeleteLimitSeconds: before.messageContentDeleteLimitSeconds,
    });
    await expectSuccess(patch("desdemona", { message_content_delete_limit_seconds: "unlimited" }));
    expect((await realmRow()).messageContentDeleteLimitSeconds).toBeNull();
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: {
        canSetDeleteMessagePolicyGroupId: before.canSetDeleteMessagePolicyGroupId,
        canDeleteOwnMessageGroupId: before.canDeleteOwnMessageGroupId,
        canAddCustomEmojiGroupId: before.canAddCustomEmojiGroupId,
      },
    });
  });

  it("succeeds without changes for an empty request", async () => {
    const data = await expectSuccess(patch("iago", {}));
    expect(Object.keys(data).sort()).toEqual(["msg", "result"]);
  });
});

describe("welcome_message_custom_text", () => {
  const user = (name: string) => server.creds.users[name]!;
  const basic = (name: string) =>
    "Basic " + Buffer.from(`${user(name).email}:${user(name).api_key}`).toString("base64");

  it("is set through PATCH /realm (zulip-js's query string), echoed as updated and registered", async () => {
    const response = await fetch(
      `${server.baseUrl}/api/v1/realm?welcome_message_custom_text=Read+the+%2A%2Arules%2A%2A.`,
      { method: "PATCH", headers: { Authorization: basic("iago") } },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ welcome_message_custom_text: "updated" });
    expect((await realmRow()).welcomeMessageCustomText).toBe("Read the **rules**.");
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    );
    expect(state).toMatchObject({ realm_welcome_message_custom_text: "Read the **rules**." });
    await expectError(
      patch("iago", { welcome_message_custom_text: "x".repeat(8001) }),
      400,
      "welcome_message_custom_text is too long (limit: 8000 characters)",
    );
  });
});

describe("POST /realm/test_welcome_bot_custom_message", () => {
  it("sends the administrator Welcome Bot's custom message and answers its id", async () => {
    const { message_id } = await expectSuccess(
      server.as("iago").POST("/realm/test_welcome_bot_custom_message", {
        body: { welcome_message_custom_text: "Welcome to **Zulip**!" },
      }),
    );
    const { message } = await expectSuccess(
      server.as("iago").GET("/messages/{message_id}", {
        params: { path: { message_id }, query: { apply_markdown: false } },
      }),
    );
    expect(message).toMatchObject({
      content: "Welcome to **Zulip**!",
      sender_email: "welcome-bot@zulip.com",
      type: "private",
    });
    expect(
      Array.isArray(message.display_recipient) && message.display_recipient.map((r) => r.id).sort(),
    ).toContain(server.creds.users.iago!.user_id);
  });

  it("takes a form body with + for spaces", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/realm/test_welcome_bot_custom_message`, {
      method: "POST",
      headers: {
        Authorization:
          "Basic " +
          Buffer.from(
            `${server.creds.users.desdemona!.email}:${server.creds.users.desdemona!.api_key}`,
          ).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "welcome_message_custom_text=Hello+there",
    });
    expect(response.status).toBe(200);
    const { message_id } = (await response.json()) as { message_id: number };
    const row = await server.db.message.findUniqueOrThrow({ where: { id: message_id } });
    expect(row.content).toBe("Hello there");
  });

  it("refuses an empty or too long text and a non-administrator, sending nothing", async () => {
    const before = await server.db.message.count();
    const send = (as: string, text: string) =>
      server.as(as).POST("/realm/test_welcome_bot_custom_message", {
        body: { welcome_message_custom_text: text },
      });
    await expectError(send("iago", ""), 400, "Message must not be empty");
    await expectError(
      send("iago", "x".repeat(8001)),
      400,
      "welcome_message_custom_text is too long (limit: 8000 characters)",
    );
    await expectError(send("hamlet", "Hi"), 400, "Must be an organization administrator");
    expect(await server.db.message.count()).toBe(before);
  });
});

describe("Zulip 12 organization settings: send_channel_events_messages (434), gif_rating_policy (453), media_preview_size (469)", () => {
  const state = async () =>
    (await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    )) as Record<string, unknown>;

  it("are in register, change through PATCH /realm with an `update` event each, and echo", async () => {
    expect(await state()).toMatchObject({
      realm_send_channel_events_messages: true,
      realm_gif_rating_policy: 2,
      realm_media_preview_size: 100,
    });
    const queue = await openQueue(asUser(server, "hamlet"), { event_types: ["realm"] });
    const echoed = await expectSuccess(
      patch("iago", {
        send_channel_events_messages: false,
        gif_rating_policy: 4,
        media_preview_size: 150,
      }),
    );
    expect(echoed).toMatchObject({
      send_channel_events_messages: false,
      gif_rating_policy: 4,
      media_preview_size: 150,
    });
    const events = (await queue.nextEvents()).map(({ id: _id, ...e }) => e);
    expect(events).toEqual([
      { type: "realm", op: "update", property: "send_channel_events_messages", value: false },
      { type: "realm", op: "update", property: "gif_rating_policy", value: 4 },
      { type: "realm", op: "update", property: "media_preview_size", value: 150 },
    ]);
    expect(await state()).toMatchObject({
      realm_send_channel_events_messages: false,
      realm_gif_rating_policy: 4,
      realm_media_preview_size: 150,
    });
    // The same values again change nothing and send nothing.
    expect(
      await expectSuccess(patch("iago", { gif_rating_policy: 4, media_preview_size: 150 })),
    ).not.toHaveProperty("gif_rating_policy");
    expect(await queue.nextEvents()).toEqual([]);
  });

  it("send_channel_events_messages off: no Notification Bot notice for a new channel", async () => {
    await expectSuccess(patch("iago", { send_channel_events_messages: false }));
    const { id } = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: { name: "quiet channel", subscribers: [server.creds.users.iago!.user_id] },
      }),
    );
    const stream = await server.db.stream.findUniqueOrThrow({ where: { id } });
    expect(await server.db.message.count({ where: { recipientId: stream.recipientId! } })).toBe(0);
    await expectSuccess(patch("iago", { send_channel_events_messages: true }));
  });

  it("refuses values outside Zulip's, and non-administrators, changing nothing", async () => {
    const before = await realmRow();
    await expectError(
      patch("iago", {
        send_channel_events_messages: !before.sendChannelEventsMessages,
        gif_rating_policy: 9,
      }),
      400,
      "Invalid gif_rating_policy 9",
    );
    await expectError(
      patch("iago", { media_preview_size: untyped(120) }),
      400,
      "Invalid media_preview_size: Value error, Not in the list of possible values",
    );
    await expectError(
      patch("hamlet", { media_preview_size: 200 }),
      400,
      "Must be an organization administrator",
    );
    const after = await realmRow();
    expect([
      after.sendChannelEventsMessages,
      after.gifRatingPolicy,
      after.mediaPreviewSize,
    ]).toEqual([before.sendChannelEventsMessages, before.gifRatingPolicy, before.mediaPreviewSize]);
  });

  it("takes a form body with JSON values, and zulip-js's query string; not the old giphy_rating", async () => {
    const form = await realClient(server, "iago", "PATCH", "/realm", {
      media_preview_size: 200,
      send_channel_events_messages: true,
      giphy_rating: 1,
    });
    expect(form.status).toBe(200);
    expect(form.body.ignored_parameters_unsupported).toEqual(["giphy_rating"]);
    const query = await realClient(
      server,
      "iago",
      "PATCH",
      "/realm",
      { gif_rating_policy: 0, media_preview_size: 100 },
      { inQuery: true },
    );
    expect(query.status).toBe(200);
    expect(await realmRow()).toMatchObject({ gifRatingPolicy: 0, mediaPreviewSize: 100 });
    await expectSuccess(patch("iago", { gif_rating_policy: 2 }));
  });
});
