/**
 * `npm run bench`: our server against a raw-SQL Express server doing the same work
 * (test/bench/raw-server.ts) and, on PostgreSQL, against the floor: Express plus pg, one query to
 * authenticate and one for the work, no fan-out (test/bench/minimal-server.ts). All answer on the
 * same database, as child processes running compiled JavaScript with plain `node` (ours is what
 * `npm start` runs, dist/server/main.js; the two yardsticks are bundled into dist/bench/ here), so
 * each one's RSS is its own and autocannon, here, shares no event loop with them.
 *
 * - DATABASE_URL set: a fresh database `bench_<random>` on that server (dropped at the end). Our
 *   server starts once to migrate it, `npm run manage -- populate-db` fills it, then our server and
 *   the raw server run at the same time and are benched alternately, operation by operation.
 * - Otherwise: embedded PGlite in a temporary DATA_DIR, PGLITE_FSYNC=off (the raw server opens it
 *   with `new PGlite(dir)`, whose default is fsync off too). One process owns a PGlite directory, so
 *   our server is benched first and stopped, then the raw server runs on the same directory.
 *
 * Per operation: req/s, latency p50/p99, ours/raw and ours/minimal, and on PostgreSQL what the
 * validator alone costs the minimal server (the minimal server again with MINIMAL_VALIDATOR=1,
 * "min.+v./m": the ceiling of ours/minimal on the stack the contract fixes). Each scenario: 10 connections,
 * 1 s warm-up, then BENCH_SECONDS (default 5). Then: RSS of our server once started and after the
 * load (VmRSS, VmHWM), start-up time of our server on the migrated database (median of 3), delivery latency through the event
 * queue of a message and of a typing notification (one process; and on PostgreSQL, two processes
 * on one database), the statements of POST /typing (from the request log), and on PGlite (or with
 * BENCH_DURABILITY=1; BENCH_DURABILITY=0 skips it) the cost of durability: POST /messages with
 * PGLITE_FSYNC on and off; on PostgreSQL, the scaling from one process to two behind nginx
 * (test/bench/nginx.ts: GET /messages and POST /messages, RATE_LIMITING=false). Every target is
 * printed with PASS or FAIL; only failed requests fail the run (the figures are noisy on a shared
 * machine: compare ratios within one run).
 */
import autocannon from "autocannon";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import {
  cleanUp,
  compileBenchServers,
  interrupted,
  memoryOf,
  onCleanUp,
  ROOT,
  run,
  startServer,
  stopServer,
  type Child,
} from "./bench/children.ts";
import { measureDelivery, type DeliveryResult } from "./bench/delivery.ts";
import { quantile } from "./soak/stats.ts";
import { measureScaling } from "./bench/nginx.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 10;
const DELIVERY_MESSAGES = 50;
const POLL_TIMEOUT_MS = 3000;
const OURS = "dist/server/main.js";
const RAW = "dist/bench/raw-server.js";
const MINIMAL = "dist/bench/minimal-server.js";
/** The minimal server with our validator chain mounted (MINIMAL_VALIDATOR=1): the stack's floor. */
const MINIMAL_VALIDATED = "minimal server + validator";
const adminUrl = process.env.DATABASE_URL || undefined;
const kind: "postgres" | "pglite" = adminUrl ? "postgres" : "pglite";
const runDurability =
  process.env.BENCH_DURABILITY === "1" ||
  (kind === "pglite" && process.env.BENCH_DURABILITY !== "0");

const T = {
  /** ours/raw (the same-work server), on PostgreSQL. */
  ratio: { "GET /messages/{id}": 1.0, "GET /users/me": 0.8, "POST /messages": 0.7 } as Record<
    string,
    number
  >,
  /** ours/minimal (Express and pg, no validator), on PostgreSQL. */
  minimal: { "GET /messages/{id}": 0.8, "GET /users/me": 0.9, "POST /messages": 0.5 } as Record<
    string,
    number
  >,
  rssStartedMiB: 150,
  rssMiB: kind === "postgres" ? 200 : 350,
  startS: 1,
  deliveryOneMs: 5,
  deliveryTwoMs: 20,
  /** A whole-topic move of 10,000 messages (PostgreSQL), and how it may grow from 1,000. */
  move10kMs: 1000,
  moveGrowth: 10,
};
const MOVE_SIZES = [1000, 10000] as const;

interface Scenario {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: string;
  raw: boolean;
}
interface Load {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
  /** Requests sent, the 1 s warm-up included. */
  sent: number;
}

const POST_BODY = "type=stream&to=Verona&topic=bench&content=Hello%20**bench**";
/** A client's minute ping (POST /users/me/presence); after the first, it moves no stored time. */
const PRESENCE_PING = "POST /users/me/presence (ping)";
let failures = 0;
const targets: { label: string; ok: boolean }[] = [];
const mark = (label: string, ok: boolean) => (targets.push({ label, ok }), ok ? "PASS" : "FAIL");
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const ms = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(1));
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);
const basic = (u: { email: string; api_key: string }) =>
  "Basic " + Buffer.from(`${u.email}:${u.api_key}`).toString("base64");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function load(base: string, s: Scenario, auth: string, duration = seconds): Promise<Load> {
  const opts = {
    url: base + s.path,
    method: s.method,
    body: s.body,
    headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
    connections: CONNECTIONS,
  };
  const warm = await autocannon({ ...opts, duration: 1 });
  const r = await autocannon({ ...opts, duration });
  const bad = r.non2xx + r.errors;
  failures += bad;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    bad,
    sent: warm.requests.total + r.requests.total,
  };
}
const show = (l: Load) =>
  `${fmt(l.rps)} req/s, p50 ${ms(l.p50)} ms, p99 ${ms(l.p99)} ms${l.bad ? `, ${l.bad} FAILED` : ""}`;

async function api(base: string, path: string, auth: string): Promise<any> {
  const res = await fetch(base + path, { headers: { authorization: auth } });
  const body = (await res.json()) as { result?: string; msg?: string };
  if (!res.ok || body.result !== "success")
    throw new Error(`GET ${path}: HTTP ${res.status} ${body.msg ?? ""}`);
  return body;
}

async function stop(child: Child) {
  const code = await stopServer(child);
  if (code !== 0) console.log(`  (note: ${child.name} exited with code ${code} on SIGTERM)`);
}

function describeDelivery(r: DeliveryResult | string): string {
  if (typeof r === "string") return r;
  const timeouts = `${r.timedOut}/${r.attempts} timed out${r.stopped ? ` (${r.stopped})` : ""}`;
  if (r.afterResponse.length === 0) return `no message delivered: ${timeouts}`;
  return `p50 ${ms(quantile(r.afterResponse, 0.5))} ms, p99 ${ms(quantile(r.afterResponse, 0.99))} ms after the POST's response (from its start: p50 ${ms(quantile(r.afterStart, 0.5))} ms, p99 ${ms(quantile(r.afterStart, 0.99))} ms); ${timeouts}`;
}
function deliveryTarget(label: string, r: DeliveryResult | string, limit: number): string {
  if (typeof r === "string") return "";
  const ok =
    r.afterResponse.length > 0 && r.timedOut === 0 && quantile(r.afterResponse, 0.5) <= limit;
  return `— target p50 ≤ ${limit} ms, none timed out ${mark(label, ok)}`;
}

/** Runs SQL on the bench database while no server holds it (PGlite) or beside them (PostgreSQL). */
type Sql = (text: string, params?: unknown[]) => Promise<any[]>;
async function withDatabase<R>(
  env: Record<string, string | undefined>,
  fn: (sql: Sql) => Promise<R>,
): Promise<R> {
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      return await fn(async (text, params) => (await client.query(text, params as unknown[])).rows);
    } finally {
      await client.end();
    }
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const db = await PGlite.create({ dataDir: env.PGLITE_DIR! });
  try {
    return await fn(
      async (text, params) => (await db.query(text, params as unknown[])).rows as any[],
    );
  } finally {
    await db.close();
  }
}

/**
 * A topic of n messages in Verona (copies of its first message, with every subscriber's row), in
 * one statement; returns its last message's id.
 */
async function seedTopic(sql: Sql, topic: string, n: number): Promise<number> {
  await sql(
    `WITH src AS (SELECT realm_id, sender_id, recipient_id, content, rendered_content, sending_client_id FROM message
                  WHERE recipient_id = (SELECT recipient_id FROM stream WHERE name = 'Verona') ORDER BY id LIMIT 1),
     ins AS (INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version, date_sent,
                                  sending_client_id, type, is_channel_message)
             SELECT realm_id, sender_id, recipient_id, $1, content || ' ' || g, rendered_content, 1, now(), sending_client_id, 1, true
             FROM src, generate_series(1, $2::int) AS g RETURNING id, recipient_id)
     INSERT INTO user_message (user_profile_id, message_id, flags)
     SELECT s.user_profile_id, ins.id, 0 FROM ins JOIN subscription s ON s.recipient_id = ins.recipient_id AND s.active`,
    [topic, n],
  );
  return (await sql("SELECT max(id) AS id FROM message WHERE subject = $1", [topic]))[0].id;
}

/** Wall time of one PATCH moving a whole topic (the raw server: its one UPDATE). */
async function timeMove(
  base: string,
  auth: string,
  messageId: number,
  topic: string,
): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${base}/messages/${messageId}`, {
    method: "PATCH",
    headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ topic, propagate_mode: "change_all" }),
  });
  const body = (await res.json()) as { result?: string; msg?: string };
  const elapsed = performance.now() - t0;
  if (body.result !== "success") {
    failures++;
    throw new Error(`PATCH /messages/${messageId}: HTTP ${res.status} ${body.msg}`);
  }
  return elapsed;
}

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), "chat-server-bench-"));
  onCleanUp(() => rmSync(work, { recursive: true, force: true }));
  const dataDir = join(work, "data");
  // Rate limits off (Zulip's RATE_LIMITING=False for load tests), except in their own row.
  const common = { LOG_LEVEL: "warn", VALIDATE_RESPONSES: "false", RATE_LIMITING: "false" };

  // --- The database -------------------------------------------------------------------------
  let dbEnv: Record<string, string | undefined>;
  let rawEnv: Record<string, string | undefined>;
  let dbLabel: string;
  if (adminUrl) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const name = `bench_${randomBytes(5).toString("hex")}`;
    await admin.query(`CREATE DATABASE ${name}`);
    onCleanUp(async () => {
      await admin
        .query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        .catch(() => admin.query(`DROP DATABASE IF EXISTS ${name}`));
      await admin.end();
    });
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    dbEnv = { DATABASE_URL: url.toString(), DATA_DIR: dataDir };
    rawEnv = { DATABASE_URL: url.toString() };
    const version = (await admin.query<{ server_version: string }>("SHOW server_version")).rows[0]!
      .server_version;
    dbLabel = `PostgreSQL ${version} at ${url.host}, database ${name} (dropped at the end)`;
  } else {
    dbEnv = { DATABASE_URL: undefined, DATA_DIR: dataDir, PGLITE_FSYNC: "off" };
    rawEnv = { DATABASE_URL: undefined, PGLITE_DIR: join(dataDir, "postgres") };
    const version = JSON.parse(
      readFileSync(join(ROOT, "node_modules/@electric-sql/pglite/package.json"), "utf8"),
    ).version;
    dbLabel = `embedded PGlite ${version} in ${join(dataDir, "postgres")}, PGLITE_FSYNC=off for our server (the raw server: PGlite's default, fsync off)`;
  }
  const oursEnv = { ...common, ...dbEnv };
  const cpus = os.cpus();
  console.log(
    `bench: ${seconds} s per scenario after a 1 s warm-up, ${CONNECTIONS} connections, autocannon in the parent process`,
  );
  console.log(`database: ${dbLabel}`);
  const loadAtStart = os.loadavg()[0]!;
  console.log(
    `machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? "?"}, Node ${process.version}, load average ${loadAtStart.toFixed(2)}; servers: node (compiled), LOG_LEVEL=warn, production defaults`,
  );
  await compileBenchServers();

  // --- Set-up: migrate (our server's first start), populate, start-up time ---------------------
  const first = await startServer("our server (first start)", OURS, oursEnv);
  await stop(first.child);
  const credsFile = join(work, "creds.json");
  await run(
    "npm",
    ["run", "--silent", "manage", "--", "populate-db", "--credentials", credsFile],
    oursEnv,
  );
  const creds = JSON.parse(readFileSync(credsFile, "utf8")) as {
    users: Record<string, { email: string; api_key: string; user_id: number }>;
    channels: Record<string, { stream_id: number }>;
  };
  const hamlet = basic(creds.users.hamlet!);
  const othello = basic(creds.users.othello!);
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await startServer("our server", OURS, oursEnv);
    starts.push(s.readyMs / 1000);
    await stop(s.child);
  }
  console.log(
    `set-up: first start (creates and migrates the database) ${fmt(first.readyMs / 1000, 2)} s; populate-db done; start-up ${starts.map((s) => fmt(s, 2)).join(", ")} s`,
  );

  // --- Throughput --------------------------------------------------------------------------------
  const ours = (await startServer("our server", OURS, oursEnv)).child;
  const oursIdle = memoryOf(ours.pid);
  let rawIdle: ReturnType<typeof memoryOf>;
  const firstMessage: number = (
    await api(ours.base, "/messages?anchor=oldest&num_before=0&num_after=1", hamlet)
  ).messages[0].id;
  const scenarios: Scenario[] = [
    { name: "GET /messages/{id}", method: "GET", path: `/messages/${firstMessage}`, raw: true },
    { name: "GET /users/me", method: "GET", path: "/users/me", raw: true },
    { name: "POST /messages", method: "POST", path: "/messages", body: POST_BODY, raw: true },
    {
      name: "POST /typing",
      method: "POST",
      path: "/typing",
      body: `op=start&to=%5B${creds.users.othello!.user_id}%5D`,
      raw: true,
    },
    { name: "GET /server_settings", method: "GET", path: "/server_settings", raw: false },
    { name: "GET /users/{email}", method: "GET", path: "/users/iago@zulip.com", raw: false },
    {
      name: PRESENCE_PING,
      method: "POST",
      path: "/users/me/presence",
      body: "status=active&ping_only=true",
      raw: true,
    },
    {
      name: "GET /messages (newest 20, Verona)",
      method: "GET",
      path: `/messages?anchor=newest&num_before=20&narrow=${encodeURIComponent('[{"operator":"channel","operand":"Verona"}]')}`,
      raw: false,
    },
  ];
  const results = new Map<string, { ours?: Load; raw?: Load; minimal?: Load; validated?: Load }>(
    scenarios.map((s) => [s.name, {}]),
  );
  let pingCommits: number | undefined;
  let oursMem: ReturnType<typeof memoryOf>;
  let rawMem: ReturnType<typeof memoryOf>;
  let minimalMem: ReturnType<typeof memoryOf>;
  const deliveryOne = { result: "not run" as DeliveryResult | string };
  const deliveryTwo = { result: "not run" as DeliveryResult | string };
  const typingOne = { result: "not run" as DeliveryResult | string };
  const typingTwo = { result: "not run" as DeliveryResult | string };
  let typingCost = "not run";
  const typingProbe = { kind: "typing", to: creds.users.hamlet!.user_id } as const;
  const delivery = (pollBase: string, sendBase: string, probe?: typeof typingProbe) =>
    measureDelivery({
      pollBase,
      sendBase,
      authA: hamlet,
      authB: othello,
      count: DELIVERY_MESSAGES,
      timeoutMs: POLL_TIMEOUT_MS,
      maxConsecutiveTimeouts: 3,
      probe,
    }).catch((e: Error) => {
      failures++;
      return `failed: ${e.message}`;
    });

  console.log(
    `\nrunning (${kind === "postgres" ? "both servers up, alternately per operation" : "our server, then the raw server on the same data directory"}):`,
  );
  if (kind === "postgres") {
    const raw = (await startServer("raw server", RAW, rawEnv)).child;
    const minimal = (await startServer("minimal server", MINIMAL, rawEnv)).child;
    const validated = (
      await startServer(MINIMAL_VALIDATED, MINIMAL, { ...rawEnv, MINIMAL_VALIDATOR: "1" })
    ).child;
    rawIdle = memoryOf(raw.pid);
    for (const s of scenarios) {
      const r = results.get(s.name)!;
      // Transactions per ping: PostgreSQL's count over the load, less the background work's
      // (scheduled delivery, the event log) at its rate over as long with no load.
      const idle = s.name === PRESENCE_PING ? await commitRate(dbEnv) : 0;
      const before: [number, number] = s.name === PRESENCE_PING ? await commitsOf(dbEnv) : [0, 0];
      r.ours = await load(ours.base, s, hamlet);
      if (s.name === PRESENCE_PING) {
        const after = await commitsOf(dbEnv);
        pingCommits = (after[0] - before[0] - idle * (after[1] - before[1])) / r.ours.sent;
      }
      console.log(`  ours    ${pad(s.name, 34)} ${show(r.ours)}`);
      if (s.raw) {
        r.raw = await load(raw.base, s, hamlet);
        console.log(`  raw     ${pad(s.name, 34)} ${show(r.raw)}`);
        r.minimal = await load(minimal.base, s, hamlet);
        console.log(`  minimal ${pad(s.name, 34)} ${show(r.minimal)}`);
        // Only where the validator sees what our server's does: the minimal server does not
        // decode JSON in form fields (POST /typing's `to`), so the validator would refuse it.
        if (T.minimal[s.name] !== undefined) {
          r.validated = await load(validated.base, s, hamlet);
          console.log(`  min.+v. ${pad(s.name, 34)} ${show(r.validated)}`);
        }
      }
    }
    oursMem = memoryOf(ours.pid);
    rawMem = memoryOf(raw.pid);
    minimalMem = memoryOf(minimal.pid);
    await stop(raw);
    await stop(minimal);
    await stop(validated);
    deliveryOne.result = await delivery(ours.base, ours.base);
    typingOne.result = await delivery(ours.base, ours.base, typingProbe);
    const second = (await startServer("our second server", OURS, oursEnv)).child;
    deliveryTwo.result = await delivery(ours.base, second.base);
    typingTwo.result = await delivery(ours.base, second.base, typingProbe);
    await stop(second);
    await stop(ours);
    typingCost = await typingStatements(oursEnv, creds);
  } else {
    for (const s of scenarios) {
      const r = results.get(s.name)!;
      r.ours = await load(ours.base, s, hamlet);
      console.log(`  ours ${pad(s.name, 34)} ${show(r.ours)}`);
    }
    oursMem = memoryOf(ours.pid);
    deliveryOne.result = await delivery(ours.base, ours.base);
    typingOne.result = await delivery(ours.base, ours.base, typingProbe);
    deliveryTwo.result = "n/a on the embedded database (one process per data directory)";
    typingTwo.result = deliveryTwo.result;
    await stop(ours);
    typingCost = await typingStatements(oursEnv, creds);
    const raw = (await startServer("raw server", RAW, rawEnv)).child;
    rawIdle = memoryOf(raw.pid);
    for (const s of scenarios.filter((s) => s.raw)) {
      const r = results.get(s.name)!;
      r.raw = await load(raw.base, s, hamlet);
      console.log(`  raw  ${pad(s.name, 34)} ${show(r.raw)}`);
    }
    rawMem = memoryOf(raw.pid);
    await stop(raw);
  }

  // --- Scaling: one process against two behind nginx (PostgreSQL) -------------------------------
  let scalingLines = [
    "scaling behind nginx: n/a on the embedded database (one process per data directory)",
  ];
  if (kind === "postgres") {
    const scaled = scenarios.filter(
      (s) => s.name.startsWith("GET /messages") || s.name === "POST /messages",
    );
    console.log(
      `\nscaling: the same load through nginx (deploy/nginx.conf) to one process, then to two:`,
    );
    const rows = await measureScaling({
      script: OURS,
      env: oursEnv,
      scenarios: scaled,
      load: (base, s) => load(base, s, hamlet),
    });
    scalingLines =
      typeof rows === "string"
        ? [`scaling behind nginx: ${rows}`]
        : rows.map(
            (r) =>
              `scaling behind nginx, ${pad(r.name, 34)} one process ${show(r.one)}; two ${show(r.two)}; two/one ×${(r.two.rps / r.one.rps).toFixed(2)} (${cpus.length} CPUs shared with nginx, PostgreSQL and the load generator)`,
          );
    for (const l of scalingLines) console.log(`  ${l}`);
  }

  // --- Durability (embedded database on disk) -----------------------------------------------------
  const durable: { fsync: boolean; load: Load; commitMs: number }[] = [];
  if (runDurability) {
    let dir = dataDir;
    let auth = hamlet;
    if (kind === "postgres") {
      dir = join(work, "durability");
      const env = { ...common, DATABASE_URL: undefined, DATA_DIR: dir, PGLITE_FSYNC: "off" };
      await stop((await startServer("our server (embedded, first start)", OURS, env)).child);
      await run(
        "npm",
        [
          "run",
          "--silent",
          "manage",
          "--",
          "populate-db",
          "--credentials",
          join(work, "creds-durability.json"),
        ],
        env,
      );
      auth = basic(
        (JSON.parse(readFileSync(join(work, "creds-durability.json"), "utf8")) as typeof creds)
          .users.hamlet!,
      );
    }
    const diskSeconds = Math.min(seconds, 3);
    console.log(
      `\ndurability: POST /messages, embedded database on disk (${join(dir, "postgres")}), ${diskSeconds} s each:`,
    );
    for (const fsync of [false, true]) {
      const server = (
        await startServer(`our server (fsync ${fsync ? "on" : "off"})`, OURS, {
          ...common,
          DATABASE_URL: undefined,
          DATA_DIR: dir,
          PGLITE_FSYNC: fsync ? "on" : "off",
        })
      ).child;
      const l = await load(server.base, scenarios[2]!, auth, diskSeconds);
      await stop(server);
      const commitMs = await commitCost(join(dir, "postgres"), fsync);
      durable.push({ fsync, load: l, commitMs });
      console.log(
        `  fsync ${fsync ? "on " : "off"}  ${show(l)}; ${commitMs.toFixed(2)} ms per committed one-row INSERT`,
      );
    }
    const [off, on] = durable as [(typeof durable)[0], (typeof durable)[0]];
    console.log(
      `  with fsync on, POST /messages runs at ${fmt((on.load.rps / off.load.rps) * 100)}% of its fsync-off throughput on this disk`,
    );
  }

  // --- Whole-topic moves: ours (checks, history rows, notices, events) beside one raw UPDATE ---------
  const iago = basic((creds.users as Record<string, { email: string; api_key: string }>).iago!);
  const moveDb = kind === "postgres" ? rawEnv : { PGLITE_DIR: join(dataDir, "postgres") };
  const seeded = await withDatabase(moveDb, async (sql) => {
    const out: Record<string, number> = {};
    for (const n of MOVE_SIZES)
      for (const who of ["ours", "raw"])
        out[`${who}-${n}`] = await seedTopic(sql, `move ${who} ${n}`, n);
    return out;
  });
  const moves: Record<string, number> = {};
  console.log(`
whole-topic moves (PATCH /messages/{id}, topic + propagate_mode=change_all, as iago):`);
  for (const [who, script, env] of [
    ["ours", OURS, oursEnv],
    ["raw", RAW, rawEnv],
  ] as const) {
    const server = (
      await startServer(`${who === "ours" ? "our" : "raw"} server (moves)`, script, env)
    ).child;
    for (const n of MOVE_SIZES) {
      moves[`${who}-${n}`] = await timeMove(
        server.base,
        iago,
        seeded[`${who}-${n}`]!,
        `moved ${who} ${n}`,
      );
      console.log(`  ${who} ${lpad(String(n), 6)} messages: ${ms(moves[`${who}-${n}`]!)} ms`);
    }
    await stop(server);
  }
  const rateLimits = await rateLimitCost(oursEnv, hamlet);
  const rateLimitLine = `rate limits (GET /users/me, rules too high to refuse): on ${fmt(rateLimits.on.rps)} req/s p50 ${ms(rateLimits.on.p50)} ms, off ${fmt(rateLimits.off.rps)} req/s p50 ${ms(rateLimits.off.p50)} ms; on/off ${(rateLimits.on.rps / rateLimits.off.rps).toFixed(2)}; the limiter alone ${rateLimits.hitMicros.toFixed(2)} µs per request served from a slice`;
  console.log(`\n${rateLimitLine}`);
  const growth = moves["ours-10000"]! / moves["ours-1000"]!;
  const move10kTarget =
    kind === "postgres"
      ? `target < ${T.move10kMs} ms ${mark(`move of 10,000 < ${T.move10kMs} ms`, moves["ours-10000"]! < T.move10kMs)}`
      : `target < ${T.move10kMs} ms on PostgreSQL only`;
  const growthTarget = `target < ${T.moveGrowth} ${mark(`t(10,000)/t(1,000) < ${T.moveGrowth}`, growth < T.moveGrowth)}`;
  const moveLine = `whole-topic move: ours ${ms(moves["ours-1000"]!)} ms (1,000), ${ms(moves["ours-10000"]!)} ms (10,000) ${move10kTarget}; t(10,000)/t(1,000) ${growth.toFixed(2)} ${growthTarget}; raw UPDATE ${ms(moves["raw-1000"]!)} ms, ${ms(moves["raw-10000"]!)} ms`;

  // --- Report ----------------------------------------------------------------------------------------
  const W = 34;
  const cols = (l?: Load) =>
    l
      ? `${lpad(fmt(l.rps), 10)} ${lpad(ms(l.p50), 6)} ${lpad(ms(l.p99), 6)}`
      : `${lpad("—", 10)} ${lpad("—", 6)} ${lpad("—", 6)}`;
  const lines: string[] = [];
  lines.push(
    `${pad("operation", W)} │ ${lpad("ours req/s", 10)} ${lpad("p50 ms", 6)} ${lpad("p99 ms", 6)} │ ${lpad("raw req/s", 10)} ${lpad("p50 ms", 6)} ${lpad("p99 ms", 6)} │ ${lpad("min. req/s", 10)} │ ours/raw │ ours/min. │ min.+v./m │ target (ours/raw)`,
  );
  lines.push(
    `${"─".repeat(W)}─┼─${"─".repeat(24)}─┼─${"─".repeat(24)}─┼────────────┼──────────┼───────────┼───────────┼───────────`,
  );
  const summaryRows: string[] = [];
  for (const s of scenarios) {
    const r = results.get(s.name)!;
    const ratio = r.ours && r.raw ? r.ours.rps / r.raw.rps : undefined;
    const toMinimal = r.ours && r.minimal ? r.ours.rps / r.minimal.rps : undefined;
    const want = T.ratio[s.name];
    let target = "";
    if (ratio !== undefined && want !== undefined)
      target =
        kind === "postgres"
          ? `≥ ${want.toFixed(2)} ${mark(`${s.name} ours/raw ≥ ${want}`, ratio >= want)}`
          : `≥ ${want.toFixed(2)} on PostgreSQL only`;
    const bad = (r.ours?.bad ?? 0) + (r.raw?.bad ?? 0) + (r.minimal?.bad ?? 0);
    const floor = r.validated && r.minimal ? r.validated.rps / r.minimal.rps : undefined;
    const wantMinimal = T.minimal[s.name];
    const minimalTarget =
      toMinimal === undefined || wantMinimal === undefined
        ? ""
        : ` (target ≥ ${wantMinimal} ${mark(`${s.name} ours/minimal ≥ ${wantMinimal}`, toMinimal >= wantMinimal)})`;
    const minimalText =
      toMinimal === undefined
        ? ""
        : ` | ours/minimal ${toMinimal.toFixed(2)}${minimalTarget} (minimal ${fmt(r.minimal!.rps)} req/s)` +
          (floor === undefined ? "" : ` | minimal + validator / minimal ${floor.toFixed(2)}`);
    lines.push(
      `${pad(s.name, W)} │ ${cols(r.ours)} │ ${cols(r.raw)} │ ${lpad(r.minimal ? fmt(r.minimal.rps) : "—", 10)} │ ${lpad(ratio === undefined ? "—" : ratio.toFixed(2), 8)} │ ${lpad(toMinimal === undefined ? "—" : toMinimal.toFixed(2), 9)} │ ${lpad(floor === undefined ? "—" : floor.toFixed(2), 9)} │ ${target}${bad ? `  ${bad} requests FAILED` : ""}`,
    );
    summaryRows.push(
      `${pad(s.name, W)} ours ${lpad(fmt(r.ours!.rps), 6)} req/s (p50 ${ms(r.ours!.p50)}, p99 ${ms(r.ours!.p99)} ms)` +
        (r.raw
          ? ` | raw ${lpad(fmt(r.raw.rps), 6)} req/s (p50 ${ms(r.raw.p50)}, p99 ${ms(r.raw.p99)} ms) | ours/raw ${ratio!.toFixed(2)}${target ? ` (target ${target})` : ""}${minimalText}`
          : " | ratio —"),
    );
  }
  const memText = (m: ReturnType<typeof memoryOf>, idle: ReturnType<typeof memoryOf>) =>
    m
      ? `${fmt(m.rss)} MiB (peak ${fmt(m.peak)} MiB, ${idle ? fmt(idle.rss) : "?"} MiB once started)`
      : "unavailable (no /proc)";
  const memTarget = oursMem
    ? `target ≤ ${T.rssMiB} MiB ${mark(`RSS after load ≤ ${T.rssMiB} MiB`, oursMem.rss <= T.rssMiB)}`
    : "";
  const startedTarget = oursIdle
    ? `target ≤ ${T.rssStartedMiB} MiB ${mark(`RSS once started ≤ ${T.rssStartedMiB} MiB`, oursIdle.rss <= T.rssStartedMiB)}`
    : "";
  const startedLine = `RSS of our server once started (GET /server_settings answered): ${oursIdle ? `${fmt(oursIdle.rss)} MiB` : "unavailable (no /proc)"} ${startedTarget}`;
  const minimalMemText = kind === "postgres" ? `; minimal ${memText(minimalMem, undefined)}` : "";
  const startMedian = median(starts);
  const startTarget = `target ≤ ${T.startS} s ${mark(`start ≤ ${T.startS} s`, startMedian <= T.startS)}`;
  const oneTarget = deliveryTarget("delivery one process", deliveryOne.result, T.deliveryOneMs);
  const twoTarget =
    kind === "postgres"
      ? deliveryTarget("delivery two processes", deliveryTwo.result, T.deliveryTwoMs)
      : "";
  const typingOneTarget = deliveryTarget(
    "typing delivery one process",
    typingOne.result,
    T.deliveryOneMs,
  );
  const typingTwoTarget =
    kind === "postgres"
      ? deliveryTarget("typing delivery two processes", typingTwo.result, T.deliveryTwoMs)
      : "";
  const typingRow = results.get("POST /typing")!;
  const typingLine = `POST /typing (direct, to one user): ours p50 ${ms(typingRow.ours!.p50)} ms, raw p50 ${typingRow.raw ? ms(typingRow.raw.p50) : "—"} ms; statements per request (request log, warm): ${typingCost}`;

  console.log(
    `\nthroughput (${kind === "postgres" ? "PostgreSQL" : "PGlite"}, ${seconds} s each, ${CONNECTIONS} connections):`,
  );
  for (const l of lines) console.log(l);
  console.log(`\n${startedLine}`);
  console.log(
    `memory after the load (VmRSS, VmHWM): ours ${memText(oursMem, oursIdle)} ${memTarget}; raw ${memText(rawMem, rawIdle)}${minimalMemText}`,
  );
  console.log(
    `start-up of our server on the migrated database, until GET /server_settings answers: median ${fmt(startMedian, 2)} s of ${starts.map((s) => fmt(s, 2)).join(", ")} s ${startTarget}`,
  );
  console.log(
    `delivery through the event queue (${DELIVERY_MESSAGES} messages one after another, poll timeout ${POLL_TIMEOUT_MS / 1000} s):`,
  );
  console.log(`  one process:   ${describeDelivery(deliveryOne.result)} ${oneTarget}`);
  console.log(`  two processes: ${describeDelivery(deliveryTwo.result)} ${twoTarget}`);
  console.log(
    `typing notifications (${DELIVERY_MESSAGES} one after another, start and stop in turn):`,
  );
  console.log(`  one process:   ${describeDelivery(typingOne.result)} ${typingOneTarget}`);
  console.log(`  two processes: ${describeDelivery(typingTwo.result)} ${typingTwoTarget}`);
  console.log(`  ${typingLine}`);
  const ping = results.get(PRESENCE_PING)!.ours!;
  const pingLine = `presence ping: p50 ${ms(ping.p50)} ms, ${fmt(ping.rps)} req/s; 1 statement per ping, whether it moves the stored times or not (6 for a user coming back online), asserted in test/api/presence.test.ts${pingCommits === undefined ? "" : `; PostgreSQL committed ${pingCommits.toFixed(2)} transactions per ping during the load (background work subtracted)`}`;
  console.log(pingLine);
  let durableLine = "";
  if (durable.length === 2) {
    const [off, on] = durable as [(typeof durable)[0], (typeof durable)[0]];
    durableLine = `durability (PGlite on disk, POST /messages): fsync off ${fmt(off.load.rps)} req/s, on ${fmt(on.load.rps)} req/s (${fmt((on.load.rps / off.load.rps) * 100)}%); one-row commit ${off.commitMs.toFixed(2)} ms off, ${on.commitMs.toFixed(2)} ms on`;
  }

  const met = targets.filter((t) => t.ok).length;
  const summary = [
    `── bench summary (${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC) ──`,
    `${kind === "postgres" ? dbLabel.replace(/, database .*/, "") : dbLabel.replace(/ in \/.*?,/, ",")}; ${cpus.length} CPUs; Node ${process.version}; BENCH_SECONDS=${seconds}, ${CONNECTIONS} connections; load average ${loadAtStart.toFixed(2)} at start, ${os.loadavg()[0]!.toFixed(2)} at end`,
    ...summaryRows,
    startedLine,
    `RSS after load: ours ${memText(oursMem, oursIdle)} ${memTarget}; raw ${memText(rawMem, rawIdle)}${minimalMemText}`,
    `start-up (median of 3): ${fmt(startMedian, 2)} s ${startTarget}`,
    `delivery, one process: ${describeDelivery(deliveryOne.result)} ${oneTarget}`,
    `delivery, two processes: ${describeDelivery(deliveryTwo.result)} ${twoTarget}`,
    typingLine,
    `typing delivery, one process: ${describeDelivery(typingOne.result)} ${typingOneTarget}`,
    `typing delivery, two processes: ${describeDelivery(typingTwo.result)} ${typingTwoTarget}`,
    ...(durableLine ? [durableLine] : []),
    ...scalingLines,
    pingLine,
    moveLine,
    rateLimitLine,
    `targets met: ${met}/${targets.length}${
      targets.some((t) => !t.ok)
        ? ` (missed: ${targets
            .filter((t) => !t.ok)
            .map((t) => t.label)
            .join("; ")})`
        : ""
    }; failed requests: ${failures}`,
  ];
  console.log(`\n${summary.join("\n")}`);
}

/**
 * GET /users/me with Zulip's rate limits on and off, each on a server of its own started in turn
 * (the embedded database allows one at a time). The rules are high enough never to refuse, so a
 * lease covers 5% of 10^8 requests: this is the cost of counting in memory and of the headers. At
 * Zulip's default rules a user's requests take a lease (one statement) every 10 requests, on
 * PostgreSQL only (test/api/rate-limits.test.ts asserts it).
 */
async function rateLimitCost(
  env: Record<string, string | undefined>,
  auth: string,
): Promise<{ on: Load; off: Load; hitMicros: number }> {
  const scenario: Scenario = {
    name: "GET /users/me",
    method: "GET",
    path: "/users/me",
    raw: false,
  };
  const high = JSON.stringify({ api_by_user: [[60, 1e8]], api_by_ip: [[60, 1e8]] });
  const result: Partial<Record<"on" | "off", Load>> = {};
  console.log(`\nrate limits (GET /users/me, a server of its own each):`);
  for (const on of [false, true]) {
    const server = (
      await startServer(`our server (rate limits ${on ? "on" : "off"})`, OURS, {
        ...env,
        RATE_LIMITING: String(on),
        RATE_LIMITING_RULES: high,
      })
    ).child;
    try {
      const l = await load(server.base, scenario, auth);
      result[on ? "on" : "off"] = l;
      console.log(`  ${on ? "on " : "off"} ${pad(scenario.name, 34)} ${show(l)}`);
    } finally {
      await stop(server);
    }
  }
  // The limiter alone, in this process (no HTTP around it): what a request served from its slice costs.
  const { RateLimiter, memoryLeaseStore } = await import("../server/lib/auth/rate-limit.ts");
  const { DEFAULT_RATE_LIMITING_RULES } = await import("../server/config.ts");
  const limiter = new RateLimiter(
    memoryLeaseStore(),
    { ...DEFAULT_RATE_LIMITING_RULES, api_by_user: [[60, 1e9]] },
    () => new Date(),
  );
  const hits = 200_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < hits; i++) await limiter.hit("api_by_user", `user:${i % 100}`);
  const hitMicros = Number(process.hrtime.bigint() - t0) / hits / 1000;
  return { ...(result as { on: Load; off: Load }), hitMicros };
}

/**
 * The SQL statements of POST /typing on a warm server, direct and to a channel, as its request
 * log says (a server of its own at LOG_LEVEL=info; on PGlite, run while no other holds the data).
 */
async function typingStatements(
  env: Record<string, string | undefined>,
  creds: {
    users: Record<string, { email: string; api_key: string; user_id: number }>;
    channels: Record<string, { stream_id: number }>;
  },
): Promise<string> {
  const server = (await startServer("our server (statements)", OURS, { ...env, LOG_LEVEL: "info" }))
    .child;
  try {
    const auth = basic(creds.users.hamlet!);
    const bodies = {
      direct: `op=start&to=%5B${creds.users.othello!.user_id}%5D`,
      channel: `type=channel&op=start&stream_id=${creds.channels.Verona!.stream_id}&topic=bench`,
    };
    const counts: Record<string, number | undefined> = {};
    for (const [label, body] of Object.entries(bodies)) {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${server.base}/typing`, {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
          body,
        });
        await res.arrayBuffer();
        if (!res.ok) failures++;
      }
      await new Promise((r) => setTimeout(r, 100)); // the log line is written at the response's close
      const lines = server
        .output()
        .split("\n")
        .filter((l) => l.includes('"set-typing-status"'))
        .map((l) => JSON.parse(l) as { statements?: number });
      counts[label] = lines.at(-1)?.statements;
    }
    return `direct ${counts.direct ?? "?"}, channel ${counts.channel ?? "?"} ${mark("POST /typing ≤ 2 statements", (counts.direct ?? 99) <= 2 && (counts.channel ?? 99) <= 2)} (target ≤ 2)`;
  } finally {
    await stop(server);
  }
}

/**
 * Transactions PostgreSQL has committed in the bench database (each statement outside a
 * transaction is one), and when: after a pause for the statistics to be flushed (PostgreSQL 15
 * flushes them at most once a second).
 */
async function commitsOf(env: Record<string, string | undefined>): Promise<[number, number]> {
  await new Promise((r) => setTimeout(r, 1500));
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      "SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()",
    );
    return [Number(rows[0]!.n), performance.now()];
  } finally {
    await client.end();
  }
}

/** Transactions per millisecond with no load (the servers' background work, and our own reads). */
async function commitRate(env: Record<string, string | undefined>): Promise<number> {
  const a = await commitsOf(env);
  await new Promise((r) => setTimeout(r, 3000));
  const b = await commitsOf(env);
  return (b[0] - a[0]) / (b[1] - a[1]);
}

/** ms per committed one-row INSERT, sequential, on the data directory (no server running). */
async function commitCost(dir: string, fsync: boolean): Promise<number> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { pgliteDurability } = await import("../server/db/durability.ts");
  const db = await PGlite.create({ dataDir: dir, ...(fsync ? await pgliteDurability(dir) : {}) });
  try {
    await db.exec("CREATE TABLE IF NOT EXISTS bench_commit (id serial PRIMARY KEY)");
    const n = 200;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await db.exec("INSERT INTO bench_commit DEFAULT VALUES");
    return (performance.now() - t0) / n;
  } finally {
    await db.close();
  }
}

let exitCode = 0;
try {
  await main();
} catch (e) {
  if (!interrupted()) console.error(`\nbench failed: ${(e as Error).stack ?? String(e)}`);
  exitCode = 2;
} finally {
  await cleanUp();
}
if (interrupted()) process.exit(130);
// A request that fails under load is a bug, not a slow result.
if (failures > 0) {
  console.error(`${failures} requests failed`);
  exitCode ||= 1;
}
process.exit(exitCode);
