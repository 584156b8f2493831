/**
 * GET, POST and DELETE /users/me/subscriptions: subscribing oneself and others, creating channels
 * by name, permissions, Notification Bot's messages and the events (zerver/tests/test_subs.py).
 */
import { describe, expect, it } from "vitest";
import { doCreateUser } from "../../server/actions/users/users.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const subscribe = (as: string, body: Body<"/users/me/subscriptions", "post">) =>
  server.as(as).POST("/users/me/subscriptions", { body: body });
const unsubscribe = (as: string, body: Body<"/users/me/subscriptions", "delete">) =>
  server.as(as).DELETE("/users/me/subscriptions", { body: body });
const subscribedNames = async (as: string) =>
  (
    await expectSuccess(server.as(as).GET("/users/me/subscriptions", { params: { query: {} } }))
  ).subscriptions.map((s) => s.name);
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
/** The statements one request ran (server/db/statements.ts counts them at the driver). */
async function statementsOf(request: () => Promise<unknown>): Promise<number> {
  const seen: number[] = [];
  server.deps.observe = (info) => seen.push(info.statements);
  try {
    await request();
  } finally {
    server.deps.observe = undefined;
  }
  return seen[0]!;
}
const lastDm = async (as: string) =>
  (
    await expectSuccess(
      server.as(as).GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 1,
            num_after: 0,
            narrow: [{ operator: "is", operand: "dm" }],
          },
        },
      }),
    )
  ).messages.at(-1);

describe("POST /users/me/subscriptions", () => {
  it("subscribes the caller, reports already-subscribed channels, and creates missing ones by name", async () => {
    const result = await expectSuccess(
      subscribe("cordelia", {
        subscriptions: [
          { name: "Denmark" },
          { name: " Verona " },
          { name: "cordelia's corner", description: "Mine" },
        ],
      }),
    );
    expect(result.subscribed[String(id("cordelia"))]).toEqual(
      expect.arrayContaining(["cordelia's corner"]),
    );
    expect(
      [
        ...(result.subscribed[String(id("cordelia"))] ?? []),
        ...(result.already_subscribed[String(id("cordelia"))] ?? []),
      ].sort(),
    ).toEqual(["Denmark", "Verona", "cordelia's corner"]);
    expect(await subscribedNames("cordelia")).toEqual(
      expect.arrayContaining(["Denmark", "Verona", "cordelia's corner"]),
    );
    const created = await server.db.stream.findFirstOrThrow({
      where: { name: "cordelia's corner" },
    });
    expect(created).toMatchObject({ description: "Mine", creatorId: id("cordelia") });
  });

  it("subscribes others with can_add_subscribers_group, and Notification Bot tells them", async () => {
    const queue = await registerQueue("othello", ["subscription", "stream"]);
    const peerQueue = await registerQueue("hamlet", ["subscription"]);
    await unsubscribe("othello", { subscriptions: ["Rome"] });
    await pollEvents("othello", queue);
    const result = await expectSuccess(
      subscribe("iago", { subscriptions: [{ name: "Rome" }], principals: [id("othello")] }),
    );
    expect(result.subscribed).toEqual({ [String(id("othello"))]: ["Rome"] });
    const dm = (await lastDm("othello"))!;
    expect(dm.sender_email).toBe("notification-bot@zulip.com");
    expect(dm.content).toContain(
      `subscribed you to <a class="stream" data-stream-id="${server.creds.channels.Rome!.stream_id}"`,
    );
    const events = await pollEvents("othello", queue);
    expect(
      events.find((e) => e.type === "subscription" && e.op === "add")?.subscriptions[0],
    ).toMatchObject({ name: "Rome", in_home_view: true });
    expect((await pollEvents("hamlet", peerQueue)).find((e) => e.op === "peer_add")).toMatchObject({
      stream_ids: [server.creds.channels.Rome!.stream_id],
      user_ids: [id("othello")],
    });
  });

  it("refuses others' subscriptions without permission, and private channels the caller cannot access", async () => {
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
    const admins = (
      await server.db.namedUserGroup.findFirstOrThrow({
        where: { realmId: realm.id, name: "role:administrators" },
      })
    ).id;
    await server.db.realm.update({
      where: { id: realm.id },
      data: { canAddSubscribersGroupId: admins },
    });
    try {
      await expectError(
        subscribe("hamlet", { subscriptions: [{ name: "Venice" }], principals: [id("othello")] }),
        400,
        "Insufficient permission",
      );
    } finally {
      await server.db.realm.update({
        where: { id: realm.id },
        data: { canAddSubscribersGroupId: realm.canAddSubscribersGroupId },
      });
    }
    await expectError(
      subscribe("hamlet", { subscriptions: [{ name: "core team" }] }),
      400,
      "Unable to access channel (core team).",
    );
    const lenient = await expectSuccess(
      subscribe("hamlet", {
        subscriptions: [{ name: "core team" }, { name: "Venice" }],
        authorization_errors_fatal: false,
      }),
    );
    expect(lenient.unauthorized).toEqual(["core team"]);
    await expectError(
      subscribe("polonius", { subscriptions: [{ name: "Venice" }] }),
      400,
      "Not allowed for guest users",
    );
    await expectError(
      subscribe("iago", { subscriptions: [{ name: "Venice" }], principals: [99999] }),
      400,
      "No such user",
    );
    await expectError(
      subscribe("iago", {
        subscriptions: [{ name: "Venice" }],
        principals: ["nobody@example.com"],
      }),
      400,
      "No such user",
    );
  });

  it("words values of union-typed parameters as pydantic does: the first member's error, named by its tag", async () => {
    // Zulip: principals is Json[list[str] | list[int]]; group settings Json[int | UserGroupMembersData].
    await expectError(
      subscribe("iago", {
        subscriptions: [{ name: "Venice" }],
        principals: untyped([id("othello"), "x@y.z"]),
      }),
      400,
      'principals["list[str]"][0] is not a string',
    );
    await expectError(
      unsubscribe("iago", { subscriptions: ["Venice"], principals: untyped(id("othello")) }),
      400,
      'principals["list[str]"] is not a list',
    );
    await expectError(
      subscribe("iago", {
        subscriptions: [{ name: "union" }],
        can_administer_channel_group: untyped({ direct_members: "x" }),
      }),
      400,
      'can_administer_channel_group["int"] is not an integer',
    );
    await expectError(
      subscribe("iago", {
        subscriptions: [{ name: "union" }],
        can_administer_channel_group: untyped(true),
      }),
      400,
      'can_administer_channel_group["int"] is not an integer',
    );
    expect(await server.db.stream.count({ where: { name: "union" } })).toBe(0);
  });

  it("accepts principals by email and a form body with JSON text, as zulip-js sends", async () => {
    const auth =
      "Basic " +
      Buffer.from(`${server.creds.users.iago!.email}:${server.creds.users.iago!.api_key}`).toString(
        "base64",
      );
    const body = new URLSearchParams({
      subscriptions: JSON.stringify([{ name: "form channel" }]),
      principals: JSON.stringify([server.creds.users.aaron!.email]),
    });
    const response = await fetch(`${server.baseUrl}/api/v1/users/me/subscriptions?announce=false`, {
      method: "POST",
      headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString().replace(/%20/g, "+"),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).subscribed).toEqual({
      [String(id("aaron"))]: ["form channel"],
    });
  });

  it("costs the same statements for 40 users as for 4", async () => {
    const users = await server.db.userProfile.findMany({
      where: { realmId: server.creds.realm.id, isActive: true, isBot: false },
      select: { id: true },
      orderBy: { id: "asc" },
    });
    expect(users.length).toBeGreaterThanOrEqual(8);
    const few = users.slice(0, 4).map((u) => u.id);
    await expectSuccess(
      subscribe("iago", {
        subscriptions: [{ name: "few" }, { name: "many" }],
        principals: [id("iago")],
      }),
    );
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
    const extra = await server.db.$transaction(async (tx) => {
      const ids = [];
      for (let i = 0; i < 36; i++)
        ids.push(
          (
            await doCreateUser(
              tx,
              realm,
              { email: `crowd${i}@zulip.com`, fullName: `Crowd ${i}`, role: 400 },
              "zulip.testserver",
            )
          ).id,
        );
      return ids;
    });
    // Warm the caches the writes above dropped (organization, users, memberships).
    await expectSuccess(
      subscribe("iago", {
        subscriptions: [{ name: "few" }, { name: "many" }],
        principals: [id("iago"), ...extra],
      }),
    );
    await expectSuccess(unsubscribe("iago", { subscriptions: ["many"], principals: extra }));
    const a = await statementsOf(() =>
      expectSuccess(
        subscribe("iago", {
          subscriptions: [{ name: "few" }],
          principals: few,
          send_new_subscription_messages: false,
        }),
      ),
    );
    const b = await statementsOf(() =>
      expectSuccess(
        subscribe("iago", {
          subscriptions: [{ name: "many" }],
          principals: [...few, ...extra],
          send_new_subscription_messages: false,
        }),
      ),
    );
    if (process.env.SHOW_STATEMENTS) console.log("subscribe 4 users / 40 users:", a, b);
    expect(b).toBe(a);
  });
});

describe("DELETE /users/me/subscriptions", () => {
  it("unsubscribes the caller, with removed and not_removed, and tells the peers", async () => {
    await expectSuccess(subscribe("prospero", { subscriptions: [{ name: "Venice" }] }));
    const result = await expectSuccess(
      unsubscribe("prospero", { subscriptions: ["Venice", "Rome"] }),
    );
    expect(result.removed).toContain("Venice");
    expect(await subscribedNames("prospero")).not.toContain("Venice");
    await expectError(
      unsubscribe("prospero", { subscriptions: ["no such place", "nor this"] }),
      400,
      "Channel(s) (no such place, nor this) do not exist",
    );
  });

  it("takes a private channel out of sight of a member who leaves it, and tells the others", async () => {
    await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: {
          name: "small council",
          invite_only: true,
          subscribers: [id("iago"), id("prospero"), id("aaron")],
        },
      }),
    );
    const leaver = await registerQueue("prospero", ["subscription", "stream"]);
    const peer = await registerQueue("aaron", ["subscription"]);
    const outsider = await registerQueue("othello", ["subscription", "stream"]);
    await expectSuccess(unsubscribe("prospero", { subscriptions: ["small council"] }));
    const events = await pollEvents("prospero", leaver);
    expect(
      events.find((e) => e.type === "subscription" && e.op === "remove")?.subscriptions,
    ).toEqual([expect.objectContaining({ name: "small council" })]);
    expect(events.find((e) => e.type === "stream" && e.op === "delete")?.streams).toEqual([
      expect.objectContaining({ name: "small council" }),
    ]);
    expect((await pollEvents("aaron", peer)).find((e) => e.op === "peer_remove")).toMatchObject({
      user_ids: [id("prospero")],
    });
    expect((await pollEvents("othello", outsider)).filter((e) => e.type !== "heartbeat")).toEqual(
      [],
    );
    await expectError(
      subscribe("prospero", { subscriptions: [{ name: "small council" }] }),
      400,
      "Unable to access channel (small council).",
    );
  });

  it("needs can_remove_subscribers_group to unsubscribe others", async () => {
    await expectSuccess(
      subscribe("iago", { subscriptions: [{ name: "Venice" }], principals: [id("aaron")] }),
    );
    await expectError(
      unsubscribe("hamlet", { subscriptions: ["Venice"], principals: [id("aaron")] }),
      400,
      "Insufficient permission",
    );
    const result = await expectSuccess(
      unsubscribe("iago", { subscriptions: ["Venice"], principals: [id("aaron")] }),
    );
    expect(result.removed).toEqual(["Venice"]);
  });

  it("lets a bot's owner unsubscribe the bot without permission over others (user_directly_controls_user)", async () => {
    await expectSuccess(
      subscribe("iago", { subscriptions: [{ name: "Venice" }], principals: [id("default-bot")] }),
    );
    await expectError(
      unsubscribe("othello", { subscriptions: ["Venice"], principals: [id("default-bot")] }),
      400,
      "Insufficient permission",
    );
    expect(
      (
        await expectSuccess(
          unsubscribe("hamlet", { subscriptions: ["Venice"], principals: [id("default-bot")] }),
        )
      ).removed,
    ).toEqual(["Venice"]);
  });

  it("accepts a form body on DELETE, as Zulip clients send it", async () => {
    await expectSuccess(subscribe("aaron", { subscriptions: [{ name: "Rome" }] }));
    const auth =
      "Basic " +
      Buffer.from(
        `${server.creds.users.aaron!.email}:${server.creds.users.aaron!.api_key}`,
      ).toString("base64");
    const response = await fetch(`${server.baseUrl}/api/v1/users/me/subscriptions`, {
      method: "DELETE",
      headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: `subscriptions=${encodeURIComponent('["Rome"]')}`,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).removed).toEqual(["Rome"]);
  });
});

describe("GET /users/{user_id}/subscriptions/{stream_id}", () => {
  it("answers for a bot as for a human (feature level 458), as python-zulip-api asks", async () => {
    await expectSuccess(
      subscribe("iago", { subscriptions: [{ name: "Rome" }], principals: [id("default-bot")] }),
    );
    const rome = (await server.db.stream.findFirstOrThrow({ where: { name: "Rome" } })).id;
    const typed = await expectSuccess(
      server.as("hamlet").GET("/users/{user_id}/subscriptions/{stream_id}", {
        params: { path: { user_id: id("default-bot"), stream_id: rome } },
      }),
    );
    expect(typed.is_subscribed).toBe(true);
    // python-zulip-api's get_subscription_status: a GET with nothing but the path.
    const cred = server.creds.users.hamlet!;
    const status = async (userId: number) => {
      const r = await fetch(`${server.baseUrl}/api/v1/users/${userId}/subscriptions/${rome}`, {
        headers: {
          Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
        },
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    expect(await status(id("default-bot"))).toEqual({
      status: 200,
      body: { result: "success", msg: "", is_subscribed: true },
    });
    await expectSuccess(
      unsubscribe("iago", { subscriptions: ["Rome"], principals: [id("default-bot")] }),
    );
    expect((await status(id("default-bot"))).body.is_subscribed).toBe(false);
  });
});

describe("GET /users/{user_id}/channels (feature levels 440, 458)", () => {
  const channelsOf = (as: string, userId: number) =>
    server.as(as).GET("/users/{user_id}/channels", { params: { path: { user_id: userId } } });
  const ownIds = async (as: string) =>
    (
      await expectSuccess(server.as(as).GET("/users/me/subscriptions", { params: { query: {} } }))
    ).subscriptions
      .map((s) => s.stream_id)
      .sort((a, b) => a - b);

  it("lists a user's channels, limited to those whose subscribers the caller may see", async () => {
    const { id: secret } = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: {
          name: "user channels secret",
          subscribers: [id("iago"), id("hamlet")],
          invite_only: true,
        },
      }),
    );
    const hamlets = await ownIds("hamlet");
    expect(hamlets).toContain(secret);
    // The user themselves and an administrator who is not subscribed see every one.
    expect(
      (await expectSuccess(channelsOf("hamlet", id("hamlet")))).subscribed_channel_ids,
    ).toEqual(hamlets);
    expect(
      (await expectSuccess(channelsOf("desdemona", id("hamlet")))).subscribed_channel_ids,
    ).toEqual(hamlets);
    // A member who may not see the private channel's subscribers does not learn of it.
    expect(
      (await expectSuccess(channelsOf("othello", id("hamlet")))).subscribed_channel_ids,
    ).toEqual(hamlets.filter((c) => c !== secret));
    // A guest: only channels they are subscribed to themselves (or web-public ones).
    const guests = await ownIds("polonius");
    const seen = (await expectSuccess(channelsOf("polonius", id("hamlet")))).subscribed_channel_ids;
    const webPublic = (
      await server.db.stream.findMany({ where: { isWebPublic: true }, select: { id: true } })
    ).map((s) => s.id);
    expect(seen).toEqual(hamlets.filter((c) => guests.includes(c) || webPublic.includes(c)));
    await expectError(channelsOf("hamlet", 999_999), 400, "No such user");
  });

  it("answers for a bot (feature level 458) to a plain GET, as curl sends it", async () => {
    await expectSuccess(
      subscribe("iago", { subscriptions: [{ name: "Rome" }], principals: [id("default-bot")] }),
    );
    const rome = (await server.db.stream.findFirstOrThrow({ where: { name: "Rome" } })).id;
    const cred = server.creds.users.hamlet!;
    const response = await fetch(`${server.baseUrl}/api/v1/users/${id("default-bot")}/channels`, {
      headers: {
        Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
      },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: string; subscribed_channel_ids: number[] };
    expect(body.result).toBe("success");
    expect(body.subscribed_channel_ids).toContain(rome);
    await expectSuccess(
      unsubscribe("iago", { subscriptions: ["Rome"], principals: [id("default-bot")] }),
    );
    expect(
      (await expectSuccess(channelsOf("hamlet", id("default-bot")))).subscribed_channel_ids,
    ).not.toContain(rome);
  });
});

describe("register", () => {
  it("carries subscriptions, unsubscribed and never_subscribed", async () => {
    await expectSuccess(subscribe("cordelia", { subscriptions: [{ name: "Scotland" }] }));
    await expectSuccess(unsubscribe("cordelia", { subscriptions: ["Scotland"] }));
    const state = (await expectSuccess(
      server.as("cordelia").POST("/register", { body: { fetch_event_types: ["subscription"] } }),
    )) as any;
    expect(state.unsubscribed.map((s: any) => s.name)).toContain("Scotland");
    expect(state.subscriptions.map((s: any) => s.name)).not.toContain("Scotland");
    expect(state.never_subscribed.map((s: any) => s.name)).not.toContain("core team");
  });
});

describe("creating channels by name", () => {
  it("applies the creation options and their rules", async () => {
    const everyone = (
      await server.db.namedUserGroup.findFirstOrThrow({
        where: { realmId: server.creds.realm.id, name: "role:members" },
      })
    ).id;
    await expectError(
      subscribe("iago", {
        subscriptions: [{ name: "hidden history" }],
        invite_only: true,
        can_create_topic_group: everyone,
      }),
      400,
      "Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group",
      { code: "BAD_REQUEST", parameters: "history_public_to_subscribers, can_create_topic_group" },
    );
    await expectSuccess(
      subscribe("iago", {
        subscriptions: [{ name: "hidden history", description: "Quiet" }],
        invite_only: true,
        announce: true,
      }),
    );
    expect(
      await server.db.stream.findFirstOrThrow({ where: { name: "hidden history" } }),
    ).toMatchObject({ inviteOnly: true, historyPublicToSubscribers: false, description: "Quiet" });
  });

  it("gives many new subscribers each their subscription, logged once for those whose subscriptions read alike", async () => {
    const people = ["hamlet", "othello", "cordelia", "prospero", "aaron"];
    const queues = await Promise.all(
      ["hamlet", "aaron"].map(
        async (as) => [as, await registerQueue(as, ["subscription"])] as const,
      ),
    );
    await expectSuccess(
      subscribe("iago", {
        subscriptions: [{ name: "joined together", color: "#76ce90" }],
        principals: people.map(id),
      }),
    );
    const stream = await server.db.stream.findFirstOrThrow({ where: { name: "joined together" } });
    for (const [as, queue] of queues) {
      const added = (await pollEvents(as, queue)).filter((e) => e.op === "add");
      expect(added).toHaveLength(1);
      expect(added[0]!.subscriptions).toMatchObject([
        { stream_id: stream.id, name: "joined together", color: "#76ce90" },
      ]);
      expect(
        [...added[0]!.subscriptions[0].subscribers].sort((a: number, b: number) => a - b),
      ).toEqual(people.map(id).sort((a, b) => a - b));
    }
    // One row of the event log for the five of them (their subscriptions are alike), not five
    // each carrying every subscriber.
    const logged = await server.db.$queryRaw<{ user_ids: number[] }[]>`
      SELECT user_ids FROM event_log
      WHERE type = 'subscription' AND event->>'op' = 'add'
        AND (event->'subscriptions'->0->>'stream_id')::int = ${stream.id}`;
    expect(logged).toHaveLength(1);
    expect([...logged[0]!.user_ids].sort((a, b) => a - b)).toEqual(
      people.map(id).sort((a, b) => a - b),
    );
  });
});
