/**
 * Presence (zerver/tests/test_presence.py): POST /users/me/presence with its thresholds,
 * `last_update_id` and both formats, GET /users/{user_id_or_email}/presence, GET /realm/presence,
 * the `presence` events (modern with `simplified_presence_events`, else legacy), register's
 * `presences`, the user's `presence_enabled`, the organization's `presence_disabled`, bots, and
 * the statements a report costs. The server's clock is the test's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body as BodyOf, type RegisterParams, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;
const email = (name: string) => server.creds.users[name]!.email;

// An hour after the real time, on a whole second: every user joined (at the real time, when the
// test database was populated) before the test's clock starts, as Zulip's tests assume.
const START = Math.ceil(Date.now() / 1000) * 1000 + 3_600_000;
let clock = START;
const at = (seconds: number) => {
  clock = START + seconds * 1000;
};
const unix = (seconds: number) => Math.floor((START + seconds * 1000) / 1000);

const seen: RequestInfo[] = [];
beforeAll(() => {
  server.deps.now = () => new Date(clock);
  server.deps.observe = (info) => seen.push(info);
});
afterAll(() => {
  server.deps.observe = undefined;
});

type Body = BodyOf<"/users/me/presence", "post">;
const report = (as: string, body: Body) => server.as(as).POST("/users/me/presence", { body: body });
const reported = async (as: string, body: Body) =>
  (await expectSuccess(report(as, body))) as Record<string, unknown> & {
    presences?: Record<string, Record<string, unknown>>;
    presence_last_update_id?: number;
  };
const userPresence = (as: string, who: string, slim?: boolean) =>
  server.as(as).GET("/users/{user_id_or_email}/presence", {
    params: { path: { user_id_or_email: who }, query: slim ? { slim_presence: true } : {} },
  });
const row = (userId: number) =>
  server.db.userPresence.findUnique({ where: { userProfileId: userId } });

/** A queue for `as` that receives presence events, and a function reading what it got since. */
async function queueOf(
  as: string,
  capabilities: Record<string, boolean> = {},
  extra: RegisterParams = {},
) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", {
      body: { event_types: ["presence"], client_capabilities: capabilities, ...extra },
    }),
  );
  let last = -1;
  return async () => {
    const { events } = await expectSuccess(
      server.as(as).GET("/events", {
        params: { query: { queue_id: queue_id!, last_event_id: last, dont_block: true } },
      }),
    );
    if (events.length) last = events.at(-1)!.id;
    return events.map(({ id: _id, ...event }) => event);
  };
}

describe("POST /users/me/presence: refusals", () => {
  it("refuses a status other than active or idle, a missing status, and bots", async () => {
    await expectError(report("hamlet", { status: "away" }), 400, "Invalid status: away");
    await expectError(report("hamlet", untyped({})), 400, "Missing 'status' argument");
    await expectError(
      report("default-bot", { status: "active" }),
      400,
      "This endpoint does not accept bot requests.",
    );
    expect(await row(id("default-bot"))).toBeNull();
    expect(await row(id("hamlet"))).toBeNull();
  });
});

describe("GET /users/{user_id_or_email}/presence before any report", () => {
  it("answers Zulip's texts for unknown, deactivated and bot users, and users without data", async () => {
    await expectError(userPresence("iago", "12345"), 400, "No such user");
    await expectError(userPresence("iago", "nobody@zulip.com"), 400, "No such user");
    await expectError(
      userPresence("iago", String(id("default-bot"))),
      400,
      "Presence is not supported for bot users.",
    );
    await expectError(
      userPresence("iago", email("cordelia")),
      400,
      `No presence data for ${email("cordelia")}`,
    );
    await expectError(
      userPresence("iago", String(id("cordelia"))),
      400,
      `No presence data for ${id("cordelia")}`,
    );
  });
});

describe("reports, thresholds and events", () => {
  it("a first report creates the row and is announced: modern and legacy events by capability", async () => {
    at(0);
    const modern = await queueOf("othello", { simplified_presence_events: true });
    const legacy = await queueOf("iago");
    const slimLegacy = await queueOf("iago", {}, { slim_presence: true });
    const body = await reported("hamlet", { status: "active", ping_only: true });
    expect(body).toEqual({ result: "success", msg: "" });
    const stored = await row(id("hamlet"));
    expect(stored).toMatchObject({
      lastActiveTime: new Date(clock),
      lastConnectedTime: new Date(clock),
    });
    expect(await modern()).toEqual([
      {
        type: "presence",
        presences: { [id("hamlet")]: { active_timestamp: unix(0), idle_timestamp: unix(0) } },
      },
    ]);
    const [event] = await legacy();
    expect(event).toEqual({
      type: "presence",
      user_id: id("hamlet"),
      email: email("hamlet"),
      server_timestamp: clock / 1000,
      presence: {
        website: { client: "website", status: "active", timestamp: unix(0), pushable: false },
      },
    });
    // A slim_presence queue: the legacy fields without the email.
    if (event?.type !== "presence") throw new Error("expected a presence event");
    const { email: _email, ...slim } = event;
    expect(await slimLegacy()).toEqual([slim]);
  });

  it("reports within 55 seconds store nothing; later ones move the times without an event", async () => {
    const events = await queueOf("othello", { simplified_presence_events: true });
    const before = (await row(id("hamlet")))!;
    at(50);
    await reported("hamlet", { status: "active", ping_only: true });
    expect(await row(id("hamlet"))).toEqual(before);
    at(60);
    await reported("hamlet", { status: "idle", ping_only: true });
    const idle = (await row(id("hamlet")))!;
    expect(idle.lastConnectedTime).toEqual(new Date(clock));
    expect(idle.lastActiveTime).toEqual(new Date(START));
    expect(idle.lastUpdateId > before.lastUpdateId).toBe(true);
    at(65);
    await reported("hamlet", { status: "active", ping_only: true });
    expect((await row(id("hamlet")))!.lastActiveTime).toEqual(new Date(clock));
    expect(await events()).toEqual([]);
  });

  it("an active report after 70 seconds without activity announces the user as back online", async () => {
    const events = await queueOf("othello", { simplified_presence_events: true });
    at(130); // 65 s after the last activity: still online for other clients.
    await reported("hamlet", { status: "active", ping_only: true });
    expect(await events()).toEqual([]);
    at(400); // 270 s after: offline by then.
    await reported("hamlet", { status: "idle", ping_only: true });
    expect(await events()).toEqual([]);
    at(410);
    await reported("hamlet", { status: "active", ping_only: true });
    expect(await events()).toEqual([
      {
        type: "presence",
        presences: { [id("hamlet")]: { active_timestamp: unix(410), idle_timestamp: unix(410) } },
      },
    ]);
  });

  it("GET /users/{id or email}/presence: modern fields and legacy entries (without client, offline past 140 s) together", async () => {
    at(420);
    const { presence } = await expectSuccess(userPresence("cordelia", email("hamlet")));
    // Feature level 497's shape: a reader of either format (python-zulip-api's get_user_presence
    // users read `aggregated`, newer ones `active_timestamp`) finds its fields.
    expect(presence).toEqual({
      active_timestamp: unix(410),
      idle_timestamp: unix(410),
      website: { status: "active", timestamp: unix(410) },
      aggregated: { status: "active", timestamp: unix(410) },
    });
    at(551);
    const later = await expectSuccess(userPresence("cordelia", String(id("hamlet"))));
    expect(later.presence).toEqual({
      active_timestamp: unix(410),
      idle_timestamp: unix(410),
      website: { status: "active", timestamp: unix(410) },
      aggregated: { status: "offline", timestamp: unix(410) },
    });
    // slim_presence (older clients send it) changes nothing.
    const slim = await expectSuccess(userPresence("cordelia", String(id("hamlet")), true));
    expect(slim.presence).toEqual(later.presence);
    // The API email, whatever its case.
    await expectSuccess(userPresence("cordelia", email("hamlet").toUpperCase()));
  });
});

describe("fetching everyone's presence", () => {
  it("legacy by email without last_update_id; modern by id with slim_presence", async () => {
    at(600);
    const legacy = await reported("othello", { status: "idle" });
    expect(legacy.presences![email("hamlet")]).toEqual({
      aggregated: { client: "website", status: "active", timestamp: unix(410) },
      website: { client: "website", status: "active", timestamp: unix(410), pushable: false },
    });
    // Othello's own idle report: idle since his connection, active never (his joining time).
    expect(legacy.presences![email("othello")]!.aggregated).toMatchObject({
      status: "idle",
      timestamp: unix(600),
    });
    expect(legacy.server_timestamp).toBe(clock / 1000);
    const slim = await reported("othello", { status: "idle", slim_presence: true });
    expect(slim.presences![String(id("hamlet"))]).toEqual({
      active_timestamp: unix(410),
      idle_timestamp: unix(410),
    });
    expect(Object.keys(slim.presences!).sort()).toEqual(
      [String(id("hamlet")), String(id("othello"))].sort(),
    );
  });

  it("last_update_id: everything from -1, then only what changed, and the client's id when nothing did", async () => {
    at(700);
    const all = await reported("iago", { status: "active", last_update_id: -1 });
    expect(Object.keys(all.presences!).sort()).toEqual(
      [id("hamlet"), id("othello"), id("iago")].map(String).sort(),
    );
    const since = all.presence_last_update_id!;
    expect(since).toBe(Number((await row(id("iago")))!.lastUpdateId));
    const none = await reported("iago", { status: "active", last_update_id: since });
    expect(none.presences).toEqual({});
    expect(none.presence_last_update_id).toBe(since);
    at(730); // Iago's own report 30 s later changes nothing.
    await reported("cordelia", { status: "active", ping_only: true });
    const changed = await reported("iago", { status: "active", last_update_id: since });
    expect(Object.keys(changed.presences!)).toEqual([String(id("cordelia"))]);
    expect(changed.presence_last_update_id).toBe(Number((await row(id("cordelia")))!.lastUpdateId));
  });

  it("history_limit_days bounds the first fetch; 0 fetches nothing", async () => {
    at(2 * 86_400);
    await reported("prospero", { status: "active", ping_only: true });
    const recent = await reported("iago", {
      status: "idle",
      last_update_id: -1,
      history_limit_days: 1,
    });
    expect(Object.keys(recent.presences!).sort()).toEqual(
      [id("prospero"), id("iago")].map(String).sort(),
    );
    const none = await reported("iago", {
      status: "idle",
      last_update_id: -1,
      history_limit_days: 0,
    });
    expect(none).toMatchObject({ presences: {}, presence_last_update_id: -1 });
    // Out-of-range values fetch nothing, or everything, but never fail.
    const far = await reported("iago", { status: "idle", last_update_id: 2 ** 52 });
    expect(far).toMatchObject({ presences: {}, presence_last_update_id: 2 ** 52 });
    const ages = await reported("iago", {
      status: "idle",
      last_update_id: -1,
      history_limit_days: 1e12,
    });
    expect(Object.keys(ages.presences!)).toContain(String(id("hamlet")));
    const twoWeeks = await reported("iago", { status: "idle", slim_presence: true });
    expect(Object.keys(twoWeeks.presences!)).toContain(String(id("hamlet")));
  });

  it("GET /realm/presence: the legacy form, without presence_last_update_id", async () => {
    const body = await expectSuccess(server.as("cordelia").GET("/realm/presence"));
    expect(Object.keys(body)).not.toContain("presence_last_update_id");
    expect(body.presences[email("prospero")]!.aggregated.status).toBe("active");
    expect(body.server_timestamp).toBe(clock / 1000);
  });

  it("register: presences (legacy by default, modern with the capability), the update id and the settings", async () => {
    const legacy = (await expectSuccess(
      server.as("hamlet").POST("/register", {
        body: { fetch_event_types: ["presence", "realm"] },
      }),
    )) as Record<string, unknown>;
    expect(legacy).toMatchObject({
      server_timestamp: clock / 1000,
      server_presence_ping_interval_seconds: 60,
      server_presence_offline_threshold_seconds: 140,
    });
    expect(Object.keys(legacy.presences as object)).toContain(email("prospero"));
    expect(legacy.presence_last_update_id).toBeGreaterThan(0);
    const modern = (await expectSuccess(
      server.as("hamlet").POST("/register", {
        body: {
          fetch_event_types: ["presence"],
          client_capabilities: { simplified_presence_events: true },
        },
      }),
    )) as Record<string, unknown>;
    expect(Object.keys(modern.presences as object)).toContain(String(id("prospero")));
  });
});

describe("presence_enabled and the organization's presence_disabled", () => {
  it("a user with presence_enabled off reports nothing", async () => {
    await server.db.userProfile.update({
      where: { id: id("polonius") },
      data: { presenceEnabled: false },
    });
    const events = await queueOf("othello", { simplified_presence_events: true });
    const body = await reported("polonius", { status: "active", slim_presence: true });
    expect(await row(id("polonius"))).toBeNull();
    expect(Object.keys(body.presences!)).not.toContain(String(id("polonius")));
    expect(await events()).toEqual([]);
  });

  it("an organization with presence disabled stores reports but shares none and announces none", async () => {
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { presenceDisabled: true },
    });
    try {
      const events = await queueOf("othello", { simplified_presence_events: true });
      const body = await reported("desdemona", { status: "active", last_update_id: -1 });
      expect(body).toMatchObject({ presences: {}, presence_last_update_id: -1 });
      expect(await row(id("desdemona"))).not.toBeNull();
      expect(await events()).toEqual([]);
      const realm = await expectSuccess(server.as("hamlet").GET("/realm/presence"));
      expect(realm.presences).toEqual({});
      const state = (await expectSuccess(
        server.as("hamlet").POST("/register", { body: { fetch_event_types: ["presence"] } }),
      )) as Record<string, unknown>;
      expect(state).toMatchObject({ presences: {}, presence_last_update_id: -1 });
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { presenceDisabled: false },
      });
    }
  });
});

describe("turning presence_enabled off and on (the legacy `away`)", () => {
  it("forces a presence update: offline since before the threshold, then active now", async () => {
    at(5 * 86_400);
    const events = await queueOf("othello", { simplified_presence_events: true });
    const joined = (await server.db.userProfile.findUnique({ where: { id: id("cordelia") } }))!
      .dateJoined;
    await expectSuccess(server.as("cordelia").POST("/users/me/status", { body: { away: true } }));
    // Offline for 140 + 120 s, and never active since (the joining time stands in).
    expect(await events()).toEqual([
      {
        type: "presence",
        presences: {
          [id("cordelia")]: {
            active_timestamp: Math.floor(joined.getTime() / 1000),
            idle_timestamp: unix(5 * 86_400 - 260),
          },
        },
      },
    ]);
    // While away, reports change nothing.
    at(5 * 86_400 + 100);
    await reported("cordelia", { status: "active", ping_only: true });
    expect((await row(id("cordelia")))!.lastActiveTime).toBeNull();
    await expectSuccess(server.as("cordelia").POST("/users/me/status", { body: { away: false } }));
    expect(await events()).toEqual([
      {
        type: "presence",
        presences: {
          [id("cordelia")]: {
            active_timestamp: unix(5 * 86_400 + 100),
            idle_timestamp: unix(5 * 86_400 + 100),
          },
        },
      },
    ]);
  });
});

describe("statements of a report", () => {
  const statementsOf = async (as: string, body: Body) => {
    seen.length = 0;
    await reported(as, body);
    const info = seen.filter((i) => i.operationId === "update-presence");
    expect(info).toHaveLength(1);
    if (process.env.SHOW_STATEMENTS) console.log(body, info[0]!.statements);
    return info[0]!.statements;
  };

  it("a ping that changes nothing and one that moves the times: 1 statement each; coming online: 6", async () => {
    at(3 * 86_400);
    await reported("othello", { status: "active", ping_only: true }); // warm, and online
    expect(await statementsOf("othello", { status: "active", ping_only: true })).toBe(1);
    at(3 * 86_400 + 60);
    expect(await statementsOf("othello", { status: "active", ping_only: true })).toBe(1);
    at(4 * 86_400);
    // The report, the audience, BEGIN, the write, the event, COMMIT.
    expect(await statementsOf("othello", { status: "active", ping_only: true })).toBe(6);
    // With the fetch: one statement more.
    expect(await statementsOf("othello", { status: "active", last_update_id: -1 })).toBe(2);
  });
});
