/**
 * POST and DELETE /users/me/muted_users/{muted_user_id} (zerver/tests/test_muted_users.py):
 * Zulip's errors, bots and deactivated users, the `muted_users` and `update_message_flags`
 * events, register state, existing unread messages marked read in a fixed number of statements,
 * and new messages from a muted user arriving read and left out of unread_msgs.
 */
import { describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const userId = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const mute = (as: string, id: number) =>
  server.as(as).POST("/users/me/muted_users/{muted_user_id}", {
    params: { path: { muted_user_id: id } },
  });
const unmute = (as: string, id: number) =>
  server.as(as).DELETE("/users/me/muted_users/{muted_user_id}", {
    params: { path: { muted_user_id: id } },
  });
const registered = async (as: string, types: string[]) =>
  (await expectSuccess(
    server.as(as).POST("/register", { body: { fetch_event_types: types } }),
  )) as Record<string, any>;
const dm = async (from: string, to: string, content: string) =>
  (
    await expectSuccess(
      server.as(from).POST("/messages", {
        body: { type: "direct", to: [userId(to)], content },
      }),
    )
  ).id;
const toVerona = async (from: string, content: string) =>
  (
    await expectSuccess(
      server.as(from).POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "mutes", content },
      }),
    )
  ).id;
const flagsOf = async (as: string, id: number) =>
  (
    await expectSuccess(
      server.as(as).GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    )
  ).message.flags;
const unreadIds = (state: Record<string, any>) => [
  ...state.unread_msgs.pms.flatMap((p: any) => p.unread_message_ids),
  ...state.unread_msgs.streams.flatMap((s: any) => s.unread_message_ids),
  ...state.unread_msgs.huddles.flatMap((h: any) => h.unread_message_ids),
];

describe("POST /users/me/muted_users/{muted_user_id}", () => {
  it("refuses oneself, an unknown user and a user already muted, with Zulip's texts", async () => {
    await expectError(mute("hamlet", userId("hamlet")), 400, "Cannot mute self");
    await expectError(mute("hamlet", 999999), 400, "No such user");
    await expectSuccess(mute("hamlet", userId("prospero")));
    await expectError(mute("hamlet", userId("prospero")), 400, "User already muted");
    await expectSuccess(unmute("hamlet", userId("prospero")));
    await expectError(unmute("hamlet", userId("prospero")), 400, "User is not muted");
    await expectError(unmute("hamlet", 999999), 400, "No such user");
    // Unmuting oneself finds the user, who is not muted.
    await expectError(unmute("hamlet", userId("hamlet")), 400, "User is not muted");
  });

  it("mutes bots and deactivated users (since feature level 188)", async () => {
    await expectSuccess(mute("cordelia", userId("default-bot")));
    await server.db.userProfile.update({
      where: { id: userId("aaron") },
      data: { isActive: false },
    });
    try {
      await expectSuccess(mute("cordelia", userId("aaron")));
      await expectSuccess(unmute("cordelia", userId("aaron")));
    } finally {
      await server.db.userProfile.update({
        where: { id: userId("aaron") },
        data: { isActive: true },
      });
    }
    await expectSuccess(unmute("cordelia", userId("default-bot")));
  });

  it("marks the muted user's unread messages read, sends update_message_flags then muted_users, and fills register state", async () => {
    const a = await dm("othello", "iago", "one");
    const b = await toVerona("othello", "two");
    const fromOther = await dm("cordelia", "iago", "three");
    // Already read: not in the event.
    const c = await dm("othello", "iago", "four");
    await server.db
      .$executeRaw`UPDATE user_message SET flags = flags | 1 WHERE message_id = ${c} AND user_profile_id = ${userId("iago")}`;
    const before = unreadIds(await registered("iago", ["message", "update_message_flags"]));
    expect(before).toEqual(expect.arrayContaining([a, b, fromOther]));
    // Every message othello sent iago that iago has not read (the development data has some too).
    const othellosUnread = (
      await server.db.$queryRaw<{ id: number }[]>`
        SELECT um.message_id AS id FROM user_message um JOIN message m ON m.id = um.message_id
        WHERE um.user_profile_id = ${userId("iago")} AND m.sender_id = ${userId("othello")} AND (um.flags & 1) = 0
        ORDER BY 1`
    ).map((r) => r.id);
    expect(othellosUnread).toEqual(expect.arrayContaining([a, b]));
    expect(othellosUnread).not.toContain(c);
    const events = await queueOf(server, "iago", ["muted_users", "update_message_flags"]);

    await expectSuccess(mute("iago", userId("othello")));

    const got = await events();
    expect(got).toEqual([
      {
        type: "update_message_flags",
        op: "add",
        operation: "add",
        flag: "read",
        messages: othellosUnread,
        all: false,
      },
      {
        type: "muted_users",
        muted_users: [{ id: userId("othello"), timestamp: expect.any(Number) }],
      },
    ]);
    expect(await flagsOf("iago", a)).toContain("read");
    expect(await flagsOf("iago", fromOther)).not.toContain("read");
    // Only iago's rows changed.
    expect(await flagsOf("hamlet", b)).not.toContain("read");
    const state = await registered("iago", ["muted_users", "message", "update_message_flags"]);
    expect(state.muted_users).toEqual([{ id: userId("othello"), timestamp: expect.any(Number) }]);
    expect(unreadIds(state)).toContain(fromOther);
    expect(unreadIds(state)).not.toContain(a);

    // New messages from the muted user arrive read, in the database and in the message event,
    // and are not unread; other recipients are unaffected.
    const messages = await queueOf(server, "iago", ["message"]);
    const later = await toVerona("othello", "five");
    const laterDm = await dm("othello", "iago", "six");
    const flagsById = new Map(
      (await messages()).map((e: any) => [e.message.id as number, e.flags as string[]]),
    );
    expect(flagsById.get(later)).toEqual(["read"]);
    expect(flagsById.get(laterDm)).toEqual(["read"]);
    expect(await flagsOf("iago", laterDm)).toEqual(["read"]);
    expect(await flagsOf("hamlet", later)).toEqual([]);
    expect(unreadIds(await registered("iago", ["message", "update_message_flags"]))).not.toContain(
      laterDm,
    );
    // Marked unread again by hand, it counts: Zulip's unread state has no muted-sender filter.
    await expectSuccess(
      server.as("iago").POST("/messages/flags", {
        body: { op: "remove", flag: "read", messages: [laterDm] },
      }),
    );
    expect(unreadIds(await registered("iago", ["message", "update_message_flags"]))).toContain(
      laterDm,
    );

    // Unmuting: a muted_users event with the rest; messages stay read, new ones are unread.
    const unmuteEvents = await queueOf(server, "iago", ["muted_users", "update_message_flags"]);
    await expectSuccess(unmute("iago", userId("othello")));
    expect(await unmuteEvents()).toEqual([{ type: "muted_users", muted_users: [] }]);
    expect(await flagsOf("iago", a)).toContain("read");
    const afterUnmute = await dm("othello", "iago", "seven");
    expect(await flagsOf("iago", afterUnmute)).toEqual([]);
  });

  it("sends no update_message_flags when nothing was unread", async () => {
    const events = await queueOf(server, "shiva", ["muted_users", "update_message_flags"]);
    await expectSuccess(mute("shiva", userId("prospero")));
    expect((await events()).map((e) => e.type)).toEqual(["muted_users"]);
  });

  it("marks any number of unread messages read in the same number of statements", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    const statementsOfMute = async (muter: string, muted: string, messages: number) => {
      for (let i = 0; i < messages; i++) await dm(muted, muter, `unread ${i}`);
      seen.length = 0;
      await expectSuccess(mute(muter, userId(muted)));
      return seen.find((i) => i.operationId === "mute-user")!.statements;
    };
    try {
      // Warm the caches (authentication) for both muters first.
      await expectSuccess(server.as("desdemona").GET("/users/me"));
      await expectSuccess(server.as("polonius").GET("/users/me"));
      const one = await statementsOfMute("desdemona", "aaron", 1);
      const many = await statementsOfMute("polonius", "prospero", 12);
      if (process.env.SHOW_STATEMENTS) console.log("mute-user", one, many);
      expect(many).toBe(one);
      expect(many).toBeLessThanOrEqual(6);
    } finally {
      server.deps.observe = undefined;
    }
  });

  it("takes a path id from a form request, as python-zulip-api and zulip-js send it", async () => {
    const { email, api_key } = server.creds.users.othello!;
    const auth = `Basic ${Buffer.from(`${email}:${api_key}`).toString("base64")}`;
    const call = (method: string) =>
      fetch(`${server.baseUrl}/api/v1/users/me/muted_users/${userId("cordelia")}`, {
        method,
        headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
        body: "",
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    expect(await call("POST")).toMatchObject({ status: 200, body: { result: "success", msg: "" } });
    expect(await call("POST")).toMatchObject({
      status: 400,
      body: { result: "error", msg: "User already muted", code: "BAD_REQUEST" },
    });
    expect(await call("DELETE")).toMatchObject({ status: 200, body: { result: "success" } });
  });
});
