/**
 * User statuses (zerver/tests/test_user_status.py, reference op 14): POST /users/{user_id}/status
 * for administrators, POST /users/me/status with the legacy `away`, GET /users/{user_id}/status,
 * the `user_status` events and register's `user_status`; and every answer of the emoji check
 * (lib/realm/emoji.ts) for Unicode, custom and Zulip's extra emoji.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doCreateRealm } from "../../server/actions/realm/realm.ts";
import type { RequestInfo } from "../../server/context.ts";
import { Role } from "../../server/lib/users/users.ts";
import { encodeParams } from "../../client/src/index.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;

const setFor = (as: string, userId: number, body: Body<"/users/{user_id}/status", "post">) =>
  server.as(as).POST("/users/{user_id}/status", {
    params: { path: { user_id: userId } },
    body: body,
  });
const setOwn = (as: string, body: Body<"/users/me/status", "post">) =>
  server.as(as).POST("/users/me/status", { body: body });
const getStatus = async (as: string, userId: number) =>
  (
    await expectSuccess(
      server.as(as).GET("/users/{user_id}/status", { params: { path: { user_id: userId } } }),
    )
  ).status;

/** A queue for `as` that receives `types`, and a function reading what it got since. */
async function queueOf(as: string, types: string[]) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", { body: { event_types: types } }),
  );
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events.map(({ id: _id, ...event }) => event);
}

/** Custom emoji rows, as an upload would leave them: an active one, a deactivated one, one still uploading, one of another organization. */
const custom = { active: 0, deactivated: 0, uploading: 0, elsewhere: 0, octopus: 0 };
beforeAll(async () => {
  const realmId = server.creds.realm.id;
  const row = async (name: string, extra: { deactivated?: boolean; fileName?: string | null }) =>
    (
      await server.db.realmEmoji.create({
        data: { realmId, name, fileName: `${name}.png`, ...extra },
      })
    ).id;
  custom.active = await row("green_tick", {});
  custom.deactivated = await row("old_tick", { deactivated: true });
  custom.uploading = await row("half_done", { fileName: null });
  // A custom emoji named like a Unicode one hides it (get_emoji_data looks at custom emoji first).
  custom.octopus = await row("octopus", {});
  const other = await server.db.$transaction((tx) =>
    doCreateRealm(tx, { name: "Elsewhere", stringId: "elsewhere" }),
  );
  custom.elsewhere = (
    await server.db.realmEmoji.create({
      data: { realmId: other.id, name: "green_tick", fileName: "green_tick.png" },
    })
  ).id;
});

describe("POST /users/{user_id}/status", () => {
  it("refuses an unknown user, a bot, a deactivated user and a caller who is not an administrator", async () => {
    await expectError(setFor("iago", 12345, { status_text: "x" }), 400, "No such user");
    await expectError(setFor("iago", 2 ** 40, { status_text: "x" }), 400, "No such user");
    await expectError(setFor("iago", id("default-bot"), { status_text: "x" }), 400, "No such user");
    await expectError(
      setFor("hamlet", id("iago"), { status_text: "x" }),
      400,
      "Insufficient permission",
    );
    await expectError(
      setFor("shiva", id("hamlet"), { status_text: "x" }),
      400,
      "Insufficient permission",
    );
    await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: false } });
    try {
      await expectError(
        setFor("iago", id("aaron"), { status_text: "x" }),
        400,
        "User is deactivated",
      );
    } finally {
      await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: true } });
    }
  });

  it("checks the text's length before the user, as Zulip's parameter parsing does", async () => {
    await expectError(
      setFor("hamlet", 12345, { status_text: "x".repeat(61) }),
      400,
      "status_text is too long (limit: 60 characters)",
    );
  });

  it("lets administrator bots set a status (feature level 473), but not other bots", async () => {
    await expectError(
      setFor("default-bot", id("cordelia"), { status_text: "from a bot" }),
      400,
      "Insufficient permission",
    );
    await server.db.userProfile.update({
      where: { id: id("default-bot") },
      data: { role: Role.ADMINISTRATOR },
    });
    try {
      await expectSuccess(setFor("default-bot", id("cordelia"), { status_text: "from a bot" }));
      expect(await getStatus("hamlet", id("cordelia"))).toEqual({ status_text: "from a bot" });
    } finally {
      await server.db.userProfile.update({
        where: { id: id("default-bot") },
        data: { role: Role.MEMBER },
      });
    }
  });

  it("sets text and emoji, strips the text, and tells the whole organization", async () => {
    const othello = await queueOf("othello", ["user_status"]);
    const polonius = await queueOf("polonius", ["user_status"]);
    await expectSuccess(
      setFor("iago", id("hamlet"), { status_text: "   at the beach  ", emoji_name: "car" }),
    );
    const event = {
      type: "user_status",
      user_id: id("hamlet"),
      status_text: "at the beach",
      emoji_name: "car",
      emoji_code: "1f697",
      reaction_type: "unicode_emoji",
    };
    expect(await othello()).toEqual([event]);
    expect(await polonius()).toEqual([event]);
    expect(await getStatus("othello", id("hamlet"))).toEqual({
      status_text: "at the beach",
      emoji_name: "car",
      emoji_code: "1f697",
      reaction_type: "unicode_emoji",
    });
  });

  it('clears the emoji with an empty emoji_name: code "" and unicode_emoji in the event', async () => {
    await expectSuccess(setFor("iago", id("othello"), { emoji_name: "car", status_text: "busy" }));
    const events = await queueOf("cordelia", ["user_status"]);
    await expectSuccess(
      setFor("iago", id("othello"), { emoji_name: "", emoji_code: "1f697", reaction_type: "x" }),
    );
    expect(await events()).toEqual([
      {
        type: "user_status",
        user_id: id("othello"),
        emoji_name: "",
        emoji_code: "",
        reaction_type: "unicode_emoji",
      },
    ]);
    expect(await getStatus("iago", id("othello"))).toEqual({ status_text: "busy" });
  });

  it('counts 60 code points after stripping, and clears the text with ""', async () => {
    await expectError(
      setFor("iago", id("prospero"), { status_text: "x".repeat(61) }),
      400,
      "status_text is too long (limit: 60 characters)",
    );
    await expectSuccess(setFor("iago", id("prospero"), { status_text: "x".repeat(60) }));
    // 60 astral characters are 120 UTF-16 units: still 60 code points.
    await expectSuccess(setFor("iago", id("prospero"), { status_text: "🐙".repeat(60) }));
    await expectSuccess(setFor("iago", id("prospero"), { status_text: `  ${"y".repeat(60)} \n` }));
    expect(await getStatus("iago", id("prospero"))).toEqual({ status_text: "y".repeat(60) });
    // PostgreSQL cannot store NUL: refused as the other free texts are.
    await expectError(
      setFor("iago", id("prospero"), { status_text: "🐙a\0" }),
      400,
      "Invalid character in status text, at position 3.",
    );
    await expectSuccess(setFor("iago", id("prospero"), { status_text: "" }));
    expect(await getStatus("iago", id("prospero"))).toEqual({});
  });

  it("asks for something to change, and for a name with a code or a type", async () => {
    await expectError(setFor("iago", id("hamlet"), {}), 400, "Client did not pass any new values.");
    // Without text or name nothing is asked for: that error comes first.
    await expectError(
      setFor("iago", id("hamlet"), { emoji_code: "1f697" }),
      400,
      "Client did not pass any new values.",
    );
    await expectError(
      setFor("iago", id("hamlet"), { status_text: "x", emoji_code: "1f697" }),
      400,
      "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
    );
    await expectError(
      setFor("iago", id("hamlet"), { status_text: "x", reaction_type: "unicode_emoji" }),
      400,
      "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
    );
  });

  it("the administrator may set their own status this way too", async () => {
    await expectSuccess(setFor("iago", id("iago"), { status_text: "admin" }));
    expect(await getStatus("hamlet", id("iago"))).toEqual({ status_text: "admin" });
  });
});

describe("emoji checks (check_emoji_request)", () => {
  const target = () => id("cordelia");
  const set = (body: Body<"/users/{user_id}/status", "post">) => setFor("iago", target(), body);
  const emojiOf = async () => {
    const { emoji_name, emoji_code, reaction_type } = await getStatus("iago", target());
    return { emoji_name, emoji_code, reaction_type };
  };

  it("Unicode emoji: by name alone, by name and code, and every refusal", async () => {
    await expectSuccess(set({ emoji_name: "car", emoji_code: "1f697" }));
    expect(await emojiOf()).toEqual({
      emoji_name: "car",
      emoji_code: "1f697",
      reaction_type: "unicode_emoji",
    });
    await expectSuccess(
      set({ emoji_name: "heart", emoji_code: "2764", reaction_type: "unicode_emoji" }),
    );
    await expectError(set({ emoji_name: "invalid" }), 400, "Emoji 'invalid' does not exist");
    await expectError(set({ emoji_name: "car", emoji_code: "1f4bb" }), 400, "Invalid emoji name.");
    await expectError(
      set({ emoji_name: "car", emoji_code: "zzz", reaction_type: "unicode_emoji" }),
      400,
      "Invalid emoji code.",
    );
    await expectError(
      set({ emoji_name: "car", emoji_code: "1f697", reaction_type: "animated" }),
      400,
      "Invalid emoji type.",
    );
    await expectError(
      set({ emoji_name: "car", reaction_type: "realm_emoji" }),
      400,
      "Invalid custom emoji.",
    );
  });

  it("custom emoji: the active ones of the organization, by name (ahead of Unicode) or by id", async () => {
    await expectSuccess(set({ emoji_name: "green_tick" }));
    expect(await emojiOf()).toEqual({
      emoji_name: "green_tick",
      emoji_code: String(custom.active),
      reaction_type: "realm_emoji",
    });
    await expectSuccess(set({ emoji_name: "octopus" }));
    expect(await emojiOf()).toMatchObject({
      emoji_code: String(custom.octopus),
      reaction_type: "realm_emoji",
    });
    // Its Unicode code is then read as a custom emoji's.
    await expectError(
      set({ emoji_name: "octopus", emoji_code: "1f419" }),
      400,
      "Invalid custom emoji.",
    );
    await expectSuccess(
      set({ emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji" }),
    );
    await expectSuccess(
      set({
        emoji_name: "green_tick",
        emoji_code: String(custom.active),
        reaction_type: "realm_emoji",
      }),
    );
    await expectError(
      set({ emoji_name: "car", emoji_code: String(custom.active), reaction_type: "realm_emoji" }),
      400,
      "Invalid custom emoji name.",
    );
    await expectError(
      set({
        emoji_name: "old_tick",
        emoji_code: String(custom.deactivated),
        reaction_type: "realm_emoji",
      }),
      400,
      "This custom emoji has been deactivated.",
    );
    await expectError(set({ emoji_name: "old_tick" }), 400, "Emoji 'old_tick' does not exist");
    await expectError(set({ emoji_name: "half_done" }), 400, "Emoji 'half_done' does not exist");
    for (const code of [
      String(custom.elsewhere),
      String(custom.uploading),
      `0${custom.active}`,
      "abc",
      "99999999999999999999",
    ])
      await expectError(
        set({ emoji_name: "green_tick", emoji_code: code, reaction_type: "realm_emoji" }),
        400,
        "Invalid custom emoji.",
      );
  });

  it("Zulip's extra emoji, also as the contract's service_extra_emoji", async () => {
    await expectSuccess(set({ emoji_name: "zulip" }));
    expect(await emojiOf()).toEqual({
      emoji_name: "zulip",
      emoji_code: "zulip",
      reaction_type: "zulip_extra_emoji",
    });
    const events = await queueOf("hamlet", ["user_status"]);
    await expectSuccess(
      set({ emoji_name: "zulip", emoji_code: "zulip", reaction_type: "service_extra_emoji" }),
    );
    expect((await events())[0]).toMatchObject({ reaction_type: "zulip_extra_emoji" });
    expect(await emojiOf()).toMatchObject({ reaction_type: "zulip_extra_emoji" });
    await expectError(
      set({ emoji_name: "zulip", emoji_code: "1f697", reaction_type: "zulip_extra_emoji" }),
      400,
      "Invalid emoji code.",
    );
    await expectError(
      set({ emoji_name: "car", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" }),
      400,
      "Invalid emoji name.",
    );
  });
});

describe("POST /users/me/status", () => {
  afterAll(async () => {
    await server.db.userProfile.updateMany({ data: { presenceEnabled: true } });
  });

  it("refuses bots", async () => {
    await expectError(
      setOwn("default-bot", { status_text: "beep" }),
      400,
      "This endpoint does not accept bot requests.",
    );
  });

  it("sends spaces as `+` and stores them as spaces", async () => {
    // The typed client form-encodes with URLSearchParams, which writes a space as `+`.
    expect(encodeParams({ status_text: "out to lunch" }).toString()).toBe(
      "status_text=out+to+lunch",
    );
    await expectSuccess(setOwn("shiva", { status_text: "out to lunch" }));
    expect(await getStatus("hamlet", id("shiva"))).toEqual({ status_text: "out to lunch" });
  });

  it("changes only what is sent", async () => {
    await expectSuccess(setOwn("shiva", { emoji_name: "car" }));
    await expectSuccess(setOwn("shiva", { status_text: "driving" }));
    expect(await getStatus("shiva", id("shiva"))).toEqual({
      status_text: "driving",
      emoji_name: "car",
      emoji_code: "1f697",
      reaction_type: "unicode_emoji",
    });
    await expectError(setOwn("shiva", {}), 400, "Client did not pass any new values.");
    await expectError(
      setOwn("shiva", { status_text: "z".repeat(61) }),
      400,
      "status_text is too long (limit: 60 characters)",
    );
    await expectError(
      setOwn("shiva", { emoji_name: "invalid" }),
      400,
      "Emoji 'invalid' does not exist",
    );
  });

  it("`away` is the opposite of presence_enabled: the setting, its event, and the status's `away`", async () => {
    const own = await queueOf("othello", ["user_status", "user_settings"]);
    const other = await queueOf("cordelia", ["user_status", "user_settings"]);
    await expectSuccess(setOwn("othello", { away: true }));
    expect(await own()).toEqual([
      { type: "user_settings", op: "update", property: "presence_enabled", value: false },
      { type: "user_status", user_id: id("othello"), away: true },
    ]);
    expect(await other()).toEqual([{ type: "user_status", user_id: id("othello"), away: true }]);
    const row = await server.db.userProfile.findUniqueOrThrow({ where: { id: id("othello") } });
    expect(row.presenceEnabled).toBe(false);
    expect(await getStatus("hamlet", id("othello"))).toMatchObject({ away: true });
    await expectSuccess(setOwn("othello", { away: false, status_text: "back" }));
    expect((await own()).slice(2)).toEqual([
      { type: "user_settings", op: "update", property: "presence_enabled", value: true },
      { type: "user_status", user_id: id("othello"), away: false, status_text: "back" },
    ]);
    expect(await getStatus("hamlet", id("othello"))).not.toHaveProperty("away");
    await expectError(setOwn("othello", { away: untyped("maybe") }), 400, "away is not valid JSON");
    await expectError(setOwn("othello", { away: untyped(5) }), 400, "away is not a boolean");
  });
});

describe("GET /users/{user_id}/status", () => {
  it("gives {} for a user without a status, and Zulip's texts for unknown, bot and deactivated users", async () => {
    expect(await getStatus("polonius", id("desdemona"))).toEqual({});
    const get = (userId: number) =>
      server.as("hamlet").GET("/users/{user_id}/status", { params: { path: { user_id: userId } } });
    await expectError(get(12345), 400, "No such user");
    await expectError(get(id("default-bot")), 400, "No such user");
    await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: false } });
    try {
      await expectError(get(id("aaron")), 400, "User is deactivated");
    } finally {
      await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: true } });
    }
  });
});

describe("register's user_status", () => {
  it("lists the active users who have a status, by id as a string, with only the set fields", async () => {
    await expectSuccess(setFor("iago", id("aaron"), { status_text: "gone fishing" }));
    await expectSuccess(setFor("iago", id("prospero"), { status_text: "", emoji_name: "" }));
    await expectSuccess(setOwn("desdemona", { away: true }));
    const statuses = async () =>
      (
        (await expectSuccess(
          server.as("hamlet").POST("/register", { body: { fetch_event_types: ["user_status"] } }),
        )) as { user_status?: Record<string, unknown> }
      ).user_status!;
    const state = await statuses();
    expect(state[String(id("aaron"))]).toEqual({ status_text: "gone fishing" });
    expect(state[String(id("desdemona"))]).toEqual({ away: true });
    // A cleared status says nothing, and a user without a row is not listed.
    expect(state).not.toHaveProperty(String(id("prospero")));
    expect(state).not.toHaveProperty(String(id("polonius")));
    await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: false } });
    try {
      expect(await statuses()).not.toHaveProperty(String(id("aaron")));
    } finally {
      await server.db.userProfile.update({ where: { id: id("aaron") }, data: { isActive: true } });
    }
  });
});

describe("statements", () => {
  it("a status change and register's statuses cost a fixed number of statements, however many users", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      const counts = async () => {
        seen.length = 0;
        await expectSuccess(setFor("iago", id("hamlet"), { status_text: "x", emoji_name: "car" }));
        await expectSuccess(
          server.as("hamlet").POST("/register", { body: { fetch_event_types: ["user_status"] } }),
        );
        return seen.map((i) => [i.operationId, i.statements]);
      };
      await counts(); // warms the caches
      const before = await counts();
      // Authentication (cached), the target, the emoji, then BEGIN, the row, the audience, the
      // event log and COMMIT; register: its queue and the statuses.
      expect(before).toEqual([
        ["update-status-for-user", 7],
        ["register-queue", 2],
      ]);
      for (const name of ["aaron", "prospero", "polonius", "shiva"])
        await expectSuccess(setFor("iago", id(name), { status_text: `${name} is here` }));
      expect(await counts()).toEqual(before);
    } finally {
      server.deps.observe = undefined;
    }
  });
});
