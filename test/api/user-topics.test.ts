/**
 * POST /user_topics and PATCH /users/me/subscriptions/muted_topics (zerver/tests/test_user_topics.py):
 * policies 0-3, case-insensitive topics keeping the first spelling, topics with no messages, the
 * empty topic's names, and the events.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const setPolicy = (as: string, body: Body<"/user_topics", "post">) =>
  server.as(as).POST("/user_topics", { body: body });
const mute = (as: string, body: Body<"/users/me/subscriptions/muted_topics", "patch">) =>
  server.as(as).PATCH("/users/me/subscriptions/muted_topics", { body: body });
const userTopics = async (as: string) =>
  (
    (await expectSuccess(
      server.as(as).POST("/register", {
        body: {
          fetch_event_types: ["user_topic"],
          client_capabilities: { empty_topic_name: true },
        },
      }),
    )) as any
  ).user_topics as any[];

describe("POST /user_topics", () => {
  it("sets each policy, for a topic with no messages, matching case-insensitively and keeping the first spelling", async () => {
    const register = async (event_types: string[]) =>
      (await expectSuccess(server.as("hamlet").POST("/register", { body: { event_types } })))
        .queue_id!;
    // A queue that takes user_topic gets no muted_topics (Zulip's accepts_event); one that takes
    // only the legacy type gets it.
    const queue = await register(["user_topic", "muted_topics"]);
    const legacyQueue = await register(["muted_topics"]);
    await expectSuccess(
      setPolicy("hamlet", {
        stream_id: channel("Verona"),
        topic: "Nobody Spoke Here",
        visibility_policy: 1,
      }),
    );
    await expectSuccess(
      setPolicy("hamlet", {
        stream_id: channel("Verona"),
        topic: "NOBODY spoke here",
        visibility_policy: 3,
      }),
    );
    const rows = (await userTopics("hamlet")).filter(
      (t) =>
        t.stream_id === channel("Verona") && t.topic_name.toLowerCase() === "nobody spoke here",
    );
    expect(rows).toEqual([
      expect.objectContaining({ topic_name: "Nobody Spoke Here", visibility_policy: 3 }),
    ]);
    const events = (
      await expectSuccess(
        server.as("hamlet").GET("/events", {
          params: { query: { queue_id: queue, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as any[];
    expect(events.filter((e) => e.type === "user_topic").map((e) => e.visibility_policy)).toEqual([
      1, 3,
    ]);
    expect(events.some((e) => e.type === "muted_topics")).toBe(false);
    const legacyEvents = (
      await expectSuccess(
        server.as("hamlet").GET("/events", {
          params: { query: { queue_id: legacyQueue, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as any[];
    expect(legacyEvents[0].muted_topics).toEqual([
      ["Verona", "Nobody Spoke Here", expect.any(Number)],
    ]);
    await expectSuccess(
      setPolicy("hamlet", {
        stream_id: channel("Verona"),
        topic: "nobody spoke here",
        visibility_policy: 0,
      }),
    );
    expect((await userTopics("hamlet")).some((t) => t.topic_name === "Nobody Spoke Here")).toBe(
      false,
    );
    // Removing a policy that is not there is not an error.
    await expectSuccess(
      setPolicy("hamlet", {
        stream_id: channel("Verona"),
        topic: "never set",
        visibility_policy: 0,
      }),
    );
  });

  it("maps the empty topic's names to the empty topic, and unmutes a topic in a muted channel", async () => {
    await expectSuccess(
      setPolicy("othello", {
        stream_id: channel("Denmark"),
        topic: "(no topic)",
        visibility_policy: 2,
      }),
    );
    expect(
      (await userTopics("othello")).find((t) => t.stream_id === channel("Denmark")),
    ).toMatchObject({ topic_name: "", visibility_policy: 2 });
  });

  it("refuses unknown channels, private channels, long topics and unknown policies", async () => {
    await expectError(
      setPolicy("hamlet", { stream_id: 999999999, topic: "x", visibility_policy: 1 }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      setPolicy("hamlet", { stream_id: 999999999, topic: "x", visibility_policy: 0 }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      setPolicy("hamlet", { stream_id: channel("core team"), topic: "x", visibility_policy: 1 }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      setPolicy("hamlet", {
        stream_id: channel("Verona"),
        topic: "t".repeat(61),
        visibility_policy: 1,
      }),
      400,
      "topic is too long (limit: 60 characters)",
    );
    await expectError(
      setPolicy("hamlet", {
        stream_id: channel("Verona"),
        topic: "x",
        visibility_policy: untyped(4),
      }),
      400,
      "Invalid visibility_policy: Value error, Not in the list of possible values",
    );
  });

  it("takes a form body as zulip-js sends it", async () => {
    const hamlet = server.creds.users.hamlet!;
    const response = await fetch(`${server.baseUrl}/api/v1/user_topics`, {
      method: "POST",
      headers: {
        Authorization:
          "Basic " + Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: `stream_id=${channel("Rome")}&topic=form+topic&visibility_policy=3`,
    });
    expect(response.status).toBe(200);
    expect((await userTopics("hamlet")).find((t) => t.topic_name === "form topic")).toMatchObject({
      visibility_policy: 3,
    });
  });
});

describe("PATCH /users/me/subscriptions/muted_topics", () => {
  it("mutes by channel name or id, idempotently and case-insensitively, and unmutes", async () => {
    await expectSuccess(mute("cordelia", { stream: "Verona", topic: "Verona3", op: "add" }));
    await expectSuccess(
      mute("cordelia", { stream_id: channel("Verona"), topic: "VERONA3", op: "add" }),
    );
    expect(
      (await userTopics("cordelia")).filter((t) => t.topic_name.toLowerCase() === "verona3"),
    ).toEqual([expect.objectContaining({ topic_name: "Verona3", visibility_policy: 1 })]);
    await expectSuccess(
      mute("cordelia", { stream_id: channel("Verona"), topic: "verona3", op: "remove" }),
    );
    await expectSuccess(
      mute("cordelia", { stream_id: channel("Verona"), topic: "verona3", op: "remove" }),
    );
    expect((await userTopics("cordelia")).some((t) => t.topic_name === "Verona3")).toBe(false);
  });

  it("answers Zulip's errors", async () => {
    await expectError(
      mute("cordelia", { stream_id: 999999999, topic: "x", op: "add" }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      mute("cordelia", { topic: "x", op: "add" }),
      400,
      "Missing 'stream_id' argument",
      { code: "REQUEST_VARIABLE_MISSING" },
    );
    await expectError(
      mute("cordelia", { stream_id: channel("Verona"), stream: "Verona", topic: "x", op: "add" }),
      400,
      "Unsupported parameter combination: stream_id, stream",
      { code: "BAD_REQUEST", parameters: "stream_id, stream" },
    );
    await expectError(
      mute("cordelia", { stream: "no such channel", topic: "x", op: "remove" }),
      400,
      "Topic is not muted",
    );
    await expectError(
      mute("cordelia", { stream_id: 999999999, topic: "x", op: "remove" }),
      400,
      "Topic is not muted",
    );
    await expectError(
      mute("cordelia", { stream_id: channel("Verona"), topic: "t".repeat(61), op: "add" }),
      400,
      "topic is too long (limit: 60 characters)",
    );
  });
});
