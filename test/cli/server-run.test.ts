/**
 * Running the server as a person or a process manager does: the real process (`npm start`'s
 * command, `node dist/server/main.js`, built once by the global set-up; and `npm start` itself for
 * signals) on an embedded database in a temporary DATA_DIR. Its stdout must be JSON lines only:
 * first run, request logs, metrics, start-up failures.
 *
 * Start-up is bounded by readiness (the `listening` line, or the exit), with a generous cap
 * (STARTUP_CAP_MS) for a busy machine rather than a short timer: a fresh DATA_DIR is an initdb
 * and the migrations, many seconds when other test files run beside this one.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MANAGE_COMMAND, SERVER_COMMAND } from "../helpers/compiled.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
const running: ChildProcess[] = [];
type Line = Record<string, unknown> & { level: number; msg: string };
/** The most a start (or a failed start's exit) may take; it normally takes a few seconds. */
const STARTUP_CAP_MS = 150_000;
/** Each test's bound: a few starts, each bounded by readiness, not by this. */
const TEST_CAP_MS = 4 * STARTUP_CAP_MS;

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "server-run-"));
  dirs.push(dir);
  return dir;
}

interface Started {
  proc: ChildProcess;
  lines: Line[];
  /** Everything on stdout that was not a JSON line (must stay empty). */
  other: string[];
  waitFor(pred: (l: Line) => boolean, ms?: number): Promise<Line>;
  exited: Promise<number | null>;
  said(): string;
}

function start(env: Record<string, string>, command: readonly string[] = SERVER_COMMAND): Started {
  const proc = spawn(command[0]!, command.slice(1), {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: "",
      PGLITE_FSYNC: "off",
      LOG_LEVEL: "info",
      HOST: "127.0.0.1",
      PORT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(proc);
  const lines: Line[] = [];
  const other: string[] = [];
  const waiters = new Set<() => void>();
  let buffer = "";
  proc.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        lines.push(JSON.parse(text));
      } catch {
        other.push(text);
      }
      for (const w of waiters) w();
    }
  });
  const stderr: string[] = [];
  proc.stderr.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) =>
    proc.once("exit", (code) => resolve(code)),
  );
  const waitFor = (pred: (l: Line) => boolean, ms = STARTUP_CAP_MS) =>
    new Promise<Line>((resolve, reject) => {
      const check = () => {
        const found = lines.find(pred);
        if (found) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        }
      };
      const fail = (why: string) => {
        waiters.delete(check);
        clearTimeout(timer);
        reject(new Error(`no matching log line: ${why}; the process said:\n${said()}`));
      };
      const timer = setTimeout(() => fail(`none in ${ms} ms`), ms);
      waiters.add(check);
      // Once the process has exited (and its last lines are read), the line will not come.
      void exited.then((code) =>
        setTimeout(() => {
          check();
          if (waiters.has(check)) fail(`the process exited (code ${code})`);
        }, 50),
      );
      check();
    });
  /** What the process said, for an assertion's message when it did not behave. */
  const said = () => [...lines.map((l) => JSON.stringify(l)), ...other, stderr.join("")].join("\n");
  return { proc, lines, other, waitFor, exited, said };
}

const listening = (l: Line) => l.msg.startsWith("listening on ");
const urlOf = (l: Line) => l.url as string;

async function stop(s: Started) {
  s.proc.kill("SIGTERM");
  const code = await s.exited;
  expect(code, `exit code ${code}; the server said:\n${s.said()}`).toBe(0);
  return code;
}

function manage(dataDir: string, ...args: string[]) {
  return promisify(execFile)(MANAGE_COMMAND[0], [...MANAGE_COMMAND.slice(1), ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", PGLITE_FSYNC: "off" },
  });
}

afterEach(() => {
  for (const p of running.splice(0))
    if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the server process", { timeout: TEST_CAP_MS }, () => {
  it("on a database with no organization: says what to run, answers a clear JSON error, and is healthy", async () => {
    const s = start({ DATA_DIR: tempDir() });
    const warning = await s.waitFor((l) => l.msg.startsWith("this server has no organization yet"));
    expect(warning.level).toBe(40);
    expect(warning.hint).toContain("npm run manage -- create-realm --name NAME --email EMAIL");
    expect(warning.hint).toContain("npm run manage -- populate-db --credentials creds.json");
    const url = urlOf(await s.waitFor(listening));
    const me = await fetch(`${url}/api/v1/users/me`, {
      headers: { Authorization: "Basic " + btoa("a@b.example:" + "k".repeat(32)) },
    });
    expect(me.status).toBe(401);
    expect(await me.json()).toEqual({
      result: "error",
      code: "UNAUTHORIZED",
      msg: "This server has no organization yet: create one with `npm run manage -- create-realm` (or `npm run manage -- populate-db` for the development organization).",
    });
    const key = await fetch(`${url}/api/v1/fetch_api_key`, {
      method: "POST",
      body: new URLSearchParams({ username: "a@b.example", password: "x" }),
    });
    expect(key.status).toBe(404);
    expect(await key.json()).toMatchObject({
      code: "NONEXISTENT_SUBDOMAIN",
      msg: expect.stringContaining("no organization yet"),
    });
    const health = await fetch(`${url}/health`);
    expect([health.status, await health.json()]).toEqual([200, { result: "success", msg: "" }]);
    await stop(s);
    expect(s.other).toEqual([]);
  });

  it("logs one JSON line per request, and a new organization (create-realm) can post at once", async () => {
    const dataDir = tempDir();
    const { stdout } = await manage(
      dataDir,
      "create-realm",
      "--name",
      "Acme",
      "--email",
      "boss@acme.example",
      "--full-name",
      "Boss",
    );
    const apiKey = /API key:\s+(\S+)/.exec(stdout)![1]!;
    const s = start({ DATA_DIR: dataDir });
    const url = urlOf(await s.waitFor(listening));
    expect(s.lines.some((l) => l.msg.startsWith("this server has no organization"))).toBe(false);
    const auth = {
      Authorization: "Basic " + btoa(`boss@acme.example:${apiKey}`),
      "User-Agent": "ZulipMobile/27.1 (Android 14)",
    };
    const sent = await fetch(`${url}/api/v1/messages?type=stream`, {
      method: "POST",
      headers: auth,
      body: new URLSearchParams({ to: "general", topic: "hello", content: "First+post" }),
    });
    expect(sent.status).toBe(200);
    const { id } = (await sent.json()) as { id: number };
    const line = await s.waitFor((l) => l.route === "/messages" && l.method === "POST");
    expect(line).not.toHaveProperty("aborted");
    expect(line).toMatchObject({
      level: 30,
      operation: "send-message",
      status: 200,
      client: "ZulipMobile",
      user_id: expect.any(Number),
      msg: "POST /messages 200",
    });
    expect(line.responseTime).toEqual(expect.any(Number));
    expect(line.statements).toBeGreaterThan(0);
    // The route is the template: neither the id nor a query string (which may carry an API key) is logged.
    await fetch(`${url}/api/v1/messages/${id}?api_key=secret`, { headers: auth });
    const read = await s.waitFor((l) => l.route === "/messages/{message_id}");
    expect(read).toMatchObject({ method: "GET", status: 200 });
    expect(JSON.stringify(s.lines)).not.toContain("secret");
    // A long-poll its client gives up on is logged too, as aborted.
    const queue = (await (
      await fetch(`${url}/api/v1/register`, {
        method: "POST",
        headers: auth,
        body: new URLSearchParams({ event_types: '["message"]' }),
      })
    ).json()) as { queue_id: string };
    const poll = new AbortController();
    const polling = fetch(`${url}/api/v1/events?queue_id=${queue.queue_id}&last_event_id=-1`, {
      headers: auth,
      signal: poll.signal,
    }).catch(() => "aborted");
    await new Promise((r) => setTimeout(r, 300));
    poll.abort();
    expect(await polling).toBe("aborted");
    expect(await s.waitFor((l) => l.route === "/events")).toMatchObject({
      operation: "get-events",
      aborted: true,
      status: null,
      msg: "GET /events aborted",
    });
    await fetch(`${url}/api/v1/no/such/thing`);
    expect(await s.waitFor((l) => l.status === 404)).toMatchObject({
      route: "unmatched",
      operation: "unmatched",
      client: "node",
    });
    await stop(s);
    expect(s.other).toEqual([]);
  });

  it("refuses bad settings with one JSON error line before opening anything, and leaves no lock behind", async () => {
    const dataDir = tempDir();
    for (const [env, message, hint] of [
      [
        { PORT: "http" },
        'cannot start: PORT must be a port number (0 to 65535), not "http"',
        "fix the environment variable PORT",
      ],
      [
        { LOG_LEVEL: "loud" },
        'cannot start: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, not "loud"',
        "fix the environment variable LOG_LEVEL",
      ],
      [
        { EVENT_HEARTBEAT_MS: "-5" },
        'cannot start: EVENT_HEARTBEAT_MS must be a number of milliseconds, not "-5"',
        "fix the environment variable EVENT_HEARTBEAT_MS",
      ],
    ] as const) {
      const s = start({ DATA_DIR: dataDir, ...env });
      expect(await s.exited).toBe(1);
      expect(s.other).toEqual([]);
      expect(s.lines).toHaveLength(1);
      expect(s.lines[0]).toMatchObject({
        level: 50,
        msg: message,
        hint: expect.stringContaining(hint),
      });
    }
    // Nothing was opened, so nothing is left locked: the next start works.
    const ok = start({ DATA_DIR: dataDir });
    await ok.waitFor(listening);
    await stop(ok);
  });

  it("a port in use, a data directory in use, an unreachable PostgreSQL: one error line with what to do, no 'listening', exit 1", async () => {
    const dataDir = tempDir();
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = String((taken.address() as { port: number }).port);
    try {
      const busy = start({ DATA_DIR: dataDir, PORT: port });
      expect(await busy.exited).toBe(1);
      expect(busy.lines.some(listening)).toBe(false);
      expect(busy.lines.at(-1)).toMatchObject({
        level: 50,
        msg: `cannot start: cannot listen on 127.0.0.1:${port} for the API: the address is in use`,
        hint: expect.stringContaining("choose another port"),
      });
    } finally {
      taken.close();
    }
    // The failed start released the data directory.
    const first = start({ DATA_DIR: dataDir });
    await first.waitFor(listening);
    const second = start({ DATA_DIR: dataDir });
    expect(await second.exited).toBe(1);
    expect(second.lines.at(-1)).toMatchObject({
      level: 50,
      msg: expect.stringContaining(`in use by process ${first.proc.pid}`),
      hint: expect.stringContaining("another server or management command is using DATA_DIR"),
    });
    await stop(first);

    const unreachable = start({
      DATA_DIR: dataDir,
      DATABASE_URL: "postgresql://postgres@127.0.0.1:1/chat",
    });
    expect(await unreachable.exited).toBe(1);
    expect(unreachable.lines).toHaveLength(1);
    expect(unreachable.lines[0]).toMatchObject({
      level: 50,
      msg: "cannot start: cannot reach PostgreSQL at postgresql://postgres@127.0.0.1:1/chat (ECONNREFUSED)",
      hint: expect.stringContaining("PostgreSQL is running"),
    });
  });

  it("serves Prometheus metrics on their own loopback listener only when METRICS_PORT is set", async () => {
    const dataDir = tempDir();
    await manage(
      dataDir,
      "create-realm",
      "--name",
      "Acme",
      "--email",
      "boss@acme.example",
      "--full-name",
      "Boss",
    );
    const off = start({ DATA_DIR: dataDir });
    const offLine = await off.waitFor(listening);
    expect(offLine.metrics).toBeUndefined();
    expect((await fetch(`${urlOf(offLine)}/metrics`)).status).toBe(404);
    await stop(off);

    const s = start({ DATA_DIR: dataDir, METRICS_PORT: "0" });
    const line = await s.waitFor(listening);
    const metricsUrl = line.metrics as string;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    await fetch(`${urlOf(line)}/api/v1/server_settings`);
    await fetch(`${urlOf(line)}/api/v1/users/me`);
    const res = await fetch(metricsUrl);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(
      /zulip_http_requests_total\{operation="get-server-settings",method="GET",status="200"\} 1/,
    );
    expect(text).toMatch(
      /zulip_http_requests_total\{operation="get-own-user",method="GET",status="401"\} 1/,
    );
    expect(text).toMatch(
      /zulip_http_request_duration_seconds_bucket\{le="[0-9.]+",operation="get-server-settings",method="GET"\} \d/,
    );
    expect(text).toMatch(/zulip_event_queues_open 0/);
    expect(text).toMatch(/zulip_db_pool_connections\{state="total"\} 1/);
    expect(text).toMatch(/process_resident_memory_bytes \d+/);
    expect((await fetch(metricsUrl.replace("/metrics", "/other"))).status).toBe(404);
    await stop(s);
  });

  it("`npm start` hands SIGTERM to the server, so a manager that signals only the PID it started stops it cleanly", async () => {
    const s = start({ DATA_DIR: tempDir() }, ["npm", "start", "--silent"]);
    const line = await s.waitFor(listening);
    // The process npm started is the server itself (no shell between them to swallow the signal).
    expect(line.pid).not.toBe(s.proc.pid);
    // It runs the compiled server (dist/, rebuilt first if a source is newer), not TypeScript.
    if (process.platform === "linux")
      expect(readFileSync(`/proc/${String(line.pid)}/cmdline`, "utf8").split("\0")).toContain(
        "dist/server/main.js",
      );
    s.proc.kill("SIGTERM"); // npm's PID only
    await s.waitFor((l) => l.msg === "stopped");
    expect(s.lines.find((l) => l.msg === "stopped")).toMatchObject({ clean: true });
    expect(await s.exited).toBe(0);
    expect(s.other).toEqual([]);
    expect(() => process.kill(line.pid as number, 0)).toThrow();
  });
});
