/**
 * Automatic follow and unmute when sending (zerver/tests/test_message_send.py
 * test_automatically_follow_topic_on_initiation / _on_send / _on_participation,
 * test_automatically_unmute_topic_in_muted_stream and test_automatically_follow_topic_where_mentioned):
 * the sender's `automatically_follow_topics_policy` and
 * `automatically_unmute_topics_in_muted_streams_policy`, the recipients'
 * `automatically_follow_topics_where_mentioned`, the `user_topic` events and the send answer's
 * `automatic_new_visibility_policy`.
 */
import { describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { asUser, ofType, openQueue } from "../helpers/builders.ts";
import { realClient } from "../helpers/real-client.ts";

const server = useTestServer();
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const FOLLOWED = 3;
const UNMUTED = 2;
const MUTED = 1;
const send = (as: string, to: string, topic: string, content = "hello") =>
  expectSuccess(server.as(as).POST("/messages", { body: { type: "stream", to, topic, content } }));
const policyOf = async (as: string, stream: string, topic: string) => {
  const state = await expectSuccess(
    server.as(as).POST("/register", { body: { fetch_event_types: ["user_topic"] } }),
  );
  return (
    state.user_topics?.find(
      (t) => t.stream_id === channel(stream) && t.topic_name.toLowerCase() === topic.toLowerCase(),
    )?.visibility_policy ?? 0
  );
};
const settings = (as: string, body: Record<string, unknown>) =>
  expectSuccess(server.as(as).PATCH("/settings", { body }));

describe("automatic visibility policies on send", () => {
  it("follows a topic its sender starts (on initiation, the default), once, with a user_topic event", async () => {
    const queue = await openQueue(asUser(server, "hamlet"), { event_types: ["user_topic"] });
    // As a real client sends it: a form body, `+` for spaces.
    const { status, body } = await realClient(server, "hamlet", "POST", "/messages", {
      type: "stream",
      to: "Verona",
      topic: "auto follow start",
      content: "first words",
    });
    expect(status).toBe(200);
    expect(body.automatic_new_visibility_policy).toBe(FOLLOWED);
    expect(ofType(await queue.nextEvents(), "user_topic")).toEqual([
      expect.objectContaining({
        stream_id: channel("Verona"),
        topic_name: "auto follow start",
        visibility_policy: FOLLOWED,
      }),
    ]);
    const again = await send("hamlet", "Verona", "Auto Follow Start");
    expect(again.automatic_new_visibility_policy).toBeUndefined();
    expect(await queue.nextEvents()).toEqual([]);
    expect(await policyOf("hamlet", "Verona", "auto follow start")).toBe(FOLLOWED);
  });

  it("does not follow a topic someone else started, and never for a bot or a direct message", async () => {
    await send("othello", "Verona", "started by othello");
    const reply = await send("cordelia", "Verona", "started by othello");
    expect(reply.automatic_new_visibility_policy).toBeUndefined();
    expect(await policyOf("cordelia", "Verona", "started by othello")).toBe(0);
    const botName = Object.keys(server.creds.bots)[0]!;
    const bot = await send(botName, "Verona", "a bot's own topic");
    expect(bot.automatic_new_visibility_policy).toBeUndefined();
    const dm = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [server.creds.users.othello!.user_id], content: "hi" },
      }),
    );
    expect(dm.automatic_new_visibility_policy).toBeUndefined();
  });

  it("follows on every send with ON_SEND, and changes nothing with both settings never", async () => {
    await send("othello", "Denmark", "send policy topic");
    await settings("iago", { automatically_follow_topics_policy: 2 });
    try {
      const sent = await send("iago", "Denmark", "send policy topic");
      expect(sent.automatic_new_visibility_policy).toBe(FOLLOWED);
    } finally {
      await settings("iago", { automatically_follow_topics_policy: 3 });
    }
    await settings("othello", {
      automatically_follow_topics_policy: 4,
      automatically_unmute_topics_in_muted_streams_policy: 4,
    });
    try {
      const started = await send("othello", "Denmark", "never policy topic");
      expect(started.automatic_new_visibility_policy).toBeUndefined();
      expect(await policyOf("othello", "Denmark", "never policy topic")).toBe(0);
    } finally {
      await settings("othello", {
        automatically_follow_topics_policy: 3,
        automatically_unmute_topics_in_muted_streams_policy: 2,
      });
    }
  });

  it("unmutes a topic its sender writes to in a channel they muted (on send, the default)", async () => {
    await send("othello", "Rome", "muted channel topic");
    await expectSuccess(
      server.as("cordelia").POST("/users/me/subscriptions/properties", {
        body: {
          subscription_data: [{ stream_id: channel("Rome"), property: "is_muted", value: true }],
        },
      }),
    );
    const sent = await send("cordelia", "Rome", "muted channel topic");
    expect(sent.automatic_new_visibility_policy).toBe(UNMUTED);
    expect(await policyOf("cordelia", "Rome", "muted channel topic")).toBe(UNMUTED);
  });

  it("follows the topic for those it mentions, unless they muted it or turned the setting off", async () => {
    await send("othello", "Scotland", "mention topic");
    await expectSuccess(
      server.as("iago").POST("/user_topics", {
        body: { stream_id: channel("Scotland"), topic: "mention topic", visibility_policy: MUTED },
      }),
    );
    await settings("shiva", { automatically_follow_topics_where_mentioned: false });
    const queue = await openQueue(asUser(server, "hamlet"), { event_types: ["user_topic"] });
    await send(
      "othello",
      "Scotland",
      "mention topic",
      "@**King Hamlet** @**Iago** @**Shiva** and @_**Cordelia, Lear's daughter**",
    );
    expect(ofType(await queue.nextEvents(), "user_topic")).toEqual([
      expect.objectContaining({ topic_name: "mention topic", visibility_policy: FOLLOWED }),
    ]);
    expect(await policyOf("hamlet", "Scotland", "mention topic")).toBe(FOLLOWED);
    expect(await policyOf("iago", "Scotland", "mention topic")).toBe(MUTED);
    expect(await policyOf("shiva", "Scotland", "mention topic")).toBe(0);
  });
});
