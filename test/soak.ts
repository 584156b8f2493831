/**
 * `npm run soak -- [--duration 10m] [--peak-seconds S] [--json FILE]`: our server under a steady
 * mixed load for a long while, to show that memory and latency stay flat and that no request
 * fails. The server is the compiled one (`npm start`'s dist/server/main.js) as a child process,
 * with production defaults except RATE_LIMITING=false (the load is many requests from few users)
 * and METRICS_PORT (its heap, from GET /metrics); its JSON request log (LOG_LEVEL=info, the
 * default) gives the SQL statements of each request.
 *
 * - DATABASE_URL set: a fresh database `soak_<random>` on that server, dropped at the end.
 *   Otherwise the embedded PGlite in a temporary DATA_DIR (removed at the end).
 *   With --use-database: DATABASE_URL, or DATA_DIR's embedded database, as they are (empty).
 * - The development organization (`manage populate-db`), as the users of test/soak/mix.ts.
 *
 * Then:
 * 1. peak: PEAK_CONNECTIONS clients send the mix back to back (closed loop) for --peak-seconds,
 *    with every user's event queue being long-polled; the mix's completed requests per second;
 * 2. soak: the mix OPEN-LOOP at half that rate, for --duration (default 10 minutes, or
 *    SOAK_SECONDS): requests leave on a fixed schedule whether or not earlier ones have answered,
 *    and a request's latency counts from when it was due (so a stalled server shows, rather than
 *    slowing the load down); the event queues go on being polled, acknowledged and renewed;
 * 3. per interval (a minute; a fifth of the run when it is under 5 minutes): RSS (VmRSS) at its
 *    end, mean heap used, p50/p99 per kind, requests and SQL statements, failures; at the end the
 *    least-squares slopes after the warm-up of RSS, heap and the mix's p99, and the verdicts (T):
 *    - no failed request: any non-2xx answer or network error, in either phase, and no request
 *      left unsent because too many were waiting;
 *    - memory flat: RSS slope < 1% and heap slope < 2% of their value at the end of the warm-up,
 *      per minute, when at least 3 minutes follow the warm-up; on shorter runs (CI) the slope says
 *      too little, and the growth after the warm-up must stay under 64 MiB instead;
 *    - latency flat: p99 slope < 5% of its value after the warm-up per minute (or < 1 ms/min), on
 *      the same long runs only.
 *    The exit code is 1 when a verdict fails, 2 when the run could not be made.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import pg from "pg";
import {
  cleanUp,
  freePort,
  interrupted,
  memoryOf,
  onCleanUp,
  ROOT,
  run,
  startServer,
  stopServer,
} from "./bench/children.ts";
import { Client, runPollers, type Outcome, type SoakUser } from "./soak/mix.ts";
import { quantile, slope } from "./soak/stats.ts";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string" },
    "peak-seconds": { type: "string" },
    json: { type: "string" },
    "use-database": { type: "boolean" },
  },
  strict: true,
});

/** "10m", "90s", "1h" or plain seconds. */
function seconds(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|min|h)?$/.exec(text.trim());
  if (!m) throw new Error(`--duration ${text}: give seconds, or a number followed by s, m or h`);
  return Number(m[1]) * ({ h: 3600, m: 60, min: 60 }[m[2] as string] ?? 1);
}

const DURATION = seconds(args.duration ?? process.env.SOAK_SECONDS ?? "10m");
const PEAK_SECONDS = Number(args["peak-seconds"] ?? Math.min(20, Math.max(4, DURATION / 5)));
const INTERVAL = DURATION >= 300 ? 60 : Math.max(2, DURATION / 5);
/** Memory and latency settle first (caches, the JIT, the database's buffers): judged after. */
const WARMUP = DURATION >= 300 ? 120 : INTERVAL;
const SAMPLE_EVERY = Math.min(5, INTERVAL / 5);
const PEAK_CONNECTIONS = 16;
/** Requests waiting for an answer beyond which the open loop stops sending (and fails the run). */
const MAX_IN_FLIGHT = 1000;
/** Each event-queue client re-registers every 0.5–1.5 × this (a client reloading). */
const RENEW_MS = 60_000;
const USERS = ["hamlet", "othello", "cordelia", "aaron", "prospero", "iago", "desdemona", "shiva"];
const T = {
  rssSlopePct: 1,
  heapSlopePct: 2,
  p99SlopePct: 5,
  p99SlopeFloorMs: 1,
  /** Slopes are judged only when this many seconds follow the warm-up. */
  judgedSpan: 180,
  shortGrowthMiB: 64,
};
const OURS = "dist/server/main.js";
const adminUrl = process.env.DATABASE_URL || undefined;

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
const ms = (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(1)) : "—");
const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.round(s % 60)).padStart(2, "0")}`;
const basic = (u: { email: string; api_key: string }) =>
  "Basic " + Buffer.from(`${u.email}:${u.api_key}`).toString("base64");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Bucket {
  latencies: Map<string, number[]>;
  failures: number;
  statements: number;
  /** Requests the server logged (the event polls and registers included). */
  logged: number;
  rss: number[];
  heap: number[];
}
const newBucket = (): Bucket => ({
  latencies: new Map(),
  failures: 0,
  statements: 0,
  logged: 0,
  rss: [],
  heap: [],
});

/** Kinds that are not the mix: event-queue clients (a poll's time is mostly its wait). */
const QUEUE_KINDS = new Set(["register", "events", "unregister"]);
const failures: { at: string; kind: string; error: string }[] = [];
let failureCount = 0;
let shed = 0;

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), "chat-server-soak-"));
  onCleanUp(() => rmSync(work, { recursive: true, force: true }));
  let dbEnv: Record<string, string | undefined>;
  let dbLabel: string;
  if (args["use-database"]) {
    // The caller's (test/cli/soak.test.ts: a copy of the test suite's migrated template).
    dbEnv = {};
    dbLabel = adminUrl ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite in ${process.env.DATA_DIR}`;
  } else if (adminUrl) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const name = `soak_${randomBytes(5).toString("hex")}`;
    await admin.query(`CREATE DATABASE ${name}`);
    onCleanUp(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    });
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const version = (await admin.query<{ server_version: string }>("SHOW server_version")).rows[0]!
      .server_version;
    dbEnv = { DATABASE_URL: url.toString(), DATA_DIR: join(work, "data") };
    dbLabel = `PostgreSQL ${version} at ${url.host}`;
  } else {
    dbEnv = { DATABASE_URL: undefined, DATA_DIR: join(work, "data") };
    const version = JSON.parse(
      readFileSync(join(ROOT, "node_modules/@electric-sql/pglite/package.json"), "utf8"),
    ).version;
    dbLabel = `embedded PGlite ${version} (PGLITE_FSYNC=${process.env.PGLITE_FSYNC ?? "on"})`;
  }
  const env = { ...dbEnv, RATE_LIMITING: "false", LOG_LEVEL: "info" };
  const loadAtStart = os.loadavg()[0]!;
  console.log(
    `soak: ${dbLabel}; ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAtStart.toFixed(2)}`,
  );
  console.log(
    `      peak ${PEAK_SECONDS} s (${PEAK_CONNECTIONS} connections), then ${clock(DURATION)} open-loop at half of it; intervals of ${clock(INTERVAL)}, warm-up ${clock(WARMUP)}`,
  );

  // --- Set-up: the development organization, the server under test -------
  const setUpFrom = performance.now();
  // populate-db creates and migrates the database, as the server's first start would.
  const credsFile = join(work, "creds.json");
  await run("node", ["dist/server/manage.js", "populate-db", "--credentials", credsFile], env);
  const creds = JSON.parse(readFileSync(credsFile, "utf8")) as {
    users: Record<string, { email: string; api_key: string; user_id: number }>;
    channels: Record<string, { stream_id: number }>;
  };
  const metricsPort = await freePort();
  const server = (
    await startServer("our server", OURS, { ...env, METRICS_PORT: String(metricsPort) })
  ).child;
  let crashed = false;
  let stopping = false;
  void server.exited.then(() => (crashed = !stopping));

  console.log(
    `set-up (migrate, populate-db, start): ${fmt((performance.now() - setUpFrom) / 1000, 1)} s`,
  );
  const users: SoakUser[] = USERS.map((name) => ({
    name,
    id: creds.users[name]!.user_id,
    auth: basic(creds.users[name]!),
    own: [],
    typing: false,
  }));
  const client = new Client(server.base, users);
  client.veronaId = creds.channels.Verona!.stream_id;
  const seed = await client.call(users[0]!, "GET", "/messages", {
    anchor: "newest",
    num_before: 100,
    num_after: 0,
    narrow: [{ operator: "channel", operand: "Verona" }],
  });
  client.recent.push(...(seed.body.messages as { id: number }[]).map((m) => m.id));

  // --- What we record -----------------------------------------------------------------------------
  let phase: "peak" | "soak" = "peak";
  let soakStart = 0;
  const buckets: Bucket[] = [];
  const nIntervals = Math.max(1, Math.round(DURATION / INTERVAL));
  const bucketAt = (now: number) => {
    const i = Math.max(
      0,
      Math.min(Math.floor((now - soakStart) / 1000 / INTERVAL), nIntervals - 1),
    );
    return (buckets[i] ??= newBucket());
  };
  const peakCounts = new Map<string, number>();
  const samples: { t: number; rss: number; heap: number }[] = [];
  const record = (o: Outcome, dueAt: number) => {
    const now = performance.now();
    if (!o.ok) {
      failureCount++;
      if (failures.length < 20)
        failures.push({ at: phase, kind: o.kind, error: o.error ?? String(o.status) });
    }
    if (phase === "peak") {
      peakCounts.set(o.kind, (peakCounts.get(o.kind) ?? 0) + 1);
      return;
    }
    const b = bucketAt(now);
    if (!o.ok) b.failures++;
    const list = b.latencies.get(o.kind) ?? [];
    list.push(now - dueAt);
    b.latencies.set(o.kind, list);
  };
  createInterface({ input: server.proc.stdout! }).on("line", (line) => {
    if (phase !== "soak" || !line.includes('"statements"')) return;
    try {
      const entry = JSON.parse(line) as { statements?: number };
      const b = bucketAt(performance.now());
      b.logged++;
      b.statements += entry.statements ?? 0;
    } catch {
      /* not a request line */
    }
  });
  const sample = async () => {
    const rss = memoryOf(server.pid)?.rss ?? NaN;
    let heap = NaN;
    try {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      heap = Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1]) / 2 ** 20;
    } catch {
      /* the server is gone: the run fails on that */
    }
    if (phase !== "soak") return;
    const now = performance.now();
    samples.push({ t: (now - soakStart) / 1000, rss, heap });
    const b = bucketAt(now);
    b.rss.push(rss);
    b.heap.push(heap);
  };

  // --- 1. Peak: closed loop ----------------------------------------------------------------------
  const pollers = runPollers(client, RENEW_MS, record);
  await pollers.registered;
  let peakDone = 0;
  let peakOn = true;
  const peakFrom = performance.now() + 2000; // two seconds of warm-up, not counted
  let peakUntil = peakFrom + PEAK_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: PEAK_CONNECTIONS }, async () => {
      while (peakOn) {
        const t0 = performance.now();
        const o = await client.one();
        record(o, t0);
        const now = performance.now();
        if (now >= peakFrom && now < peakUntil) peakDone++;
        if (now >= peakUntil) peakOn = false;
      }
    }),
  );
  peakUntil = Math.min(peakUntil, performance.now());
  const peakRate = peakDone / ((peakUntil - peakFrom) / 1000);
  const rate = peakRate / 2;
  console.log(
    `peak: ${fmt(peakRate, 1)} requests/s of the mix (${[...peakCounts].map(([k, n]) => `${k} ${n}`).join(", ")}); soak at ${fmt(rate, 1)}/s`,
  );

  // --- 2. Soak: open loop at half the peak -----------------------------------------------------
  phase = "soak";
  soakStart = performance.now();
  await sample();
  const sampler = setInterval(() => void sample(), SAMPLE_EVERY * 1000);
  let printed = 0;
  const printer = setInterval(() => {
    const done = Math.floor((performance.now() - soakStart) / 1000 / INTERVAL);
    while (printed < Math.min(done, nIntervals)) print(printed++);
  }, 250);
  const inFlight = new Set<Promise<void>>();
  let issued = 0;
  const end = soakStart + DURATION * 1000;
  while (performance.now() < end && !crashed) {
    const due = Math.min(
      Math.floor(((performance.now() - soakStart) / 1000) * rate),
      Math.floor(DURATION * rate),
    );
    for (; issued < due; issued++) {
      if (inFlight.size >= MAX_IN_FLIGHT) {
        shed++;
        continue;
      }
      const dueAt = soakStart + (issued * 1000) / rate;
      const p = client.one().then((o) => record(o, dueAt));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await sleep(5);
  }
  await Promise.race([Promise.all(inFlight), sleep(30_000)]);
  await sample();
  clearInterval(sampler);
  clearInterval(printer);
  while (printed < nIntervals) print(printed++);
  await pollers.stop();
  stopping = true;
  const exitCode = crashed ? server.proc.exitCode : await stopServer(server);

  function print(i: number) {
    const b = buckets[i] ?? newBucket();
    const mix = [...b.latencies].filter(([k]) => !QUEUE_KINDS.has(k));
    const count = [...b.latencies.values()].reduce((s, l) => s + l.length, 0);
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    console.log(
      `${clock(i * INTERVAL).padStart(5)}–${clock((i + 1) * INTERVAL)}  RSS ${fmt(b.rss.at(-1) ?? NaN, 1)} MiB, heap ${fmt(mean(b.heap), 1)} MiB; ${count} requests (${fmt(count / INTERVAL, 1)}/s), server logged ${b.logged}, ${b.statements} statements (${fmt(b.statements / INTERVAL, 1)}/s); ${b.failures} failed`,
    );
    console.log(
      `             p50/p99 ms: ${[...mix, ...[...b.latencies].filter(([k]) => QUEUE_KINDS.has(k))]
        .map(([k, l]) => `${k} ${ms(quantile(l, 0.5))}/${ms(quantile(l, 0.99))}`)
        .join(", ")}`,
    );
  }

  // --- 3. Slopes and verdicts --------------------------------------------------------------------
  const after = samples.filter((s) => s.t >= WARMUP);
  const fitted = (points: [number, number][], atMin: number) => {
    const k = slope(points);
    const mx = points.reduce((s, [x]) => s + x, 0) / points.length;
    const my = points.reduce((s, [, y]) => s + y, 0) / points.length;
    return { perMin: k, start: my + k * (atMin - mx) };
  };
  const rssFit = fitted(
    after.filter((s) => Number.isFinite(s.rss)).map((s) => [s.t / 60, s.rss]),
    WARMUP / 60,
  );
  const heapFit = fitted(
    after.filter((s) => Number.isFinite(s.heap)).map((s) => [s.t / 60, s.heap]),
    WARMUP / 60,
  );
  const p99s: [number, number][] = [];
  buckets.forEach((b, i) => {
    const mid = (i + 0.5) * INTERVAL;
    const all = [...b.latencies].filter(([k]) => !QUEUE_KINDS.has(k)).flatMap(([, l]) => l);
    if (i * INTERVAL >= WARMUP && all.length) p99s.push([mid / 60, quantile(all, 0.99)]);
  });
  const p99Fit = fitted(p99s, WARMUP / 60);
  const pct = (f: { perMin: number; start: number }) => (f.perMin / f.start) * 100;
  const judged = DURATION - WARMUP >= T.judgedSpan;
  const first = after[0];
  const last = after.at(-1);
  const rssGrowth = first && last ? last.rss - first.rss : NaN;
  const heapGrowth = first && last ? last.heap - first.heap : NaN;
  const sent = buckets.reduce(
    (s, b) =>
      s +
      [...b.latencies].filter(([k]) => !QUEUE_KINDS.has(k)).reduce((n, [, l]) => n + l.length, 0),
    0,
  );

  const noFailure = failureCount === 0 && shed === 0 && !crashed && exitCode === 0;
  const memoryFlat = judged
    ? pct(rssFit) < T.rssSlopePct && pct(heapFit) < T.heapSlopePct
    : rssGrowth < T.shortGrowthMiB && heapGrowth < T.shortGrowthMiB;
  const latencyLimit = Math.max((T.p99SlopePct / 100) * p99Fit.start, T.p99SlopeFloorMs);
  const latencyFlat = judged ? p99Fit.perMin < latencyLimit : undefined;
  const verdict = (ok: boolean | undefined) =>
    ok === undefined ? "not judged (under 3 minutes after the warm-up)" : ok ? "PASS" : "FAIL";
  const slopeText = (f: { perMin: number; start: number }, unit: string) =>
    `${f.perMin >= 0 ? "+" : ""}${fmt(f.perMin, 2)} ${unit}/min (${fmt(pct(f), 2)}% of ${fmt(f.start, 1)} ${unit})`;
  const lines = [
    `── soak summary (${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC) ──`,
    `${dbLabel}; peak ${fmt(peakRate, 1)}/s, soak ${fmt(rate, 1)}/s for ${clock(DURATION)}: ${sent} requests of the mix (${fmt(sent / DURATION, 1)}/s); load average ${loadAtStart.toFixed(2)} at start, ${os.loadavg()[0]!.toFixed(2)} at end`,
    `slopes after the ${clock(WARMUP)} warm-up: RSS ${slopeText(rssFit, "MiB")}, heap ${slopeText(heapFit, "MiB")}, p99 ${slopeText(p99Fit, "ms")}; growth RSS ${fmt(rssGrowth, 1)} MiB, heap ${fmt(heapGrowth, 1)} MiB`,
    `no failed request: ${failureCount} failed, ${shed} not sent (over ${MAX_IN_FLIGHT} waiting)${crashed ? ", the server died" : exitCode !== 0 ? `, the server exited with ${exitCode} on SIGTERM` : ""} ${verdict(noFailure)}`,
    `memory flat: ${judged ? `RSS slope < ${T.rssSlopePct}%/min, heap slope < ${T.heapSlopePct}%/min` : `growth after the warm-up < ${T.shortGrowthMiB} MiB (run too short for slopes)`} ${verdict(memoryFlat)}`,
    `latency flat: p99 slope < ${T.p99SlopePct}% of its start (or ${T.p99SlopeFloorMs} ms) per minute ${verdict(latencyFlat)}`,
    ...failures.map((f) => `  failed (${f.at}): ${f.kind}: ${f.error}`),
  ];
  console.log(`\n${lines.join("\n")}`);
  if (args.json)
    writeFileSync(
      args.json,
      JSON.stringify(
        {
          database: dbLabel,
          durationSeconds: DURATION,
          intervalSeconds: INTERVAL,
          warmupSeconds: WARMUP,
          peakRate,
          rate,
          sent,
          intervals: buckets.map((b, i) => ({
            start: i * INTERVAL,
            rssMiB: b.rss.at(-1),
            heapMiB: b.heap.reduce((s, x) => s + x, 0) / b.heap.length,
            statements: b.statements,
            logged: b.logged,
            failed: b.failures,
            latency: Object.fromEntries(
              [...b.latencies].map(([k, l]) => [
                k,
                { count: l.length, p50: quantile(l, 0.5), p99: quantile(l, 0.99) },
              ]),
            ),
          })),
          slopes: { rss: rssFit, heap: heapFit, p99: p99Fit },
          growth: { rssMiB: rssGrowth, heapMiB: heapGrowth },
          failed: failureCount,
          shed,
          failures,
          verdicts: { noFailure, memoryFlat, latencyFlat: latencyFlat ?? null },
        },
        null,
        2,
      ),
    );
  return noFailure && memoryFlat && latencyFlat !== false;
}

let exitCode = 0;
try {
  exitCode = (await main()) ? 0 : 1;
} catch (e) {
  if (!interrupted()) console.error(`\nsoak failed: ${(e as Error).stack ?? String(e)}`);
  exitCode = 2;
} finally {
  await cleanUp();
}
process.exit(interrupted() ? 130 : exitCode);
