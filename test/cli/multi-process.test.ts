/**
 * Two server processes (`npm start`'s command) on one PostgreSQL database: a queue registered
 * through one is served by both, a long-poll waiting in one wakes at once for a message sent
 * through the other (not at the heartbeat), and the queue survives a restart of the process that
 * created it. PostgreSQL only: the embedded database belongs to a single process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/net.ts";
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { configFromEnv } from "../../server/config.ts";
import { openDatabase } from "../../server/db.ts";
import { EventBus } from "../../server/events/index.ts";
import { createLogger } from "../../server/logger.ts";
import { populateDevRealm, type DevCredentials } from "../../server/manage/populate-db.ts";
import { createPostgresTestDatabaseUrl } from "../helpers/db.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Long enough that a long-poll answered by the heartbeat cannot pass for a woken one. */
const HEARTBEAT_MS = 30_000;

let database: { url: string; drop(): Promise<void> } | undefined;
let creds: DevCredentials;
const children = new Set<ChildProcess>();

interface Proc {
  child: ChildProcess;
  baseUrl: string;
  as(shortName: string): ZulipClient;
  stop(): Promise<void>;
}

async function startServer(port: number): Promise<Proc> {
  let stderr = "";
  const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      EXTERNAL_HOST: "zulip.testserver",
      DATABASE_URL: database!.url,
      LOG_LEVEL: "warn",
      EVENT_HEARTBEAT_MS: String(HEARTBEAT_MS),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  children.add(child);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`server exited with ${child.exitCode}:\n${stderr}`);
    const ok = await fetch(`${baseUrl}/api/v1/server_settings`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`server did not listen within 20 s:\n${stderr}`);
    await sleep(100);
  }
  return {
    child,
    baseUrl,
    as(shortName) {
      const c = creds.users[shortName]!;
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
      children.delete(child);
    },
  };
}

describe.skipIf(!process.env.DATABASE_URL)(
  "two server processes on one PostgreSQL database",
  () => {
    let a: Proc;
    let b: Proc;
    let portA: number;

    beforeAll(async () => {
      database = await createPostgresTestDatabaseUrl();
      const db = await openDatabase({ databaseUrl: database.url, migrate: false });
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
      portA = await freePort();
      [a, b] = await Promise.all([startServer(portA), freePort().then(startServer)]);
    }, 120_000);

    afterAll(async () => {
      for (const child of children) child.kill("SIGKILL");
      await database?.drop();
    });

    it("serves a queue from either process, wakes a waiting long-poll at once, and keeps the queue across a restart", async () => {
      const hamlet = creds.users.hamlet!.user_id;
      const { queue_id } = await expectSuccess(
        a.as("hamlet").POST("/register", { body: { event_types: ["message"] } }),
      );

      // A long-poll waiting in A; the message is sent through B.
      const started = Date.now();
      const waiting = a
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id: queue_id!, last_event_id: -1 } } });
      await sleep(300);
      const sent = await expectSuccess(
        b.as("othello").POST("/messages", {
          body: { type: "direct", to: [hamlet], content: "across processes" },
        }),
      );
      const woken = await expectSuccess(waiting);
      expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS / 2);
      expect(woken.events).toEqual([
        expect.objectContaining({
          type: "message",
          id: 0,
          message: expect.objectContaining({ id: sent.id }),
        }),
      ]);

      // The same queue through B gives the same event, by the same id.
      const throughB = await expectSuccess(
        b.as("hamlet").GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      );
      expect(throughB.events).toEqual(woken.events);

      // A restarts; the queue lives on, in the database.
      await a.stop();
      a = await startServer(portA);
      const again = await expectSuccess(
        b.as("othello").POST("/messages", {
          body: { type: "direct", to: [hamlet], content: "after the restart" },
        }),
      );
      const after = await expectSuccess(
        a
          .as("hamlet")
          .GET("/events", { params: { query: { queue_id: queue_id!, last_event_id: 0 } } }),
      );
      expect(after.events).toEqual([
        expect.objectContaining({
          type: "message",
          id: 1,
          message: expect.objectContaining({ id: again.id }),
        }),
      ]);
    });

    it("drops a cached user in every process when the user changes in one", async () => {
      // Both processes cache hamlet's row; changing the organization's email visibility through A
      // rewrites every user's API email, and B must serve the new one.
      await expectSuccess(a.as("hamlet").GET("/users/me"));
      await expectSuccess(b.as("hamlet").GET("/users/me"));
      await expectSuccess(a.as("iago").PATCH("/realm", { body: { email_address_visibility: 3 } }));
      const deadline = Date.now() + 5_000;
      let email = "";
      while (Date.now() < deadline) {
        email = (await expectSuccess(b.as("hamlet").GET("/users/me"))).email;
        if (email !== "hamlet@zulip.com") break;
        await sleep(20);
      }
      expect(email).toBe(`user${creds.users.hamlet!.user_id}@zulip.testserver`);
      await expectSuccess(a.as("iago").PATCH("/realm", { body: { email_address_visibility: 1 } }));
    });
  },
);
