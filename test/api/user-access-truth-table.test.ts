/**
 * The user-access rule (server/lib/access/users.ts) proven by a truth table: every combination of
 * its facts — the viewer a guest or not, in can_access_all_users_group or not; the target the
 * viewer, a bot, sharing a channel, sharing a direct-message group, having exchanged a direct
 * message with the viewer (either way) — built as rows of one
 * database. For each, a reference written the way Zulip writes check_can_access_user
 * (procedurally), the TypeScript predicate, the SQL fragment and canAccessUser must agree; for the
 * combinations a real guest can be in (the organization restricted to members or not), GET /users
 * and GET /users/{id} must answer the same.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  canAccessUser,
  INACCESSIBLE_USER_NAME,
  userAccessAllows,
  userAccessSql,
  type UserAccessFacts,
  type ViewerAccess,
} from "../../server/lib/access/users.ts";
import { RecipientType } from "../../server/lib/recipients.ts";
import { Role } from "../../server/lib/users/users.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/** check_can_access_user as Zulip writes it. */
function reference(f: UserAccessFacts): boolean {
  if (f.self) return true;
  if (f.targetBot) return true; // user_access_restricted_in_realm
  if (f.viewerNonGuest || f.inAllUsersGroup) return true; // check_user_can_access_all_users
  if (f.sharesChannel || f.sharesDirectMessageGroup) return true;
  return f.exchangedDirectMessage; // "Querying the Message table is expensive so we do this last."
}

interface Target {
  id: number;
  self: boolean;
  bot: boolean;
  channel: boolean;
  dmGroup: boolean;
  dm: boolean;
}

let server: TestServer;
let viewerId: number;
const targets: Target[] = [];

beforeAll(async () => {
  server = await startTestServer();
  const db = server.db;
  const realmId = server.creds.realm.id;
  viewerId = server.creds.users.polonius!.user_id;
  // The guest shares nothing to begin with.
  await db.$executeRaw`UPDATE subscription SET active = FALSE WHERE user_profile_id = ${viewerId}::int`;
  // The eight other humans take every combination of the three sharing facts; the organization's
  // bots (the rule reads only is_bot of them) some of them.
  const others = await db.userProfile.findMany({
    where: { realmId, isActive: true, role: { not: Role.GUEST }, id: { not: viewerId } },
    select: { id: true, isBot: true, deliveryEmail: true },
    orderBy: { id: "asc" },
  });
  const humans = others.filter((u) => !u.isBot);
  const bots = others.filter((u) => u.isBot).slice(0, 4);
  expect(humans.length).toBe(8);
  expect(bots.length).toBeGreaterThan(1);
  let fakeTypeId = 1_000_000;
  const share = async (type: number, userId: number) => {
    // The rule looks at the recipient's type and the two subscriptions only.
    const [r] = await db.$queryRaw<[{ id: number }]>`
      INSERT INTO recipient (realm_id, type, type_id) VALUES (${realmId}::int, ${type}::int, ${fakeTypeId++}::int) RETURNING id`;
    await db.$executeRaw`INSERT INTO subscription (realm_id, user_profile_id, recipient_id)
      VALUES (${realmId}::int, ${viewerId}::int, ${r.id}::int), (${realmId}::int, ${userId}::int, ${r.id}::int)`;
  };
  const nameOf = (email: string) =>
    Object.entries(server.creds.users).find(([, c]) => c.email === email)?.[0];
  const candidates = [
    ...humans.map((u, bits) => ({ u, bits, bot: false })),
    ...bots.map((u, i) => ({ u, bits: [3, 0, 1, 2][i]!, bot: true })),
  ];
  for (const [i, { u, bits, bot }] of candidates.entries()) {
    const t = {
      id: u.id,
      self: false,
      bot,
      channel: (bits & 1) !== 0,
      dmGroup: (bits & 2) !== 0,
      dm: (bits & 4) !== 0,
    };
    if (t.channel) await share(RecipientType.STREAM, t.id);
    if (t.dmGroup) await share(RecipientType.DIRECT_MESSAGE_GROUP, t.id);
    if (t.dm) {
      // One direct message, sent for real, one way or the other (the organization is open now).
      const [from, to] = i % 2 ? [nameOf(u.deliveryEmail)!, viewerId] : ["polonius", u.id];
      const sent = await server.as(from).POST("/messages", {
        body: { type: "direct", to: [to], content: "a direct message" },
      });
      expect(sent.response.status).toBe(200);
    }
    targets.push(t);
  }
  targets.push({ id: viewerId, self: true, bot: false, channel: false, dmGroup: false, dm: false });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const VIEWERS = [false, true].flatMap((nonGuest) =>
  [false, true].map((inAllUsersGroup) => ({ nonGuest, inAllUsersGroup })),
);

describe("every combination of facts", () => {
  for (const v of VIEWERS)
    it(`viewer nonGuest=${v.nonGuest} inAllUsersGroup=${v.inAllUsersGroup}`, async () => {
      const recipientId = (
        await server.db.userProfile.findUniqueOrThrow({ where: { id: viewerId } })
      ).recipientId;
      const viewer: ViewerAccess = { id: viewerId, recipientId, ...v };
      const rows = await server.db.$queryRaw<{ id: number; ok: boolean }[]>`
        SELECT u.id, ${userAccessSql(viewer, "u")} AS ok FROM user_profile u
        WHERE u.id = ANY (${targets.map((t) => t.id)}::int[])`;
      const sql = new Map(rows.map((r) => [r.id, r.ok]));
      for (const t of targets) {
        const facts: UserAccessFacts = {
          self: t.self,
          targetBot: t.bot,
          viewerNonGuest: v.nonGuest,
          inAllUsersGroup: v.inAllUsersGroup,
          sharesChannel: t.channel,
          sharesDirectMessageGroup: t.dmGroup,
          exchangedDirectMessage: t.dm,
        };
        const expected = reference(facts);
        const label = JSON.stringify(facts);
        expect(userAccessAllows(facts), label).toBe(expected);
        expect(sql.get(t.id), label).toBe(expected);
        expect(await canAccessUser(server.db, viewer, { id: t.id, isBot: t.bot }), label).toBe(
          expected,
        );
      }
    });
});

describe("what the API answers a guest", () => {
  const groupId = async (name: string) =>
    (
      await server.db.namedUserGroup.findFirstOrThrow({
        where: { realmId: server.creds.realm.id, name },
      })
    ).id;
  for (const restricted of [true, false])
    it(`with can_access_all_users_group = ${restricted ? "role:members" : "role:everyone"}`, async () => {
      const admin = server.as("iago");
      const { error } = await admin.PATCH("/realm", {
        body: {
          can_access_all_users_group: {
            new: await groupId(restricted ? "role:members" : "role:everyone"),
          },
        },
      });
      expect(error).toBeUndefined();
      const guest = server.as("polonius");
      const { data } = await guest.GET("/users", {});
      const byId = new Map(data!.members.map((m) => [m.user_id, m]));
      for (const t of targets) {
        const expected = reference({
          self: t.self,
          targetBot: t.bot,
          viewerNonGuest: false,
          inAllUsersGroup: !restricted,
          sharesChannel: t.channel,
          sharesDirectMessageGroup: t.dmGroup,
          exchangedDirectMessage: t.dm,
        });
        const label = JSON.stringify({ restricted, ...t });
        expect(byId.get(t.id)!.full_name === INACCESSIBLE_USER_NAME, label).toBe(!expected);
        const one = await guest.GET("/users/{email}", {
          params: { path: { email: String(t.id) } },
        });
        if (expected) expect(one.data?.user.user_id, label).toBe(t.id);
        else expect(one.error?.msg, label).toBe("Insufficient permission");
      }
    });
});
