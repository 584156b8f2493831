/**
 * Restricted user access (can_access_all_users_group = role:members): a guest sees only the users
 * they share a conversation with; the others are Zulip's "Unknown user", or left out with the
 * user_list_incomplete capability; GET /users/{id} refuses them.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { openQueue } from "../helpers/builders.ts";
import { realClient } from "../helpers/real-client.ts";

const server = useTestServer();

const groupId = async (name: string) =>
  (
    await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId: server.creds.realm.id, name },
    })
  ).id;

const id = (name: string) => server.creds.users[name]!.user_id;

/** The guest's channels' subscribers: whom the guest may access besides themselves and bots. */
async function sharedUserIds(): Promise<Set<number>> {
  const rows = await server.db.$queryRaw<{ id: number }[]>`
    SELECT DISTINCT t.user_profile_id AS id FROM subscription v JOIN subscription t ON t.recipient_id = v.recipient_id
    WHERE v.user_profile_id = ${id("polonius")}::int AND v.active AND t.active AND t.is_user_active`;
  return new Set(rows.map((r) => r.id));
}

describe("can_access_all_users_group", () => {
  beforeAll(async () => {
    // The guest leaves every channel, then shares one with Hamlet only.
    const { subscriptions } = await expectSuccess(
      server.as("polonius").GET("/users/me/subscriptions", {}),
    );
    await expectSuccess(
      server.as("polonius").DELETE("/users/me/subscriptions", {
        body: { subscriptions: subscriptions.map((s) => s.name) },
      }),
    );
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: {
          subscriptions: [{ name: "guest room" }],
          principals: [id("polonius"), id("hamlet")],
        },
      }),
    );
    // Form encoding with a JSON object, as real clients send it.
    const members = await groupId("role:members");
    expect(
      await realClient(server, "iago", "PATCH", "/realm", {
        can_access_all_users_group: { new: members },
      }),
    ).toMatchObject({
      status: 200,
      body: { result: "success", can_access_all_users_group: members },
    });
  });

  it("accepts only role:everyone and role:members, and register reports it", async () => {
    const moderators = await groupId("role:moderators");
    await expectError(
      server.as("iago").PATCH("/realm", {
        body: { can_access_all_users_group: { new: moderators } },
      }),
      400,
      "'can_access_all_users_group' setting cannot be set to 'role:moderators' group.",
    );
    await expectError(
      server.as("iago").PATCH("/realm", {
        body: {
          can_access_all_users_group: {
            new: { direct_members: [id("hamlet")], direct_subgroups: [] },
          },
        },
      }),
      400,
      "'can_access_all_users_group' must be a system user group.",
    );
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    );
    expect(state.realm_can_access_all_users_group).toBe(await groupId("role:members"));
  });

  it("shows a guest the users they share a channel with, the others as Unknown user", async () => {
    const shared = await sharedUserIds();
    const { members } = await expectSuccess(server.as("polonius").GET("/users", {}));
    const hidden = members.filter((m) => m.full_name === "Unknown user");
    expect(hidden.length).toBeGreaterThan(0);
    for (const m of members) {
      const accessible = m.is_bot || m.user_id === id("polonius") || shared.has(m.user_id);
      expect(m.full_name === "Unknown user", String(m.user_id)).toBe(!accessible);
    }
    const unknown = hidden[0]!;
    expect(unknown).toMatchObject({
      user_id: unknown.user_id,
      email: expect.stringMatching(new RegExp(`^user${unknown.user_id}@`)),
      is_bot: false,
      role: 400,
      is_active: true,
      delivery_email: null,
      date_joined: "1970-01-01T00:00:00+00:00",
      avatar_url: "/static/images/unknown-user-avatar.png",
      avatar_version: 1,
      timezone: "",
    });
    // A member still sees everyone.
    const all = await expectSuccess(server.as("hamlet").GET("/users", {}));
    expect(all.members.some((m) => m.full_name === "Unknown user")).toBe(false);
  });

  it("refuses GET /users/{id} of an inaccessible user", async () => {
    const { members } = await expectSuccess(server.as("polonius").GET("/users", {}));
    const unknown = members.find((m) => m.full_name === "Unknown user")!;
    await expectError(
      server.as("polonius").GET("/users/{email}", {
        params: { path: { email: String(unknown.user_id) } },
      }),
      400,
      "Insufficient permission",
    );
    await expectSuccess(
      server.as("hamlet").GET("/users/{email}", {
        params: { path: { email: String(unknown.user_id) } },
      }),
    );
  });

  it("gives register Unknown user placeholders, or leaves them out with user_list_incomplete", async () => {
    const register = (incomplete: boolean) =>
      expectSuccess(
        server.as("polonius").POST("/register", {
          body: {
            fetch_event_types: ["realm_user"],
            client_capabilities: { user_list_incomplete: incomplete },
          },
        }),
      );
    const full = await register(false);
    const placeholders = full.realm_users!.filter((u) => u.full_name === "Unknown user");
    expect(placeholders.length).toBeGreaterThan(0);
    const incomplete = await register(true);
    const ids = new Set(incomplete.realm_users!.map((u) => u.user_id));
    for (const p of placeholders) expect(ids.has(p.user_id)).toBe(false);
    expect(incomplete.realm_users!.some((u) => u.full_name === "Unknown user")).toBe(false);
    expect(incomplete.realm_users!.length).toBe(full.realm_users!.length - placeholders.length);
  });

  it("shows the messages of a sender the guest no longer shares anything with as Unknown user", async () => {
    // Othello joins the guest's channel and writes there, then leaves it.
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name: "guest room" }], principals: [id("othello")] },
      }),
    );
    const { id: messageId } = await expectSuccess(
      server.as("othello").POST("/messages", {
        body: { type: "stream", to: "guest room", topic: "hello", content: "from Othello" },
      }),
    );
    const fetch = async (as: string) => {
      const { messages } = await expectSuccess(
        server.as(as).GET("/messages", {
          params: {
            query: {
              anchor: messageId,
              num_before: 0,
              num_after: 0,
              narrow: [{ operator: "channel", operand: "guest room" }],
            },
          },
        }),
      );
      const { message } = await expectSuccess(
        server.as(as).GET("/messages/{message_id}", {
          params: { path: { message_id: messageId } },
        }),
      );
      return [messages[0]!, message];
    };
    for (const m of await fetch("polonius"))
      expect(m).toMatchObject({
        sender_id: id("othello"),
        sender_full_name: "Othello, the Moor of Venice",
      });
    await expectSuccess(
      server.as("iago").DELETE("/users/me/subscriptions", {
        body: { subscriptions: ["guest room"], principals: [id("othello")] },
      }),
    );
    for (const m of await fetch("polonius"))
      expect(m).toMatchObject({
        sender_id: id("othello"),
        sender_full_name: "Unknown user",
        sender_email: expect.stringMatching(new RegExp(`^user${id("othello")}@`)),
        avatar_url: "/static/images/unknown-user-avatar.png",
        content: "<p>from Othello</p>",
      });
    // Hamlet, a member, still sees who wrote it.
    for (const m of await fetch("hamlet"))
      expect(m).toMatchObject({ sender_full_name: "Othello, the Moor of Venice" });
  });

  it("sends the guest realm_user add as they come to share a channel, and remove as they stop", async () => {
    const queue = await openQueue(server.as("polonius"), { event_types: ["realm_user"] });
    const member = await openQueue(server.as("hamlet"), { event_types: ["realm_user"] });
    // Aaron, whom the guest cannot access, joins the guest's channel.
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name: "guest room" }], principals: [id("aaron")] },
      }),
    );
    const added = await queue.nextEvents();
    expect(added).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "add",
        person: expect.objectContaining({
          user_id: id("aaron"),
          full_name: "aaron",
          is_active: true,
        }),
      }),
    ]);
    // Aaron leaves it: he is nobody the guest shares anything with any more.
    await expectSuccess(
      server.as("iago").DELETE("/users/me/subscriptions", {
        body: { subscriptions: ["guest room"], principals: [id("aaron")] },
      }),
    );
    expect(await queue.nextEvents()).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "remove",
        person: { user_id: id("aaron"), full_name: "Unknown user" },
      }),
    ]);
    // The guest subscribed to a channel with Prospero (a form body, as real clients send it),
    // then leaving it.
    const name = `shared-${Date.now()}`;
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name }], principals: [id("prospero")] },
      }),
    );
    const joined = await realClient(server, "iago", "POST", "/users/me/subscriptions", {
      subscriptions: [{ name }],
      principals: [id("polonius")],
    });
    expect(joined.status).toBe(200);
    expect(
      (await queue.nextEvents()).map((e) => [
        (e as { op?: string }).op,
        (e as { person?: { user_id: number } }).person?.user_id,
      ]),
    ).toEqual([["add", id("prospero")]]);
    await expectSuccess(
      server.as("polonius").DELETE("/users/me/subscriptions", { body: { subscriptions: [name] } }),
    );
    expect(
      (await queue.nextEvents()).map((e) => [
        (e as { op?: string }).op,
        (e as { person?: { user_id: number } }).person?.user_id,
      ]),
    ).toEqual([["remove", id("prospero")]]);
    // A member, who accesses everyone, hears of none of it.
    expect(await member.nextEvents()).toEqual([]);
  });

  it("tells a guest only that somebody joined, and a member who", async () => {
    const guest = await openQueue(server.as("polonius"), { event_types: ["realm_user"] });
    const member = await openQueue(server.as("hamlet"), { event_types: ["realm_user"] });
    // can_create_users is granted by the server's administrators (Zulip's management command).
    await server.db.userProfile.update({
      where: { id: id("desdemona") },
      data: { canCreateUsers: true },
    });
    const { user_id } = await expectSuccess(
      server.as("desdemona").POST("/users", {
        body: {
          email: "newcomer@zulip.com",
          password: "a long password 12345",
          full_name: "Newcomer",
        },
      }),
    );
    expect((await guest.nextEvents()).filter((e) => e.type === "realm_user")).toEqual([
      expect.objectContaining({
        op: "add",
        inaccessible_user: true,
        person: expect.objectContaining({ user_id, full_name: "Unknown user" }),
      }),
    ]);
    expect((await member.nextEvents()).filter((e) => e.type === "realm_user")).toEqual([
      expect.objectContaining({
        op: "add",
        person: expect.objectContaining({ user_id, full_name: "Newcomer" }),
      }),
    ]);
  });

  it("lets the guest access a user once they share a channel", async () => {
    const { members } = await expectSuccess(server.as("polonius").GET("/users", {}));
    const unknown = members.find((m) => m.full_name === "Unknown user" && !m.is_bot)!;
    const target = Object.entries(server.creds.users).find(
      ([, c]) => c.user_id === unknown.user_id,
    )?.[0];
    expect(target).toBeDefined();
    const name = `restricted-${Date.now()}`;
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: {
          subscriptions: [{ name }],
          principals: [id("polonius"), unknown.user_id],
        },
      }),
    );
    const { user } = await expectSuccess(
      server.as("polonius").GET("/users/{email}", {
        params: { path: { email: String(unknown.user_id) } },
      }),
    );
    expect(user.full_name).toBe(server.creds.users[target!]!.full_name);
  });
});
