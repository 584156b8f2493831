/**
 * Bots: POST /bots, GET /bots, PATCH and DELETE /bots/{bot_id}, GET /bots/{bot_id}/api_key,
 * and register's realm_bots
 * (zerver/tests/test_bots.py): Zulip's checks and texts, the bot's address and fields, and the
 * `realm_bot` events to the bot's owner and the administrators.
 */
import { describe, expect, it } from "vitest";
import type { ZulipClient } from "../../client/src/index.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const email = (name: string) => server.creds.users[name]!.email;

const create = (as: string, body: Body<"/bots", "post">) =>
  server.as(as).POST("/bots", { body: body });
const patch = (as: string, botId: number, body: Body<"/bots/{bot_id}", "patch">) =>
  server.as(as).PATCH("/bots/{bot_id}", { params: { path: { bot_id: botId } }, body: body });
const remove = (as: string, botId: number) =>
  server.as(as).DELETE("/bots/{bot_id}", { params: { path: { bot_id: botId } } });
const register = async (as: string, eventTypes: string[]) =>
  (await expectSuccess(server.as(as).POST("/register", { body: { event_types: eventTypes } })))
    .queue_id!;
const poll = async (as: string, queueId: string) =>
  (
    await expectSuccess(
      server.as(as).GET("/events", { params: { query: { queue_id: queueId, dont_block: true } } }),
    )
  ).events as any[];
const botClient = (short: string, apiKey: string): ZulipClient =>
  server.client(`${short}-bot@zulip.testserver`, apiKey);
/** The realm's group-setting fields, set through the test's handle (drops the server's caches). */
async function setRealmGroup(
  field: "canCreateBotsGroupId" | "canCreateWriteOnlyBotsGroupId",
  name: string,
) {
  const group = await server.db.namedUserGroup.findFirstOrThrow({
    where: { realmId: server.creds.realm.id, name },
  });
  await server.db.realm.update({
    where: { id: server.creds.realm.id },
    data: { [field]: group.id },
  });
}

describe("POST /bots", () => {
  it("creates a bot owned by its creator, and tells its administrators (no key since level 474)", async () => {
    const queues = {
      hamlet: await register("hamlet", ["realm_bot"]),
      iago: await register("iago", ["realm_bot"]),
      desdemona: await register("desdemona", ["realm_bot"]),
      othello: await register("othello", ["realm_bot", "realm_user"]),
    };
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Hambot", short_name: "hambot" }),
    );
    expect(bot).toMatchObject({
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    });
    expect(bot.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(bot.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\//);

    const self = await expectSuccess(botClient("hambot", bot.api_key).GET("/users/me"));
    expect(self).toMatchObject({
      user_id: bot.user_id,
      email: "hambot-bot@zulip.testserver",
      full_name: "Hambot",
      is_bot: true,
      bot_type: 1,
      bot_owner_id: id("hamlet"),
      role: 400,
    });
    const added = {
      type: "realm_bot",
      op: "add",
      // Feature level 474: only what the user object lacks.
      bot: {
        user_id: bot.user_id,
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
        services: [],
      },
    };
    for (const who of ["hamlet", "iago", "desdemona"] as const)
      expect(await poll(who, queues[who])).toEqual([expect.objectContaining(added)]);
    const toOthello = await poll("othello", queues.othello);
    expect(toOthello.map((e) => [e.type, e.op])).toEqual([["realm_user", "add"]]);
    expect(toOthello[0].person).toMatchObject({ user_id: bot.user_id, is_bot: true });
    expect(toOthello[0].person).not.toHaveProperty("api_key");
  });

  it("checks names, types and permission in Zulip's order", async () => {
    await expectError(
      create("polonius", { full_name: "Guest Bot", short_name: "guest" }),
      400,
      "Not allowed for guest users",
    );
    await expectError(
      create("hamlet", { full_name: "Blank", short_name: "  " }),
      400,
      "Bad name or username",
    );
    await expectError(
      create("hamlet", { full_name: "a", short_name: "short" }),
      400,
      "Name too short!",
    );
    await expectError(
      create("hamlet", { full_name: "Bad*Name", short_name: "bad" }),
      400,
      "Invalid characters in name!",
    );
    await expectError(
      create("hamlet", { full_name: "Two Dots", short_name: "a..b" }),
      400,
      "Bad name or username",
    );
    await expectError(
      create("hamlet", { full_name: "Embedded", short_name: "embedded", bot_type: 4 }),
      400,
      "Embedded bots are not enabled.",
    );
    await expectSuccess(create("hamlet", { full_name: "Taken Bot", short_name: "taken" }));
    await expectError(
      create("othello", { full_name: "Taken Again", short_name: "taken" }),
      400,
      "Username already in use",
    );
    await expectError(
      create("hamlet", { full_name: "Othello, the Moor of Venice", short_name: "moor" }),
      400,
      "Name is already in use.",
    );
    await expectError(
      create("hamlet", { full_name: "Outgoing", short_name: "outgoing", bot_type: 3 }),
      400,
      "Invalid bot type",
    );
    await expectError(
      create("hamlet", { full_name: "Unknown Type", short_name: "unknown", bot_type: 9 }),
      400,
      "Invalid bot type",
    );
    await expectError(
      create("hamlet", {
        full_name: "Bad Type",
        short_name: "badtype",
        bot_type: untyped("generic"),
      }),
      400,
      "bot_type is not valid JSON",
    );
  });

  it("follows can_create_bots_group and can_create_write_only_bots_group", async () => {
    await setRealmGroup("canCreateBotsGroupId", "role:administrators");
    try {
      await expectError(
        create("hamlet", { full_name: "Generic Bot", short_name: "generic" }),
        400,
        "Insufficient permission",
      );
      const hook = await expectSuccess(
        create("hamlet", { full_name: "Hook Bot", short_name: "hook", bot_type: 2 }),
      );
      expect((await expectSuccess(botClient("hook", hook.api_key).GET("/users/me"))).bot_type).toBe(
        2,
      );
      await expectSuccess(create("iago", { full_name: "Admin Bot", short_name: "admin" }));
      await setRealmGroup("canCreateWriteOnlyBotsGroupId", "role:administrators");
      await expectError(
        create("hamlet", { full_name: "Hook Two", short_name: "hook2", bot_type: 2 }),
        400,
        "Insufficient permission",
      );
    } finally {
      await setRealmGroup("canCreateBotsGroupId", "role:members");
      await setRealmGroup("canCreateWriteOnlyBotsGroupId", "role:members");
    }
  });

  it("sets default channels the creator may access; a private one keeps the bot from other administrators", async () => {
    const bot = await expectSuccess(
      create("hamlet", {
        full_name: "Verona Bot",
        short_name: "verona",
        default_sending_stream: "Verona",
        default_events_register_stream: "Denmark",
        default_all_public_streams: true,
      }),
    );
    expect(bot).toMatchObject({
      default_sending_stream: "Verona",
      default_events_register_stream: "Denmark",
      default_all_public_streams: true,
    });
    await expectError(
      create("hamlet", {
        full_name: "Nowhere Bot",
        short_name: "nowhere",
        default_sending_stream: "nowhere",
      }),
      400,
      "Invalid channel name 'nowhere'",
    );
    await expectError(
      create("hamlet", {
        full_name: "Core Bot",
        short_name: "core",
        default_events_register_stream: "core team",
      }),
      400,
      "Invalid channel name 'core team'",
    );
    const desdemona = await register("desdemona", ["realm_bot"]);
    const iago = await register("iago", ["realm_bot"]);
    const secret = await expectSuccess(
      create("iago", {
        full_name: "Secret Bot",
        short_name: "secret",
        default_sending_stream: "core team",
      }),
    );
    expect(await poll("iago", iago)).toMatchObject([
      { op: "add", bot: { user_id: secret.user_id, default_sending_stream: "core team" } },
    ]);
    expect(await poll("desdemona", desdemona)).toEqual([]);
  });

  it("reads a real client's form body, `+` for spaces", async () => {
    const cred = server.creds.users.cordelia!;
    const response = await fetch(`${server.baseUrl}/api/v1/bots`, {
      method: "POST",
      headers: {
        Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "full_name=Plus+Sign+Bot&short_name=plus&bot_type=2",
    });
    expect(response.status).toBe(200);
    const { bots } = await expectSuccess(server.as("cordelia").GET("/bots"));
    expect(bots.find((b) => b.username === "plus-bot@zulip.testserver")?.full_name).toBe(
      "Plus Sign Bot",
    );
  });
});

describe("bot names in an organization that requires unique names", () => {
  it("refuses a name another user or bot has, on creation and on renaming", async () => {
    const realmId = server.creds.realm.id;
    await server.db.realm.update({ where: { id: realmId }, data: { requireUniqueNames: true } });
    try {
      await expectError(
        create("hamlet", { full_name: "king HAMLET", short_name: "kinglike" }),
        400,
        "Unique names required in this organization.",
      );
      const bot = await expectSuccess(
        create("hamlet", { full_name: "Unique Bot", short_name: "unique" }),
      );
      await expectError(
        patch("hamlet", bot.user_id, { full_name: "Othello, the Moor of Venice" }),
        400,
        "Unique names required in this organization.",
      );
      // Its own name again is no clash.
      await expectSuccess(patch("hamlet", bot.user_id, { full_name: "Unique Bot" }));
    } finally {
      await server.db.realm.update({ where: { id: realmId }, data: { requireUniqueNames: false } });
    }
  });
});

describe("GET /bots", () => {
  it("lists the caller's active bots with their keys", async () => {
    const { bots } = await expectSuccess(server.as("hamlet").GET("/bots"));
    expect(bots[0]).toMatchObject({
      username: server.creds.bots["default-bot"]!.email,
      full_name: "Zulip Default Bot",
      api_key: server.creds.bots["default-bot"]!.api_key,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    });
    expect(bots.map((b) => b.username)).toContain("hambot-bot@zulip.testserver");
    expect(bots.map((b) => b.username)).not.toContain("admin-bot@zulip.testserver");
    await expectError(server.as("polonius").GET("/bots"), 400, "Not allowed for guest users");
  });
});

describe("PATCH /bots/{bot_id}", () => {
  it("lets only the owner and administrators change a bot", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Patch Bot", short_name: "patch" }),
    );
    await expectError(
      patch("othello", bot.user_id, { full_name: "Stolen" }),
      400,
      "Insufficient permission",
    );
    await expectError(patch("hamlet", 999_999, { full_name: "Nobody" }), 400, "No such bot");
    await expectError(patch("iago", id("hamlet"), { full_name: "Human" }), 400, "No such bot");
    await expectError(
      patch("polonius", bot.user_id, { full_name: "Guest" }),
      400,
      "Not allowed for guest users",
    );
    await expectError(
      patch("hamlet", bot.user_id, { full_name: "King Hamlet" }),
      400,
      "Name is already in use.",
    );
    const changed = await expectSuccess(patch("iago", bot.user_id, { full_name: "Patched Bot" }));
    expect(changed).toMatchObject({ full_name: "Patched Bot", bot_owner: email("hamlet") });
  });

  it("changes a bot's role as a user's: administrators, and owners for the owner role", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Role Bot", short_name: "role" }),
    );
    await expectError(
      patch("hamlet", bot.user_id, { role: 200 }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      patch("iago", bot.user_id, { role: 100 }),
      400,
      "Must be an organization owner",
      {
        code: "UNAUTHORIZED_PRINCIPAL",
      },
    );
    const othello = await register("othello", ["realm_user", "user_group"]);
    // A real client's form body: the role as JSON text.
    await expectSuccess(
      server.as("iago").PATCH("/bots/{bot_id}", {
        params: { path: { bot_id: bot.user_id } },
        body: "role=200",
        bodySerializer: (b: unknown) => b as string,
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      }),
    );
    const groups = (await expectSuccess(server.as("iago").GET("/user_groups"))).user_groups;
    const groupId = (name: string) => groups.find((g) => g.name === name)!.id;
    expect(await poll("othello", othello)).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: bot.user_id, role: 200 },
      }),
      expect.objectContaining({
        type: "user_group",
        op: "remove_members",
        group_id: groupId("role:members"),
        user_ids: [bot.user_id],
      }),
      expect.objectContaining({
        type: "user_group",
        op: "add_members",
        group_id: groupId("role:administrators"),
        user_ids: [bot.user_id],
      }),
      expect.objectContaining({
        type: "user_group",
        op: "remove_members",
        group_id: groupId("role:fullmembers"),
        user_ids: [bot.user_id],
      }),
    ]);
    const row = await server.db.userProfile.findUniqueOrThrow({ where: { id: bot.user_id } });
    expect(row.role).toBe(200);
  });

  it("renames a bot with a realm_user update only (feature level 474)", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Name Bot", short_name: "name" }),
    );
    const othello = await register("othello", ["realm_user", "realm_bot"]);
    const iago = await register("iago", ["realm_bot"]);
    // The same name changes nothing (Zulip's web app sends it unchanged).
    await expectSuccess(patch("hamlet", bot.user_id, { full_name: "Name Bot" }));
    await expectSuccess(patch("hamlet", bot.user_id, { full_name: "Renamed Bot" }));
    expect(await poll("othello", othello)).toMatchObject([
      {
        type: "realm_user",
        op: "update",
        person: { user_id: bot.user_id, full_name: "Renamed Bot" },
      },
    ]);
    expect(await poll("iago", iago)).toEqual([]);
  });

  it("changes the owner, with delete/add events as Zulip sends them (no update since level 474)", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Owned Bot", short_name: "owned" }),
    );
    await expectError(
      patch("hamlet", bot.user_id, { bot_owner_id: 999_999 }),
      400,
      "Failed to change owner, no such user",
    );
    await expectError(
      patch("hamlet", bot.user_id, { bot_owner_id: id("default-bot") }),
      400,
      "Failed to change owner, bots can't own other bots",
    );
    const queues = {
      hamlet: await register("hamlet", ["realm_bot"]),
      othello: await register("othello", ["realm_bot"]),
      iago: await register("iago", ["realm_bot"]),
      cordelia: await register("cordelia", ["realm_user"]),
    };
    const result = await expectSuccess(
      patch("hamlet", bot.user_id, { bot_owner_id: id("othello") }),
    );
    expect(result.bot_owner).toBe(email("othello"));
    expect(await poll("hamlet", queues.hamlet)).toMatchObject([
      { type: "realm_bot", op: "delete", bot: { user_id: bot.user_id } },
    ]);
    expect(await poll("othello", queues.othello)).toMatchObject([
      { type: "realm_bot", op: "add", bot: { user_id: bot.user_id } },
    ]);
    expect(await poll("iago", queues.iago)).toEqual([]);
    expect(await poll("cordelia", queues.cordelia)).toMatchObject([
      {
        type: "realm_user",
        op: "update",
        person: { user_id: bot.user_id, bot_owner_id: id("othello") },
      },
    ]);
    // Hamlet no longer owns it.
    await expectError(
      patch("hamlet", bot.user_id, { full_name: "Mine" }),
      400,
      "Insufficient permission",
    );
    const { bots } = await expectSuccess(server.as("othello").GET("/bots"));
    expect(bots.map((b) => b.username)).toContain("owned-bot@zulip.testserver");
  });

  it("changes a bot's address with short_name (feature level 447)", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Postbox Bot", short_name: "postbox" }),
    );
    await expectSuccess(create("hamlet", { full_name: "Parcel Bot", short_name: "parcel" }));
    await expectError(
      patch("hamlet", bot.user_id, { short_name: "  " }),
      400,
      "Bad name or username",
    );
    await expectError(
      patch("hamlet", bot.user_id, { short_name: "parcel" }),
      400,
      "Username already in use",
    );
    await expectError(
      patch("othello", bot.user_id, { short_name: "mine" }),
      400,
      "Insufficient permission",
    );
    const othello = await register("othello", ["realm_user"]);
    // Its own address again changes nothing.
    await expectSuccess(patch("hamlet", bot.user_id, { short_name: "postbox" }));
    expect(await poll("othello", othello)).toEqual([]);
    await expectSuccess(patch("hamlet", bot.user_id, { short_name: "courier" }));
    expect(
      await server.db.userProfile.findUniqueOrThrow({ where: { id: bot.user_id } }),
    ).toMatchObject({
      email: "courier-bot@zulip.testserver",
      deliveryEmail: "courier-bot@zulip.testserver",
    });
    const events = await poll("othello", othello);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: bot.user_id, new_email: "courier-bot@zulip.testserver" },
      }),
    );
    // The bot goes on with its key under its new address.
    expect((await expectSuccess(botClient("courier", bot.api_key).GET("/users/me"))).email).toBe(
      "courier-bot@zulip.testserver",
    );
    // zulip-js sends PATCH parameters in the query string, `+` for spaces.
    const cred = server.creds.users.hamlet!;
    const response = await fetch(
      `${server.baseUrl}/api/v1/bots/${bot.user_id}?short_name=+missive+`,
      {
        method: "PATCH",
        headers: {
          Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
        },
      },
    );
    expect(response.status).toBe(200);
    expect(
      (await server.db.userProfile.findUniqueOrThrow({ where: { id: bot.user_id } })).email,
    ).toBe("missive-bot@zulip.testserver");
  });

  it("changes default channels ('' for none) and all-public-streams", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Stream Bot", short_name: "stream" }),
    );
    const iago = await register("iago", ["realm_bot"]);
    expect(
      await expectSuccess(
        patch("hamlet", bot.user_id, {
          default_sending_stream: "Denmark",
          default_events_register_stream: "Verona",
          default_all_public_streams: true,
        }),
      ),
    ).toMatchObject({
      default_sending_stream: "Denmark",
      default_events_register_stream: "Verona",
      default_all_public_streams: true,
    });
    expect(
      await expectSuccess(patch("hamlet", bot.user_id, { default_sending_stream: "" })),
    ).toMatchObject({ default_sending_stream: null, default_events_register_stream: "Verona" });
    await expectError(
      patch("hamlet", bot.user_id, { default_events_register_stream: "core team" }),
      400,
      "Invalid channel name 'core team'",
    );
    expect((await poll("iago", iago)).map((e) => e.bot)).toEqual([
      { user_id: bot.user_id, default_sending_stream: "Denmark" },
      { user_id: bot.user_id, default_events_register_stream: "Verona" },
      { user_id: bot.user_id, default_all_public_streams: true },
      { user_id: bot.user_id, default_sending_stream: null },
    ]);
  });
});

describe("GET /bots/{bot_id}/api_key (feature level 463)", () => {
  const apiKey = (as: string, botId: number) =>
    server.as(as).GET("/bots/{bot_id}/api_key", { params: { path: { bot_id: botId } } });

  it("gives the bot's owner and administrators its key, and no one else", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Keyed Bot", short_name: "keyed" }),
    );
    expect(await expectSuccess(apiKey("hamlet", bot.user_id))).toMatchObject({
      api_key: bot.api_key,
    });
    expect((await expectSuccess(apiKey("iago", bot.user_id))).api_key).toBe(bot.api_key);
    await expectError(apiKey("othello", bot.user_id), 400, "Insufficient permission");
    await expectError(apiKey("hamlet", id("othello")), 400, "No such bot");
    await expectError(apiKey("hamlet", 999_999), 400, "No such bot");
    // The key it gives works.
    const { api_key } = await expectSuccess(apiKey("hamlet", bot.user_id));
    await expectSuccess(botClient("keyed", api_key).GET("/users/me"));
  });

  it("answers curl's plain GET", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Curl Bot", short_name: "curlkey" }),
    );
    const cred = server.creds.users.hamlet!;
    const response = await fetch(`${server.baseUrl}/api/v1/bots/${bot.user_id}/api_key`, {
      headers: {
        Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
      },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: "success", msg: "", api_key: bot.api_key });
  });
});

describe("DELETE /bots/{bot_id}", () => {
  it("deactivates a bot: its key refused, its administrators told", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Doomed Bot", short_name: "doomed" }),
    );
    await expectError(remove("othello", bot.user_id), 400, "Insufficient permission");
    await expectError(remove("iago", id("othello")), 400, "No such bot");
    const hamlet = await register("hamlet", ["realm_bot", "realm_user"]);
    await expectSuccess(remove("hamlet", bot.user_id));
    await expectError(
      botClient("doomed", bot.api_key).GET("/users/me"),
      401,
      "Account is deactivated",
    );
    expect(await poll("hamlet", hamlet)).toMatchObject([
      { type: "realm_user", op: "update", person: { user_id: bot.user_id, is_active: false } },
    ]); // Feature level 474: and no realm_bot update.
    const { bots } = await expectSuccess(server.as("hamlet").GET("/bots"));
    expect(bots.map((b) => b.username)).not.toContain("doomed-bot@zulip.testserver");
  });
});

describe("who administers a bot", () => {
  it("needs an owner for a bot that may create users, and the creation permission to reactivate one", async () => {
    const bot = await expectSuccess(
      create("hamlet", { full_name: "Mighty Bot", short_name: "mighty" }),
    );
    await server.db.userProfile.update({
      where: { id: bot.user_id },
      data: { canCreateUsers: true },
    });
    await expectError(
      patch("hamlet", bot.user_id, { full_name: "Mightier Bot" }),
      400,
      "Must be an organization owner",
      {
        code: "UNAUTHORIZED_PRINCIPAL",
      },
    );
    await expectError(
      patch("iago", bot.user_id, { full_name: "Mightier Bot" }),
      400,
      "Must be an organization owner",
    );
    await expectSuccess(patch("desdemona", bot.user_id, { full_name: "Mightier Bot" }));

    const plain = await expectSuccess(
      create("hamlet", { full_name: "Sleepy Bot", short_name: "sleepy" }),
    );
    await expectSuccess(remove("hamlet", plain.user_id));
    const revive = (as: string) =>
      server.as(as).POST("/users/{user_id}/reactivate", {
        params: { path: { user_id: plain.user_id } },
      });
    await expectError(revive("othello"), 400, "Insufficient permission");
    await setRealmGroup("canCreateBotsGroupId", "role:administrators");
    try {
      await expectError(revive("hamlet"), 400, "Insufficient permission");
    } finally {
      await setRealmGroup("canCreateBotsGroupId", "role:members");
    }
    await expectSuccess(revive("hamlet"));
  });
});

describe("POST /register realm_bots", () => {
  it("gives administrators every bot and others their own, deactivated ones included", async () => {
    const state = async (as: string) =>
      (
        await expectSuccess(
          server.as(as).POST("/register", { body: { fetch_event_types: ["realm_bot"] } }),
        )
      ).realm_bots as any[];
    const admin = (await state("iago")).map((b) => b.user_id);
    const own = await state("hamlet");
    const botIds = await server.db.userProfile.findMany({
      where: { realmId: server.creds.realm.id, isBot: true },
      select: { id: true, email: true, botOwnerId: true },
    });
    const byEmail = (e: string) => botIds.find((b) => b.email === e)!.id;
    expect(admin).toEqual(
      expect.arrayContaining([
        byEmail("doomed-bot@zulip.testserver"),
        byEmail("admin-bot@zulip.testserver"),
        byEmail("hambot-bot@zulip.testserver"),
      ]),
    );
    const hamlets = botIds.filter((b) => b.botOwnerId === id("hamlet")).map((b) => b.id);
    expect(own.map((b) => b.user_id).sort()).toEqual(hamlets.sort());
    // Feature level 474: only what the user object lacks; a deactivated bot still listed.
    expect(own.find((b) => b.user_id === byEmail("doomed-bot@zulip.testserver"))).toEqual({
      user_id: byEmail("doomed-bot@zulip.testserver"),
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
      services: [],
    });
    expect(own.map((b) => b.user_id)).not.toContain(byEmail("admin-bot@zulip.testserver"));
  });
});
