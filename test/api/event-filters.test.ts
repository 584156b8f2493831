/**
 * Which events a queue takes, as Zulip's Tornado decides it (ClientDescriptor.accepts_event):
 * the register `narrow` for message events (narrow_predicate.py), `all_public_streams`, and the
 * client capabilities that choose between two forms of an event.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

type Body = NonNullable<Parameters<ReturnType<typeof server.as>["POST"]>[1]>["body"];

async function register(user: string, body: Record<string, unknown>) {
  const state = await expectSuccess(
    server.as(user).POST("/register", { body: { event_types: ["message"], ...body } as Body }),
  );
  return state.queue_id!;
}

async function events(user: string, queue_id: string) {
  const { events } = await expectSuccess(
    server.as(user).GET("/events", { params: { query: { queue_id, dont_block: true } } }),
  );
  return events;
}

async function contents(user: string, queue_id: string) {
  return (await events(user, queue_id))
    .filter((e) => e.type === "message")
    .map((e) => String((e.message as { content: string }).content));
}

function toChannel(sender: string, channel: string, topic: string, content: string) {
  return expectSuccess(
    server.as(sender).POST("/messages", { body: { type: "stream", to: channel, topic, content } }),
  );
}

function direct(sender: string, to: string, content: string) {
  return expectSuccess(
    server.as(sender).POST("/messages", {
      body: { type: "direct", to: [server.creds.users[to]!.user_id], content },
    }),
  );
}

describe("the register narrow", () => {
  it("keeps the message events of one channel, by name in any case or by ID", async () => {
    const byName = await register("hamlet", { narrow: [["channel", "verona"]] });
    const channels = await expectSuccess(server.as("hamlet").GET("/streams"));
    const verona = channels.streams.find((s) => s.name === "Verona")!.stream_id;
    const byId = await register("hamlet", {
      narrow: [{ operator: "stream", operand: verona }],
    });
    await toChannel("othello", "Verona", "narrowed", "in verona");
    await toChannel("othello", "Denmark", "narrowed", "in denmark");
    await direct("othello", "hamlet", "a direct one");
    expect(await contents("hamlet", byName)).toEqual(["in verona"]);
    expect(await contents("hamlet", byId)).toEqual(["in verona"]);
  });

  it("matches a topic whole or by one of its words, and exact-topic only whole", async () => {
    const topic = await register("hamlet", { narrow: [["topic", "Lunch"]] });
    const exact = await register("hamlet", { narrow: [["exact-topic", "lunch"]] });
    await toChannel("othello", "Verona", "team lunch plans", "word");
    await toChannel("othello", "Verona", "lunchtime", "prefix");
    await toChannel("othello", "Verona", "lunch", "whole");
    expect(await contents("hamlet", topic)).toEqual(["word", "whole"]);
    expect(await contents("hamlet", exact)).toEqual(["whole"]);
  });

  it("keeps direct messages (is:dm, is:private), a sender's messages, and mentions", async () => {
    const dms = await register("hamlet", { narrow: [["is", "dm"]] });
    const legacy = await register("hamlet", { narrow: [["is", "private"]] });
    const fromIago = await register("hamlet", { narrow: [["sender", "IAGO@zulip.com"]] });
    const fromIagoById = await register("hamlet", {
      narrow: [{ operator: "sender", operand: server.creds.users.iago!.user_id }],
    });
    const mentions = await register("hamlet", { narrow: [["is", "mentioned"]] });
    const notMentions = await register("hamlet", {
      narrow: [{ operator: "is", operand: "mentioned", negated: true }],
    });
    await direct("othello", "hamlet", "private word");
    await toChannel("iago", "Verona", "from iago", "iago speaks");
    await toChannel("othello", "Verona", "mention", "hi @**King Hamlet**");
    expect(await contents("hamlet", dms)).toEqual(["private word"]);
    expect(await contents("hamlet", legacy)).toEqual(["private word"]);
    expect(await contents("hamlet", fromIago)).toEqual(["iago speaks"]);
    expect(await contents("hamlet", fromIagoById)).toEqual(["iago speaks"]);
    const mentioned = await contents("hamlet", mentions);
    expect(mentioned).toHaveLength(1);
    expect(mentioned[0]).toContain("King Hamlet");
    expect(await contents("hamlet", notMentions)).toEqual(["private word", "iago speaks"]);
  });

  it("applies only to message events: other events reach a narrowed queue", async () => {
    const queue = await register("hamlet", {
      event_types: ["message", "user_status"],
      narrow: [["channel", "Verona"]],
    });
    await toChannel("othello", "Denmark", "elsewhere", "not for this queue");
    await expectSuccess(
      server.as("hamlet").POST("/users/me/status", { body: { status_text: "at lunch" } }),
    );
    const got = await events("hamlet", queue);
    expect(got.map((e) => e.type)).toEqual(["user_status"]);
    expect(got[0]!.id).toBe(0);
  });

  it("refuses operators and operands Zulip's event queues cannot apply", async () => {
    await expectError(
      server.as("hamlet").POST("/register", { body: { narrow: [["search", "lunch"]] } }),
      400,
      "Operator search not supported.",
    );
    await expectError(
      server.as("hamlet").POST("/register", { body: { narrow: [["is", "followed"]] } }),
      400,
      "Operand followed not supported.",
    );
  });
});

describe("all_public_streams", () => {
  it("gives every public channel's messages, subscribed or not, with no flags, and no private one", async () => {
    // Cordelia is in neither Venice nor "core team".
    const queue = await register("cordelia", { all_public_streams: true });
    const plain = await register("cordelia", {});
    await toChannel("othello", "Venice", "canals", "public, unsubscribed");
    await toChannel("iago", "core team", "secret", "private, unsubscribed");
    await toChannel("othello", "Verona", "hello", "public, subscribed");
    const got = (await events("cordelia", queue)).filter((e) => e.type === "message");
    expect(got.map((e) => (e.message as { content: string }).content)).toEqual([
      "public, unsubscribed",
      "public, subscribed",
    ]);
    expect(got[0]!.flags).toEqual([]);
    expect(await contents("cordelia", plain)).toEqual(["public, subscribed"]);
  });

  it("is refused to guests", async () => {
    await expectError(
      server.as("polonius").POST("/register", { body: { all_public_streams: true } }),
      400,
      "User not authorized for this query",
    );
  });
});

describe("client capabilities that choose an event's form", () => {
  it("a group's deactivation: `update` with include_deactivated_groups, `remove` without", async () => {
    const { group_id } = await expectSuccess(
      server.as("iago").POST("/user_groups/create", {
        body: { name: "short-lived", description: "to be deactivated", members: [] },
      }),
    );
    const modern = await register("hamlet", {
      event_types: ["user_group"],
      client_capabilities: { include_deactivated_groups: true },
    });
    const legacy = await register("hamlet", { event_types: ["user_group"] });
    await expectSuccess(
      server.as("iago").POST("/user_groups/{user_group_id}/deactivate", {
        params: { path: { user_group_id: group_id } },
      }),
    );
    expect(await events("hamlet", modern)).toEqual([
      expect.objectContaining({
        type: "user_group",
        op: "update",
        group_id,
        data: { deactivated: true },
        id: 0,
      }),
    ]);
    expect(await events("hamlet", legacy)).toEqual([
      { type: "user_group", op: "remove", group_id, id: 0 },
    ]);
  });
});
