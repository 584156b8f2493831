/**
 * GET /users/me/{stream_id}/topics (zerver/tests/test_message_fetch.py / test_subs.py
 * get_topics_backend): newest first, one entry per topic whatever its case (named by its latest
 * message), the empty topic per allow_empty_topic_name, protected history, the access rule, and
 * its statement budget.
 */
import { describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, createChannel, sendToChannel } from "../helpers/builders.ts";

const server = useTestServer();
const userId = (name: string) => server.creds.users[name]!.user_id;

const topics = (as: string, streamId: number, allowEmpty?: boolean) =>
  server.as(as).GET("/users/me/{stream_id}/topics", {
    params: {
      path: { stream_id: streamId },
      query: allowEmpty === undefined ? {} : { allow_empty_topic_name: allowEmpty },
    },
  });
const create = async (
  name: string,
  settings: Partial<Body<"/channels/create", "post">>,
  subscribers: string[],
) =>
  (
    await createChannel(server.as("desdemona"), {
      name,
      subscribers: subscribers.map(userId),
      ...settings,
    })
  ).id;

describe("GET /users/me/{stream_id}/topics", () => {
  it("lists topics newest first, one per case-insensitive name, the empty topic by its display name", async () => {
    const channel = await create("topic list", {}, ["desdemona", "hamlet"]);
    const { id: a1 } = await sendToChannel(server.as("hamlet"), {
      to: channel,
      topic: "Alpha",
      content: "hi",
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: channel,
      topic: "beta",
      content: "hi",
    });
    const { id: a2 } = await sendToChannel(server.as("hamlet"), {
      to: channel,
      topic: "ALPHA",
      content: "hi",
    });
    const { id: empty } = await sendToChannel(server.as("hamlet"), {
      to: channel,
      topic: "",
      content: "hi",
    });
    expect(a1).toBeLessThan(b);
    const { topics: list } = await expectSuccess(topics("othello", channel));
    expect(list).toEqual([
      { name: "(no topic)", max_id: empty },
      { name: "ALPHA", max_id: a2 },
      { name: "beta", max_id: b },
      // Notification Bot's notice of the channel's creation.
      { name: "channel events", max_id: expect.any(Number) },
    ]);
    const { topics: withEmpty } = await expectSuccess(topics("othello", channel, true));
    expect(withEmpty[0]).toEqual({ name: "", max_id: empty });
  });

  it("without public history lists only topics of messages the user received", async () => {
    const channel = await create(
      "topic list protected",
      { invite_only: true, history_public_to_subscribers: false },
      ["desdemona"],
    );
    await sendToChannel(server.as("desdemona"), { to: channel, topic: "before", content: "hi" });
    await expectSuccess(
      server.as("desdemona").POST("/users/me/subscriptions", {
        body: {
          subscriptions: [{ name: "topic list protected" }],
          principals: [userId("cordelia")],
        },
      }),
    );
    const { id: after } = await sendToChannel(server.as("desdemona"), {
      to: channel,
      topic: "after",
      content: "hi",
    });
    const { id: both } = await sendToChannel(server.as("desdemona"), {
      to: channel,
      topic: "Before",
      content: "hi",
    });
    expect((await expectSuccess(topics("cordelia", channel))).topics).toEqual([
      { name: "Before", max_id: both },
      { name: "after", max_id: after },
    ]);
    expect((await expectSuccess(topics("desdemona", channel))).topics.map((t) => t.name)).toEqual([
      "Before",
      "after",
      "channel events",
    ]);
    // Shared history: a new subscriber sees every topic.
    const shared = await create(
      "topic list shared",
      { invite_only: true, history_public_to_subscribers: true },
      ["desdemona", "cordelia"],
    );
    const { id: old } = await sendToChannel(server.as("desdemona"), {
      to: shared,
      topic: "old",
      content: "hi",
    });
    expect((await expectSuccess(topics("cordelia", shared))).topics).toEqual([
      { name: "old", max_id: old },
      { name: "channel events", max_id: old - 1 },
    ]);
  });

  it("refuses channels the user may not access with Zulip's text", async () => {
    const secret = await create("topic list secret", { invite_only: true }, ["desdemona"]);
    await sendToChannel(server.as("desdemona"), { to: secret, topic: "hidden", content: "hi" });
    // Not subscribed, not even an administrator: a private channel's topics stay hidden.
    await expectError(topics("othello", secret), 400, "Invalid channel ID", {
      code: "BAD_REQUEST",
    });
    await expectError(topics("iago", secret), 400, "Invalid channel ID");
    // A guest reads a public channel only once subscribed.
    const verona = server.creds.channels["Verona"]!.stream_id;
    const subscribed = (
      await expectSuccess(server.as("polonius").GET("/users/me/subscriptions", {}))
    ).subscriptions.some((s) => s.stream_id === verona);
    const publicOther = await create("topic list public", {}, ["desdemona"]);
    await sendToChannel(server.as("desdemona"), { to: publicOther, topic: "open", content: "hi" });
    await expectError(topics("polonius", publicOther), 400, "Invalid channel ID");
    if (subscribed) await expectSuccess(topics("polonius", verona));
    await expectError(topics("hamlet", 987654), 400, "Invalid channel ID");
    await expectError(topics("hamlet", 2 ** 40), 400, "Invalid channel ID");
    // An archived channel's topics are listed to who may read it (feature level 480), and
    // still not to who may not.
    await server.db.stream.update({ where: { id: publicOther }, data: { isArchived: true } });
    const archived = await expectSuccess(topics("desdemona", publicOther));
    expect(archived.topics.map((t) => t.name)).toContain("open");
    await expectError(topics("polonius", publicOther), 400, "Invalid channel ID");
  });

  it("answers a python-zulip-api style query string, in one statement", async () => {
    const channel = await create("topic list wire", {}, ["hamlet"]);
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: channel,
      topic: "over the wire",
      content: "hi",
    });
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      const { email, api_key } = server.creds.users["hamlet"]!;
      const response = await fetch(
        `${server.baseUrl}/api/v1/users/me/${channel}/topics?allow_empty_topic_name=true`,
        {
          headers: {
            Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
            "User-Agent": "ZulipPython/0.9.0",
          },
        },
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        result: "success",
        msg: "",
        topics: [
          { name: "over the wire", max_id: id },
          { name: "channel events", max_id: id - 1 },
        ],
      });
      seen.length = 0;
      await expectSuccess(topics("hamlet", channel));
      expect(seen.map((i) => [i.operationId, i.statements])).toEqual([["get-stream-topics", 1]]);
    } finally {
      server.deps.observe = undefined;
    }
  });

  it("keeps each topic's latest message through renames, a change of case, moves between channels and deletions", async () => {
    const a = await create("topic summary a", {}, ["desdemona", "hamlet"]);
    const b = await create("topic summary b", {}, ["desdemona", "hamlet"]);
    const send = async (to: number, topic: string) =>
      (await sendToChannel(server.as("hamlet"), { to, topic, content: "hi" })).id;
    const list = async (channel: number) =>
      (await expectSuccess(topics("hamlet", channel))).topics.filter(
        (t) => t.name !== "channel events",
      );
    const edit = (id: number, body: Record<string, unknown>) =>
      expectSuccess(
        server.as("desdemona").PATCH("/messages/{message_id}", {
          params: { path: { message_id: id } },
          body: {
            send_notification_to_old_thread: false,
            send_notification_to_new_thread: false,
            ...body,
          } as never,
        }),
      );
    const remove = (id: number) =>
      expectSuccess(
        server.as("desdemona").DELETE("/messages/{message_id}", {
          params: { path: { message_id: id } },
        }),
      );
    const m1 = await send(a, "first");
    const m2 = await send(a, "first");
    const m3 = await send(a, "second");
    expect(await list(a)).toEqual([
      { name: "second", max_id: m3 },
      { name: "first", max_id: m2 },
    ]);
    // A rename of the whole topic: the old name goes, the new one has its latest message.
    await edit(m1, { topic: "renamed", propagate_mode: "change_all" });
    expect(await list(a)).toEqual([
      { name: "second", max_id: m3 },
      { name: "renamed", max_id: m2 },
    ]);
    // Only the case of the latest message's topic: the list takes its spelling.
    await edit(m2, { topic: "RENAMED", propagate_mode: "change_one" });
    expect(await list(a)).toEqual([
      { name: "second", max_id: m3 },
      { name: "RENAMED", max_id: m2 },
    ]);
    // A move to another channel: the topic leaves one list and joins the other.
    await edit(m3, { stream_id: b, topic: "arrived", propagate_mode: "change_one" });
    expect(await list(a)).toEqual([{ name: "RENAMED", max_id: m2 }]);
    expect(await list(b)).toEqual([{ name: "arrived", max_id: m3 }]);
    // A later message into a topic that older messages are then moved into keeps its own id.
    const m4 = await send(b, "arrived");
    await edit(m1, { stream_id: b, topic: "arrived", propagate_mode: "change_one" });
    expect(await list(b)).toEqual([{ name: "arrived", max_id: m4 }]);
    // Deleting the latest message falls back to the one before; the last one, the topic goes.
    await remove(m2);
    expect(await list(a)).toEqual([]);
    await remove(m4);
    expect(await list(b)).toEqual([{ name: "arrived", max_id: m3 }]);
    // The summary is what the messages say, for every channel this file's tests touched.
    const summary = await server.db.$queryRaw<
      { recipient_id: number; subject: string; max_id: number }[]
    >`
      SELECT recipient_id, subject, max_id FROM channel_topic ORDER BY recipient_id, topic_lower`;
    const truth = await server.db.$queryRaw<
      { recipient_id: number; subject: string; max_id: number }[]
    >`
      SELECT DISTINCT ON (recipient_id, lower(subject)) recipient_id, subject, id AS max_id
      FROM message WHERE is_channel_message ORDER BY recipient_id, lower(subject), id DESC`;
    expect(summary).toEqual(truth);
  });
});
