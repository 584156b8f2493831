import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

describe("POST /register", () => {
  it("creates a queue and returns the state with the contract's limits", async () => {
    const state = await expectSuccess(server.as("hamlet").POST("/register", { body: {} }));
    expect(state.queue_id).toBeTypeOf("string");
    expect(state).toMatchObject({
      last_event_id: -1,
      zulip_feature_level: 496,
      max_message_length: 10000,
      max_topic_length: 60,
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      max_channel_folder_name_length: 60,
      max_channel_folder_description_length: 1024,
      realm_empty_topic_display_name: "(no topic)",
      server_typing_started_wait_period_milliseconds: 10000,
      server_typing_stopped_wait_period_milliseconds: 5000,
      server_typing_started_expiry_period_milliseconds: 15000,
      realm_allow_message_editing: true,
      realm_moderation_request_channel_id: -1,
    });
    expect((state.server_report_message_types as { key: string }[]).map((t) => t.key)).toEqual(["spam", "harassment", "inappropriate", "norms", "other"]);
    expect((state.subscriptions as { name: string }[]).map((s) => s.name).sort()).toEqual(["Denmark", "Rome", "Scotland", "Verona"]);
    expect(state.realm_users).toHaveLength(11);
  });

  it("fetches only the requested sections", async () => {
    const state = await expectSuccess(server.as("hamlet").POST("/register", { body: { fetch_event_types: ["message"] } }));
    expect(state).toHaveProperty("max_message_id");
    expect(state).not.toHaveProperty("realm_users");
    expect(state).not.toHaveProperty("subscriptions");
  });
});

describe("GET /events", () => {
  it("delivers a message event after the message is committed, with per-queue formatting", async () => {
    const html = await expectSuccess(server.as("othello").POST("/register", { body: { event_types: ["message"], apply_markdown: true } }));
    const raw = await expectSuccess(server.as("othello").POST("/register", { body: { event_types: ["message"], apply_markdown: false } }));
    const poll = server.as("othello").GET("/events", { params: { query: { queue_id: html.queue_id!, last_event_id: -1 } } });
    const { id } = await expectSuccess(server.as("hamlet").POST("/messages", { body: { type: "channel", to: "Verona", topic: "events", content: "**live**" } }));
    const { events } = await expectSuccess(poll);
    expect(events).toEqual([expect.objectContaining({ id: 0, type: "message", flags: [], message: expect.objectContaining({ id, content: "<p><strong>live</strong></p>" }) })]);
    const rawEvents = await expectSuccess(server.as("othello").GET("/events", { params: { query: { queue_id: raw.queue_id!, last_event_id: -1, dont_block: true } } }));
    expect(rawEvents.events[0]).toMatchObject({ message: { content: "**live**", content_type: "text/x-markdown" } });
  });

  it("gives the sender the read flag and only the recipients the event", async () => {
    const hamlet = await expectSuccess(server.as("hamlet").POST("/register", { body: { event_types: ["message"] } }));
    const polonius = await expectSuccess(server.as("polonius").POST("/register", { body: { event_types: ["message"] } }));
    await expectSuccess(server.as("hamlet").POST("/messages", { body: { type: "channel", to: "Scotland", topic: "events", content: "not for guests" } }));
    const mine = await expectSuccess(server.as("hamlet").GET("/events", { params: { query: { queue_id: hamlet.queue_id!, dont_block: true } } }));
    expect(mine.events[0]).toMatchObject({ type: "message", flags: ["read"] });
    const theirs = await expectSuccess(server.as("polonius").GET("/events", { params: { query: { queue_id: polonius.queue_id!, dont_block: true } } }));
    expect(theirs.events).toEqual([]);
  });

  it("drops acknowledged events and sends a heartbeat when nothing happens", async () => {
    const { queue_id } = await expectSuccess(server.as("cordelia").POST("/register", { body: { event_types: ["message"] } }));
    await expectSuccess(server.as("hamlet").POST("/messages", { body: { type: "direct", to: [server.creds.users.cordelia!.user_id], content: "one" } }));
    const first = await expectSuccess(server.as("cordelia").GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }));
    expect(first.events).toHaveLength(1);
    const after = await expectSuccess(server.as("cordelia").GET("/events", { params: { query: { queue_id: queue_id!, last_event_id: first.events[0]!.id } } }));
    expect(after.events).toEqual([expect.objectContaining({ type: "heartbeat", id: 1 })]);
  });

  it("does not publish events of a refused message", async () => {
    const { queue_id } = await expectSuccess(server.as("iago").POST("/register", { body: { event_types: ["message"] } }));
    await expectError(server.as("hamlet").POST("/messages", { body: { type: "direct", to: [server.creds.users.iago!.user_id, 424242], content: "x" } }), 400, "Invalid user ID 424242");
    const { events } = await expectSuccess(server.as("iago").GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }));
    expect(events).toEqual([]);
  });

  it("refuses another user's queue or an unknown one with BAD_EVENT_QUEUE_ID", async () => {
    const { queue_id } = await expectSuccess(server.as("iago").POST("/register", { body: {} }));
    await expectError(server.as("hamlet").GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }), 400, `Bad event queue ID: ${queue_id}`, {
      code: "BAD_EVENT_QUEUE_ID",
      queue_id,
    });
  });
});

describe("DELETE /events", () => {
  it("deletes the queue", async () => {
    const { queue_id } = await expectSuccess(server.as("hamlet").POST("/register", { body: {} }));
    await expectSuccess(server.as("hamlet").DELETE("/events", { params: { query: { queue_id: queue_id! } } }));
    await expectError(server.as("hamlet").GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }), 400, `Bad event queue ID: ${queue_id}`);
    await expectError(server.as("hamlet").DELETE("/events", { params: { query: { queue_id: queue_id! } } }), 400, `Bad event queue ID: ${queue_id}`);
  });
});
