import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { untyped } from "../helpers/builders.ts";

const server = useTestServer();

const byEmail = (as: string, email: string, query: Record<string, boolean> = {}) =>
  server.as(as).GET("/users/{email}", { params: { path: { email }, query } });

describe("GET /users/{email}", () => {
  it("finds a user by real email", async () => {
    const { user } = await expectSuccess(byEmail("othello", "hamlet@zulip.com"));
    expect(user).toMatchObject({
      user_id: server.creds.users.hamlet!.user_id,
      email: "hamlet@zulip.com",
      delivery_email: "hamlet@zulip.com",
      full_name: "King Hamlet",
      is_bot: false,
      is_admin: false,
      is_owner: false,
      is_guest: false,
      role: 400,
      is_active: true,
    });
    expect(user).not.toHaveProperty("profile_data");
    // Zulip's format_user_row: bot fields only for bots.
    expect(user).not.toHaveProperty("bot_type");
    expect(user).not.toHaveProperty("bot_owner_id");
    expect(user.date_joined).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  });

  it("describes roles: owner, administrator, guest", async () => {
    expect((await expectSuccess(byEmail("hamlet", "desdemona@zulip.com"))).user).toMatchObject({
      role: 100,
      is_owner: true,
      is_admin: true,
    });
    expect((await expectSuccess(byEmail("hamlet", "iago@zulip.com"))).user).toMatchObject({
      role: 200,
      is_owner: false,
      is_admin: true,
    });
    expect((await expectSuccess(byEmail("hamlet", "polonius@zulip.com"))).user).toMatchObject({
      role: 600,
      is_guest: true,
    });
  });

  it("finds bots, with their type and owner", async () => {
    const { user } = await expectSuccess(byEmail("othello", "default-bot@zulip.com"));
    expect(user).toMatchObject({
      is_bot: true,
      bot_type: 1,
      bot_owner_id: server.creds.users.hamlet!.user_id,
    });
  });

  it("answers 'No such user' for an unknown address", async () => {
    await expectError(byEmail("hamlet", "invalid"), 400, "No such user", { code: "BAD_REQUEST" });
    await expectError(byEmail("hamlet", "nobody@zulip.com"), 400, "No such user");
  });

  it("returns avatar_url null for client_gravatar (the default) and a URL otherwise", async () => {
    expect(
      (await expectSuccess(byEmail("othello", "hamlet@zulip.com"))).user.avatar_url,
    ).toBeNull();
    const { user } = await expectSuccess(
      byEmail("othello", "hamlet@zulip.com", { client_gravatar: false }),
    );
    expect(user.avatar_url).toMatch(
      /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/,
    );
  });

  it("includes custom profile fields when asked", async () => {
    const hamlet = server.creds.users.hamlet!;
    const field = await server.db.customProfileField.create({
      data: { realmId: server.creds.realm.id, name: "Biography", fieldType: 2, order: 1 },
    });
    await server.db.customProfileFieldValue.create({
      data: {
        realmId: server.creds.realm.id,
        userProfileId: hamlet.user_id,
        fieldId: field.id,
        value: "**To be**",
        renderedValue: "<p><strong>To be</strong></p>",
      },
    });
    const { user } = await expectSuccess(
      byEmail("othello", "hamlet@zulip.com", { include_custom_profile_fields: true }),
    );
    expect(user.profile_data).toEqual({
      [String(field.id)]: { value: "**To be**", rendered_value: "<p><strong>To be</strong></p>" },
    });
    const bot = await expectSuccess(
      byEmail("othello", "default-bot@zulip.com", { include_custom_profile_fields: true }),
    );
    expect(bot.user).not.toHaveProperty("profile_data");
  });

  describe("with email visibility restricted to administrators", () => {
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

    it("hides real emails from members: the real address is not found, the dummy one is", async () => {
      const iagoId = server.creds.users.iago!.user_id;
      await expectError(byEmail("hamlet", "iago@zulip.com"), 400, "No such user");
      const { user } = await expectSuccess(byEmail("hamlet", `user${iagoId}@zulip.testserver`));
      expect(user).toMatchObject({
        user_id: iagoId,
        email: `user${iagoId}@zulip.testserver`,
        delivery_email: null,
      });
      expect(user.avatar_url).not.toBeNull();
    });

    it("shows real emails to administrators", async () => {
      const { user } = await expectSuccess(byEmail("desdemona", "hamlet@zulip.com"));
      expect(user).toMatchObject({
        delivery_email: "hamlet@zulip.com",
        email: `user${server.creds.users.hamlet!.user_id}@zulip.testserver`,
      });
    });

    it("always shows a user their own address", async () => {
      const { user } = await expectSuccess(byEmail("hamlet", "hamlet@zulip.com"));
      expect(user.delivery_email).toBe("hamlet@zulip.com");
    });
  });
});

describe("GET /users and GET /users/me", () => {
  it("lists every user and bot", async () => {
    const { members } = await expectSuccess(server.as("hamlet").GET("/users"));
    const emails = members.map((m) => m.delivery_email);
    expect(emails).toEqual(
      expect.arrayContaining([
        "hamlet@zulip.com",
        "polonius@zulip.com",
        "default-bot@zulip.com",
        "notification-bot@zulip.com",
      ]),
    );
    expect(members).toHaveLength(11);
  });

  it("filters by user_ids", async () => {
    const ids = [server.creds.users.iago!.user_id, server.creds.users.shiva!.user_id];
    const { members } = await expectSuccess(
      server.as("hamlet").GET("/users", { params: { query: { user_ids: ids } } }),
    );
    expect(members.map((m) => m.user_id).sort()).toEqual(ids.sort());
  });

  it("returns the caller with max_message_id", async () => {
    const me = await expectSuccess(server.as("hamlet").GET("/users/me"));
    expect(me).toMatchObject({
      user_id: server.creds.users.hamlet!.user_id,
      email: "hamlet@zulip.com",
      full_name: "King Hamlet",
    });
    expect(me.max_message_id).toBeGreaterThan(0);
    expect(me).not.toHaveProperty("bot_type");
    const bot = await expectSuccess(server.as("default-bot").GET("/users/me"));
    expect(bot).toMatchObject({
      is_bot: true,
      bot_type: 1,
      bot_owner_id: server.creds.users.hamlet!.user_id,
    });
  });
});

describe("PATCH /users/{email} (update_user_by_email_api, feature level 313)", () => {
  const patchByEmail = (as: string, email: string, body: Record<string, unknown>) =>
    server.as(as).PATCH("/users/{email}", { params: { path: { email } }, body });
  const nameOf = async (id: number) =>
    (await server.db.userProfile.findUniqueOrThrow({ where: { id } })).fullName;

  it("changes the user named by real, API or dummy address with PATCH /users/{user_id}'s action", async () => {
    const cordelia = server.creds.users.cordelia!.user_id;
    await expectSuccess(
      patchByEmail("iago", "cordelia@zulip.com", { full_name: "Cordelia, Lear's daughter" }),
    );
    expect(await nameOf(cordelia)).toBe("Cordelia, Lear's daughter");
    // A numeric segment is a user ID, as for GET.
    await expectSuccess(patchByEmail("iago", String(cordelia), { full_name: "Cordelia Lear" }));
    expect(await nameOf(cordelia)).toBe("Cordelia Lear");
  });

  it("answers Zulip's texts: no such user, insufficient permission, a refused value", async () => {
    await expectError(
      patchByEmail("iago", "nobody@zulip.com", { full_name: "X Y" }),
      400,
      "No such user",
    );
    await expectError(
      patchByEmail("hamlet", "cordelia@zulip.com", { full_name: "X Y" }),
      400,
      "Insufficient permission",
    );
    await expectError(
      patchByEmail("iago", "cordelia@zulip.com", { full_name: "a" }),
      400,
      "Name too short!",
    );
    await expectError(
      patchByEmail("iago", "cordelia@zulip.com", { role: untyped(7) }),
      400,
      "Invalid role: Value error, Not in the list of possible values",
    );
  });

  it("reads a form body with the role as JSON text and the address percent-encoded", async () => {
    const cred = server.creds.users.iago!;
    const response = await fetch(
      `${server.baseUrl}/api/v1/users/${encodeURIComponent("othello@zulip.com")}`,
      {
        method: "PATCH",
        headers: {
          Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: "role=300&full_name=Othello+the+Moor",
      },
    );
    expect(await response.json()).toEqual({ result: "success", msg: "" });
    const othello = await server.db.userProfile.findUniqueOrThrow({
      where: { id: server.creds.users.othello!.user_id },
    });
    expect([othello.role, othello.fullName]).toEqual([300, "Othello the Moor"]);
  });
});
