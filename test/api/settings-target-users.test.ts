/**
 * PATCH /settings `target_users` and `skip_if_already_edited` (feature level 444, Zulip's
 * json_change_settings): administrators change other users' settings in bulk, by user and by
 * group, deactivated users included and bots left out; the refusals with Zulip's texts; the
 * events each changed user gets; and the users who chose a setting themselves left alone.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
type Target = { user_ids?: number[]; group_ids?: number[]; skip_if_already_edited: boolean };
const bulk = (as: string, target: Target, settings: Record<string, unknown>) =>
  server.as(as).PATCH("/settings", { body: { target_users: target, ...settings } });
const colorScheme = async (name: string) =>
  (await server.db.userProfile.findUniqueOrThrow({ where: { id: id(name) } })).colorScheme;

describe("PATCH /settings target_users", () => {
  it("refuses with Zulip's texts, changing nothing", async () => {
    const target = { user_ids: [id("hamlet")], skip_if_already_edited: false };
    await expectError(
      bulk("hamlet", target, { color_scheme: 2 }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      bulk("iago", { skip_if_already_edited: false }, { color_scheme: 2 }),
      400,
      "Either user_ids or group_ids must be provided.",
    );
    for (const refused of [
      { timezone: "Asia/Kolkata" },
      { email: "x@zulip.com" },
      { new_password: "new-password-1234" },
      { send_read_receipts: false },
      { presence_enabled: false },
      { email_address_visibility: 4 },
    ])
      await expectError(
        bulk("iago", target, { color_scheme: 2, ...refused }),
        400,
        "Cannot change this setting for other users.",
      );
    await expectError(
      bulk("iago", { group_ids: [999999], skip_if_already_edited: false }, { color_scheme: 2 }),
      400,
      "Invalid user group ID: 999999",
    );
    await expectError(
      bulk("iago", { user_ids: [id("hamlet"), 999999], skip_if_already_edited: false }, {}),
      400,
      "Invalid user ID: 999999",
    );
    expect(await colorScheme("hamlet")).toBe(1);
  });

  it("changes the listed users, each told as for their own change, the caller untouched", async () => {
    const hamlet = await queueOf(server, "hamlet", ["user_settings"], {
      user_settings_object: true,
    });
    const iago = await queueOf(server, "iago", ["user_settings"], { user_settings_object: true });
    await expectSuccess(
      bulk(
        "iago",
        { user_ids: [id("hamlet"), id("othello")], skip_if_already_edited: false },
        { color_scheme: 2, web_home_view: "all_messages", full_name: "Ignored" },
      ),
    );
    expect(await colorScheme("hamlet")).toBe(2);
    expect(await colorScheme("othello")).toBe(2);
    expect(await colorScheme("iago")).toBe(1);
    expect(await hamlet()).toEqual([
      { type: "user_settings", op: "update", property: "color_scheme", value: 2 },
      { type: "user_settings", op: "update", property: "web_home_view", value: "all_messages" },
    ]);
    expect(await iago()).toEqual([]);
    const me = await expectSuccess(server.as("hamlet").GET("/users/me"));
    expect(me.full_name).not.toBe("Ignored");
  });

  it("skips, per setting, the users who changed it themselves", async () => {
    await expectSuccess(server.as("cordelia").PATCH("/settings", { body: { color_scheme: 3 } }));
    const target = { user_ids: [id("cordelia"), id("prospero")], skip_if_already_edited: true };
    await expectSuccess(bulk("iago", target, { color_scheme: 2 }));
    expect(await colorScheme("cordelia")).toBe(3);
    expect(await colorScheme("prospero")).toBe(2);
    // Another administrator's change is not the user's own: skipping does not spare it.
    await expectSuccess(bulk("desdemona", target, { color_scheme: 1 }));
    expect(await colorScheme("prospero")).toBe(1);
    await expectSuccess(
      bulk("iago", { ...target, skip_if_already_edited: false }, { color_scheme: 1 }),
    );
    expect(await colorScheme("cordelia")).toBe(1);
  });

  it("reaches a group's members through subgroups, deactivated users too, never bots", async () => {
    const groups = (await expectSuccess(server.as("iago").GET("/user_groups", {}))).user_groups;
    const members = groups.find((g) => g.name === "role:members")!.id;
    await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: false } });
    const bot = server.creds.bots["default-bot"]!.user_id;
    await expectSuccess(
      bulk(
        "iago",
        { group_ids: [members], user_ids: [bot], skip_if_already_edited: false },
        {
          web_font_size_px: 18,
        },
      ),
    );
    const rows = await server.db.userProfile.findMany({
      where: { realmId: server.creds.realm.id },
      select: { id: true, isBot: true, role: true, webFontSizePx: true },
    });
    const changed = rows.filter((r) => r.webFontSizePx === 18).map((r) => r.id);
    expect(changed).toContain(id("aaron"));
    expect(changed).toContain(id("hamlet"));
    expect(rows.filter((r) => r.isBot).every((r) => r.webFontSizePx !== 18)).toBe(true);
    // Guests are not members: left alone.
    expect(rows.filter((r) => r.role === 600).every((r) => r.webFontSizePx !== 18)).toBe(true);
    await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: true } });
  });

  it("takes a form body with target_users as JSON text", async () => {
    const { email, api_key } = server.creds.users["iago"]!;
    const response = await fetch(`${server.baseUrl}/api/v1/settings`, {
      method: "PATCH",
      headers: {
        Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        target_users: JSON.stringify({ user_ids: [id("hamlet")], skip_if_already_edited: false }),
        color_scheme: "3",
        enter_sends: "true",
      }).toString(),
    });
    expect(response.status).toBe(200);
    expect(await colorScheme("hamlet")).toBe(3);
  });
});
