/**
 * PATCH /realm/user_settings_defaults (zerver/tests/test_realm.py RealmUserDefaultTest): the
 * organization's defaults for new users' settings, administrators only; register's
 * `realm_user_settings_defaults`, the `realm_user_settings_defaults` event, and a user created
 * afterwards starting with the defaults.
 */
import { describe, expect, it } from "vitest";
import { asUser, ofType, openQueue } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { realClient } from "../helpers/real-client.ts";
import { useTestServer } from "../helpers/server.ts";
import { untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => server.creds.users[name]!.user_id;
const patch = (as: string, body: Record<string, unknown>) =>
  server.as(as).PATCH("/realm/user_settings_defaults", { body: untyped(body) });
const stored = (realmId: number) =>
  server.db.realmUserDefault.findUniqueOrThrow({ where: { realmId } });
const registerDefaults = async (as: string) =>
  (
    await expectSuccess(
      server
        .as(as)
        .POST("/register", { body: { fetch_event_types: ["realm_user_settings_defaults"] } }),
    )
  ).realm_user_settings_defaults as Record<string, unknown>;

describe("PATCH /realm/user_settings_defaults", () => {
  it("stores a default, tells everyone, and register answers it", async () => {
    const queue = await openQueue(asUser(server, "hamlet"), {
      event_types: ["realm_user_settings_defaults"],
    });
    await expectSuccess(
      server
        .as("iago")
        .PATCH("/realm/user_settings_defaults", { body: { color_scheme: 3, emojiset: "text" } }),
    );
    const events = ofType(await queue.nextEvents(), "realm_user_settings_defaults");
    expect(events.map(({ property, value, op }) => ({ op, property, value }))).toEqual([
      { op: "update", property: "color_scheme", value: 3 },
      { op: "update", property: "emojiset", value: "text" },
    ]);
    const state = await registerDefaults("othello");
    expect(state).toMatchObject({ color_scheme: 3, emojiset: "text" });
    // The settings without an organization default keep Zulip's static values, and the choices.
    expect(state).toMatchObject({ default_language: "en", enable_login_emails: true });
    expect(state).toHaveProperty("emojiset_choices");
    expect(state).not.toHaveProperty("timezone");
  });

  it("sends nothing for a value that does not change", async () => {
    const queue = await openQueue(asUser(server, "hamlet"), {
      event_types: ["realm_user_settings_defaults"],
    });
    await expectSuccess(patch("iago", { color_scheme: 3 }));
    expect(await queue.nextEvents()).toEqual([]);
  });

  it("takes JSON booleans and numbers in a form body, and ignores what it does not support", async () => {
    const { status, body } = await realClient(
      server,
      "iago",
      "PATCH",
      "/realm/user_settings_defaults",
      {
        left_side_userlist: true,
        web_font_size_px: 18,
        web_home_view: "recent",
        notification_sound: "ding",
        default_language: "de",
      },
    );
    expect(status).toBe(200);
    expect(body.ignored_parameters_unsupported).toEqual(["default_language"]);
    const realmId = (await server.db.userProfile.findUniqueOrThrow({ where: { id: id("iago") } }))
      .realmId;
    expect(await stored(realmId)).toMatchObject({
      leftSideUserlist: true,
      webFontSizePx: 18,
      webHomeView: "recent",
      notificationSound: "ding",
    });
  });

  it("takes zulip-js's parameters in the query string", async () => {
    const { status } = await realClient(
      server,
      "iago",
      "PATCH",
      "/realm/user_settings_defaults",
      { enter_sends: true, user_list_style: 1 },
      { inQuery: true },
    );
    expect(status).toBe(200);
    const state = await registerDefaults("hamlet");
    expect(state).toMatchObject({ enter_sends: true, user_list_style: 1 });
  });

  it("gives a user created afterwards the defaults", async () => {
    await expectSuccess(patch("iago", { twenty_four_hour_time: true, presence_enabled: false }));
    await server.db.userProfile.update({
      where: { id: id("desdemona") },
      data: { canCreateUsers: true },
    });
    const { user_id } = await expectSuccess(
      server.as("desdemona").POST("/users", {
        body: {
          email: "defaults-newcomer@zulip.com",
          password: "a long password 12345",
          full_name: "Defaults Newcomer",
        },
      }),
    );
    const created = await server.db.userProfile.findUniqueOrThrow({ where: { id: user_id } });
    expect(created).toMatchObject({
      twentyFourHourTime: true,
      presenceEnabled: false,
      colorScheme: 3,
      emojiset: "text",
      leftSideUserlist: true,
      enterSends: true,
      // Not an organization default: Zulip's own.
      defaultLanguage: "en",
    });
    // Existing users keep theirs.
    const hamlet = await server.db.userProfile.findUniqueOrThrow({ where: { id: id("hamlet") } });
    expect(hamlet.twentyFourHourTime).toBe(false);
  });

  it("refuses with Zulip's texts, changing nothing", async () => {
    const realmId = (await server.db.userProfile.findUniqueOrThrow({ where: { id: id("iago") } }))
      .realmId;
    const before = await stored(realmId);
    await expectError(
      patch("hamlet", { color_scheme: 1 }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      patch("shiva", { color_scheme: 1 }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      patch("iago", { color_scheme: 7 }),
      400,
      "Invalid color_scheme: Value error, Not in the list of possible values",
    );
    await expectError(
      patch("iago", { notification_sound: "invalid" }),
      400,
      "Invalid notification sound 'invalid'",
    );
    await expectError(
      patch("iago", { email_notifications_batching_period_seconds: 0 }),
      400,
      "Invalid email batching period: 0 seconds",
    );
    await expectError(
      patch("iago", { left_side_userlist: false, email_notifications_batching_period_seconds: -1 }),
      400,
      "Invalid email batching period: -1 seconds",
    );
    await expectError(patch("iago", { enter_sends: 1 }), 400, "enter_sends is not a boolean");
    expect(await stored(realmId)).toEqual(before);
  });
});
