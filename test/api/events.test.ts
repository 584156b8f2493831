import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { startTestServer, useTestServer } from "../helpers/server.ts";
import { doCreateChannel } from "../../server/actions/channels/channels.ts";
import { doSubscribe } from "../../server/actions/channels/subscriptions.ts";
import { doCreateUserWithDefaultChannels, doCreateUser } from "../../server/actions/users/users.ts";
import { sendDirect, untyped } from "../helpers/builders.ts";

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
    expect((state.server_report_message_types as { key: string }[]).map((t) => t.key)).toEqual([
      "spam",
      "harassment",
      "inappropriate",
      "norms",
      "other",
    ]);
    expect((state.subscriptions as { name: string }[]).map((s) => s.name).sort()).toEqual([
      "Denmark",
      "Rome",
      "Scotland",
      "Verona",
    ]);
    expect(state.realm_users).toHaveLength(11);
  });

  it("sends no state fields Zulip removed (role, can_see_emails, realm_email_address_visibility)", async () => {
    const state = await expectSuccess(server.as("hamlet").POST("/register", { body: {} }));
    for (const removed of ["role", "can_see_emails", "realm_email_address_visibility"])
      expect(state).not.toHaveProperty(removed);
    expect(state).toMatchObject({
      is_admin: false,
      is_owner: false,
      is_guest: false,
      user_id: server.creds.users.hamlet!.user_id,
    });
    // Without include_subscribers, no subscriber lists.
    expect((state.subscriptions as object[])[0]).not.toHaveProperty("subscribers");
  });

  it("includes each channel's subscribers with include_subscribers, in full or partial form", async () => {
    const users = server.creds.users;
    for (const include_subscribers of [true, "partial"] as const) {
      const state = await expectSuccess(
        server.as("hamlet").POST("/register", {
          body: { fetch_event_types: ["subscription"], include_subscribers },
        }),
      );
      const subs = state.subscriptions as {
        name: string;
        subscribers?: number[];
        partial_subscribers?: number[];
      }[];
      // Small channels get the complete list in both modes.
      for (const s of subs) {
        const stream = await server.db.stream.findFirstOrThrow({
          where: { name: s.name },
          select: { recipientId: true },
        });
        const rows = await server.db.subscription.findMany({
          where: { recipientId: stream.recipientId!, active: true },
          select: { userProfileId: true },
        });
        expect(s.subscribers).toEqual(rows.map((r) => r.userProfileId).sort((a, b) => a - b));
        expect(s).not.toHaveProperty("partial_subscribers");
      }
      expect(subs.find((s) => s.name === "Verona")!.subscribers).toEqual(
        expect.arrayContaining([users.hamlet!.user_id, users.polonius!.user_id]),
      );
    }
    // Sent as JSON text too, as Zulip's Json[bool | Literal["partial"]] reads it.
    const viaJson = await expectSuccess(
      server.as("hamlet").POST("/register", {
        body: { fetch_event_types: ["subscription"], include_subscribers: untyped('"partial"') },
      }),
    );
    expect((viaJson.subscriptions as { subscribers?: number[] }[])[0]!.subscribers).toBeDefined();
  });

  it("fetches only the requested sections", async () => {
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["message"] } }),
    );
    expect(state).toHaveProperty("max_message_id");
    expect(state).not.toHaveProperty("realm_users");
    expect(state).not.toHaveProperty("subscriptions");
  });
});

describe("GET /events", () => {
  it("delivers a message event after the message is committed, with per-queue formatting", async () => {
    const html = await expectSuccess(
      server
        .as("othello")
        .POST("/register", { body: { event_types: ["message"], apply_markdown: true } }),
    );
    const raw = await expectSuccess(
      server
        .as("othello")
        .POST("/register", { body: { event_types: ["message"], apply_markdown: false } }),
    );
    const poll = server
      .as("othello")
      .GET("/events", { params: { query: { queue_id: html.queue_id!, last_event_id: -1 } } });
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "channel", to: "Verona", topic: "events", content: "**live**" },
      }),
    );
    const { events } = await expectSuccess(poll);
    expect(events).toEqual([
      expect.objectContaining({
        id: 0,
        type: "message",
        flags: [],
        message: expect.objectContaining({ id, content: "<p><strong>live</strong></p>" }),
      }),
    ]);
    const rawEvents = await expectSuccess(
      server.as("othello").GET("/events", {
        params: { query: { queue_id: raw.queue_id!, last_event_id: -1, dont_block: true } },
      }),
    );
    expect(rawEvents.events[0]).toMatchObject({
      message: { content: "**live**", content_type: "text/x-markdown" },
    });
  });

  it("answers the long-polls one message wakes with one shared poll statement", async () => {
    const queues = await Promise.all(
      Array.from({ length: 40 }, () =>
        expectSuccess(
          server.as("othello").POST("/register", { body: { event_types: ["message"] } }),
        ),
      ),
    );
    const stats = server.deps.events.pollStats;
    const before = stats.queues;
    const polls = queues.map((q) =>
      server.as("othello").GET("/events", {
        params: { query: { queue_id: q.queue_id!, last_event_id: -1 } },
      }),
    );
    // Every poll has looked once and found nothing: they are parked.
    while (stats.queues < before + queues.length) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    const statements = stats.statements;
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "channel", to: "Verona", topic: "fan-out", content: "everyone" },
      }),
    );
    for (const answer of await Promise.all(polls.map((p) => expectSuccess(p))))
      expect(answer.events).toEqual([
        expect.objectContaining({
          id: 0,
          type: "message",
          message: expect.objectContaining({ id }),
        }),
      ]);
    // One statement a poll would be 40 (a poll may look once more when it began waiting while the
    // log was being read: one more statement at most).
    expect(stats.statements - statements).toBeLessThanOrEqual(3);
    expect(stats.queues - before).toBeGreaterThanOrEqual(2 * queues.length);
  });

  it("gives the sender the read flag (as read_by_sender says) and only the recipients the event", async () => {
    const hamlet = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { event_types: ["message"] } }),
    );
    const polonius = await expectSuccess(
      server.as("polonius").POST("/register", { body: { event_types: ["message"] } }),
    );
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: {
          type: "channel",
          to: "Scotland",
          topic: "events",
          content: "not for guests",
          read_by_sender: true,
        },
      }),
    );
    // Without read_by_sender, only Zulip's own apps' messages start read (Client.default_read_by_sender).
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "channel", to: "Scotland", topic: "events", content: "from a script" },
      }),
    );
    const mine = await expectSuccess(
      server
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id: hamlet.queue_id!, dont_block: true } } }),
    );
    expect(mine.events.map((e) => e.type === "message" && e.flags)).toEqual([["read"], []]);
    const theirs = await expectSuccess(
      server
        .as("polonius")
        .GET("/events", { params: { query: { queue_id: polonius.queue_id!, dont_block: true } } }),
    );
    expect(theirs.events).toEqual([]);
  });

  it("drops acknowledged events and sends a heartbeat when nothing happens", async () => {
    const { queue_id } = await expectSuccess(
      server.as("cordelia").POST("/register", { body: { event_types: ["message"] } }),
    );
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [server.creds.users.cordelia!.user_id], content: "one" },
      }),
    );
    const first = await expectSuccess(
      server
        .as("cordelia")
        .GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }),
    );
    expect(first.events).toHaveLength(1);
    const after = await expectSuccess(
      server.as("cordelia").GET("/events", {
        params: { query: { queue_id: queue_id!, last_event_id: first.events[0]!.id } },
      }),
    );
    expect(after.events).toEqual([expect.objectContaining({ type: "heartbeat", id: 1 })]);
  });

  it("does not publish events of a refused message", async () => {
    const { queue_id } = await expectSuccess(
      server.as("iago").POST("/register", { body: { event_types: ["message"] } }),
    );
    await expectError(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [server.creds.users.iago!.user_id, 424242], content: "x" },
      }),
      400,
      "Invalid user ID 424242",
    );
    const { events } = await expectSuccess(
      server
        .as("iago")
        .GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }),
    );
    expect(events).toEqual([]);
  });

  it("refuses another user's queue or an unknown one with BAD_EVENT_QUEUE_ID", async () => {
    const { queue_id } = await expectSuccess(server.as("iago").POST("/register", { body: {} }));
    await expectError(
      server
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }),
      400,
      `Bad event queue ID: ${queue_id}`,
      {
        code: "BAD_EVENT_QUEUE_ID",
        queue_id,
      },
    );
  });
});

describe("realm_user events", () => {
  it("tells the organization of a user created from the command line, with the real email only to those who may see it", async () => {
    const register = async (who: string) =>
      (
        await expectSuccess(
          server.as(who).POST("/register", { body: { event_types: ["realm_user"] } }),
        )
      ).queue_id!;
    await expectSuccess(
      server.as("iago").PATCH("/realm", { body: { email_address_visibility: 3 } }),
    );
    try {
      const [admin, member] = [await register("iago"), await register("hamlet")];
      const realm = await server.db.realm.findUniqueOrThrow({
        where: { id: server.creds.realm.id },
      });
      const user = await doCreateUserWithDefaultChannels(server.deps, realm, {
        email: "newcomer@zulip.com",
        fullName: "Newcomer",
        role: 400,
      });
      const added = async (who: string, queue_id: string) =>
        (
          await expectSuccess(
            server.as(who).GET("/events", { params: { query: { queue_id, dont_block: true } } }),
          )
        ).events.flatMap((e) => (e.type === "realm_user" && e.op === "add" ? [e] : []));
      const [toAdmin] = await added("iago", admin);
      const [toMember] = await added("hamlet", member);
      expect(toAdmin).toMatchObject({
        type: "realm_user",
        op: "add",
        person: {
          user_id: user.id,
          full_name: "Newcomer",
          delivery_email: "newcomer@zulip.com",
          avatar_url: null,
        },
      });
      expect(toMember).toMatchObject({
        type: "realm_user",
        op: "add",
        person: {
          user_id: user.id,
          email: `user${user.id}@zulip.testserver`,
          delivery_email: null,
        },
      });
      expect(toMember!.person.avatar_url).toMatch(/^https:/);
    } finally {
      await expectSuccess(
        server.as("iago").PATCH("/realm", { body: { email_address_visibility: 1 } }),
      );
    }
  });
});

describe("DELETE /events", () => {
  it("deletes the queue", async () => {
    const { queue_id } = await expectSuccess(server.as("hamlet").POST("/register", { body: {} }));
    await expectSuccess(server.as("hamlet").DELETE("/events", { body: { queue_id: queue_id! } }));
    await expectError(
      server
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }),
      400,
      `Bad event queue ID: ${queue_id}`,
    );
    await expectError(
      server.as("hamlet").DELETE("/events", { body: { queue_id: queue_id! } }),
      400,
      `Bad event queue ID: ${queue_id}`,
    );
  });
});

describe("POST /register with include_subscribers=partial on a large channel", () => {
  it("sends partial_subscribers (bots and recently active users) for a channel of 250 or more", async () => {
    const realm = await server.db.realm.findFirstOrThrow({ where: { stringId: "zulip" } });
    const channel = await server.db.$transaction(
      async (tx) => {
        const stream = await doCreateChannel(tx, realm.id, { name: "crowd" });
        const crowd = [];
        for (let i = 0; i < 250; i++)
          crowd.push(
            await doCreateUser(
              tx,
              realm,
              { email: `crowd${i}@zulip.com`, fullName: `Crowd ${i}`, role: 400 },
              "zulip.testserver",
            ),
          );
        await doSubscribe(tx, realm.id, stream, [
          server.creds.users.hamlet!.user_id,
          server.creds.bots["default-bot"]!.user_id,
          ...crowd.map((u) => u.id),
        ]);
        // crowd0 was active a day ago, crowd1 a month ago.
        const day = 24 * 3600 * 1000;
        await tx.userPresence.createMany({
          data: [
            {
              realmId: realm.id,
              userProfileId: crowd[0]!.id,
              lastActiveTime: new Date(Date.now() - day),
            },
            {
              realmId: realm.id,
              userProfileId: crowd[1]!.id,
              lastActiveTime: new Date(Date.now() - 30 * day),
            },
          ],
        });
        return { stream, crowd };
      },
      { timeout: 60_000 },
    );
    const partial = await expectSuccess(
      server.as("hamlet").POST("/register", {
        body: { fetch_event_types: ["subscription"], include_subscribers: "partial" },
      }),
    );
    const crowd = (
      partial.subscriptions as {
        name: string;
        subscribers?: number[];
        partial_subscribers?: number[];
      }[]
    ).find((s) => s.name === "crowd")!;
    expect(crowd).not.toHaveProperty("subscribers");
    expect(crowd.partial_subscribers).toEqual(
      [server.creds.bots["default-bot"]!.user_id, channel.crowd[0]!.id].sort((a, b) => a - b),
    );
    const full = await expectSuccess(
      server.as("hamlet").POST("/register", {
        body: { fetch_event_types: ["subscription"], include_subscribers: true },
      }),
    );
    expect(
      (full.subscriptions as { name: string; subscribers?: number[] }[]).find(
        (s) => s.name === "crowd",
      )!.subscribers,
    ).toHaveLength(252);
  });
});

describe("event queue bounds", () => {
  it("keeps a user's queues, the events a queue holds and idle queues within Zulip's limits", async () => {
    const small = await startTestServer(
      {},
      { events: { maxQueuesPerUser: 3, maxEventsPerQueue: 5, idleQueueMs: 2500 } },
    );
    try {
      const register = async () =>
        (
          await expectSuccess(
            small.as("hamlet").POST("/register", { body: { event_types: ["message"] } }),
          )
        ).queue_id!;
      const poll = (queue_id: string) =>
        small.as("hamlet").GET("/events", { params: { query: { queue_id, dont_block: true } } });
      const gone = (queue_id: string) =>
        expectError(poll(queue_id), 400, `Bad event queue ID: ${queue_id}`, {
          code: "BAD_EVENT_QUEUE_ID",
        });

      // A fourth queue replaces the least recently polled one.
      const [a, b, c] = [await register(), await register(), await register()];
      await expectSuccess(poll(a));
      const d = await register();
      await gone(b);
      for (const q of [a, c, d]) await expectSuccess(poll(q));

      // A queue nobody drains is deleted once it holds more than 5 events; one that is drained is not.
      const toHamlet = (i: number) =>
        sendDirect(small.as("othello"), {
          to: [small.creds.users.hamlet!.user_id],
          content: `bound ${i}`,
        });
      for (let i = 0; i < 4; i++) await toHamlet(i);
      const drained = await expectSuccess(poll(a));
      expect(drained.events).toHaveLength(4);
      await expectSuccess(
        small.as("hamlet").GET("/events", {
          params: {
            query: { queue_id: a, last_event_id: drained.events.at(-1)!.id, dont_block: true },
          },
        }),
      );
      for (let i = 4; i < 6; i++) await toHamlet(i);
      await gone(c);
      expect((await expectSuccess(poll(a))).events).toHaveLength(2);

      // An idle queue is collected (idle 2.5 s, collected at the next 2.5 s tick). The bound is
      // generous so that a loaded machine's slow steps above cannot pass for idleness.
      await new Promise((r) => setTimeout(r, 5500));
      await gone(a);
    } finally {
      await small.close();
    }
  });
});
