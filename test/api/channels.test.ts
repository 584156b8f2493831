/**
 * POST /channels/create and the channel reads (GET /streams, /streams/{id}, /get_stream_id,
 * /streams/{id}/members), in Zulip's order of checks (zerver/tests/test_channel_creation.py,
 * test_subs.py).
 */
import { describe, expect, it } from "vitest";
import { encodeParam } from "../../client/src/index.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { createChannel } from "../helpers/builders.ts";
import { realClient } from "../helpers/real-client.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const create = (as: string, body: Parameters<typeof createChannel>[1]) =>
  server.as(as).POST("/channels/create", { body: { subscribers: [], ...body } });
const systemGroup = async (name: string) =>
  (
    await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name },
    })
  ).id;
const registerQueue = async (as: string, types: string[]) =>
  (await expectSuccess(server.as(as).POST("/register", { body: { event_types: types } })))
    .queue_id!;
const pollEvents = async (as: string, queueId: string) =>
  (
    await expectSuccess(
      server.as(as).GET("/events", {
        params: { query: { queue_id: queueId, last_event_id: -1, dont_block: true } },
      }),
    )
  ).events as Record<string, any>[];
const topicMessages = async (as: string, stream: string, topic: string) =>
  (
    await expectSuccess(
      server.as(as).GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 10,
            num_after: 0,
            narrow: [
              { operator: "channel", operand: stream },
              { operator: "topic", operand: topic },
            ],
          },
        },
      }),
    )
  ).messages;

describe("POST /channels/create", () => {
  it("creates a channel with the creator's defaults, subscribes the subscribers and answers its id", async () => {
    const { id: streamId } = await expectSuccess(
      create("iago", {
        name: "  basketball  ",
        description: "Hoops\nand **balls**",
        subscribers: [id("iago"), id("hamlet")],
      }),
    );
    const row = await server.db.stream.findUniqueOrThrow({ where: { id: streamId } });
    expect(row.name).toBe("basketball");
    expect(row.description).toBe("Hoops and **balls**");
    expect(row.renderedDescription).toBe("<p>Hoops and <strong>balls</strong></p>");
    expect(row.historyPublicToSubscribers).toBe(true);
    expect(row.subscriberCount).toBe(2);
    const { stream } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/streams/{stream_id}", { params: { path: { stream_id: streamId } } }),
    );
    expect(stream).toMatchObject({
      name: "basketball",
      creator_id: id("iago"),
      invite_only: false,
      topics_policy: "inherit",
      subscriber_count: 2,
    });
    expect(stream.can_administer_channel_group).toEqual({
      direct_members: [id("iago")],
      direct_subgroups: [],
    });
    expect(stream.can_send_message_group).toBe(await systemGroup("role:everyone"));
    // Notification Bot's "channel events" message, read for the creator.
    const [notice] = await topicMessages("hamlet", "basketball", "channel events");
    expect(notice!.content).toContain(
      `<strong>Public</strong> channel created by <span class="user-mention silent" data-user-id="${id("iago")}">Iago</span>.`,
    );
    expect(notice!.content).toContain("Hoops and <strong>balls</strong>");
  });

  it("refuses a name in use, case-insensitively, with 409 CHANNEL_ALREADY_EXISTS", async () => {
    await expectError(create("iago", { name: "VERONA" }), 409, "Channel 'VERONA' already exists", {
      code: "CHANNEL_ALREADY_EXISTS",
    });
  });

  it("checks the name: empty, too long, unprintable", async () => {
    await expectError(create("iago", { name: "   " }), 400, "Channel name can't be empty.");
    await expectError(
      create("iago", { name: "x".repeat(61) }),
      400,
      "Channel name too long (limit: 60 characters).",
    );
    await expectError(
      create("iago", { name: "ab\u0001c" }),
      400,
      "Invalid character in channel name, at position 3.",
    );
  });

  it("checks subscribers, roles and permissions in Zulip's order", async () => {
    await expectError(
      create("iago", { name: "nosuch", subscribers: [id("iago"), 99999] }),
      400,
      "No such user",
    );
    await expectError(create("polonius", { name: "guests" }), 400, "Not allowed for guest users");
    await expectError(
      create("iago", { name: "kept", message_retention_days: 10 }),
      400,
      "Must be an organization owner",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
    await expectSuccess(create("desdemona", { name: "kept", message_retention_days: 10 }));
    await expectSuccess(
      create("desdemona", { name: "forever kept", message_retention_days: "unlimited" }),
    );
    expect(
      (await server.db.stream.findFirstOrThrow({ where: { name: "forever kept" } }))
        .messageRetentionDays,
    ).toBe(-1);
    await expectError(
      create("iago", { name: "default private", is_default_stream: true, invite_only: true }),
      400,
      "A default channel cannot be private.",
    );
    await expectError(
      create("hamlet", { name: "default", is_default_stream: true }),
      400,
      "Insufficient permission",
    );
    await expectError(
      create("iago", { name: "web", is_web_public: true }),
      400,
      "Web-public channels are not enabled.",
    );
    await expectError(
      create("iago", { name: "bad folder", folder_id: 9999 }),
      400,
      "Invalid channel folder ID",
    );
    await expectError(
      create("iago", {
        name: "everyone admin",
        can_administer_channel_group: await systemGroup("role:everyone"),
      }),
      400,
      "'can_administer_channel_group' setting cannot be set to 'role:everyone' group.",
    );
    await expectError(
      create("iago", {
        name: "internet",
        can_send_message_group: await systemGroup("role:internet"),
      }),
      400,
      "'can_send_message_group' setting cannot be set to 'role:internet' group.",
    );
    await expectError(
      create("iago", {
        name: "protected",
        invite_only: true,
        can_create_topic_group: await systemGroup("role:members"),
      }),
      400,
      "Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group",
      { code: "BAD_REQUEST", parameters: "history_public_to_subscribers, can_create_topic_group" },
    );
    await expectError(
      create("hamlet", {
        name: "deleters",
        can_delete_own_message_group: await systemGroup("role:members"),
      }),
      400,
      "Insufficient permission",
    );
    expect(
      await server.db.stream.count({
        where: {
          name: {
            in: [
              "nosuch",
              "guests",
              "default private",
              "default",
              "web",
              "bad folder",
              "everyone admin",
              "internet",
              "protected",
              "deleters",
            ],
          },
        },
      }),
    ).toBe(0);
    // Moderators may open message deletion (can_set_delete_message_policy_group), and a shared-history private channel may restrict topics.
    await expectSuccess(
      create("shiva", {
        name: "deleters",
        can_delete_own_message_group: await systemGroup("role:members"),
      }),
    );
    await expectSuccess(
      create("iago", {
        name: "restricted topics",
        invite_only: true,
        history_public_to_subscribers: true,
        can_create_topic_group: await systemGroup("role:members"),
      }),
    );
  });

  it("needs the organization's creation permission for the channel's privacy", async () => {
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
    await server.db.realm.update({
      where: { id: realm.id },
      data: {
        canCreatePrivateChannelGroupId: await systemGroup("role:administrators"),
        canSetTopicsPolicyGroupId: await systemGroup("role:moderators"),
      },
    });
    try {
      await expectError(
        create("hamlet", { name: "hamlet private", invite_only: true }),
        400,
        "Insufficient permission",
      );
      await expectError(
        create("hamlet", { name: "hamlet policy", topics_policy: "disable_empty_topic" }),
        400,
        "Insufficient permission",
      );
      await expectSuccess(create("hamlet", { name: "hamlet public" }));
      await expectSuccess(
        create("iago", {
          name: "iago private",
          invite_only: true,
          topics_policy: "disable_empty_topic",
        }),
      );
    } finally {
      await server.db.realm.update({
        where: { id: realm.id },
        data: {
          canCreatePrivateChannelGroupId: realm.canCreatePrivateChannelGroupId,
          canSetTopicsPolicyGroupId: realm.canSetTopicsPolicyGroupId,
        },
      });
    }
  });

  it("creates a private channel seen only by its subscribers and administrators, with Zulip's events", async () => {
    const hamletQueue = await registerQueue("hamlet", ["stream", "subscription"]);
    const othelloQueue = await registerQueue("othello", ["stream", "subscription"]);
    const iagoQueue = await registerQueue("iago", ["stream"]);
    const { id: streamId } = await expectSuccess(
      create("desdemona", {
        name: "secret plans",
        invite_only: true,
        subscribers: [id("desdemona"), id("hamlet")],
        history_public_to_subscribers: true,
      }),
    );
    const hamletEvents = await pollEvents("hamlet", hamletQueue);
    expect(
      hamletEvents.find((e) => e.type === "stream" && e.op === "create")?.streams[0],
    ).toMatchObject({
      stream_id: streamId,
      invite_only: true,
      history_public_to_subscribers: true,
    });
    expect(
      hamletEvents.find((e) => e.type === "subscription" && e.op === "add")?.subscriptions[0],
    ).toMatchObject({
      stream_id: streamId,
      subscribers: [id("desdemona"), id("hamlet")],
      is_muted: false,
    });
    expect(
      (await pollEvents("othello", othelloQueue)).filter((e) => e.type !== "heartbeat"),
    ).toEqual([]);
    expect(
      (await pollEvents("iago", iagoQueue)).some((e) => e.type === "stream" && e.op === "create"),
    ).toBe(true);
    await expectError(
      server
        .as("othello")
        .GET("/streams/{stream_id}", { params: { path: { stream_id: streamId } } }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      server.as("othello").GET("/get_stream_id", { params: { query: { stream: "secret plans" } } }),
      400,
      "Invalid channel name 'secret plans'",
    );
    expect(
      await expectSuccess(
        server
          .as("hamlet")
          .GET("/get_stream_id", { params: { query: { stream: "SECRET plans" } } }),
      ),
    ).toMatchObject({ stream_id: streamId });
    const [notice] = await topicMessages("hamlet", "secret plans", "channel events");
    expect(notice!.content).toContain(
      "<strong>Private, shared history</strong> channel created by",
    );
  });

  it("announces the channel in the new-channel announcements channel, and tells users someone else subscribed", async () => {
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { newStreamAnnouncementsStreamId: server.creds.channels.Verona!.stream_id },
    });
    const { id: streamId } = await expectSuccess(
      create("iago", {
        name: "announced",
        announce: true,
        subscribers: [id("iago"), id("othello")],
      }),
    );
    const [announcement] = await topicMessages("hamlet", "Verona", "new channels");
    expect(announcement!.content).toContain("created a new channel");
    expect(announcement!.content).toContain(`data-stream-id="${streamId}"`);
    // A new channel needs no "subscribed you" message: the creation message says it.
    const dms = await expectSuccess(
      server.as("othello").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 5,
            num_after: 0,
            narrow: [{ operator: "is", operand: "dm" }],
          },
        },
      }),
    );
    expect(dms.messages.some((m: any) => m.content.includes("announced"))).toBe(false);
  });

  it("posts the creation message in the empty topic of a channel that allows only that", async () => {
    await expectSuccess(create("iago", { name: "one thread", topics_policy: "empty_topic_only" }));
    const messages = (
      await expectSuccess(
        server.as("iago").GET("/messages", {
          params: {
            query: {
              anchor: "newest",
              num_before: 5,
              num_after: 0,
              narrow: [{ operator: "channel", operand: "one thread" }],
              allow_empty_topic_name: true,
            },
          },
        }),
      )
    ).messages;
    expect(messages.map((m: any) => m.subject)).toEqual([""]);
  });

  it("accepts the encodings real clients send (form body, JSON text, query string)", async () => {
    const auth =
      "Basic " +
      Buffer.from(`${server.creds.users.iago!.email}:${server.creds.users.iago!.api_key}`).toString(
        "base64",
      );
    const form = new URLSearchParams({
      name: "form made channel",
      subscribers: encodeParam([id("iago")]),
      invite_only: "true",
      topics_policy: '"allow_empty_topic"',
      can_send_message_group: encodeParam({ direct_members: [id("iago")], direct_subgroups: [] }),
    });
    const response = await fetch(`${server.baseUrl}/api/v1/channels/create`, {
      method: "POST",
      headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: form.toString().replace(/%20/g, "+"),
    });
    const body = (await response.json()) as { id: number };
    expect(
      checkResponse("post", `${server.baseUrl}/api/v1/channels/create`, response.status, body),
    ).toBeNull();
    expect(response.status).toBe(200);
    const row = await server.db.stream.findUniqueOrThrow({ where: { id: body.id } });
    expect(row).toMatchObject({
      name: "form made channel",
      inviteOnly: true,
      historyPublicToSubscribers: false,
      topicsPolicy: "allow_empty_topic",
    });
    const query = new URLSearchParams({ name: "query made channel", subscribers: "[]" });
    const viaQuery = await fetch(`${server.baseUrl}/api/v1/channels/create?${query}`, {
      method: "POST",
      headers: { Authorization: auth },
    });
    expect(viaQuery.status).toBe(200);
  });
});

describe("channel reads", () => {
  it("GET /streams lists public channels and subscriptions, sorted by name; include_all is for administrators", async () => {
    const { streams } = await expectSuccess(
      server.as("hamlet").GET("/streams", { params: { query: {} } }),
    );
    const names = streams.map((s) => s.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain("Verona");
    expect(names).not.toContain("core team");
    await expectError(
      server.as("hamlet").GET("/streams", { params: { query: { include_all: true } } }),
      400,
      "User not authorized for this query",
    );
    const all = await expectSuccess(
      server.as("iago").GET("/streams", { params: { query: { include_all: true } } }),
    );
    expect(all.streams.map((s) => s.name)).toContain("core team");
    const guest = await expectSuccess(
      server.as("polonius").GET("/streams", { params: { query: {} } }),
    );
    expect(guest.streams.every((s) => !s.invite_only)).toBe(true);
  });

  it("GET /streams/{stream_id}/members lists subscribers to those who may see them", async () => {
    const verona = server.creds.channels.Verona!.stream_id;
    const { subscribers } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/streams/{stream_id}/members", { params: { path: { stream_id: verona } } }),
    );
    expect(subscribers).toContain(id("hamlet"));
    const core = server.creds.channels["core team"]!.stream_id;
    await expectError(
      server
        .as("hamlet")
        .GET("/streams/{stream_id}/members", { params: { path: { stream_id: core } } }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      server.as("hamlet").GET("/streams/{stream_id}", { params: { path: { stream_id: 999999 } } }),
      400,
      "Invalid channel ID",
    );
  });

  it("register carries streams and the default channels", async () => {
    const state = await expectSuccess(
      server
        .as("hamlet")
        .POST("/register", { body: { fetch_event_types: ["stream", "default_streams"] } }),
    );
    expect((state as any).streams.map((s: any) => s.name)).toContain("Verona");
    expect(Array.isArray((state as any).realm_default_streams)).toBe(true);
  });
});

describe("renaming to a name in use", () => {
  it("answers 409 CHANNEL_ALREADY_EXISTS naming the name asked for, in zulip-js's query-string PATCH", async () => {
    const { id: streamId } = await createChannel(server.as("iago"), { name: "to be renamed" });
    const r = await realClient(
      server,
      "iago",
      "PATCH",
      `/streams/${streamId}`,
      { new_name: "verona" },
      { inQuery: true },
    );
    expect(r).toMatchObject({
      status: 409,
      body: {
        result: "error",
        code: "CHANNEL_ALREADY_EXISTS",
        msg: "Channel 'verona' already exists",
      },
    });
    // A private channel the caller cannot see still holds its name (Zulip does not look).
    await createChannel(server.as("hamlet"), { name: "hidden name", invite_only: true });
    const hidden = await realClient(server, "iago", "PATCH", `/streams/${streamId}`, {
      new_name: "Hidden name",
    });
    expect(hidden).toMatchObject({
      status: 409,
      body: { msg: "Channel 'Hidden name' already exists" },
    });
    const row = await server.db.stream.findUniqueOrThrow({ where: { id: streamId } });
    expect(row.name).toBe("to be renamed");
  });
});

describe("a group setting naming an unknown subgroup", () => {
  it("answers 'Invalid user group ID: <id>' (an integer value stays 'Invalid user group')", async () => {
    const anonymous = { direct_members: [], direct_subgroups: [123456789] };
    const created = await realClient(server, "iago", "POST", "/channels/create", {
      name: "unknown subgroup",
      subscribers: [],
      can_send_message_group: anonymous,
    });
    expect(created).toMatchObject({
      status: 400,
      body: { msg: "Invalid user group ID: 123456789" },
    });
    const verona = server.creds.channels.Verona!.stream_id;
    const patched = await realClient(server, "iago", "PATCH", `/streams/${verona}`, {
      can_send_message_group: { new: anonymous },
    });
    expect(patched).toMatchObject({
      status: 400,
      body: { msg: "Invalid user group ID: 123456789" },
    });
    const named = await realClient(server, "iago", "PATCH", `/streams/${verona}`, {
      can_send_message_group: { new: 123456789 },
    });
    expect(named).toMatchObject({ status: 400, body: { msg: "Invalid user group" } });
  });
});

describe("GET /streams/{stream_id}/email_address", () => {
  const address = (as: string, streamId: number, query: Record<string, unknown> = {}) =>
    realClient(server, as, "GET", `/streams/${streamId}/email_address`, query);

  it("answers the gateway address: slug, the channel's token, .show-sender, at the host", async () => {
    const { id: mailId } = await createChannel(server.as("iago"), {
      name: "Mail me: Ünïcode ok!",
    });
    const row = await server.db.stream.findUniqueOrThrow({ where: { id: mailId } });
    expect(row.emailToken).toMatch(/^[0-9a-f]{32}$/);
    const r = await address("hamlet", mailId);
    expect(r.status).toBe(200);
    const host = server.deps.config.emailGatewayPattern.replace("%s@", "");
    expect(r.body.email).toBe(`mail-me-ünïcode-ok-.${row.emailToken}.show-sender@${host}`);
    // The caller as sender, or a bot they own, as zulip-js sends it (JSON text in the query).
    expect(await address("hamlet", mailId, { sender_id: id("hamlet") })).toMatchObject({
      status: 200,
      body: { email: r.body.email },
    });
    const other = await createChannel(server.as("iago"), { name: "mail other" });
    const otherRow = await server.db.stream.findUniqueOrThrow({ where: { id: other.id } });
    expect(otherRow.emailToken).not.toBe(row.emailToken);
  });

  it("refuses what Zulip refuses", async () => {
    const { id: secret } = await createChannel(server.as("iago"), {
      name: "mail secret",
      invite_only: true,
      subscribers: [id("iago")],
    });
    expect(await address("hamlet", secret)).toMatchObject({
      status: 400,
      body: { msg: "Invalid channel ID" },
    });
    expect(await address("hamlet", 987654)).toMatchObject({
      status: 400,
      body: { msg: "Invalid channel ID" },
    });
    const verona = server.creds.channels.Verona!.stream_id;
    expect(await address("hamlet", verona, { sender_id: id("othello") })).toMatchObject({
      status: 400,
      body: { msg: "No such bot" },
    });
    expect(await address("hamlet", verona, { sender_id: "x" })).toMatchObject({
      status: 400,
      body: { msg: "sender_id is not valid JSON" },
    });
    const { id: announce } = await createChannel(server.as("iago"), {
      name: "mail announce",
      can_send_message_group: await systemGroup("role:administrators"),
    });
    expect(await address("hamlet", announce)).toMatchObject({
      status: 400,
      body: { msg: "You do not have permission to post in this channel." },
    });
    expect((await address("iago", announce)).status).toBe(200);
  });
});
