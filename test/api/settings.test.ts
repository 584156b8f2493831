/**
 * PATCH /settings (zerver/tests/test_settings.py, test_events.py's user_settings checks): each
 * validation text, each event (no legacy twins since level 439), register's `user_settings` and legacy copies
 * after a change, the name and password changes, and a form-encoded request as clients send it.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readFileSync } from "node:fs";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { USER_SETTINGS } from "../../server/lib/users/user-settings.ts";

const server = useTestServer();
const id = (name: string) => server.creds.users[name]!.user_id;

type Body = Record<string, unknown>;
const patch = (as: string, body: Body) => server.as(as).PATCH("/settings", { body: body });

async function queueOf(as: string, body: Body) {
  const { queue_id } = await expectSuccess(server.as(as).POST("/register", { body: body }));
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events.map(({ id: _id, ...event }) => event as Record<string, unknown>);
}

const register = async (as: string, body: Body) =>
  (await expectSuccess(server.as(as).POST("/register", { body: body }))) as Record<string, unknown>;

describe("the settings table", () => {
  it("matches the spec's PATCH /settings parameters, types and allowed values", () => {
    const doc = parse(readFileSync("openapi/paths/settings.yaml", "utf8"));
    const props = doc.settings.patch.requestBody.content["application/x-www-form-urlencoded"].schema
      .properties as Record<string, { type: string; enum?: unknown[] }>;
    const names = Object.keys(props).filter(
      (n) => !["full_name", "email", "old_password", "new_password"].includes(n),
    );
    expect(names.sort()).toEqual(USER_SETTINGS.map((s) => s.name).sort());
    for (const s of USER_SETTINGS) {
      expect(props[s.name]!.type).toBe(
        { bool: "boolean", int: "integer", string: "string" }[s.kind],
      );
      expect(props[s.name]!.enum).toEqual(s.choices ? [...s.choices] : undefined);
    }
  });
});

describe("PATCH /settings: validation", () => {
  it.each([
    [
      { color_scheme: 100 },
      "Invalid color_scheme: Value error, Not in the list of possible values",
    ],
    [{ emojiset: "apple" }, "Invalid emojiset: Value error, Not in the list of possible values"],
    [
      { web_home_view: "stream" },
      "Invalid web_home_view: Value error, Not in the list of possible values",
    ],
    // Feature level 454 renamed the value to "recent".
    [
      { web_home_view: "recent_topics" },
      "Invalid web_home_view: Value error, Not in the list of possible values",
    ],
    [{ web_animate_image_previews: "sometimes" }, "Invalid web_animate_image_previews"],
    [
      { email_address_visibility: 6 },
      "Invalid email_address_visibility: Value error, Not in the list of possible values",
    ],
    [
      { timezone: "Mars/Olympus_Mons" },
      "Invalid timezone: Value error, Not a recognized time zone",
    ],
    [{ default_language: "xx" }, "Invalid default_language"],
    [{ notification_sound: "invalid" }, "Invalid notification sound 'invalid'"],
    [
      { email_notifications_batching_period_seconds: 0 },
      "Invalid email batching period: 0 seconds",
    ],
    [
      { email_notifications_batching_period_seconds: 7 * 86400 + 1 },
      "Invalid email batching period: 604801 seconds",
    ],
    [{ twenty_four_hour_time: 5 }, "twenty_four_hour_time is not a boolean"],
    [{ twenty_four_hour_time: "yes" }, "twenty_four_hour_time is not valid JSON"],
    [{ web_font_size_px: true }, "web_font_size_px is not an integer"],
    [{ web_font_size_px: 99999999999 }, "Invalid web_font_size_px"],
  ])("%j → %s", async (body, msg) => {
    await expectError(patch("hamlet", body), 400, msg);
  });

  it("checks the time zone before the language, and changes nothing when one value is refused", async () => {
    await expectError(
      patch("hamlet", { timezone: "Nowhere/Land", default_language: "xx", enter_sends: true }),
      400,
      "Invalid timezone: Value error, Not a recognized time zone",
    );
    const user = await server.db.userProfile.findUniqueOrThrow({ where: { id: id("hamlet") } });
    expect(user.enterSends).toBe(false);
  });

  it("refuses bots", async () => {
    await expectError(
      patch("default-bot", { enter_sends: true }),
      400,
      "This endpoint does not accept bot requests.",
    );
  });

  it("answers an email change with Zulip's text for an unavailable change", async () => {
    await expectError(
      patch("hamlet", { email: "new-hamlet@zulip.com" }),
      400,
      "Email address changes are disabled in this organization.",
    );
    // The same address (after stripping) is no change.
    await expectSuccess(patch("hamlet", { email: ` ${server.creds.users.hamlet!.email} ` }));
  });
});

describe("PATCH /settings: events and register", () => {
  it("sends user_settings, with language_name, and register shows the new values", async () => {
    const modern = await queueOf("othello", {
      event_types: ["user_settings", "update_display_settings", "update_global_notifications"],
      client_capabilities: { user_settings_object: true },
    });
    await expectSuccess(patch("othello", { default_language: "de", color_scheme: 2 }));
    const events = await modern();
    expect(events).toContainEqual({
      type: "user_settings",
      op: "update",
      property: "default_language",
      value: "de",
      language_name: "Deutsch",
    });
    expect(events).toContainEqual({
      type: "user_settings",
      op: "update",
      property: "color_scheme",
      value: 2,
    });
    const state = await register("othello", {
      fetch_event_types: ["user_settings"],
      client_capabilities: { user_settings_object: true },
    });
    const settings = state.user_settings as Record<string, unknown>;
    expect(settings).toMatchObject({ default_language: "de", color_scheme: 2, emojiset: "google" });
    expect(Object.keys(settings).sort()).toEqual(
      [
        ...USER_SETTINGS.map((s) => s.name),
        "emojiset_choices",
        "available_notification_sounds",
      ].sort(),
    );
    expect(state).not.toHaveProperty("color_scheme");
  });

  it("sends no legacy settings event to any queue (feature level 439), and keeps the legacy register copies", async () => {
    const legacy = await queueOf("cordelia", {
      event_types: ["user_settings", "update_display_settings", "update_global_notifications"],
    });
    const everything = await queueOf("cordelia", {});
    await expectSuccess(
      patch("cordelia", {
        enable_sounds: false,
        high_contrast_mode: true,
        send_read_receipts: false,
      }),
    );
    for (const events of [await legacy(), await everything()]) {
      expect(events.map((e) => e.type)).toEqual([
        "user_settings",
        "user_settings",
        "user_settings",
      ]);
      expect(events.map((e) => e.property)).toEqual(
        expect.arrayContaining(["enable_sounds", "high_contrast_mode", "send_read_receipts"]),
      );
    }
    // Register without user_settings_object: the legacy top-level copies.
    const state = await register("cordelia", {
      fetch_event_types: ["update_display_settings", "update_global_notifications"],
    });
    expect(state).toMatchObject({ high_contrast_mode: true, enable_sounds: false });
    expect(state.emojiset_choices).toContainEqual({ key: "google", text: "Google" });
    expect(state.available_notification_sounds).toContain("zulip");
    expect(state).not.toHaveProperty("send_read_receipts");
  });

  it('web_home_view: the recent conversations view is "recent" (feature level 454), stored values migrated', async () => {
    const next = await queueOf("prospero", { event_types: ["user_settings"] });
    await expectSuccess(patch("prospero", { web_home_view: "recent" }));
    expect(await next()).toEqual([
      { type: "user_settings", op: "update", property: "web_home_view", value: "recent" },
    ]);
    const state = await register("prospero", { fetch_event_types: ["user_settings"] });
    expect((state.user_settings as Record<string, unknown>).web_home_view).toBe("recent");
    await expectSuccess(patch("prospero", { web_home_view: "inbox" }));
    // A value stored before level 454 becomes "recent" through the migration's SQL.
    await server.db.userProfile.update({
      where: { id: id("prospero") },
      data: { webHomeView: "recent_topics" },
    });
    const sql = readFileSync(
      new URL(
        "../../prisma/migrations/20261129063700_web_home_view_recent/migration.sql",
        import.meta.url,
      ),
      "utf8",
    );
    const statements = sql.replace(/--.*$/gm, "").split(";");
    for (const statement of statements.map((t) => t.trim()))
      if (statement) await server.db.$executeRawUnsafe(statement);
    const user = await server.db.userProfile.findUniqueOrThrow({ where: { id: id("prospero") } });
    expect(user.webHomeView).toBe("recent");
    await expectSuccess(patch("prospero", { web_home_view: "inbox" }));
  });

  it("web_inbox_show_channel_folders (feature level 431): PATCH /settings, its event, register and the organization default", async () => {
    const own = await queueOf("prospero", { event_types: ["user_settings"] });
    await expectSuccess(patch("prospero", { web_inbox_show_channel_folders: false }));
    expect(await own()).toEqual([
      {
        type: "user_settings",
        op: "update",
        property: "web_inbox_show_channel_folders",
        value: false,
      },
    ]);
    const state = await register("prospero", {
      fetch_event_types: ["user_settings", "realm_user_settings_defaults"],
    });
    expect((state.user_settings as Record<string, unknown>).web_inbox_show_channel_folders).toBe(
      false,
    );
    expect(state.realm_user_settings_defaults).toMatchObject({
      web_inbox_show_channel_folders: true,
    });
    const admin = await queueOf("iago", { event_types: ["realm_user_settings_defaults"] });
    await expectSuccess(
      server.as("iago").PATCH("/realm/user_settings_defaults", {
        body: { web_inbox_show_channel_folders: false },
      }),
    );
    expect(await admin()).toEqual([
      {
        type: "realm_user_settings_defaults",
        op: "update",
        property: "web_inbox_show_channel_folders",
        value: false,
      },
    ]);
    await expectSuccess(
      server.as("iago").PATCH("/realm/user_settings_defaults", {
        body: { web_inbox_show_channel_folders: true },
      }),
    );
    await expectSuccess(patch("prospero", { web_inbox_show_channel_folders: true }));
  });

  it("sends nothing for a value that does not change", async () => {
    const next = await queueOf("iago", { event_types: ["user_settings"] });
    await expectSuccess(patch("iago", { enter_sends: false, emojiset: "google" }));
    expect(await next()).toEqual([]);
  });

  it("tells everyone of a time zone change, and the user by user_settings alone", async () => {
    const own = await queueOf("aaron", {
      event_types: ["user_settings", "update_display_settings", "realm_user"],
    });
    const other = await queueOf("iago", { event_types: ["realm_user"] });
    await expectSuccess(patch("aaron", { timezone: "Asia/Kolkata" }));
    const person = {
      email: server.creds.users.aaron!.email,
      user_id: id("aaron"),
      timezone: "Asia/Kolkata",
    };
    expect(await other()).toContainEqual({ type: "realm_user", op: "update", person });
    expect(await own()).toEqual([
      { type: "user_settings", op: "update", property: "timezone", value: "Asia/Kolkata" },
      { type: "realm_user", op: "update", person },
    ]);
  });

  it("turning draft synchronization off deletes the drafts without events", async () => {
    await expectSuccess(
      server.as("prospero").POST("/drafts", {
        body: { drafts: [{ type: "", to: [], topic: "", content: "kept locally" }] },
      }),
    );
    const next = await queueOf("prospero", { event_types: ["drafts", "user_settings"] });
    await expectSuccess(patch("prospero", { enable_drafts_synchronization: false }));
    expect(await server.db.draft.count({ where: { userProfileId: id("prospero") } })).toBe(0);
    expect((await next()).map((e) => e.type)).toEqual(["user_settings"]);
    await expectSuccess(patch("prospero", { enable_drafts_synchronization: true }));
  });

  it("email_address_visibility: the real address to those who may now see it, null to those who no longer may", async () => {
    const guest = await queueOf("polonius", { event_types: ["realm_user"] });
    const admin = await queueOf("iago", { event_types: ["realm_user"] });
    await expectSuccess(patch("shiva", { email_address_visibility: 3 }));
    const guestEvents = await guest();
    expect(guestEvents).toContainEqual({
      type: "realm_user",
      op: "update",
      person: { user_id: id("shiva"), delivery_email: null },
    });
    const newEmail = guestEvents.find(
      (e) => (e.person as Record<string, unknown>).new_email !== undefined,
    );
    expect((newEmail!.person as Record<string, unknown>).new_email).toMatch(/^user\d+@/);
    // The administrator could see it before and still can: no delivery_email event.
    expect(
      (await admin()).filter(
        (e) => (e.person as Record<string, unknown>).delivery_email !== undefined,
      ),
    ).toEqual([]);
  });
});

describe("PATCH /settings: name and password", () => {
  it("changes the name, with a realm_user event to everyone, and applies Zulip's name rules", async () => {
    const next = await queueOf("desdemona", { event_types: ["realm_user"] });
    await expectSuccess(patch("othello", { full_name: "  Othello, the Moor  " }));
    expect(await next()).toContainEqual({
      type: "realm_user",
      op: "update",
      person: { user_id: id("othello"), full_name: "Othello, the Moor" },
    });
    await expectError(patch("othello", { full_name: "x".repeat(101) }), 400, "Name too long!");
    await expectError(
      patch("othello", { full_name: "Opheli*" }),
      400,
      "Invalid characters in name!",
    );
  });

  it("ignores a name change the organization forbids, except from an administrator", async () => {
    const realmId = server.creds.realm.id;
    await server.db.realm.update({ where: { id: realmId }, data: { nameChangesDisabled: true } });
    try {
      await expectSuccess(patch("cordelia", { full_name: "Not Cordelia" }));
      await expectSuccess(patch("iago", { full_name: "Iago the Admin" }));
      const names = await server.db.userProfile.findMany({
        where: { id: { in: [id("cordelia"), id("iago")] } },
        orderBy: { id: "asc" },
      });
      expect(names.map((u) => u.fullName)).toContain("Iago the Admin");
      expect(names.map((u) => u.fullName)).not.toContain("Not Cordelia");
    } finally {
      await server.db.realm.update({
        where: { id: realmId },
        data: { nameChangesDisabled: false },
      });
    }
  });

  it("changes the password with the old one, refusing a wrong one and a weak new one", async () => {
    const hamlet = server.creds.users.hamlet!;
    await expectError(
      patch("hamlet", { old_password: "bad_password", new_password: "ignored" }),
      400,
      "Wrong password!",
    );
    await expectError(
      patch("hamlet", { old_password: hamlet.password, new_password: "easy" }),
      400,
      "New password is too weak!",
    );
    await expectSuccess(
      patch("hamlet", { old_password: hamlet.password, new_password: "f657gdGGk9-sonnet" }),
    );
    await expectSuccess(
      server.client().POST("/fetch_api_key", {
        body: { username: hamlet.email, password: "f657gdGGk9-sonnet" },
      }),
    );
  });
});

describe("PATCH /settings: as clients send it", () => {
  it("reads a form body with booleans and integers as JSON text", async () => {
    const cred = server.creds.users.aaron!;
    const response = await fetch(`${server.baseUrl}/api/v1/settings`, {
      method: "PATCH",
      headers: {
        Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "enter_sends=true&web_font_size_px=18&emojiset=text&left_side_userlist=true&web_inbox_show_channel_folders=false",
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: "success", msg: "" });
    const state = await register("aaron", {
      fetch_event_types: ["user_settings"],
      client_capabilities: { user_settings_object: true },
    });
    expect(state.user_settings).toMatchObject({
      enter_sends: true,
      web_font_size_px: 18,
      emojiset: "text",
      left_side_userlist: true,
      // Feature level 431; zulip-flutter reads it (default true until its server-12 TODO).
      web_inbox_show_channel_folders: false,
    });
  });
});

describe("PATCH /settings/notifications and /settings/display (Zulip's deprecated aliases)", () => {
  const aliases = [
    ["/settings/notifications", "settings_notifications", "notification"],
    ["/settings/display", "settings_display", "display"],
  ] as const;

  it.each(aliases)("%s takes exactly its legacy group of the settings table", (_p, key, group) => {
    const doc = parse(readFileSync("openapi/paths/settings.yaml", "utf8"));
    const props = doc[key].patch.requestBody.content["application/x-www-form-urlencoded"].schema
      .properties as Record<string, unknown>;
    const names = USER_SETTINGS.filter((s) => s.legacy === group).map((s) => s.name);
    expect(Object.keys(props).sort()).toEqual(names.sort());
  });

  it("changes a notification setting with its events, and ignores a display setting", async () => {
    const events = await queueOf("prospero", { event_types: ["user_settings"] });
    const response = await fetch(`${server.baseUrl}/api/v1/settings/notifications`, {
      method: "PATCH",
      headers: {
        Authorization:
          "Basic " +
          Buffer.from(
            `${server.creds.users.prospero!.email}:${server.creds.users.prospero!.api_key}`,
          ).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "enable_sounds=false&notification_sound=ding&enter_sends=true",
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      result: "success",
      msg: "",
      ignored_parameters_unsupported: ["enter_sends"],
    });
    expect(await events()).toEqual([
      { type: "user_settings", op: "update", property: "notification_sound", value: "ding" },
      { type: "user_settings", op: "update", property: "enable_sounds", value: false },
    ]);
    const state = await register("prospero", { fetch_event_types: ["user_settings"] });
    expect(state.user_settings).toMatchObject({
      enable_sounds: false,
      notification_sound: "ding",
      enter_sends: false,
    });
  });

  it("changes display settings with PATCH's checks and texts, and refuses bots", async () => {
    await expectSuccess(
      server
        .as("prospero")
        .PATCH("/settings/display", { body: { color_scheme: 3, emojiset: "text" } }),
    );
    const state = await register("prospero", { fetch_event_types: ["user_settings"] });
    expect(state.user_settings).toMatchObject({ color_scheme: 3, emojiset: "text" });
    await expectError(
      server.as("prospero").PATCH("/settings/display", { body: { default_language: "xx" } }),
      400,
      "Invalid default_language",
    );
    await expectError(
      server.as("prospero").PATCH("/settings/notifications", {
        body: { email_notifications_batching_period_seconds: 0 },
      }),
      400,
      "Invalid email batching period: 0 seconds",
    );
    await expectError(
      server.as("default-bot").PATCH("/settings/display", { body: { color_scheme: 2 } }),
      400,
      "This endpoint does not accept bot requests.",
    );
  });
});
