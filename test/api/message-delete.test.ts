/**
 * DELETE /messages/{message_id} and POST /streams/{stream_id}/delete_topic: Zulip's permission
 * rules (zerver/tests/test_message_delete.py), the archive, delete_message events, unread counts,
 * first_message_id, uploads left unclaimed, topics in batches with `complete`.
 */
import { describe, expect, it } from "vitest";
import { doSubscribe } from "../../server/actions/channels/subscriptions.ts";
import { deleteMessages } from "../../server/actions/messages/message-delete.ts";
import { inRawTransaction } from "../../server/actions/transaction.ts";
import { Prisma } from "../../server/db/index.ts";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { basicAuth, uploadFile } from "../helpers/upload.ts";
import { sendDirect, sendToChannel } from "../helpers/builders.ts";

/** The server's clock: real time plus `clock.offset`, which moves `clock.step` ms at each reading. */
const clock = { offset: 0, step: 0 };
const server = useTestServer(
  {},
  {
    now: () => {
      clock.offset += clock.step;
      return new Date(Date.now() + clock.offset);
    },
  },
);

const id = (shortName: string) =>
  (server.creds.users[shortName] ?? server.creds.bots[shortName])!.user_id;
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const del = (as: string, messageId: number) =>
  server.as(as).DELETE("/messages/{message_id}", { params: { path: { message_id: messageId } } });
const deleteTopic = (as: string, streamId: number, topic: string) =>
  server.as(as).POST("/streams/{stream_id}/delete_topic", {
    params: { path: { stream_id: streamId } },
    body: { topic_name: topic },
  });
const exists = async (messageId: number) =>
  (await server.db.message.count({ where: { id: messageId } })) === 1;
const systemGroup = async (name: string) =>
  (
    await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name },
    })
  ).id;
/** Sets an organization deletion group setting through PATCH /realm, as an administrator. */
const setRealmGroup = async (
  field: "canDeleteAnyMessageGroupId" | "canDeleteOwnMessageGroupId",
  group: string,
) => {
  const setting =
    field === "canDeleteAnyMessageGroupId"
      ? "can_delete_any_message_group"
      : "can_delete_own_message_group";
  await expectSuccess(
    server.as("iago").PATCH("/realm", { body: { [setting]: { new: await systemGroup(group) } } }),
  );
};
/** Registers a queue taking delete_message and stream events, read without blocking. */
async function queue(as: string, capabilities: Record<string, boolean> = {}) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", {
      body: {
        event_types: ["delete_message", "stream", "user_topic"],
        client_capabilities: capabilities,
      },
    }),
  );
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events.map(({ id: _id, ...event }) => event);
}

const NO_PERMISSION = "You don't have permission to delete this message";

describe("DELETE /messages/{message_id}: who may delete", () => {
  it("a member deletes their own message and their bot's, not someone else's", async () => {
    const { id: own } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "delete own",
      content: "hello",
    });
    await expectSuccess(del("hamlet", own));
    expect(await exists(own)).toBe(false);
    await expectError(
      server.as("hamlet").GET("/messages/{message_id}", {
        params: { path: { message_id: own } },
      }),
      400,
      "Invalid message(s)",
    );

    const { id: bots } = await sendToChannel(server.as("default-bot"), {
      to: "Verona",
      topic: "delete own",
      content: "hello",
    });
    await expectSuccess(del("hamlet", bots));

    const { id: others } = await sendToChannel(server.as("othello"), {
      to: "Verona",
      topic: "delete own",
      content: "hello",
    });
    await expectError(del("hamlet", others), 400, NO_PERMISSION);
    await expectError(del("cordelia", bots + 1_000_000), 400, "Invalid message(s)");
    expect(await exists(others)).toBe(true);
  });

  it("administrators and owners delete anyone's message (can_delete_any_message_group)", async () => {
    const { id: a } = await sendToChannel(server.as("othello"), {
      to: "Verona",
      topic: "delete any",
      content: "hello",
    });
    const { id: b } = await sendDirect(server.as("othello"), {
      to: [id("hamlet")],
      content: "psst",
    });
    await expectSuccess(del("iago", a));
    // The organization's permission reaches messages the administrator may access only.
    await expectError(del("iago", b), 400, "Invalid message(s)");
    const { id: c } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "delete any",
      content: "hello",
    });
    await expectSuccess(del("desdemona", c));

    // A moderator once the organization lets moderators delete anything; not before.
    const { id: d } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "delete any",
      content: "hello",
    });
    await expectError(del("shiva", d), 400, NO_PERMISSION);
    await setRealmGroup("canDeleteAnyMessageGroupId", "role:moderators");
    try {
      await expectSuccess(del("shiva", d));
    } finally {
      await setRealmGroup("canDeleteAnyMessageGroupId", "role:administrators");
    }
  });

  it("the organization's can_delete_own_message_group, or the channel's for its messages", async () => {
    await setRealmGroup("canDeleteOwnMessageGroupId", "role:administrators");
    try {
      const { id: a } = await sendToChannel(server.as("hamlet"), {
        to: "Verona",
        topic: "own group",
        content: "hello",
      });
      const { id: dm } = await sendDirect(server.as("hamlet"), {
        to: [id("othello")],
        content: "psst",
      });
      await expectError(del("hamlet", a), 400, NO_PERMISSION);
      await expectError(del("hamlet", dm), 400, NO_PERMISSION);

      // Verona lets its members delete their own messages; direct messages stay refused.
      await server.db.stream.update({
        where: { id: channel("Verona") },
        data: { canDeleteOwnMessageGroupId: await systemGroup("role:members") },
      });
      await expectSuccess(del("hamlet", a));
      await expectError(del("hamlet", dm), 400, NO_PERMISSION);
      // …and not others' messages.
      const { id: others } = await sendToChannel(server.as("othello"), {
        to: "Verona",
        topic: "own group",
        content: "hello",
      });
      await expectError(del("hamlet", others), 400, NO_PERMISSION);
    } finally {
      await setRealmGroup("canDeleteOwnMessageGroupId", "role:everyone");
      await server.db.stream.update({
        where: { id: channel("Verona") },
        data: { canDeleteOwnMessageGroupId: await systemGroup("role:nobody") },
      });
    }
  });

  it("the channel's can_delete_any_message_group: its members delete anyone's message there", async () => {
    await server.db.stream.update({
      where: { id: channel("Denmark") },
      data: { canDeleteAnyMessageGroupId: await systemGroup("role:members") },
    });
    try {
      const { id: inDenmark } = await sendToChannel(server.as("hamlet"), {
        to: "Denmark",
        topic: "any in channel",
        content: "hello",
      });
      const { id: inVerona } = await sendToChannel(server.as("hamlet"), {
        to: "Verona",
        topic: "any in channel",
        content: "hello",
      });
      await expectSuccess(del("othello", inDenmark));
      await expectError(del("othello", inVerona), 400, NO_PERMISSION);
      // Guests are not in role:members.
      const { id: another } = await sendToChannel(server.as("hamlet"), {
        to: "Denmark",
        topic: "any in channel",
        content: "hello",
      });
      await expectError(del("polonius", another), 400, NO_PERMISSION);
    } finally {
      await server.db.stream.update({
        where: { id: channel("Denmark") },
        data: { canDeleteAnyMessageGroupId: await systemGroup("role:nobody") },
      });
    }
  });

  it("the organization's time limit binds the sender, not administrators", async () => {
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { messageContentDeleteLimitSeconds: 600 },
    });
    try {
      const { id: recent } = await sendToChannel(server.as("hamlet"), {
        to: "Verona",
        topic: "time limit",
        content: "hello",
      });
      const { id: old } = await sendToChannel(server.as("hamlet"), {
        to: "Verona",
        topic: "time limit",
        content: "hello",
      });
      await server.db.message.update({
        where: { id: old },
        data: { dateSent: new Date(Date.now() - 601_000) },
      });
      await expectError(
        del("hamlet", old),
        400,
        "The time limit for deleting this message has passed",
      );
      await expectSuccess(del("hamlet", recent));
      await expectSuccess(del("iago", old));
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { messageContentDeleteLimitSeconds: null },
      });
    }
  });

  it("private channels: only those who may read the message", async () => {
    const { id: secret } = await sendToChannel(server.as("desdemona"), {
      to: "core team",
      topic: "secret",
      content: "hello",
    });
    await expectError(del("hamlet", secret), 400, "Invalid message(s)");
    await expectSuccess(del("iago", secret));
  });
});

describe("what a deletion leaves", () => {
  it("the archive holds the message, its recipients' rows and reactions", async () => {
    const { id: m } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "archive",
      content: "archive",
    });
    await server.db.reaction.create({
      data: {
        realmId: server.creds.realm.id,
        userProfileId: id("othello"),
        messageId: m,
        emojiName: "smile",
        emojiCode: "1f604",
      },
    });
    const rows = await server.db.userMessage.count({ where: { messageId: m } });
    await expectSuccess(del("hamlet", m));
    const archived = await server.db.archivedMessage.findUniqueOrThrow({
      where: { id: m },
      include: { archiveTransaction: true, userMessages: true, reactions: true },
    });
    expect(archived.content).toBe("archive");
    expect(archived.archiveTransaction.type).toBe(2);
    expect(archived.userMessages).toHaveLength(rows);
    expect(archived.reactions.map((r) => r.emojiName)).toEqual(["smile"]);
    expect(await server.db.userMessage.count({ where: { messageId: m } })).toBe(0);
  });

  it("delete_message events in the bulk form, to recipients and the deleter; unread counts follow", async () => {
    const topic = "Events Topic";
    const { id: m } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: "hello",
    });
    const unread = async () => {
      const state = await expectSuccess(
        server.as("othello").POST("/register", {
          body: { fetch_event_types: ["message", "update_message_flags"] },
        }),
      );
      return (state.unread_msgs as { count: number }).count;
    };
    const before = await unread();
    const othello = await queue("othello", { bulk_message_deletion: true });
    const cordelia = await queue("cordelia", { bulk_message_deletion: true });
    await expectSuccess(del("iago", m));
    const expected = {
      type: "delete_message",
      message_ids: [m],
      stream_id: channel("Verona"),
      // Zulip groups (and names) a channel's deleted messages by the lowercased topic.
      topic: topic.toLowerCase(),
      message_type: "stream",
    };
    expect(await othello()).toEqual([expected]);
    expect(await cordelia()).toEqual([expected]);
    expect(await unread()).toBe(before - 1);

    // A direct message: its recipients, and the administrator who deleted it though not one.
    const { id: dm } = await sendDirect(server.as("hamlet"), {
      to: [id("othello"), id("iago")],
      content: "psst",
    });
    const hamlet = await queue("hamlet", { bulk_message_deletion: true });
    const aaron = await queue("aaron", { bulk_message_deletion: true });
    await expectSuccess(del("iago", dm));
    expect(await hamlet()).toEqual([
      { type: "delete_message", message_ids: [dm], message_type: "private" },
    ]);
    expect(await aaron()).toEqual([]);
  });

  // Zulip's Tornado splits a bulk event into one event per message, with `message_id`, for
  // clients without bulk_message_deletion (process_deletion_event): the queue does it when it
  // takes the log row, so the split events keep their own queue ids across polls.
  it("clients without bulk_message_deletion get one event per message with message_id", async () => {
    const topic = "split deletion";
    const { id: first } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: "hello",
    });
    const { id: second } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: "hello",
    });
    const legacy = await queue("othello");
    const bulk = await queue("cordelia", { bulk_message_deletion: true });
    expect(await expectSuccess(deleteTopic("iago", channel("Verona"), topic))).toMatchObject({
      complete: true,
    });
    const base = {
      type: "delete_message",
      stream_id: channel("Verona"),
      topic,
      message_type: "stream",
    };
    const split = [
      { ...base, message_id: first },
      { ...base, message_id: second },
    ];
    expect((await legacy()).filter((e) => e.type === "delete_message")).toEqual(split);
    // Read again: the split events come back from the queue's own rows, unchanged.
    expect((await legacy()).filter((e) => e.type === "delete_message")).toEqual(split);
    expect((await bulk()).filter((e) => e.type === "delete_message")).toEqual([
      { ...base, message_ids: [first, second] },
    ]);
  });

  it("a channel's first message goes: first_message_id moves to the next, with a stream update", async () => {
    const { id: streamId } = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: { name: "deletions", subscribers: [id("iago"), id("hamlet")] },
      }),
    );
    const { id: next } = await sendToChannel(server.as("hamlet"), {
      to: "deletions",
      topic: "a",
      content: "hello",
    });
    const stream = async () =>
      (
        await expectSuccess(
          server
            .as("hamlet")
            .GET("/streams/{stream_id}", { params: { path: { stream_id: streamId } } }),
        )
      ).stream;
    // The first message: Notification Bot's notice of the channel's creation.
    const first = (await stream()).first_message_id!;
    expect(first).toBeLessThan(next);
    const hamlet = await queue("hamlet", { bulk_message_deletion: true });
    await expectSuccess(del("iago", first));
    expect((await stream()).first_message_id).toBe(next);
    const events = await hamlet();
    expect(events).toEqual([
      {
        type: "stream",
        op: "update",
        property: "first_message_id",
        value: next,
        stream_id: streamId,
        name: "deletions",
      },
      expect.objectContaining({ type: "delete_message", message_ids: [first] }),
    ]);
  });

  it("an upload no message links any more is left unclaimed, its row archived", async () => {
    const url = await uploadFile(server, "hamlet", "notes.txt");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "upload",
      content: `[notes](${url})`,
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "upload",
      content: `again [notes](${url})`,
    });
    const pathId = url.slice("/user_uploads/".length);
    const attachment = await server.db.attachment.findUniqueOrThrow({ where: { pathId } });

    await expectSuccess(del("hamlet", a));
    // Still linked by the other message.
    expect(
      await server.db.attachmentMessage.count({ where: { attachmentId: attachment.id } }),
    ).toBe(1);
    await expectSuccess(del("hamlet", b));
    expect(
      await server.db.attachmentMessage.count({ where: { attachmentId: attachment.id } }),
    ).toBe(0);
    expect(await server.db.attachment.count({ where: { id: attachment.id } })).toBe(1);
    const archived = await server.db.archivedAttachment.findUniqueOrThrow({
      where: { id: attachment.id },
      include: { messages: true },
    });
    expect(archived.messages.map((m) => m.messageId).sort()).toEqual([a, b].sort());
  });

  it("a delete costs a fixed number of statements, whatever its recipients", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      const counts: number[] = [];
      // A member in a channel of many subscribers; an administrator in one of two.
      for (const [as, to] of [
        ["hamlet", "Verona"],
        ["iago", "core team"],
      ] as const) {
        const { id: m } = await sendToChannel(server.as(as), {
          to,
          topic: "budget",
          content: "hello",
        });
        await del(as, m); // warms the caches
        const { id: n } = await sendToChannel(server.as(as), {
          to,
          topic: "budget",
          content: "hello",
        });
        seen.length = 0;
        await expectSuccess(del(as, n));
        counts.push(seen.find((i) => i.operationId === "delete-message")!.statements);
      }
      // The message with the access rule's facts, (for a member) the channel's delete groups,
      // then BEGIN, the archive statement, the event log and COMMIT.
      if (process.env.SHOW_STATEMENTS) console.log("delete-message statements", counts);
      expect(counts[0]).toBeLessThanOrEqual(6);
      expect(counts[1]).toBeLessThanOrEqual(5);
    } finally {
      server.deps.observe = undefined;
    }
  });
});

describe("POST /streams/{stream_id}/delete_topic", () => {
  it("administrators only", async () => {
    await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "not yours",
      content: "hello",
    });
    await expectError(
      deleteTopic("hamlet", channel("Verona"), "not yours"),
      400,
      "Must be an organization administrator",
    );
    await expectError(deleteTopic("iago", 9_999_999, "not yours"), 400, "Invalid channel ID");
  });

  it("deletes the whole topic (any case) in batches of 100, one event per batch", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (
          await sendToChannel(server.as("hamlet"), {
            to: "Scotland",
            topic: "Big Topic",
            content: `m${i}`,
          })
        ).id,
      );
    // More than two batches: the rest inserted directly, as sends would have.
    const [extra] = await server.db.$queryRawUnsafe<{ n: number }[]>(
      `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, sending_client_id, is_channel_message)
       SELECT realm_id, sender_id, recipient_id, subject, 'copy', rendered_content, sending_client_id, true
       FROM message m, generate_series(1, 245) WHERE m.id = ${ids[0]} RETURNING 1 AS n`,
    );
    expect(extra).toBeDefined();
    const { id: keep } = await sendToChannel(server.as("hamlet"), {
      to: "Scotland",
      topic: "other topic",
      content: "hello",
    });
    await expectSuccess(
      server.as("hamlet").POST("/user_topics", {
        body: { stream_id: channel("Scotland"), topic: "Big Topic", visibility_policy: 1 },
      }),
    );
    const hamlet = await queue("hamlet", { bulk_message_deletion: true });
    const answer = await expectSuccess(deleteTopic("iago", channel("Scotland"), "big topic"));
    expect(answer.complete).toBe(true);
    expect(
      await server.db.message.count({
        where: {
          recipientId: (
            await server.db.stream.findUniqueOrThrow({ where: { id: channel("Scotland") } })
          ).recipientId!,
          subject: "Big Topic",
        },
      }),
    ).toBe(0);
    expect(await exists(keep)).toBe(true);
    const events = await hamlet();
    expect(
      events
        .filter((e) => e.type === "delete_message")
        .map((e) => (e as { message_ids: number[] }).message_ids.length),
    ).toEqual([100, 100, 50]);
    // The topic is gone, and with it hamlet's muting of it.
    expect(events.at(-1)).toMatchObject({
      type: "user_topic",
      stream_id: channel("Scotland"),
      topic_name: "Big Topic",
      visibility_policy: 0,
    });
    expect(await server.db.userTopic.count({ where: { topicNameLower: "big topic" } })).toBe(0);
  });

  // Every endpoint deletes only what its caller may read (access_message, delete_in_topic's own
  // rows), so the deletion here is the action's, as a deletion that reaches further would call it
  // (Zulip's deactivation that deletes a user's messages, feature level 459).
  it("the deleter is told only of the messages they may still read (feature level 457)", async () => {
    const realmId = server.creds.realm.id;
    // A private channel with protected history; Iago subscribed after some messages were sent.
    const make = async (name: string) => {
      await expectSuccess(
        server.as("iago").POST("/users/me/subscriptions", {
          body: {
            subscriptions: [{ name }],
            invite_only: true,
            history_public_to_subscribers: false,
            principals: [id("hamlet")],
          },
        }),
      );
      return server.db.stream.findFirstOrThrow({ where: { name } });
    };
    const joinIago = (stream: { id: number; recipientId: number | null }) =>
      server.db.$transaction((tx) => doSubscribe(tx, realmId, stream, [id("iago")]));
    const send = async (to: string) =>
      (await sendToChannel(server.as("hamlet"), { to, topic: "t457", content: "x" })).id;
    const deleteAsIago = (ids: number[]) =>
      inRawTransaction(server.deps, realmId, (unit) =>
        deleteMessages(
          unit,
          realmId,
          Prisma.sql`SELECT id FROM message WHERE id = ANY(${ids}::int[]) FOR UPDATE`,
          id("iago"),
        ),
      );

    const partly = await make("protected 457 a");
    const early = [await send(partly.name), await send(partly.name)];
    await joinIago(partly);
    const late = await send(partly.name);
    const iago = await queue("iago", { bulk_message_deletion: true });
    const hamlet = await queue("hamlet", { bulk_message_deletion: true });
    expect(await deleteAsIago([...early, late])).toBe(3);
    const event = (ids: number[]) => ({
      type: "delete_message",
      message_ids: ids,
      stream_id: partly.id,
      topic: "t457",
      message_type: "stream",
    });
    expect((await hamlet()).filter((e) => e.type === "delete_message")).toEqual([
      event([...early, late]),
    ]);
    expect((await iago()).filter((e) => e.type === "delete_message")).toEqual([event([late])]);

    // None of them readable: no event for the deleter at all.
    const none = await make("protected 457 b");
    const unseen = await send(none.name);
    await joinIago(none);
    const iago2 = await queue("iago", { bulk_message_deletion: true });
    expect(await deleteAsIago([unseen])).toBe(1);
    expect(await iago2()).toEqual([]);
  });

  it("answers complete: false when the time runs out, and the client repeats", async () => {
    for (let i = 0; i < 3; i++)
      await sendToChannel(server.as("hamlet"), {
        to: "Rome",
        topic: "slow topic",
        content: `m${i}`,
      });
    await server.db.$executeRawUnsafe(
      `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, sending_client_id, is_channel_message)
       SELECT realm_id, sender_id, recipient_id, subject, 'copy', rendered_content, sending_client_id, true
       FROM message m, generate_series(1, 300) WHERE m.id = (SELECT max(id) FROM message WHERE subject = 'slow topic')`,
    );
    const left = () => server.db.message.count({ where: { subject: "slow topic" } });
    // Every reading of the server's clock is 30 s later: one batch, then the time is up.
    clock.step = 30_000;
    let answer;
    try {
      answer = await expectSuccess(deleteTopic("iago", channel("Rome"), "slow topic"));
    } finally {
      clock.step = 0;
    }
    expect(answer.complete).toBe(false);
    const remaining = await left();
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThan(303);
    expect((await expectSuccess(deleteTopic("iago", channel("Rome"), "slow topic"))).complete).toBe(
      true,
    );
    expect(await left()).toBe(0);
  });

  it("a python-zulip-api form body, + for spaces", async () => {
    await sendToChannel(server.as("hamlet"), {
      to: "Venice",
      topic: "form topic",
      content: "hello",
    });
    const url = `${server.baseUrl}/api/v1/streams/${channel("Venice")}/delete_topic`;
    const response = await fetch(url, {
      method: "POST",
      headers: {
        Authorization: basicAuth(server, "iago"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "topic_name=form+topic",
    });
    const json = (await response.json()) as Record<string, unknown>;
    expect(checkResponse("POST", url, response.status, json)).toBeNull();
    expect(json).toMatchObject({ result: "success", complete: true });
    expect(await server.db.message.count({ where: { subject: "form topic" } })).toBe(0);

    // DELETE /messages/{id} the way python-zulip-api sends it: no body.
    const { id: m } = await sendToChannel(server.as("hamlet"), {
      to: "Venice",
      topic: "form topic",
      content: "hello",
    });
    const r = await fetch(`${server.baseUrl}/api/v1/messages/${m}`, {
      method: "DELETE",
      headers: { Authorization: basicAuth(server, "hamlet") },
    });
    expect(await r.json()).toEqual({ result: "success", msg: "" });
  });
});
