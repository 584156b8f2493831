/**
 * The access rules (server/lib/access/) proven by a truth table: every combination of the facts
 * they are written over — the user's role; subscribed or not; the channel invite-only, web-public,
 * with history shared, archived; the user in the channel's content-granting groups (not, through
 * can_subscribe_group, through can_add_subscribers_group, or through a subgroup of
 * can_subscribe_group) and in its can_administer_channel_group; and, for messages, whether the
 * user has a user_message row — built once as rows of one database. For each combination the
 * answers must agree: a reference written the way Zulip writes each rule (procedurally, as
 * zerver/lib/message.py and zerver/lib/streams.py do), the TypeScript predicate over the facts,
 * the predicate over the facts as the server reads them from the rows, the SQL for a known user,
 * the SQL turned round (which users may), and the server's helpers built on them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../server/db/index.ts";
import {
  AccessRule,
  accessChannels,
  accessFacts,
  accessSql,
  allows,
  allowsReadingGroups,
  canAdministerChannel,
  messageAccessSql,
  subscribersNeedRows,
  type AccessFacts,
  type AccessRuleName,
  type Reader,
} from "../../server/lib/access/channels.ts";
import { messageEventRecipientsSql } from "../../server/lib/access/messages.ts";
import { invalidateCaches } from "../../server/lib/caches.ts";
import { findChannelsById, metadataAudience } from "../../server/lib/channels/channels.ts";
import { userGroupIds } from "../../server/lib/groups/permissions.ts";
import { RecipientType } from "../../server/lib/recipients.ts";
import { Role } from "../../server/lib/users/users.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/** How the test users reach the channel's content-granting settings. */
type ContentPath = "none" | "can_subscribe" | "can_add_subscribers" | "subgroup";
const CONTENT_PATHS: ContentPath[] = ["none", "can_subscribe", "can_add_subscribers", "subgroup"];
const ROLES = [Role.OWNER, Role.ADMINISTRATOR, Role.MODERATOR, Role.MEMBER, Role.GUEST];

/** Channel i of the table: bits 0-3 its own facts, 4-5 the content path, 6 administering, 7 subscribed. */
function channelOf(i: number) {
  return {
    public: (i & 1) === 0,
    webPublic: (i & 2) !== 0,
    historyShared: (i & 4) !== 0,
    archived: (i & 8) !== 0,
    content: CONTENT_PATHS[(i >> 4) & 3]!,
    inAdminGroup: (i & 64) !== 0,
    subscribed: (i & 128) !== 0,
  };
}
const CHANNELS = 256;

/** Each rule as Zulip writes it, independently of the formulas (a change to a formula that Zulip would not make fails here). */
const REFERENCE: Record<AccessRuleName, (f: AccessFacts) => boolean> = {
  CHANNEL_PUBLIC: (f) => f.public && f.nonGuest,
  CHANNEL_MESSAGE: (f) => {
    // has_message_access / has_channel_content_access_helper
    if (f.public && f.nonGuest) return true;
    const helper = f.subscribed ? true : !f.nonGuest ? false : f.inContentGroup;
    if (!f.historyShared) return f.received && helper;
    return helper;
  },
  CHANNEL_MESSAGE_CHANGE: (f) => !f.archived && REFERENCE.CHANNEL_MESSAGE(f),
  CHANNEL_CONTENT: (f) => {
    // user_has_content_access
    if (f.webPublic) return true;
    if (f.subscribed) return true;
    if (!f.nonGuest) return false;
    if (f.public) return true;
    return f.inContentGroup;
  },
  CHANNEL_ACCESS: (f) => !f.archived && REFERENCE.CHANNEL_CONTENT(f),
  CHANNEL_METADATA: (f) => {
    // user_has_metadata_access
    if (f.webPublic || f.subscribed) return true;
    if (!f.nonGuest) return false;
    if (f.public || f.realmAdmin) return true;
    return f.inContentGroup || f.inAdminGroup;
  },
  CHANNEL_SUBSCRIBERS: (f) =>
    REFERENCE.CHANNEL_METADATA(f) && (f.subscribed || f.webPublic || f.nonGuest),
  CHANNEL_SEND: (f) => {
    // access_stream_for_send_message
    if (f.webPublic) return true;
    if (f.public && f.nonGuest) return true;
    if (f.subscribed) return true;
    return f.historyShared && f.nonGuest && f.inContentGroup;
  },
  CHANNEL_TOPICS_WITHOUT_ROWS: (f) => REFERENCE.CHANNEL_CONTENT(f) && f.historyShared,
  CHANNEL_ADMIN: (f) => f.realmAdmin || (f.nonGuest && f.inAdminGroup),
  CHANNEL_ALL_PUBLIC_QUEUES: (f) => f.public,
  CHANNEL_HIDES_BOT: (f) => !f.public,
  NARROW_PUBLIC: (f) => f.public && f.historyShared,
  NARROW_WEB_PUBLIC: (f) => f.public && f.historyShared && f.webPublic,
  NARROW_ARCHIVED: (f) => f.archived,
};
const RULES = Object.keys(AccessRule) as AccessRuleName[];

let server: TestServer;
let users: Reader[];
let streams: { id: number; index: number; recipientId: number }[];
let messages: { id: number; streamIndex: number | null; received: boolean }[];

beforeAll(async () => {
  server = await startTestServer();
  const db = server.db;
  const realmId = server.creds.realm.id;
  users = [];
  for (const role of ROLES) {
    const u = await db.userProfile.findFirstOrThrow({
      where: { realmId, role, isActive: true, isBot: false },
      select: { id: true, realmId: true, role: true },
      orderBy: { id: "asc" },
    });
    users.push(u);
  }
  const userIds = users.map((u) => u.id);
  const nobody = (
    await db.namedUserGroup.findFirstOrThrow({ where: { realmId, name: "role:nobody" } })
  ).id;
  // `all`: the test users, directly; `outer`: `all` as its subgroup.
  const all = (await db.userGroup.create({ data: { realmId } })).id;
  const outer = (await db.userGroup.create({ data: { realmId } })).id;
  await db.userGroupMembership.createMany({
    data: userIds.map((userProfileId) => ({ userGroupId: all, userProfileId })),
  });
  await db.groupGroupMembership.create({ data: { supergroupId: outer, subgroupId: all } });
  const client = (await db.client.findFirstOrThrow({ select: { id: true } })).id;
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`
      INSERT INTO stream (realm_id, name, invite_only, is_web_public, history_public_to_subscribers, is_archived,
        can_subscribe_group_id, can_add_subscribers_group_id, can_administer_channel_group_id,
        can_create_topic_group_id, can_delete_any_message_group_id, can_delete_own_message_group_id,
        can_move_messages_out_of_channel_group_id, can_move_messages_within_channel_group_id,
        can_remove_subscribers_group_id, can_resolve_topics_group_id, can_send_message_group_id)
      SELECT ${realmId}::int, 'truth table ' || i, (i & 1) <> 0, (i & 2) <> 0, (i & 4) <> 0, (i & 8) <> 0,
        CASE (i >> 4) & 3 WHEN 1 THEN ${all}::int WHEN 3 THEN ${outer}::int ELSE ${nobody}::int END,
        CASE (i >> 4) & 3 WHEN 2 THEN ${all}::int ELSE ${nobody}::int END,
        CASE WHEN (i & 64) <> 0 THEN ${all}::int ELSE ${nobody}::int END,
        ${nobody}, ${nobody}, ${nobody}, ${nobody}, ${nobody}, ${nobody}, ${nobody}, ${nobody}
      FROM generate_series(0, ${CHANNELS - 1}::int) i`;
    await tx.$executeRaw`
      INSERT INTO recipient (realm_id, type, type_id)
      SELECT ${realmId}::int, ${RecipientType.STREAM}, id FROM stream WHERE realm_id = ${realmId} AND name LIKE 'truth table %'`;
    await tx.$executeRaw`
      UPDATE stream s SET recipient_id = r.id FROM recipient r
      WHERE r.type = ${RecipientType.STREAM} AND r.type_id = s.id AND s.name LIKE 'truth table %' AND s.realm_id = ${realmId}`;
    await tx.$executeRaw`
      INSERT INTO subscription (realm_id, user_profile_id, recipient_id)
      SELECT ${realmId}::int, u, s.recipient_id FROM stream s, unnest(${userIds}::int[]) u
      WHERE s.realm_id = ${realmId} AND s.name LIKE 'truth table %' AND (substr(s.name, 13)::int & 128) <> 0`;
    // Two messages in each channel (one every test user received, one none did), and two direct
    // messages (to the first user's personal recipient) likewise.
    await tx.$executeRaw`
      INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, sending_client_id, is_channel_message)
      SELECT ${realmId}::int, ${userIds[0]}::int, s.recipient_id, 'truth', k, ${client}::int, TRUE
      FROM stream s, unnest(ARRAY['received', 'not received']) k
      WHERE s.realm_id = ${realmId} AND s.name LIKE 'truth table %'
      UNION ALL
      SELECT ${realmId}::int, ${userIds[0]}::int, r.id, '', k, ${client}::int, FALSE
      FROM recipient r, unnest(ARRAY['received', 'not received']) k
      WHERE r.type = ${RecipientType.PERSONAL} AND r.type_id = ${userIds[0]}::int`;
    await tx.$executeRaw`
      INSERT INTO user_message (user_profile_id, message_id, flags)
      SELECT u, m.id, 0 FROM message m, unnest(${userIds}::int[]) u
      WHERE m.realm_id = ${realmId} AND m.sender_id = ${userIds[0]}::int AND m.content = 'received'
        AND (m.subject = 'truth' OR (m.subject = '' AND NOT m.is_channel_message))`;
  });
  invalidateCaches(["*"]);
  streams = (
    await db.$queryRaw<{ id: number; name: string; recipient_id: number }[]>`
      SELECT id, name, recipient_id FROM stream WHERE realm_id = ${realmId} AND name LIKE 'truth table %'`
  ).map((s) => ({
    id: s.id,
    index: Number(s.name.slice("truth table ".length)),
    recipientId: s.recipient_id,
  }));
  const byRecipient = new Map(streams.map((s) => [s.recipientId, s]));
  messages = (
    await db.$queryRaw<{ id: number; recipient_id: number; content: string }[]>`
      SELECT m.id, m.recipient_id, m.content FROM message m
      WHERE m.realm_id = ${realmId} AND m.sender_id = ${userIds[0]}::int AND m.content IN ('received', 'not received')
        AND (m.subject = 'truth' OR (m.subject = '' AND NOT m.is_channel_message))`
  ).map((m) => ({
    id: m.id,
    streamIndex: byRecipient.get(m.recipient_id)?.index ?? null,
    received: m.content === "received",
  }));
  expect(streams).toHaveLength(CHANNELS);
  expect(messages.filter((m) => m.streamIndex === null)).toHaveLength(2);
}, 120_000);
afterAll(() => server?.close());

/** The facts of a combination, as the table was built (not as the server reads them). */
function factsOf(user: Reader, streamIndex: number, received: boolean): AccessFacts {
  const c = channelOf(streamIndex);
  return {
    public: c.public,
    webPublic: c.webPublic,
    historyShared: c.historyShared,
    archived: c.archived,
    nonGuest: user.role !== Role.GUEST,
    realmAdmin: user.role <= Role.ADMINISTRATOR,
    subscribed: c.subscribed,
    inContentGroup: c.content !== "none",
    inAdminGroup: c.inAdminGroup,
    received,
  };
}

/** Mismatches as readable lines, so a failure names the combination. */
function describeFacts(f: AccessFacts) {
  return Object.entries(f)
    .filter(([, v]) => v)
    .map(([k]) => k)
    .join(",");
}

describe("the access truth table", () => {
  it("has every combination of the facts", () => {
    const combos = new Set<string>();
    for (const user of users)
      for (const m of messages)
        if (m.streamIndex !== null)
          combos.add(describeFacts(factsOf(user, m.streamIndex, m.received)) + `|${user.role}`);
    // 5 roles × subscribed × 4 channel facts × 4 content paths × administering × received,
    // less the content paths that give the same fact (3 of the 4 say "in a content group").
    expect(users.map((u) => u.role)).toEqual(ROLES);
    expect(combos.size).toBe(5 * 2 * 16 * 2 * 2 * 2);
    expect(users.length * messages.length).toBe(5 * (2 * CHANNELS + 2));
  });

  it("the formulas are Zulip's rules, and the server reads the facts from the rows", async () => {
    const rows = new Map(
      (
        await findChannelsById(
          server.db,
          server.creds.realm.id,
          streams.map((s) => s.id),
        )
      ).map((r) => [r.id, r]),
    );
    const failures: string[] = [];
    for (const user of users) {
      const groups = await userGroupIds(server.db, user);
      for (const s of streams) {
        const row = rows.get(s.id)!;
        const subscribed = row.subscriberIds.includes(user.id);
        for (const received of [false, true]) {
          const facts = factsOf(user, s.index, received);
          const read = accessFacts(user, row, subscribed, groups, received);
          if (JSON.stringify(read) !== JSON.stringify(facts))
            failures.push(`facts read ${describeFacts(read)} ≠ built ${describeFacts(facts)}`);
          for (const rule of RULES) {
            const expected = REFERENCE[rule](facts);
            if (allows(rule, facts) !== expected)
              failures.push(`${rule} [${describeFacts(facts)}] role ${user.role}: formula ≠ Zulip`);
            const lazily = await allowsReadingGroups(
              rule,
              user,
              row,
              subscribed,
              async () => groups,
              received,
            );
            if (lazily !== expected)
              failures.push(`${rule} [${describeFacts(facts)}] role ${user.role}: lazily ≠ Zulip`);
          }
        }
      }
      // The server's helpers built on the rules.
      const { accessible } = await accessChannels(server.db, user, rows.values());
      const accessibleIds = new Set(accessible.map((c) => c.id));
      for (const s of streams) {
        const facts = factsOf(user, s.index, false);
        if (accessibleIds.has(s.id) !== REFERENCE.CHANNEL_ACCESS(facts))
          failures.push(`accessChannels [${describeFacts(facts)}] role ${user.role}`);
        if (
          (await canAdministerChannel(server.db, user, rows.get(s.id)!)) !==
          REFERENCE.CHANNEL_ADMIN(facts)
        )
          failures.push(`canAdministerChannel [${describeFacts(facts)}] role ${user.role}`);
      }
    }
    // Who may see a channel besides its subscribers.
    const unsubscribed = streams.filter((s) => !channelOf(s.index).subscribed);
    const audience = await metadataAudience(
      server.db,
      server.creds.realm.id,
      unsubscribed.map((s) => rows.get(s.id)!),
    );
    for (const s of unsubscribed)
      for (const user of users) {
        const facts = factsOf(user, s.index, false);
        if (audience.get(s.id)!.has(user.id) !== REFERENCE.CHANNEL_METADATA(facts))
          failures.push(`metadataAudience [${describeFacts(facts)}] role ${user.role}`);
      }
    // Subscribers get user_message rows exactly where the history is not shared (Zulip's
    // is_history_public_to_subscribers test when messages enter a channel).
    for (const s of streams)
      if (subscribersNeedRows(rows.get(s.id)!) !== !channelOf(s.index).historyShared)
        failures.push(`subscribersNeedRows, channel ${s.index}`);
    expect(failures.slice(0, 20)).toEqual([]);
  });

  it("the SQL for a known user and the SQL turned round agree with the predicate", async () => {
    const start = performance.now();
    const received = Prisma.raw("um.message_id IS NOT NULL");
    const columns = (who: Reader | { alias: string }) =>
      Prisma.join(
        [
          ...RULES.map(
            (rule) =>
              Prisma.sql`COALESCE(${accessSql(rule, who, "s", received)}, FALSE) AS ${Prisma.raw(`"${rule}"`)}`,
          ),
          Prisma.sql`COALESCE(${messageAccessSql(who, received)}, FALSE) AS "message"`,
          Prisma.sql`COALESCE(${messageAccessSql(who, received, { change: true })}, FALSE) AS "change"`,
        ],
        ", ",
      );
    const messageIds = messages.map((m) => m.id);
    // Every user in one statement: each a block with the user's facts as constants.
    const forward = await server.db.$queryRaw<Record<string, unknown>[]>`
      ${Prisma.join(
        users.map(
          (user) => Prisma.sql`
            SELECT ${user.id}::int AS user_id, m.id AS message_id, ${columns(user)}
            FROM message m
            LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
            LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}::int
            WHERE m.id = ANY(${messageIds}::int[])`,
        ),
        " UNION ALL ",
      )}`;
    // Turned round: which users may, over user rows, in one statement.
    const reverse = await server.db.$queryRaw<Record<string, unknown>[]>`
      SELECT u.id AS user_id, m.id AS message_id, ${columns({ alias: "u" })}
      FROM user_profile u CROSS JOIN message m
      LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
      LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = u.id
      WHERE m.id = ANY(${messageIds}::int[]) AND u.id = ANY(${users.map((u) => u.id)}::int[])`;
    // Who hears of an action on each message.
    const audiences = await server.db.$queryRaw<{ message_id: number; ids: number[] }[]>`
      SELECT m.id AS message_id,
             ARRAY(${messageEventRecipientsSql(Prisma.sql`ARRAY[m.id]`, Prisma.sql`m.recipient_id`, Prisma.sql`m.is_channel_message`)}) AS ids
      FROM message m WHERE m.id = ANY(${messageIds}::int[])`;
    const sqlMs = performance.now() - start;

    const byId = new Map(messages.map((m) => [m.id, m]));
    const expected = (userId: number, messageId: number, column: string) => {
      const user = users.find((u) => u.id === userId)!;
      const m = byId.get(messageId)!;
      if (m.streamIndex === null)
        return column === "message" || column === "change" ? m.received : undefined;
      const facts = factsOf(user, m.streamIndex, m.received);
      if (column === "message") return allows("CHANNEL_MESSAGE", facts);
      if (column === "change") return allows("CHANNEL_MESSAGE_CHANGE", facts);
      return allows(column as AccessRuleName, facts);
    };
    const failures: string[] = [];
    let checked = 0;
    for (const [name, rows] of [
      ["SQL", forward],
      ["SQL turned round", reverse],
    ] as const) {
      expect(rows).toHaveLength(users.length * messages.length);
      for (const row of rows)
        for (const column of [...RULES, "message", "change"]) {
          const want = expected(Number(row.user_id), Number(row.message_id), column);
          if (want === undefined) continue;
          checked++;
          if (row[column] !== want) {
            const m = byId.get(Number(row.message_id))!;
            const user = users.find((u) => u.id === Number(row.user_id))!;
            failures.push(
              `${name}: ${column} role ${user.role} ${m.streamIndex === null ? "direct message" : describeFacts(factsOf(user, m.streamIndex, m.received))} → ${String(row[column])}`,
            );
          }
        }
    }
    // The audience: those who may read the message among its subscribers and its row holders.
    for (const { message_id, ids } of audiences) {
      const m = byId.get(message_id)!;
      const got = new Set(ids);
      for (const user of users) {
        const facts = m.streamIndex === null ? null : factsOf(user, m.streamIndex, m.received);
        const want = facts
          ? REFERENCE.CHANNEL_MESSAGE(facts) && (facts.subscribed || facts.received)
          : m.received;
        checked++;
        if (got.has(user.id) !== want)
          failures.push(
            `audience: role ${user.role} ${facts ? describeFacts(facts) : "direct message"} → ${!want}`,
          );
      }
      const others = ids.filter((id) => !users.some((u) => u.id === id));
      if (others.length) failures.push(`audience of ${message_id} has others: ${others.join(",")}`);
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(checked).toBeGreaterThan(2 * users.length * 2 * CHANNELS * RULES.length);
    console.log(
      `access truth table: ${users.length * 2 * CHANNELS} channel-message combinations (+${users.length * 2} direct), ${RULES.length} rules; ${checked} answers compared; SQL ${sqlMs.toFixed(0)} ms`,
    );
  });
});
