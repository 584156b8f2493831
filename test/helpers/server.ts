/**
 * A running server for one test file: a fresh database (a copy of a migrated template),
 * the development organization, the real app on an ephemeral loopback port, and typed clients
 * whose every response is validated against the spec.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { Server } from "node:http";
import type { Logger } from "pino";
import { createApp } from "../../server/app.ts";
import { answerClientErrors } from "../../server/http/client-error.ts";
import { configFromEnv, type Config } from "../../server/config.ts";
import type { AppDeps } from "../../server/context.ts";
import { ScheduledDelivery } from "../../server/workers/scheduled-delivery.ts";
import { EmailDelivery } from "../../server/workers/email-delivery.ts";
import type { PrismaClient } from "../../server/db/index.ts";
import { MissedMessageEmails } from "../../server/workers/missed-message-emails.ts";
import { PushNotifications } from "../../server/workers/push-notifications.ts";
import { RealmExports } from "../../server/workers/realm-exports.ts";
import { DigestEmails, DIGEST_INTERVAL_MS } from "../../server/workers/digest-emails.ts";
import { EventBus, type EventBusOptions } from "../../server/events/index.ts";
import { invalidateCaches } from "../../server/lib/caches.ts";
import { createLogger } from "../../server/logger.ts";
import { populateDevRealm, type DevCredentials } from "../../server/manage/populate-db.ts";
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { createPopulatedTestDatabase, createTestDatabase, type TestDatabase } from "./db.ts";
import { specCheckMiddleware } from "./spec-check.ts";

export interface TestServer {
  baseUrl: string;
  /**
   * The test's own handle on the database, for setup and checks. A write through it drops the
   * server's per-process caches, as the server's own actions do through the event log.
   */
  db: PrismaClient;
  deps: AppDeps;
  creds: DevCredentials;
  /** The server's scheduled-message delivery; with `scheduledDelivery: "manual"` only deliverDue() runs it. */
  delivery: ScheduledDelivery;
  /** The server's email outbox delivery (to DATA_DIR/emails unless `emailHost` is overridden). */
  emailDelivery: EmailDelivery;
  /** The server's missed-message emails (queued in the outbox when due). */
  missedMessageEmails: MissedMessageEmails;
  /** The server's push notifications (to the configured bouncer). */
  pushNotifications: PushNotifications;
  realmExports: RealmExports;
  /** The server's weekly digests (queued in the outbox on each organization's digest day). */
  digestEmails: DigestEmails;
  /** A client authenticated as a user or bot of the development organization, by short name. */
  as(shortName: string): ZulipClient;
  /** A client with explicit (possibly wrong) credentials, or none. */
  client(email?: string, apiKey?: string): ZulipClient;
  /**
   * A process restart: the HTTP server stops (every connection dropped, the event bus closed),
   * stays down for `downMs`, then a new app and event bus serve the same database on the same port.
   */
  restart(downMs?: number): Promise<void>;
  close(): Promise<void>;
}

const WRITES = new Set([
  "create",
  "createMany",
  "createManyAndReturn",
  "update",
  "updateMany",
  "updateManyAndReturn",
  "upsert",
  "delete",
  "deleteMany",
]);

function invalidatingWrites(db: PrismaClient): PrismaClient {
  return db.$extends({
    query: {
      $allModels: {
        async $allOperations({ operation, args, query }) {
          const result = await query(args);
          if (WRITES.has(operation)) invalidateCaches(["*"]);
          return result;
        },
      },
    },
  }) as unknown as PrismaClient;
}

export interface TestServerOptions {
  log?: Logger;
  events?: EventBusOptions;
  /** The server's clock (every `ctx.now()`, and what delivery takes as due). */
  now?: () => Date;
  /** "timer" (default) delivers scheduled messages on time as a server does; "manual" only when a test calls `delivery.deliverDue()`. */
  scheduledDelivery?: "timer" | "manual";
  /** The same for the email outbox: "manual" sends only on `emailDelivery.deliverDue()`. */
  emailDelivery?: "timer" | "manual";
  /** The same for missed-message emails: "manual" only on `missedMessageEmails.deliverDue()`. */
  missedMessageEmails?: "timer" | "manual";
  /** The same for push notifications, and the wait before a push's first retry (10 s on a server). */
  pushNotifications?: "timer" | "manual";
  pushRetryBaseMs?: number;
  /** The same for data exports: "manual" makes them only on `realmExports.deliverDue()`. */
  realmExports?: "timer" | "manual";
  /** The same for digests; `digestHourUtc` is when digest days start (18 on a server). */
  digestEmails?: "timer" | "manual";
  digestHourUtc?: number;
  /** The wait before an email's first retry (30 s on a server). */
  emailRetryBaseMs?: number;
}

/**
 * A database with the development organization in it: a copy of one populated once for this
 * run (test/helpers/db.ts), unless the test's clock or a setting populate-db reads (the host its
 * addresses are made from) differs from the usual, when populate-db runs on a fresh copy as a
 * server's first start would.
 */
async function populatedDatabase(
  config: Config,
  options: TestServerOptions,
): Promise<{ database: TestDatabase; creds: DevCredentials }> {
  const populate = async (db: TestDatabase, now: () => Date) => {
    const events = new EventBus(db);
    await events.ready();
    try {
      return await populateDevRealm({
        db: db.prisma,
        databaseKind: db.kind,
        events,
        log: createLogger("silent"),
        config,
        now,
      });
    } finally {
      events.close();
    }
  };
  if (options.now) {
    const database = await createTestDatabase();
    return { database, creds: await populate(database, options.now) };
  }
  const key = JSON.stringify([config.externalHost, config.fakeEmailDomain]);
  const { database, result } = await createPopulatedTestDatabase(key, (db) =>
    populate(db, () => new Date()),
  );
  return { database, creds: result };
}

export async function startTestServer(
  overrides: Partial<Config> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  // Each server keeps its files (uploads) in a directory of its own, removed when it closes.
  const dataDir = mkdtempSync(join(os.tmpdir(), "chat-test-data-"));
  const config: Config = {
    ...configFromEnv({}),
    dataDir,
    externalHost: "zulip.testserver",
    noreplyEmailAddress: "noreply@zulip.testserver",
    validateResponses: true,
    eventHeartbeatMs: 1000,
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
    // Off unless a test is about rate limits (`{ rateLimiting: true }`): tests send many requests.
    rateLimiting: false,
    ...overrides,
  };
  const { database, creds } = await populatedDatabase(config, options);
  const deps: AppDeps = {
    db: database.prisma,
    databaseKind: database.kind,
    events: new EventBus(database, { heartbeatMs: config.eventHeartbeatMs, ...options.events }),
    log: options.log ?? createLogger(config.logLevel),
    config,
    now: options.now ?? (() => new Date()),
  };
  await deps.events.ready();
  const delivery = new ScheduledDelivery(deps, { intervalMs: config.scheduledDeliveryIntervalMs });
  if (options.scheduledDelivery !== "manual") delivery.start();
  const emailDelivery = new EmailDelivery(deps, {
    intervalMs: config.emailDeliveryIntervalMs,
    retryBaseMs: options.emailRetryBaseMs,
  });
  if (options.emailDelivery !== "manual") emailDelivery.start();
  const missedMessageEmails = new MissedMessageEmails(deps, {
    intervalMs: config.emailDeliveryIntervalMs,
  });
  if (options.missedMessageEmails !== "manual") missedMessageEmails.start();
  const pushNotifications = new PushNotifications(deps, {
    intervalMs: config.emailDeliveryIntervalMs,
    retryBaseMs: options.pushRetryBaseMs,
  });
  if (options.pushNotifications !== "manual") pushNotifications.start();
  const realmExports = new RealmExports(deps, { intervalMs: config.emailDeliveryIntervalMs });
  if (options.realmExports !== "manual") realmExports.start();
  const digestEmails = new DigestEmails(deps, {
    intervalMs: DIGEST_INTERVAL_MS,
    hourUtc: options.digestHourUtc,
  });
  if (options.digestEmails !== "manual") digestEmails.start();
  const listen = (port: number): Promise<Server> =>
    new Promise((resolve, reject) => {
      const s = createApp(deps).listen(port, "127.0.0.1", () => resolve(s));
      s.once("error", reject);
      // As in server/main.ts: idle keep-alive connections outlive a slow test step, and requests
      // Node's parser refuses still get a JSON envelope.
      s.keepAliveTimeout = 65_000;
      answerClientErrors(s);
    });
  let server = await listen(0);
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const client = (email?: string, apiKey?: string) =>
    createZulipClient({ baseUrl, email, apiKey, middleware: [specCheckMiddleware] });
  return {
    baseUrl,
    db: invalidatingWrites(database.prisma),
    deps,
    creds,
    delivery,
    emailDelivery,
    missedMessageEmails,
    pushNotifications,
    realmExports,
    digestEmails,
    as(shortName) {
      const cred = creds.users[shortName] ?? creds.bots[shortName];
      if (!cred) throw new Error(`No user or bot '${shortName}' in the development organization`);
      return client(cred.email, cred.api_key);
    },
    client,
    async restart(downMs = 0) {
      deps.events.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise((r) => setTimeout(r, downMs));
      deps.events = new EventBus(database, {
        heartbeatMs: config.eventHeartbeatMs,
        ...options.events,
      });
      await deps.events.ready();
      server = await listen(port);
    },
    async close() {
      await Promise.all([
        delivery.stop(),
        emailDelivery.stop(),
        missedMessageEmails.stop(),
        pushNotifications.stop(),
        realmExports.stop(),
        digestEmails.stop(),
      ]);
      deps.events.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a server for the calling test file (before its tests, stopped after them) and returns
 * a stand-in that forwards to it, so tests write `server.as("hamlet")`.
 */
export function useTestServer(
  overrides: Partial<Config> = {},
  options: TestServerOptions = {},
): TestServer {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(overrides, options);
  });
  afterAll(() => started?.close());
  return new Proxy({} as TestServer, {
    get(_target, property) {
      if (!started)
        throw new Error("The test server is not started yet (use it inside tests or hooks)");
      // eslint-disable-next-line @typescript-eslint/unbound-method -- the started server's members as they are; its functions use no `this`
      return started[property as keyof TestServer];
    },
  });
}
