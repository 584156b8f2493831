/**
 * `npm run bench`: throughput and latency of the main operations of the first slice, on a fresh
 * embedded database (or DATABASE_URL), with autocannon on loopback. Bounded: each scenario runs
 * for BENCH_SECONDS (default 5) with 10 connections, after a 1 s warm-up. Then the cost of
 * durability: POST /messages on an embedded database in a data directory on disk, with fsync on
 * (the default) and off (PGLITE_FSYNC=off), min(BENCH_SECONDS, 3) s each.
 */
import autocannon from "autocannon";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../server/app.ts";
import { configFromEnv } from "../server/config.ts";
import { openDatabase } from "../server/db.ts";
import { EventBus } from "../server/events.ts";
import { createLogger } from "../server/logger.ts";
import { populateDevRealm } from "../server/manage/populate-db.ts";
import { createTestDatabase, prepareTestDatabaseTemplate } from "./helpers/db.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
await prepareTestDatabaseTemplate();
const database = await createTestDatabase();
const config = { ...configFromEnv({}), externalHost: "zulip.testserver", validateResponses: process.env.BENCH_VALIDATE_RESPONSES === "true", logLevel: "silent" };
const deps = { db: database.prisma, events: new EventBus(), log: createLogger("silent"), config, now: () => new Date() };
const creds = await populateDevRealm(deps);
const server = createApp(deps).listen(0, "127.0.0.1");
await new Promise((r) => server.once("listening", r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
const hamlet = creds.users.hamlet!;
const auth = "Basic " + Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString("base64");
const firstMessage = (await database.prisma.message.findFirstOrThrow({ orderBy: { id: "asc" } })).id;

const scenarios: { name: string; method: "GET" | "POST"; path: string; body?: string }[] = [
  { name: "GET /server_settings (no auth)", method: "GET", path: "/server_settings" },
  { name: "GET /users/{email}", method: "GET", path: "/users/iago@zulip.com" },
  { name: "GET /messages/{message_id}", method: "GET", path: `/messages/${firstMessage}` },
  { name: "GET /messages (newest 20 in Verona)", method: "GET", path: `/messages?anchor=newest&num_before=20&narrow=${encodeURIComponent('[{"operator":"channel","operand":"Verona"}]')}` },
  { name: "POST /messages (channel)", method: "POST", path: "/messages", body: "type=stream&to=Verona&topic=bench&content=Hello%20**bench**" },
];

let failures = 0;
console.log(`bench: ${seconds}s per scenario, 10 connections, ${database.kind}, response validation ${config.validateResponses ? "on" : "off"}`);
for (const s of scenarios) {
  const opts = { url: base + s.path, method: s.method, body: s.body, headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" }, connections: 10 };
  await autocannon({ ...opts, duration: 1 });
  const r = await autocannon({ ...opts, duration: seconds });
  const bad = r.non2xx + r.errors;
  failures += bad;
  console.log(
    `${s.name.padEnd(40)} ${String(Math.round(r.requests.average)).padStart(6)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms${bad ? `  (${bad} failed)` : ""}`,
  );
}
const mem = process.memoryUsage();
console.log(`memory: rss ${Math.round(mem.rss / 2 ** 20)} MiB, heap ${Math.round(mem.heapUsed / 2 ** 20)} MiB`);
server.close();
deps.events.close();
await database.close();

// The cost of durability, on a data directory on disk (os.tmpdir()): the same directory opened
// with fsync off (first, as it is created and populated faster), then with fsync on.
{
  const diskSeconds = Math.min(seconds, 3);
  const dir = mkdtempSync(join(tmpdir(), "chat-server-bench-"));
  const results: Record<string, number> = {};
  console.log(`durability: POST /messages on an embedded database on disk (${dir}), ${diskSeconds}s each, 10 connections`);
  try {
    let diskAuth: string | undefined;
    for (const fsync of [false, true]) {
      const disk = await openDatabase({ dataDir: join(dir, "postgres"), fsync });
      const diskDeps = { ...deps, db: disk.prisma, events: new EventBus() };
      const diskServer = createApp(diskDeps).listen(0, "127.0.0.1");
      try {
        if (!diskAuth) {
          const h = (await populateDevRealm(diskDeps)).users.hamlet!;
          diskAuth = "Basic " + Buffer.from(`${h.email}:${h.api_key}`).toString("base64");
        }
        if (!diskServer.listening) await new Promise((r) => diskServer.once("listening", r));
        const url = `http://127.0.0.1:${(diskServer.address() as AddressInfo).port}/api/v1/messages`;
        const opts = { url, method: "POST" as const, body: "type=stream&to=Verona&topic=bench&content=Hello%20**bench**", headers: { authorization: diskAuth, "content-type": "application/x-www-form-urlencoded" }, connections: 10 };
        await autocannon({ ...opts, duration: 1 });
        const r = await autocannon({ ...opts, duration: diskSeconds });
        const bad = r.non2xx + r.errors;
        failures += bad;
        results[fsync ? "on" : "off"] = r.requests.average;
        // And the bare cost of a commit: sequential one-row INSERTs, each its own transaction.
        await disk.prisma.$executeRawUnsafe("CREATE TABLE IF NOT EXISTS bench_commit (id serial PRIMARY KEY)");
        const commits = 200;
        const t0 = performance.now();
        for (let i = 0; i < commits; i++) await disk.prisma.$executeRawUnsafe("INSERT INTO bench_commit DEFAULT VALUES");
        const perCommit = (performance.now() - t0) / commits;
        console.log(
          `${`POST /messages, on disk, fsync ${fsync ? "on " : "off"}`.padEnd(40)} ${String(Math.round(r.requests.average)).padStart(6)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms${bad ? `  (${bad} failed)` : ""}  | ${perCommit.toFixed(2)} ms per committed INSERT`,
        );
      } finally {
        diskServer.close();
        diskDeps.events.close();
        await disk.close();
      }
    }
    if (results.on && results.off) console.log(`with fsync on, POST /messages runs at ${Math.round((results.on / results.off) * 100)}% of its fsync-off throughput on this disk`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
// A request that fails under load is a bug, not a slow result.
if (failures > 0) {
  console.error(`${failures} requests failed`);
  process.exit(1);
}
