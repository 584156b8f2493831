/**
 * DELETE /streams/{stream_id} (do_deactivate_stream) and unarchiving with PATCH is_archived=false
 * (do_unarchive_stream): nobody unsubscribed, the default channel and organization settings
 * cleared, events by the `archived_channels` capability, Notification Bot's notices
 * (zerver/tests/test_subs.py TestCreateStreams / StreamAdminTest archiving tests).
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const realmId = () => server.creds.realm.id;
const id = (name: string) => server.creds.users[name]!.user_id;
let counter = 0;

async function channel(as: string, subscribers: string[], options: Record<string, unknown> = {}) {
  const name = `archive ${++counter}`;
  const { id: streamId } = await expectSuccess(
    server.as(as).POST("/channels/create", {
      body: { name, subscribers: subscribers.map(id), ...options },
    }),
  );
  return { streamId, name };
}

const archive = (as: string, streamId: number) =>
  server.as(as).DELETE("/streams/{stream_id}", { params: { path: { stream_id: streamId } } });
const unarchive = (as: string, streamId: number) =>
  server.as(as).PATCH("/streams/{stream_id}", {
    params: { path: { stream_id: streamId } },
    body: { is_archived: false },
  });

/** A queue of `stream` events whose client declares (or not) the archived_channels capability. */
async function streamQueue(as: string, archivedChannels: boolean) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", {
      body: {
        event_types: ["stream"],
        client_capabilities: { archived_channels: archivedChannels },
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
    ).events.map(({ id: _id, ...event }) => event as Record<string, any>);
}

const lastMessage = async (streamId: number) => {
  const stream = await server.db.stream.findUniqueOrThrow({ where: { id: streamId } });
  return server.db.message.findFirstOrThrow({
    where: { recipientId: stream.recipientId! },
    orderBy: { id: "desc" },
    include: { sender: true },
  });
};

describe("DELETE /streams/{stream_id}", () => {
  it("refuses who cannot administer the channel", async () => {
    const { streamId } = await channel("iago", ["iago", "hamlet"]);
    await expectError(
      archive("hamlet", streamId),
      400,
      "You do not have permission to administer this channel.",
    );
    const secret = await channel("iago", ["iago"], { invite_only: true });
    await expectError(archive("cordelia", secret.streamId), 400, "Invalid channel ID");
    await expectError(archive("iago", 424242), 400, "Invalid channel ID");
  });

  it("archives without unsubscribing anyone: events, notice read by all, no more messages, once only", async () => {
    const { streamId, name } = await channel("iago", ["iago", "hamlet"]);
    const modern = await streamQueue("hamlet", true);
    const legacy = await streamQueue("cordelia", false);
    await expectSuccess(archive("iago", streamId));

    const stream = await server.db.stream.findUniqueOrThrow({ where: { id: streamId } });
    expect(stream.isArchived).toBe(true);
    expect(
      await server.db.subscription.count({
        where: { recipientId: stream.recipientId!, active: true },
      }),
    ).toBe(2);
    const update = {
      type: "stream",
      op: "update",
      stream_id: streamId,
      name,
      property: "is_archived",
      value: true,
    };
    const deletion = {
      type: "stream",
      op: "delete",
      streams: [{ stream_id: streamId }],
      stream_ids: [streamId],
    };
    // Zulip's clients with archived_channels take the update, the others the delete, without
    // its `for_archiving` marker (the queue's filter and formatter, events/queues.ts, format.ts).
    const [modernEvents, legacyEvents] = [await modern(), await legacy()];
    expect(modernEvents).toContainEqual(update);
    expect(modernEvents.filter((e) => e.op === "delete")).toEqual([]);
    expect(legacyEvents).toContainEqual(deletion);
    expect(legacyEvents.filter((e) => e.op === "update")).toEqual([]);

    const notice = await lastMessage(streamId);
    expect(notice.sender.deliveryEmail).toBe("notification-bot@zulip.com");
    expect(notice.subject).toBe("channel events");
    expect(notice.content).toBe(`Channel #**${name}** has been archived.`);
    const flags = await server.db.userMessage.findMany({ where: { messageId: notice.id } });
    expect(flags.map((f) => f.userProfileId)).toEqual(
      expect.arrayContaining([id("iago"), id("hamlet")]),
    );
    for (const row of flags) expect(Number(row.flags) & 1).toBe(1); // read

    await expectError(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: streamId, topic: "t", content: "late" },
      }),
      400,
      `Not authorized to send to channel '${name}'`,
    );
    await expectError(archive("iago", streamId), 400, "Channel is already deactivated");
    // Subscribers still read its history.
    const read = await expectSuccess(
      server.as("hamlet").GET("/messages/{message_id}", {
        params: { path: { message_id: notice.id } },
      }),
    );
    expect(read.message.content).toContain("has been archived");
    // And its topics (feature level 480; zulip-flutter lists them when the channel is opened).
    const { topics } = await expectSuccess(
      server.as("hamlet").GET("/users/me/{stream_id}/topics", {
        params: { path: { stream_id: streamId } },
      }),
    );
    expect(topics.map((t) => t.name)).toContain("channel events");
  });

  it("leaves the default channels and clears organization settings naming it", async () => {
    const { streamId } = await channel("iago", ["iago"]);
    await expectSuccess(
      server.as("iago").PATCH("/streams/{stream_id}", {
        params: { path: { stream_id: streamId } },
        body: { is_default_stream: true },
      }),
    );
    await server.db.realm.update({
      where: { id: realmId() },
      data: { signupAnnouncementsStreamId: streamId },
    });
    const cordelia = await queueOf(server, "cordelia", ["realm", "default_streams"]);
    await expectSuccess(archive("iago", streamId));
    const events = await cordelia();
    expect(events).toContainEqual({
      type: "realm",
      op: "update_dict",
      property: "default",
      data: { signup_announcements_stream_id: -1 },
    });
    const defaults = events.find((e) => e.type === "default_streams")!;
    expect(defaults.default_streams).not.toContain(streamId);
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: realmId() } });
    expect(realm.signupAnnouncementsStreamId).toBeNull();
    expect(await server.db.defaultStream.count({ where: { streamId } })).toBe(0);
    const { realm_signup_announcements_stream_id } = await expectSuccess(
      server.as("cordelia").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    );
    expect(realm_signup_announcements_stream_id).toBe(-1);
  });

  it("register leaves archived channels out unless the client declares archived_channels", async () => {
    const { streamId } = await channel("iago", ["iago", "hamlet"]);
    await expectSuccess(archive("iago", streamId));
    const register = async (archived: boolean) =>
      expectSuccess(
        server.as("hamlet").POST("/register", {
          body: {
            fetch_event_types: ["stream", "subscription"],
            client_capabilities: { archived_channels: archived },
          },
        }),
      );
    const without = await register(false);
    expect(without.streams!.map((s) => s.stream_id)).not.toContain(streamId);
    expect(without.subscriptions!.map((s) => s.stream_id)).not.toContain(streamId);
    const withCapability = await register(true);
    expect(withCapability.streams!.find((s) => s.stream_id === streamId)).toMatchObject({
      is_archived: true,
    });
  });
});

describe("unarchiving (PATCH is_archived=false)", () => {
  it("unarchives with events and the notice; refuses a channel that is not archived", async () => {
    const { streamId, name } = await channel("iago", ["iago", "hamlet"]);
    await expectError(unarchive("iago", streamId), 400, "Channel is not currently deactivated");
    await expectSuccess(archive("iago", streamId));
    const modern = await streamQueue("hamlet", true);
    const legacy = await streamQueue("cordelia", false);
    // python-zulip-api's form body.
    const iago = server.creds.users.iago!;
    const response = await fetch(`${server.baseUrl}/api/v1/streams/${streamId}`, {
      method: "PATCH",
      headers: {
        Authorization: "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "is_archived=false",
    });
    expect(response.status).toBe(200);
    expect((await server.db.stream.findUniqueOrThrow({ where: { id: streamId } })).isArchived).toBe(
      false,
    );
    const modernEvents = await modern();
    expect(modernEvents).toContainEqual({
      type: "stream",
      op: "update",
      stream_id: streamId,
      name,
      property: "is_archived",
      value: false,
    });
    expect(modernEvents.filter((e) => e.op === "create")).toEqual([]);
    const legacyEvents = await legacy();
    expect(legacyEvents.filter((e) => e.op === "update")).toEqual([]);
    const created = legacyEvents.find((e) => e.op === "create")!;
    expect(created).not.toHaveProperty("for_unarchiving");
    expect(created.streams[0]).toMatchObject({ stream_id: streamId, is_archived: false });
    expect((await lastMessage(streamId)).content).toBe(`Channel #**${name}** has been unarchived.`);
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: streamId, topic: "t", content: "back" },
      }),
    );
  });

  it("refuses a private channel nobody is subscribed to", async () => {
    const { streamId } = await channel("iago", ["hamlet"], { invite_only: true });
    await expectSuccess(archive("iago", streamId));
    await server.db.subscription.updateMany({
      where: { recipient: { typeId: streamId, type: 2 } },
      data: { active: false },
    });
    await expectError(
      unarchive("iago", streamId),
      400,
      "Channel is private and have no subscribers",
    );
  });

  it("is_archived=true does nothing (archive with DELETE)", async () => {
    const { streamId } = await channel("iago", ["iago"]);
    await expectSuccess(
      server.as("iago").PATCH("/streams/{stream_id}", {
        params: { path: { stream_id: streamId } },
        body: { is_archived: true },
      }),
    );
    expect((await server.db.stream.findUniqueOrThrow({ where: { id: streamId } })).isArchived).toBe(
      false,
    );
  });
});
