/**
 * The plans of the flag narrows at a scale the small test database cannot show: an organization
 * of a few hundred thousand user_message rows made by populate-scale (set-based, in seconds),
 * ANALYZEd, then the very statements GET /messages runs (compileNarrow + fetchMessageRange)
 * EXPLAINed. Each flag narrow must start from its partial index and reach `message` by id, one
 * row at a time: never a scan of `message` or `user_message` whose length grows with the
 * organization (as `is:mentioned` once merge-joined the whole message table, the planner
 * estimating 288,778 rows for `(flags & 120) <> 0` without statistics on the expression).
 *
 * PostgreSQL only (DATABASE_URL): PGlite's single-threaded WebAssembly build takes minutes to
 * fill this much, and plans the same (it is PostgreSQL 17).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configFromEnv } from "../../server/config.ts";
import type { AppDeps } from "../../server/context.ts";
import { Prisma, type Db, type Realm, type UserProfile } from "../../server/db/index.ts";
import { EventBus } from "../../server/events/index.ts";
import { createQueue, pollQueues } from "../../server/events/queues.ts";
import { fetchMessageRange, type RangeRequest } from "../../server/lib/messages/message-fetch.ts";
import { unreadMessages } from "../../server/lib/messages/unread.ts";
import { compileNarrow, type NarrowTerm } from "../../server/lib/narrow/narrow.ts";
import { createLogger } from "../../server/logger.ts";
import { populateScale } from "../../server/manage/populate-scale.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

const onPostgres = !!process.env.DATABASE_URL;
if (!onPostgres)
  console.log(
    "scale-plans.test.ts: skipped on the embedded database (set DATABASE_URL to run the EXPLAIN tests at scale on PostgreSQL)",
  );

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * A database handle whose raw queries return `rows` (what the caller needs to go on) instead of
 * their own, and push their EXPLAIN (ANALYZE) plans.
 */
function explaining(db: Db, plans: PlanNode[], rows: unknown[] = [{ anchor: 0 }]): Db {
  return {
    async $queryRaw(strings: TemplateStringsArray, ...values: unknown[]) {
      const explained = await db.$queryRaw<
        { "QUERY PLAN": { Plan: PlanNode }[] }[]
      >`EXPLAIN (ANALYZE, FORMAT JSON) ${Prisma.sql(strings, ...values)}`;
      plans.push(explained[0]!["QUERY PLAN"][0]!.Plan);
      return rows;
    },
  } as unknown as Db;
}

/** The plan's scans, a line each, for an assertion's message. */
function described(nodes: PlanNode[]): string {
  return nodes
    .filter((n) => n["Relation Name"] || n["Index Name"])
    .map(
      (n) =>
        `${n["Node Type"]} ${n["Relation Name"] ?? ""} ${n["Index Name"] ?? ""} ${n["Index Cond"] ?? ""} rows=${n["Actual Rows"]}×${n["Actual Loops"]} removed=${n["Rows Removed by Filter"] ?? 0}`,
    )
    .join("\n");
}

describe.skipIf(!onPostgres)("flag narrows at scale (PostgreSQL)", () => {
  let database: TestDatabase;
  let deps: AppDeps;
  let realm: Realm;
  let reader: UserProfile;
  let partner: UserProfile;
  let rows = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = { ...configFromEnv({}), logLevel: "silent" };
    deps = {
      db: database.prisma,
      events: new EventBus(database),
      log: createLogger("silent"),
      config,
      now: () => new Date(),
    };
    const result = await populateScale(deps, {
      messages: 20_000,
      users: 60,
      channels: 10,
      stringId: "scale",
      seed: 1,
    });
    rows = result.counts.user_message!;
    realm = await deps.db.realm.findUniqueOrThrow({ where: { stringId: "scale" } });
    reader = await deps.db.userProfile.findUniqueOrThrow({
      where: { id: result.users.reader.user_id },
    });
    partner = await deps.db.userProfile.findUniqueOrThrow({
      where: { id: result.users.partner.user_id },
    });
  }, 180_000);
  afterAll(async () => {
    deps?.events.close();
    await database?.close();
  });

  async function plansOf(narrow: NarrowTerm[], request: RangeRequest): Promise<PlanNode[]> {
    const compiled = await compileNarrow(deps.db, realm, reader, narrow);
    const plans: PlanNode[] = [];
    await fetchMessageRange(explaining(deps.db, plans), compiled, request);
    expect(plans).toHaveLength(1);
    return nodesOf(plans[0]!);
  }

  it("builds a few hundred thousand user_message rows", () => {
    expect(rows).toBeGreaterThan(200_000);
  });

  const FLAG_NARROWS: [operand: string, index: string][] = [
    ["mentioned", "user_message_mentioned_idx"],
    ["starred", "user_message_starred_idx"],
    ["unread", "user_message_unread_idx"],
    ["alerted", "user_message_has_alert_word_idx"],
    ["dm", "user_message_is_private_idx"],
  ];
  const ANCHORS: [label: string, request: RangeRequest][] = [
    ["newest", { anchor: 10_000_000_000_000_000, numBefore: 100, numAfter: 0 }],
    ["oldest", { anchor: 0, numBefore: 0, numAfter: 100 }],
    ["first_unread", { anchor: "first_unread", numBefore: 50, numAfter: 50 }],
  ];

  for (const [operand, index] of FLAG_NARROWS)
    for (const [label, request] of ANCHORS)
      it(`is:${operand}, anchor ${label}: from ${index}, reading about the rows it answers`, async () => {
        const nodes = await plansOf([{ operator: "is", operand }], request);
        const scans = nodes.filter(
          (n) => n["Relation Name"] === "message" || n["Relation Name"] === "user_message",
        );
        const plan = described(nodes);
        expect(
          scans.filter((n) => n["Node Type"] === "Seq Scan"),
          plan,
        ).toEqual([]);
        expect(
          nodes.some((n) => n["Index Name"] === index),
          plan,
        ).toBe(true);
        // Rows read from either table (returned or filtered out) stay near what the answer needs
        // (100 messages at most), not the user's or the organization's whole history.
        const read = scans.reduce(
          (sum, n) =>
            sum +
            ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) *
              (n["Actual Loops"] ?? 1),
          0,
        );
        expect(read, plan).toBeLessThan(5_000);
      });

  /** Rows a plan's scans of message and user_message read (returned or filtered out). */
  const rowsRead = (nodes: PlanNode[]) =>
    nodes
      .filter(
        (n) =>
          n["Relation Name"] === "message" ||
          n["Relation Name"] === "user_message" ||
          n["Index Name"]?.startsWith("user_message"),
      )
      .reduce(
        (sum, n) =>
          sum +
          ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) * (n["Actual Loops"] ?? 1),
        0,
      );

  it("a one-to-one conversation is read as one ordered, limited scan per sender, merged", async () => {
    const narrow = [{ operator: "dm", operand: [partner.id] }];
    const [{ n }] = await deps.db.$queryRaw<[{ n: number }]>`
      SELECT count(*)::int AS n FROM message WHERE realm_id = ${realm.id}
        AND ((sender_id = ${reader.id} AND recipient_id = ${partner.recipientId})
          OR (sender_id = ${partner.id} AND recipient_id = ${reader.recipientId}))`;
    // Enough of a conversation that sorting all of it would show.
    expect(n).toBeGreaterThan(200);
    for (const [label, request] of ANCHORS) {
      const nodes = await plansOf(narrow, request);
      const plan = `${label}:\n${described(nodes)}`;
      // The ranges (the first unread message is found apart, through the reader's rows).
      const scans = nodes.filter(
        (n) =>
          n["Index Name"] === "message_realm_id_sender_id_recipient_id_id_idx" &&
          n["Index Cond"]?.includes("a.anchor"),
      );
      // One scan per sender and range (before and after the anchor), none a bitmap to be sorted.
      expect(scans.length, plan).toBeGreaterThanOrEqual(2);
      expect(new Set(scans.map((s) => s["Node Type"])), plan).toEqual(new Set(["Index Scan"]));
      for (const s of scans) expect(s["Actual Rows"], plan).toBeLessThanOrEqual(100);
      expect(rowsRead(nodes), plan).toBeLessThan(500);
    }
  });

  for (const operand of ["followed", "muted"])
    it(`is:${operand} tests the reader's topics as one hashed set, read once`, async () => {
      const nodes = await plansOf([{ operator: "is", operand }], ANCHORS[0]![1]);
      const plan = described(nodes);
      // user_topic is read once per statement (a hashed set), never once per message nor as
      // the driver of a join that reads every message of every such topic.
      const topics = nodes.filter((n) => n["Relation Name"] === "user_topic");
      expect(topics.length, plan).toBeGreaterThan(0);
      // (Loops 0: a branch of the condition never needed.)
      for (const t of topics) expect(t["Actual Loops"], plan).toBeLessThanOrEqual(1);
      expect(
        nodes.some((n) => n["Node Type"] === "Sort"),
        plan,
      ).toBe(false);
    });

  it("runs its sessions without JIT compilation", async () => {
    // A plan whose estimated cost passes jit_above_cost spent ~400 ms compiling with LLVM to run
    // in a few milliseconds (server/db/index.ts).
    const [row] = await deps.db.$queryRaw<{ jit: string }[]>`SHOW jit`;
    expect(row!.jit).toBe("off");
  });

  it("register's unread_msgs walks the reader's unread index and reaches message by key", async () => {
    const plans: PlanNode[] = [];
    await unreadMessages(explaining(deps.db, plans, []), reader.id, { emptyTopicName: null });
    expect(plans).toHaveLength(1);
    const nodes = nodesOf(plans[0]!);
    const plan = described(nodes);
    // user_message only through the unread index (scanned, or a bitmap of it), message only by
    // its key: never a scan of either table whose length grows with the history.
    const touching = nodes.filter(
      (n) =>
        n["Relation Name"] === "message" ||
        n["Relation Name"] === "user_message" ||
        n["Index Name"]?.startsWith("user_message") ||
        n["Index Name"]?.startsWith("message"),
    );
    expect(
      touching.filter((n) => n["Node Type"] === "Seq Scan"),
      plan,
    ).toEqual([]);
    expect([...new Set(touching.map((n) => n["Index Name"]).filter(Boolean))].sort(), plan).toEqual(
      ["message_pkey", "user_message_unread_idx"],
    );
    expect(touching.find((n) => n["Relation Name"] === "message")?.["Node Type"], plan).toBe(
      "Index Scan",
    );
  });

  it("a long-poll reads its window of the event log by the xid index, however long the log", async () => {
    // 20,000 older rows for someone else (a busy organization's last minutes), then a queue
    // whose window starts above them. Its poll must find its (empty) window by the xid range:
    // walking the log by id and filtering (10 ms per poll at 7,500 rows) made delivery slower
    // with every event the log kept.
    const other = reader.id + 1;
    await deps.db.$executeRaw`
      INSERT INTO event_log (xid, realm_id, type, event, user_ids)
      SELECT pg_current_xact_id()::text::bigint - 20000 + g, ${realm.id}, 'message',
             jsonb_build_object('type', 'message', 'message', jsonb_build_object('content', repeat('x', 800))),
             ARRAY[${other}]::int[]
      FROM generate_series(1, 20000) AS g`;
    await deps.db.$executeRaw`ANALYZE event_log`;
    const limits = { maxQueuesPerUser: 10, maxEventsPerQueue: 1000 };
    const queueId = await createQueue(
      deps.db,
      {
        realmId: realm.id,
        userId: reader.id,
        eventTypes: null,
        options: {
          applyMarkdown: true,
          clientGravatar: false,
          allPublicStreams: false,
          clientCapabilities: {},
        },
        narrow: [],
      },
      limits,
    );
    // Planned as the server's prepared statement is after its fifth run: generically, without
    // its parameters' values.
    const plans: PlanNode[] = [];
    await deps.db.$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL plan_cache_mode = force_generic_plan`;
      await pollQueues(explaining(tx, plans), [{ queueId, userId: reader.id, ack: -1 }], limits);
    });
    expect(plans).toHaveLength(1);
    const nodes = nodesOf(plans[0]!).filter((n) => (n["Actual Loops"] ?? 0) > 0);
    const log = nodes.filter(
      (n) => n["Relation Name"] === "event_log" || n["Index Name"]?.startsWith("event_log"),
    );
    const plan = described(log);
    expect(
      log.filter((n) => n["Node Type"] === "Seq Scan"),
      plan,
    ).toEqual([]);
    expect(
      log.some((n) => n["Index Name"] === "event_log_xid_idx"),
      plan,
    ).toBe(true);
    // No scan of the log reads (and throws away) the other rows.
    for (const n of log)
      expect((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0), plan).toBeLessThan(100);
  });
});
