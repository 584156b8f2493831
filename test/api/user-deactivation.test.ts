/**
 * Deactivating and reactivating users, and regenerating an API key (zerver/tests/test_users.py
 * DeactivateUserTest/ActivateTest, test_bots.py): Zulip's checks and texts, the events, and what
 * must happen at once: the keys refused, the queues gone.
 */
import { describe, expect, it } from "vitest";
import { doCreateRealm } from "../../server/actions/realm/realm.ts";
import { doCreateUser, doCreateUserWithDefaultChannels } from "../../server/actions/users/users.ts";
import type { ZulipClient } from "../../client/src/index.ts";
import { requestOnHost } from "../helpers/net.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body } from "../helpers/builders.ts";

// A long heartbeat, so that a poll ended early was ended by the deactivation.
const server = useTestServer({ eventHeartbeatMs: 30_000 });
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;

let created = 0;
/** A fresh member (or other role) and a client with their key. */
async function newUser(role = 400) {
  created++;
  const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
  const user = await doCreateUserWithDefaultChannels(server.deps, realm, {
    email: `temp${created}@zulip.com`,
    fullName: `Temp User ${created}`,
    role,
  });
  return { user, client: server.client(user.deliveryEmail, user.apiKey) };
}

async function newBot(owner: ZulipClient, name: string) {
  const bot = await expectSuccess(
    owner.POST("/bots", { body: { full_name: `${name} Bot`, short_name: name.toLowerCase() } }),
  );
  const email = `${name.toLowerCase()}-bot@zulip.testserver`;
  return { id: bot.user_id, client: server.client(email, bot.api_key) };
}

const register = async (client: ZulipClient, eventTypes?: string[]) =>
  (
    await expectSuccess(
      client.POST("/register", { body: eventTypes ? { event_types: eventTypes } : {} }),
    )
  ).queue_id!;
const poll = async (client: ZulipClient, queueId: string) =>
  (
    await expectSuccess(
      client.GET("/events", { params: { query: { queue_id: queueId, dont_block: true } } }),
    )
  ).events as any[];

const deactivate = (as: string, userId: number, body: Body<"/users/{user_id}", "delete"> = {}) =>
  server.as(as).DELETE("/users/{user_id}", { params: { path: { user_id: userId } }, body });
const reactivate = (as: string | ZulipClient, userId: number) =>
  (typeof as === "string" ? server.as(as) : as).POST("/users/{user_id}/reactivate", {
    params: { path: { user_id: userId } },
  });
const me = (client: ZulipClient) => client.GET("/users/me");

describe("DELETE /users/{user_id}", () => {
  it("checks the target and the caller in Zulip's order", async () => {
    await expectError(deactivate("hamlet", id("othello")), 400, "Insufficient permission");
    await expectError(deactivate("iago", 999_999), 400, "No such user");
    await expectError(deactivate("iago", id("default-bot")), 400, "No such user");
    await expectError(deactivate("iago", id("desdemona")), 400, "Must be an organization owner", {
      code: "UNAUTHORIZED_PRINCIPAL",
    });
    await expectError(
      deactivate("desdemona", id("desdemona")),
      400,
      "Cannot deactivate the only organization owner",
    );
    await expectError(
      deactivate("iago", id("othello"), { deactivation_notification_comment: "x".repeat(2001) }),
      400,
      "deactivation_notification_comment is too long (limit: 2000 characters)",
    );
    // Nothing was deactivated.
    await expectSuccess(me(server.as("othello")));
  });

  it("deactivates the user and their bots at once: keys refused, queues gone, everyone told", async () => {
    const { user, client } = await newUser();
    await expectSuccess(
      client.POST("/users/me/subscriptions", { body: { subscriptions: [{ name: "Verona" }] } }),
    );
    const bot = await newBot(client, "Tempo");
    const othello = await register(server.as("othello"), ["realm_user", "subscription"]);
    const iago = await register(server.as("iago"), ["realm_bot"]);
    const own = await register(client);
    const botQueue = await register(bot.client);
    // Long-polls waiting on the user's and the bot's queues when they are deactivated (no event
    // is for the bot: only the deactivation's `user:<id>` key can wake its poll early).
    const started = Date.now();
    const waiting = client.GET("/events", {
      params: { query: { queue_id: own, last_event_id: -1 } },
    });
    const botWaiting = bot.client.GET("/events", {
      params: { query: { queue_id: botQueue, last_event_id: -1 } },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));

    await expectSuccess(
      deactivate("iago", user.id, { deactivation_notification_comment: "Farewell, friend" }),
    );

    await expectError(waiting, 400, `Bad event queue ID: ${own}`, { code: "BAD_EVENT_QUEUE_ID" });
    await expectError(botWaiting, 400, `Bad event queue ID: ${botQueue}`, {
      code: "BAD_EVENT_QUEUE_ID",
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    await expectError(me(client), 401, "Account is deactivated");
    await expectError(me(bot.client), 401, "Account is deactivated");
    expect(await server.db.eventQueue.count({ where: { id: { in: [own, botQueue] } } })).toBe(0);

    const toOthello = await poll(server.as("othello"), othello);
    expect(toOthello.filter((e) => e.type === "realm_user")).toMatchObject([
      { op: "update", person: { user_id: bot.id, is_active: false } },
      { op: "update", person: { user_id: user.id, is_active: false } },
    ]);
    const verona = server.creds.channels.Verona!.stream_id;
    expect(toOthello.find((e) => e.op === "peer_remove")).toMatchObject({
      type: "subscription",
      stream_ids: [verona],
      user_ids: [user.id],
    });
    // Feature level 474: a bot's deactivation reaches its administrators through realm_user only.
    expect(await poll(server.as("iago"), iago)).toEqual([]);

    const { members } = await expectSuccess(
      server.as("iago").GET("/users", { params: { query: { user_ids: [user.id, bot.id] } } }),
    );
    expect(members.map((m) => [m.user_id, m.is_active])).toEqual([
      [user.id, false],
      [bot.id, false],
    ]);
    // Subscriptions stay (inactive users are left out of subscriber lists).
    const sub = await server.db.subscription.findFirstOrThrow({
      where: { userProfileId: user.id, recipient: { type: 2, typeId: verona } },
    });
    expect(sub).toMatchObject({ active: true, isUserActive: false });
    const { subscribers } = await expectSuccess(
      server.as("othello").GET("/streams/{stream_id}/members", {
        params: { path: { stream_id: verona } },
      }),
    );
    expect(subscribers).not.toContain(user.id);

    await expectError(deactivate("iago", user.id), 400, "User is deactivated");
  });
});

describe("statements", () => {
  it("deactivates and reactivates in a fixed number of statements, whatever the bots and channels", async () => {
    const counts: Record<string, number[]> = {};
    server.deps.observe = (info) => (counts[info.operationId] ??= []).push(info.statements);
    try {
      // The first round warms the caches.
      for (const [round, size] of [1, 1, 3].entries()) {
        const { user, client } = await newUser();
        await expectSuccess(
          client.POST("/users/me/subscriptions", {
            body: {
              subscriptions: ["Verona", "Denmark", "Scotland"]
                .slice(0, size)
                .map((name) => ({ name })),
            },
          }),
        );
        for (let n = 0; n < size; n++) await newBot(client, `Count${round}x${n}`);
        await expectSuccess(deactivate("iago", user.id));
        await expectSuccess(reactivate("iago", user.id));
      }
    } finally {
      server.deps.observe = undefined;
    }
    const [, small, large] = counts["deactivate-user"]!;
    expect(large).toBe(small);
    expect(counts["reactivate-user"]![2]).toBe(counts["reactivate-user"]![1]);
    if (process.env.SHOW_STATEMENTS)
      console.log(counts["deactivate-user"], counts["reactivate-user"]);
  });
});

describe("POST /users/{user_id}/reactivate", () => {
  it("reactivates a user: key back, old queue gone, subscriptions and groups back", async () => {
    const { user, client } = await newUser();
    await expectSuccess(
      client.POST("/users/me/subscriptions", { body: { subscriptions: [{ name: "Denmark" }] } }),
    );
    const bot = await newBot(client, "Revive");
    const oldQueue = await register(client);
    await expectSuccess(deactivate("iago", user.id));

    await expectError(reactivate("hamlet", user.id), 400, "Insufficient permission");
    await expectError(reactivate("iago", 999_999), 400, "No such user");
    const othello = await register(server.as("othello"), [
      "realm_user",
      "subscription",
      "user_group",
    ]);
    await expectSuccess(reactivate("iago", user.id));

    await expectSuccess(me(client));
    await expectError(
      client.GET("/events", { params: { query: { queue_id: oldQueue, dont_block: true } } }),
      400,
      `Bad event queue ID: ${oldQueue}`,
      { code: "BAD_EVENT_QUEUE_ID" },
    );
    const events = await poll(server.as("othello"), othello);
    expect(events[0]).toMatchObject({
      type: "realm_user",
      op: "update",
      person: { user_id: user.id, is_active: true },
    });
    expect(events.find((e) => e.op === "peer_add")).toMatchObject({
      stream_ids: [server.creds.channels.Denmark!.stream_id],
      user_ids: [user.id],
    });
    const groups = await server.db.namedUserGroup.findMany({
      where: { realmId: server.creds.realm.id, name: { in: ["role:members", "role:fullmembers"] } },
      orderBy: { id: "asc" },
    });
    expect(events.filter((e) => e.op === "add_members")).toMatchObject(
      groups.map((g) => ({ type: "user_group", group_id: g.id, user_ids: [user.id] })),
    );
    // The bot stays deactivated until its owner (or an administrator) brings it back.
    await expectError(me(bot.client), 401, "Account is deactivated");
    const ownerQueue = await register(client, ["realm_bot"]);
    await expectSuccess(reactivate(client, bot.id));
    await expectSuccess(me(bot.client));
    // Feature level 474: no realm_bot update for a reactivation.
    expect(await poll(client, ownerQueue)).toEqual([]);
  });

  it("gives a bot whose owner is deactivated to whoever reactivates it", async () => {
    const { user, client } = await newUser();
    const bot = await newBot(client, "Orphan");
    await expectSuccess(deactivate("iago", user.id));
    const othello = await register(server.as("othello"), ["realm_user"]);
    await expectSuccess(reactivate("iago", bot.id));
    const events = await poll(server.as("othello"), othello);
    expect(events).toMatchObject([
      { op: "update", person: { user_id: bot.id, is_active: true } },
      { op: "update", person: { user_id: bot.id, bot_owner_id: id("iago") } },
    ]);
    const { user: found } = await expectSuccess(
      server.as("iago").GET("/users/{email}", {
        params: { path: { email: "orphan-bot@zulip.testserver" } },
      }),
    );
    expect(found.bot_owner_id).toBe(id("iago"));
  });

  it("refuses a bot whose name an active user now holds", async () => {
    const first = await newBot(server.as("hamlet"), "Twin");
    await expectSuccess(
      server.as("hamlet").DELETE("/bots/{bot_id}", { params: { path: { bot_id: first.id } } }),
    );
    await newBot(server.as("hamlet"), "Twin2").then((b) =>
      expectSuccess(
        server.as("hamlet").PATCH("/bots/{bot_id}", {
          params: { path: { bot_id: b.id } },
          body: { full_name: "Twin Bot" },
        }),
      ),
    );
    await expectError(
      reactivate("hamlet", first.id),
      400,
      'There is already an active bot named "Twin Bot" in this organization. To reactivate this bot, you must rename or deactivate the other one first.',
    );
  });
});

describe("DELETE /users/me", () => {
  it("refuses the only owner and the only user, with CANNOT_DEACTIVATE_LAST_USER", async () => {
    await expectError(
      server.as("desdemona").DELETE("/users/me"),
      400,
      "Cannot deactivate the only organization owner.",
      { code: "CANNOT_DEACTIVATE_LAST_USER", entity: "organization owner", is_last_owner: true },
    );
    const owner = await server.db.$transaction(async (tx) => {
      const realm = await doCreateRealm(tx, { name: "Solo", stringId: "solo" });
      return doCreateUser(
        tx,
        realm,
        { email: "solo@zulip.com", fullName: "Solo Owner", role: 100 },
        "solo.zulip.testserver",
      );
    });
    expect(
      await requestOnHost(
        server.baseUrl,
        "DELETE",
        "/users/me",
        "solo.zulip.testserver",
        "solo@zulip.com",
        owner.apiKey,
      ),
    ).toEqual({
      status: 400,
      body: {
        result: "error",
        msg: "Cannot deactivate the only user.",
        code: "CANNOT_DEACTIVATE_LAST_USER",
        entity: "user",
        is_last_owner: false,
      },
    });
  });

  it("deactivates the caller", async () => {
    const { user, client } = await newUser();
    const othello = await register(server.as("othello"), ["realm_user"]);
    await expectSuccess(client.DELETE("/users/me"));
    await expectError(me(client), 401, "Account is deactivated");
    expect(await poll(server.as("othello"), othello)).toMatchObject([
      { type: "realm_user", op: "update", person: { user_id: user.id, is_active: false } },
    ]);
  });
});

describe("POST /users/me/api_key/regenerate", () => {
  it("replaces the key: the old one is refused at once, the new one works", async () => {
    const { user, client } = await newUser();
    await expectSuccess(me(client)); // cached behind the old key
    const { api_key } = await expectSuccess(client.POST("/users/me/api_key/regenerate"));
    expect(api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(api_key).not.toBe(user.apiKey);
    await expectError(me(client), 401, "Invalid API key");
    const renewed = await expectSuccess(me(server.client(user.deliveryEmail, api_key)));
    expect(renewed.user_id).toBe(user.id);
  });

  it("removes the user's E2EE push registrations with device events (feature level 492)", async () => {
    const { user, client } = await newUser();
    const realmId = server.creds.realm.id;
    const device = (data: { pushKeyId?: bigint; pendingPushTokenId?: bigint }) =>
      server.db.pushDevice.create({ data: { realmId, userProfileId: user.id, ...data } });
    const registered = await device({ pushKeyId: 7n, pendingPushTokenId: 11n });
    const pending = await device({ pendingPushTokenId: 12n });
    const bare = await device({});
    const others = await device({ pushKeyId: 8n });
    await server.db.pushDevice.update({
      where: { id: others.id },
      data: { userProfileId: server.creds.users.othello!.user_id },
    });
    const queue = await register(client, ["device"]);
    // A real client's POST, no body (python-zulip-api's regenerate call).
    const response = await fetch(`${server.baseUrl}/api/v1/users/me/api_key/regenerate`, {
      method: "POST",
      headers: {
        Authorization:
          "Basic " + Buffer.from(`${user.deliveryEmail}:${user.apiKey}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "",
    });
    expect(response.status).toBe(200);
    const { api_key } = (await response.json()) as { api_key: string };
    const left = await server.db.pushDevice.findMany({
      where: { id: { in: [registered.id, pending.id, bare.id, others.id] } },
      select: { id: true },
    });
    expect(left.map((d) => d.id).sort((a, b) => a - b)).toEqual([bare.id, others.id]);
    // The queue outlives the key (it is the user's); it hears of each removal.
    expect(await poll(server.client(user.deliveryEmail, api_key), queue)).toMatchObject([
      { type: "device", op: "remove", device_id: registered.id },
      { type: "device", op: "remove", device_id: pending.id },
    ]);
    await expectError(me(client), 401, "Invalid API key");
  });

  it("is for humans only", async () => {
    await expectError(
      server.as("default-bot").POST("/users/me/api_key/regenerate"),
      400,
      "This endpoint does not accept bot requests.",
    );
  });
});
