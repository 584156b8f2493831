/**
 * User administration: PATCH /users/{user_id} (roles, names, email changes) in Zulip's order of
 * checks with its events, GET /users/{user_id}, and POST /users (zerver/tests/test_users.py).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doCreateRealm } from "../../server/actions/realm/realm.ts";
import { doCreateUser } from "../../server/actions/users/users.ts";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const patch = (as: string, userId: number, body: Body<"/users/{user_id}", "patch">) =>
  server.as(as).PATCH("/users/{user_id}", {
    params: { path: { user_id: userId } },
    body: body,
  });
const byId = (as: string, userId: number | string) =>
  server.as(as).GET("/users/{email}", { params: { path: { email: String(userId) }, query: {} } });
const systemGroup = async (name: string) =>
  (
    await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name },
    })
  ).id;
const row = (name: string) => server.db.userProfile.findUniqueOrThrow({ where: { id: id(name) } });

/** Registers an event queue for `as`; `events()` then reads what arrived since. */
async function listen(as: string, eventTypes: string[]) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", { body: { event_types: eventTypes } }),
  );
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as any[];
}

/** A raw request with the given body and query, as real clients put them on the wire. */
async function raw(as: string, method: string, path: string, body?: string, query = "") {
  const cred = server.creds.users[as]!;
  const response = await fetch(`${server.baseUrl}/api/v1${path}${query}`, {
    method,
    headers: {
      Authorization: `Basic ${Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64")}`,
      ...(body !== undefined ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A user of a second organization on the same server. */
async function otherOrganizationUser() {
  return server.db.$transaction(async (tx) => {
    const realm = await doCreateRealm(tx, { name: "Elsewhere", stringId: "elsewhere" });
    return doCreateUser(
      tx,
      realm,
      { email: "stranger@zulip.com", fullName: "Stranger", role: 400 },
      "elsewhere.zulip.testserver",
    );
  });
}

describe("PATCH /users/{user_id}: who may change whom", () => {
  it("answers 'No such user' for an ID no user of the organization has", async () => {
    await expectError(patch("iago", 999_999, { full_name: "Nobody" }), 400, "No such user", {
      code: "BAD_REQUEST",
    });
    const stranger = await otherOrganizationUser();
    await expectError(patch("iago", stranger.id, { full_name: "Nobody" }), 400, "No such user");
    await expectError(byId("iago", stranger.id), 400, "No such user");
    expect(
      (await server.db.userProfile.findUniqueOrThrow({ where: { id: stranger.id } })).fullName,
    ).toBe("Stranger");
  });

  it("refuses members, even on themselves: 'Insufficient permission'", async () => {
    await expectError(
      patch("hamlet", id("othello"), { full_name: "Othello" }),
      400,
      "Insufficient permission",
    );
    await expectError(patch("hamlet", id("hamlet"), { role: 200 }), 400, "Insufficient permission");
    expect((await row("hamlet")).role).toBe(400);
  });

  it("lets a bot's owner rename their bot, but not change its role", async () => {
    const admins = await listen("iago", ["realm_user", "realm_bot"]);
    await expectSuccess(patch("hamlet", id("default-bot"), { full_name: "Renamed Bot" }));
    expect((await row("default-bot")).fullName).toBe("Renamed Bot");
    const events = await admins();
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: id("default-bot"), full_name: "Renamed Bot" },
      }),
    );
    // Feature level 474: no realm_bot update for a bot's name.
    expect(events.filter((e) => e.type === "realm_bot")).toEqual([]);
    await expectError(
      patch("hamlet", id("default-bot"), { role: 200 }),
      400,
      "Must be an organization administrator",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
  });
});

describe("PATCH /users/{user_id}: roles", () => {
  it("lets only owners grant the owner role, with the role and system-group events", async () => {
    await expectError(
      patch("iago", id("othello"), { role: 100 }),
      400,
      "Must be an organization owner",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
    const events = await listen("cordelia", ["realm_user", "user_group"]);
    await expectSuccess(patch("desdemona", id("othello"), { role: 100 }));
    const got = await events();
    const user = id("othello");
    expect(got.map(({ id: _, ...e }) => e)).toEqual([
      { type: "realm_user", op: "update", person: { user_id: user, role: 100 } },
      {
        type: "user_group",
        op: "remove_members",
        group_id: await systemGroup("role:members"),
        user_ids: [user],
      },
      {
        type: "user_group",
        op: "add_members",
        group_id: await systemGroup("role:owners"),
        user_ids: [user],
      },
      {
        type: "user_group",
        op: "remove_members",
        group_id: await systemGroup("role:fullmembers"),
        user_ids: [user],
      },
    ]);
    const owners = await expectSuccess(
      server.as("othello").GET("/user_groups", { params: { query: {} } }),
    );
    expect(owners.user_groups.find((g) => g.name === "role:owners")!.members).toContain(user);
    // Only an owner may take the role away again.
    await expectError(patch("iago", user, { role: 400 }), 400, "Must be an organization owner", {
      code: "UNAUTHORIZED_PRINCIPAL",
    });
    await expectSuccess(patch("desdemona", user, { role: 400 }));
    expect((await row("othello")).role).toBe(400);
  });

  it("keeps the only owner an owner", async () => {
    await expectError(
      patch("desdemona", id("desdemona"), { role: 400 }),
      400,
      "The owner permission cannot be removed from the only organization owner.",
    );
    expect((await row("desdemona")).role).toBe(100);
  });

  it("refuses a role that is not one of Zulip's", async () => {
    await expectError(
      patch("iago", id("hamlet"), { role: untyped(5) }),
      400,
      "Invalid role: Value error, Not in the list of possible values",
    );
  });

  it("applies a role at once: the demoted administrator loses their permissions and register follows", async () => {
    await expectSuccess(patch("desdemona", id("iago"), { role: 400 }));
    await expectError(
      patch("iago", id("hamlet"), { full_name: "Hamlet" }),
      400,
      "Insufficient permission",
    );
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm_user"] } }),
    );
    expect((state as any).realm_users.find((u: any) => u.user_id === id("iago"))).toMatchObject({
      role: 400,
      is_admin: false,
    });
    await expectSuccess(patch("desdemona", id("iago"), { role: 200 }));
    await expectSuccess(patch("iago", id("hamlet"), { full_name: "King Hamlet" }));
  });

  it("costs the same statements however many users the organization has", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    const statements = async () => {
      seen.length = 0;
      await expectSuccess(patch("iago", id("cordelia"), { role: 300 }));
      await expectSuccess(patch("iago", id("cordelia"), { role: 400 }));
      return seen.map((i) => i.statements);
    };
    try {
      // Measured warm: the first requests fill the per-process caches.
      await statements();
      const before = await statements();
      await server.db.$transaction(async (tx) => {
        const realm = await tx.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
        for (let i = 0; i < 20; i++)
          await doCreateUser(
            tx,
            realm,
            { email: `extra${i}@zulip.com`, fullName: `Extra ${i}`, role: 400 },
            "zulip.testserver",
          );
      });
      await statements();
      expect(await statements()).toEqual(before);
      if (process.env.SHOW_STATEMENTS) console.log("update-user role changes:", before);
    } finally {
      server.deps.observe = undefined;
    }
  });

  it("tells a user who becomes a guest which channels they no longer see, and gives them back", async () => {
    // Hamlet is not subscribed to Venice: a guest may not see it.
    const hamlet = await listen("hamlet", ["stream", "subscription"]);
    await expectSuccess(patch("iago", id("hamlet"), { role: 600 }));
    const venice = server.creds.channels["Venice"]!.stream_id;
    expect(await hamlet()).toContainEqual(
      expect.objectContaining({ type: "stream", op: "delete", stream_ids: [venice] }),
    );
    const again = await listen("hamlet", ["stream", "subscription"]);
    await expectSuccess(patch("iago", id("hamlet"), { role: 400 }));
    const events = await again();
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "stream",
        op: "create",
        streams: [expect.objectContaining({ stream_id: venice, name: "Venice" })],
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "subscription",
        op: "peer_add",
        stream_ids: [venice],
        user_ids: [id("iago"), id("othello"), id("prospero")],
      }),
    );
  });
});

describe("PATCH /users/{user_id}: full_name", () => {
  it("renames, telling everyone", async () => {
    const events = await listen("othello", ["realm_user"]);
    await expectSuccess(patch("iago", id("hamlet"), { full_name: "  Hamlet of Denmark " }));
    expect((await row("hamlet")).fullName).toBe("Hamlet of Denmark");
    expect(await events()).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: id("hamlet"), full_name: "Hamlet of Denmark" },
      }),
    ]);
    await expectSuccess(patch("iago", id("hamlet"), { full_name: "King Hamlet" }));
  });

  it("answers check_full_name's texts", async () => {
    const hamlet = id("hamlet");
    await expectError(patch("iago", hamlet, { full_name: "x".repeat(101) }), 400, "Name too long!");
    await expectError(patch("iago", hamlet, { full_name: "x" }), 400, "Name too short!");
    await expectError(patch("iago", hamlet, { full_name: "iago|72" }), 400, "Invalid format!");
    await expectError(
      patch("iago", hamlet, { full_name: "Hamlet*" }),
      400,
      "Invalid characters in name!",
    );
    await expectError(
      patch("iago", hamlet, { full_name: "Ham\u0000let" }),
      400,
      "Invalid characters in name!",
    );
    // Characters after `|15` do not read as a mention.
    await expectSuccess(patch("iago", hamlet, { full_name: "Hello- 12iago|72k" }));
    await expectSuccess(patch("iago", hamlet, { full_name: "King Hamlet" }));
  });

  it("ignores a whitespace-only name", async () => {
    const events = await listen("othello", ["realm_user"]);
    await expectSuccess(patch("iago", id("hamlet"), { full_name: "   " }));
    expect((await row("hamlet")).fullName).toBe("King Hamlet");
    expect(await events()).toEqual([]);
  });

  describe("with require_unique_names", () => {
    beforeAll(async () => {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { requireUniqueNames: true },
      });
    });
    afterAll(async () => {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { requireUniqueNames: false },
      });
    });

    it("refuses another user's name, whatever its case or compatibility form", async () => {
      for (const name of ["IaGo", "𝕚𝕒𝕘𝕠", "ｉａｇｏ", "𝒾𝒶𝑔𝑜"])
        await expectError(
          patch("desdemona", id("hamlet"), { full_name: name }),
          400,
          "Unique names required in this organization.",
        );
      // The user's own name in another case is no clash.
      await expectSuccess(patch("desdemona", id("hamlet"), { full_name: "KING HAMLET" }));
      await expectSuccess(patch("desdemona", id("hamlet"), { full_name: "King Hamlet" }));
    });
  });
});

describe("PATCH /users/{user_id}: profile_data", () => {
  it("sets a field the user may not edit, clears one, refuses an unknown one, all in the update's transaction", async () => {
    const { id: fieldId } = await expectSuccess(
      server.as("iago").POST("/realm/profile_fields", {
        body: { name: "Desk", field_type: 1, editable_by_user: false },
      }),
    );
    const events = await listen("othello", ["realm_user"]);
    await expectSuccess(
      patch("iago", id("cordelia"), {
        full_name: "Cordelia of Britain",
        profile_data: [{ id: fieldId, value: "B-12" }],
      }),
    );
    expect(
      (
        await server.db.customProfileFieldValue.findFirstOrThrow({
          where: { fieldId, userProfileId: id("cordelia") },
        })
      ).value,
    ).toBe("B-12");
    expect((await events()).map((e) => Object.keys(e.person))).toEqual([
      ["user_id", "full_name"],
      ["user_id", "custom_profile_field"],
    ]);
    // An unknown field refuses the whole request: the name stays as it was.
    await expectError(
      patch("iago", id("cordelia"), {
        full_name: "Cordelia",
        profile_data: [{ id: 9001, value: "x" }],
      }),
      400,
      "Field id 9001 not found.",
    );
    expect((await row("cordelia")).fullName).toBe("Cordelia of Britain");
    await expectSuccess(
      patch("iago", id("cordelia"), {
        full_name: "Cordelia, Lear's daughter",
        profile_data: [{ id: fieldId, value: null }],
      }),
    );
    expect(
      await server.db.customProfileFieldValue.count({
        where: { fieldId, userProfileId: id("cordelia") },
      }),
    ).toBe(0);
  });
});

describe("PATCH /users/{user_id}: new_email", () => {
  afterAll(async () => {
    await server.db.userProfile.update({
      where: { id: id("desdemona") },
      data: { canChangeUserEmails: false },
    });
  });

  it("needs an owner with can_change_user_emails", async () => {
    for (const as of ["iago", "desdemona"])
      await expectError(
        patch(as, id("cordelia"), { new_email: "cordelia@zulip.net" }),
        400,
        "User not authorized to change user emails",
      );
    await server.db.userProfile.update({
      where: { id: id("iago") },
      data: { canChangeUserEmails: true },
    });
    await expectError(
      patch("iago", id("cordelia"), { new_email: "cordelia@zulip.net" }),
      400,
      "User not authorized to change user emails",
    );
    await server.db.userProfile.update({
      where: { id: id("desdemona") },
      data: { canChangeUserEmails: true },
    });
  });

  it("refuses a bad address and one in use", async () => {
    await expectError(
      patch("desdemona", id("cordelia"), { new_email: "not an address" }),
      400,
      "Invalid new email address.",
    );
    await expectError(
      patch("desdemona", id("cordelia"), { new_email: "IAGO@zulip.com" }),
      400,
      "New email value error: Already has an account.",
    );
  });

  it("changes nothing when a later part of the request is refused", async () => {
    await expectError(
      patch("desdemona", id("cordelia"), { role: 300, new_email: "iago@zulip.com" }),
      400,
      "New email value error: Already has an account.",
    );
    expect((await row("cordelia")).role).toBe(400);
  });

  it("changes the address: the real one to those who may see it, the API email and avatar to everyone", async () => {
    const cordelia = id("cordelia");
    const member = await listen("hamlet", ["realm_user"]);
    await expectSuccess(patch("desdemona", cordelia, { new_email: "cordelia@zulip.net" }));
    expect(await row("cordelia")).toMatchObject({
      deliveryEmail: "cordelia@zulip.net",
      email: "cordelia@zulip.net",
    });
    const persons = (await member()).map((e) => e.person);
    expect(persons).toEqual([
      { user_id: cordelia, delivery_email: "cordelia@zulip.net" },
      {
        user_id: cordelia,
        avatar_source: "G",
        avatar_url: expect.stringMatching(
          /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/,
        ),
        avatar_url_medium: expect.stringMatching(/&s=500&version=1$/),
        avatar_version: 1,
      },
      { user_id: cordelia, new_email: "cordelia@zulip.net" },
    ]);
    // The cached user behind cordelia's API key follows at once: her key goes with the new
    // address, no longer with the old one.
    const key = server.creds.users.cordelia!.api_key;
    expect(
      (await expectSuccess(server.client("cordelia@zulip.net", key).GET("/users/me")))
        .delivery_email,
    ).toBe("cordelia@zulip.net");
    await expectError(server.as("cordelia").GET("/users/me"), 401, "Invalid API key");
  });

  it("changes a bot's address: its API email too, and its owner hears of the new avatar through realm_user", async () => {
    const bot = id("default-bot");
    const owner = await listen("hamlet", ["realm_user", "realm_bot"]);
    await expectSuccess(patch("desdemona", bot, { new_email: "renamed-bot@zulip.com" }));
    expect(await row("default-bot")).toMatchObject({
      deliveryEmail: "renamed-bot@zulip.com",
      email: "renamed-bot@zulip.com",
    });
    const events = await owner();
    // Feature level 474: the avatar through realm_user only.
    expect(events.filter((e) => e.type === "realm_bot")).toEqual([]);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "realm_user",
        person: expect.objectContaining({
          user_id: bot,
          avatar_url: expect.stringContaining("secure.gravatar.com"),
        }),
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "realm_user",
        person: { user_id: bot, new_email: "renamed-bot@zulip.com" },
      }),
    );
    await expectSuccess(patch("desdemona", bot, { new_email: "default-bot@zulip.com" }));
  });

  describe("with email addresses visible to administrators only", () => {
    beforeAll(async () => {
      await expectSuccess(
        server.as("iago").PATCH("/realm", { body: { email_address_visibility: 3 } }),
      );
    });
    afterAll(async () => {
      await expectSuccess(
        server.as("iago").PATCH("/realm", { body: { email_address_visibility: 1 } }),
      );
    });

    it("sends the new address only to those who may see it, and no new API email", async () => {
      const cordelia = id("cordelia");
      const member = await listen("hamlet", ["realm_user"]);
      const admin = await listen("iago", ["realm_user"]);
      await expectSuccess(patch("desdemona", cordelia, { new_email: "cordelia@zulip.com" }));
      expect(await row("cordelia")).toMatchObject({
        deliveryEmail: "cordelia@zulip.com",
        email: `user${cordelia}@zulip.testserver`,
      });
      const seen = (await member()).map((e) => Object.keys(e.person).sort());
      expect(seen).toEqual([
        ["avatar_source", "avatar_url", "avatar_url_medium", "avatar_version", "user_id"],
      ]);
      expect((await admin()).map((e) => e.person)).toContainEqual({
        user_id: cordelia,
        delivery_email: "cordelia@zulip.com",
      });
    });
  });
});

describe("PATCH /users/{user_id} as real clients encode it", () => {
  it("reads a form body with `+` for spaces and role as JSON text", async () => {
    const res = await raw(
      "iago",
      "PATCH",
      `/users/${id("prospero")}`,
      "full_name=Prospero+of+Milan&role=300",
    );
    expect(res).toMatchObject({ status: 200, body: { result: "success" } });
    expect(await row("prospero")).toMatchObject({ fullName: "Prospero of Milan", role: 300 });
  });

  it("reads zulip-js's query-string parameters on PATCH", async () => {
    const res = await raw(
      "iago",
      "PATCH",
      `/users/${id("prospero")}`,
      undefined,
      `?full_name=${encodeURIComponent("Prospero from The Tempest")}&role=400`,
    );
    expect(res).toMatchObject({ status: 200, body: { result: "success" } });
    expect(await row("prospero")).toMatchObject({
      fullName: "Prospero from The Tempest",
      role: 400,
    });
  });

  it("answers a role that is not JSON with Zulip's text", async () => {
    const res = await raw("iago", "PATCH", `/users/${id("prospero")}`, "role=owner");
    expect(res).toMatchObject({
      status: 400,
      body: { result: "error", msg: "role is not valid JSON" },
    });
  });
});

describe("GET /users/{user_id}", () => {
  it("finds a user or bot by ID", async () => {
    const { user } = await expectSuccess(byId("othello", id("hamlet")));
    expect(user).toMatchObject({ user_id: id("hamlet"), email: "hamlet@zulip.com", role: 400 });
    const bot = await expectSuccess(byId("othello", id("default-bot")));
    expect(bot.user).toMatchObject({ is_bot: true, bot_owner_id: id("hamlet") });
  });

  it("answers 'No such user' for an unknown ID", async () => {
    await expectError(byId("hamlet", 999_999), 400, "No such user");
    await expectError(byId("hamlet", "99999999999999999999"), 400, "No such user");
  });

  it("finds a deactivated user", async () => {
    await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: false } });
    try {
      const { user } = await expectSuccess(byId("hamlet", id("aaron")));
      expect(user).toMatchObject({ user_id: id("aaron"), is_active: false });
    } finally {
      await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: true } });
    }
  });
});

describe("POST /users", () => {
  const create = (as: string, body: Body<"/users", "post">) =>
    server.as(as).POST("/users", { body: body });
  const valid = {
    email: "romeo@zulip.com",
    password: "a long password",
    full_name: "Romeo Montague",
  };

  afterAll(async () => {
    await server.db.userProfile.update({
      where: { id: id("iago") },
      data: { canCreateUsers: false },
    });
  });

  it("needs an administrator with can_create_users", async () => {
    await expectError(create("hamlet", valid), 400, "Must be an organization administrator", {
      code: "UNAUTHORIZED_PRINCIPAL",
    });
    await expectError(create("iago", valid), 400, "User not authorized to create users");
    await server.db.userProfile.update({
      where: { id: id("iago") },
      data: { canCreateUsers: true },
    });
  });

  it("answers Zulip's texts for the name, the address and the password", async () => {
    await expectError(create("iago", { ...valid, full_name: "R" }), 400, "Name too short!");
    await expectError(create("iago", { ...valid, email: "broken" }), 400, "Bad name or username");
    await expectError(
      create("iago", { ...valid, email: "hamlet@zulip.com" }),
      400,
      "Email 'hamlet@zulip.com' already in use",
    );
    await expectError(
      create("iago", { ...valid, password: "xxxx" }),
      400,
      "The password is too weak.",
    );
    // Long enough, but guessed in fewer than PASSWORD_MIN_GUESSES (10000) tries by zxcvbn's
    // estimate: a common password, a keyboard walk, a repetition (check_password_strength).
    for (const password of ["password123", "qwertyuiop", "abcabcabcabc", "longer"])
      await expectError(create("iago", { ...valid, password }), 400, "The password is too weak.");
    await expectError(
      create("iago", { ...valid, password: "f657gdGGk9".repeat(11) }),
      400,
      "The password is too long: use at most 100 characters.",
    );
    await expectError(
      create("iago", untyped({ email: valid.email, full_name: valid.full_name })),
      400,
      "Missing 'password' argument",
      { code: "REQUEST_VARIABLE_MISSING" },
    );
  });

  it("keeps to the organization's domains when it restricts them", async () => {
    const realmId = server.creds.realm.id;
    await server.db.realmDomain.create({ data: { realmId, domain: "zulip.com" } });
    await server.db.realmDomain.create({
      data: { realmId, domain: "example.org", allowSubdomains: true },
    });
    await server.db.realm.update({
      where: { id: realmId },
      data: { emailsRestrictedToDomains: true },
    });
    try {
      await expectError(
        create("iago", { ...valid, email: "romeo@not-zulip.com" }),
        400,
        "Email 'romeo@not-zulip.com' not allowed in this organization",
      );
      await expectError(
        create("iago", { ...valid, email: "iago+label@zulip.com" }),
        400,
        "Email addresses containing + are not allowed.",
      );
      const sub = await expectSuccess(
        create("iago", { ...valid, email: "mercutio@mail.example.org", full_name: "Mercutio" }),
      );
      expect(sub.user_id).toBeGreaterThan(0);
    } finally {
      await server.db.realm.update({
        where: { id: realmId },
        data: { emailsRestrictedToDomains: false },
      });
      await server.db.realmDomain.deleteMany({ where: { realmId } });
    }
  });

  it("creates the user, who may log in, and tells everyone", async () => {
    const events = await listen("othello", ["realm_user"]);
    const { user_id } = await expectSuccess(create("iago", valid));
    expect(await events()).toContainEqual(
      expect.objectContaining({
        type: "realm_user",
        op: "add",
        person: expect.objectContaining({ user_id, full_name: "Romeo Montague", role: 400 }),
      }),
    );
    const { user } = await expectSuccess(byId("othello", user_id));
    expect(user).toMatchObject({ email: "romeo@zulip.com", is_active: true });
    const key = await expectSuccess(
      server.client().POST("/fetch_api_key", {
        body: { username: "romeo@zulip.com", password: valid.password },
      }),
    );
    expect(key.user_id).toBe(user_id);
    await expectError(create("iago", valid), 400, "Email 'romeo@zulip.com' already in use");
  });

  it("moves date_joined to the first login, with a realm_user update (feature level 475)", async () => {
    const password = "another long password";
    const { user_id } = await expectSuccess(
      create("iago", { email: "juliet@zulip.com", password, full_name: "Juliet Capulet" }),
    );
    const created = (await expectSuccess(byId("othello", user_id))).user.date_joined;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const events = await listen("othello", ["realm_user"]);
    // python-zulip-api's fetch_api_key: a form body.
    const login = () =>
      fetch(`${server.baseUrl}/api/v1/fetch_api_key`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: `username=juliet%40zulip.com&password=${password.replaceAll(" ", "+")}`,
      });
    expect((await login()).status).toBe(200);
    const joined = (await expectSuccess(byId("othello", user_id))).user.date_joined;
    expect(new Date(joined).getTime()).toBeGreaterThan(new Date(created).getTime());
    expect((await events()).filter((e) => e.op === "update")).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id, date_joined: joined },
      }),
    ]);
    // Only the first login moves it.
    expect((await login()).status).toBe(200);
    expect((await expectSuccess(byId("othello", user_id))).user.date_joined).toBe(joined);
    expect((await events()).filter((e) => e.op === "update")).toHaveLength(1);
  });
});
