/**
 * Server processes (`npm start`'s command) on one PostgreSQL database, for tests of what several
 * processes must agree on: a database copied from the migrated template with the development
 * organization, and `start(port)` for each process, talked to through typed clients.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { configFromEnv } from "../../server/config.ts";
import { openDatabase } from "../../server/db/index.ts";
import { EventBus } from "../../server/events/index.ts";
import { createLogger } from "../../server/logger.ts";
import { populateDevRealm, type DevCredentials } from "../../server/manage/populate-db.ts";
import { SERVER_COMMAND } from "./compiled.ts";
import { createPostgresTestDatabaseUrl } from "./db.ts";
import { freePort } from "./net.ts";
import { specCheckMiddleware } from "./spec-check.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  /** A client of the development organization's user or bot, by short name. */
  as(shortName: string): ZulipClient;
  stop(): Promise<void>;
}

export interface ProcessCluster {
  url: string;
  creds: DevCredentials;
  /** Starts a server process on the shared database (on a free port unless given one). */
  start(port?: number): Promise<ServerProcess>;
  /** Kills every process still running and drops the database. */
  close(): Promise<void>;
}

/** A PostgreSQL database (DATABASE_URL's server) with the development organization, and its processes. */
export async function processCluster(env: Record<string, string> = {}): Promise<ProcessCluster> {
  const database = await createPostgresTestDatabaseUrl();
  const db = await openDatabase({ databaseUrl: database.url, migrate: false });
  let creds: DevCredentials;
  try {
    const config = { ...configFromEnv({}), externalHost: "zulip.testserver" };
    const events = new EventBus(db);
    creds = await populateDevRealm({
      db: db.prisma,
      events,
      log: createLogger("silent"),
      config,
      now: () => new Date(),
    });
    events.close();
  } finally {
    await db.close();
  }
  const children = new Set<ChildProcess>();
  return {
    url: database.url,
    creds,
    start: async (port) => {
      const proc = await startServerProcess(database.url, creds, port ?? (await freePort()), env);
      children.add(proc.child);
      proc.child.once("exit", () => children.delete(proc.child));
      return proc;
    },
    async close() {
      for (const child of children) child.kill("SIGKILL");
      await database.drop();
    },
  };
}

/**
 * Two processes A and B on one database for the calling `describe` (started before its tests,
 * stopped after them); a test may replace `a` or `b` (e.g. after restarting one).
 */
export function useProcessPair(env: Record<string, string> = {}) {
  const pair = {} as { cluster: ProcessCluster; a: ServerProcess; b: ServerProcess };
  beforeAll(async () => {
    pair.cluster = await processCluster(env);
    [pair.a, pair.b] = await Promise.all([pair.cluster.start(), pair.cluster.start()]);
  }, 120_000);
  afterAll(async () => {
    await pair.cluster?.close();
  });
  return pair;
}

async function startServerProcess(
  databaseUrl: string,
  creds: DevCredentials,
  port: number,
  env: Record<string, string>,
): Promise<ServerProcess> {
  let stderr = "";
  const child = spawn(SERVER_COMMAND[0], SERVER_COMMAND.slice(1), {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      EXTERNAL_HOST: "zulip.testserver",
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "warn",
      // Off unless the test is about rate limits (it passes RATE_LIMITING=true).
      RATE_LIMITING: "false",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`server exited with ${child.exitCode}:\n${stderr}`);
    const ok = await fetch(`${baseUrl}/api/v1/server_settings`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`server did not listen within 60 s:\n${stderr}`);
    await sleep(100);
  }
  return {
    child,
    port,
    baseUrl,
    as(shortName) {
      const c = (creds.users[shortName] ?? creds.bots[shortName])!;
      return createZulipClient({
        baseUrl,
        email: c.email,
        apiKey: c.api_key,
        middleware: [specCheckMiddleware],
      });
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
