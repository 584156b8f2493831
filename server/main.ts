/**
 * `npm start` runs this compiled (dist/server/main.js, see server/tools/build.mjs) with production
 * defaults: no response validation. `npm run dev` runs it from source through tsx, responses
 * validated. Either way the logs are readable lines on a terminal and JSON lines otherwise. It reads and checks the settings,
 * opens the database (embedded PGlite in DATA_DIR, or PostgreSQL at DATABASE_URL), applies
 * pending migrations, listens, and shuts down cleanly on SIGTERM/SIGINT so that the embedded data
 * directory stays usable.
 *
 * Everything it says is a log line on stdout (pino: JSON unless stdout is a terminal). A start-up failure is one `error` line with
 * `hint` saying what to do, then exit code 1; nothing is opened before the settings are checked
 * and the ports found free (a port in use leaves no new database behind), and what was opened is closed (the data directory's lock included) before exiting. "listening"
 * is logged once the socket accepts connections.
 */
import { createServer, type Server } from "node:http";
import { createServer as createNetServer, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import type { Logger } from "pino";
import { createApp } from "./app.ts";
import { ScheduledDelivery } from "./workers/scheduled-delivery.ts";
import { MissedMessageEmails } from "./workers/missed-message-emails.ts";
import { PushNotifications } from "./workers/push-notifications.ts";
import { RealmExports } from "./workers/realm-exports.ts";
import { EmailDelivery } from "./workers/email-delivery.ts";
import { MessageRetention } from "./workers/retention.ts";
import { DigestEmails, DIGEST_INTERVAL_MS } from "./workers/digest-emails.ts";
import { configFromEnv, ConfigError, type Config } from "./config.ts";
import { openDatabase, type Database } from "./db/index.ts";
import { DataDirInUseError } from "./db/lock.ts";
import { EventBus } from "./events/index.ts";
import { answerClientErrors } from "./http/client-error.ts";
import { ensureDocs } from "./http/docs.ts";
import { gracefulShutdown } from "./http/shutdown.ts";
import { createLogger } from "./logger.ts";
import { Metrics } from "./metrics.ts";

/** A start-up failure with what the person starting the server should do about it. */
class StartupError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

function fail(log: Logger, err: unknown): never {
  const hint =
    err instanceof StartupError
      ? err.hint
      : "see the message; docs/configuration.md lists every setting";
  log.error({ hint }, `cannot start: ${(err as Error)?.message ?? err}`);
  process.exit(1);
}

function databaseFailure(config: Config, err: unknown): StartupError {
  const e = err as NodeJS.ErrnoException & { code?: string };
  if (err instanceof DataDirInUseError)
    return new StartupError(
      e.message,
      "another server or management command is using DATA_DIR: stop it, or give this server another DATA_DIR",
    );
  if (config.databaseUrl) {
    const where = config.databaseUrl.replace(/:[^:@/]*@/, ":***@");
    if (
      e.code === "ECONNREFUSED" ||
      e.code === "ENOTFOUND" ||
      e.code === "ETIMEDOUT" ||
      e.code === "EHOSTUNREACH"
    )
      return new StartupError(
        `cannot reach PostgreSQL at ${where} (${e.code})`,
        "check DATABASE_URL and that PostgreSQL is running and accepts TCP connections there",
      );
    if (e.code === "28P01" || e.code === "28000")
      return new StartupError(
        `PostgreSQL refused the login at ${where}: ${e.message}`,
        "check the user and password in DATABASE_URL",
      );
    if (e.code === "3D000")
      return new StartupError(
        `${e.message} (at ${where})`,
        "create the database first (createdb), or fix its name in DATABASE_URL",
      );
    return new StartupError(
      `cannot open the PostgreSQL database at ${where}: ${e.message}`,
      "check DATABASE_URL and the PostgreSQL server's log",
    );
  }
  return new StartupError(
    `cannot open the embedded database in ${join(config.dataDir, "postgres")}: ${e.message}`,
    "check that DATA_DIR is writable and not used by an incompatible version",
  );
}

function listenFailure(
  what: string,
  host: string,
  port: number,
  err: NodeJS.ErrnoException,
): StartupError {
  const where = `${host}:${port}`;
  if (err.code === "EADDRINUSE")
    return new StartupError(
      `cannot listen on ${where} for ${what}: the address is in use`,
      `another process (another server?) listens there: stop it, or choose another port`,
    );
  if (err.code === "EACCES")
    return new StartupError(
      `cannot listen on ${where} for ${what}: permission denied`,
      "ports below 1024 need privileges: choose a port of 1024 or more",
    );
  if (err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND")
    return new StartupError(
      `cannot listen on ${where} for ${what}: no such address on this machine`,
      "set HOST (or METRICS_HOST) to an address of this machine, e.g. 127.0.0.1 or 0.0.0.0",
    );
  return new StartupError(
    `cannot listen on ${where} for ${what}: ${err.message}`,
    "see the message",
  );
}

function listen(server: Server | NetServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Whether host:port can be listened on (port 0, any free port, always can); throws listenFailure. */
async function probePort(what: string, host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createNetServer();
  await listen(probe, port, host).catch((err: NodeJS.ErrnoException) => {
    throw listenFailure(what, host, port, err);
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** Compiled (`npm start`): dist/server/main.js; from source (`npm run dev`, tests): server/main.ts. */
const compiled = !import.meta.url.endsWith(".ts");
let config: Config;
try {
  config = configFromEnv(process.env, {
    production: compiled,
    prettyLogs: process.stdout.isTTY === true,
  });
} catch (err) {
  fail(
    createLogger("info"),
    err instanceof ConfigError
      ? new StartupError(
          err.message,
          `fix the environment variable ${err.variable} (see docs/configuration.md)`,
        )
      : err,
  );
}
const log = createLogger(config.logLevel, config.logFormat);
// Read by V8 at each full collection, so it holds from here on (config.ts says why).
if (config.heapGrowthPercent > 0)
  setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);

// The ports come before anything is opened: a port in use must not leave a new database
// behind, nor wait for migrations to say so. A probe listens and closes at once; the real
// listen below still reports a port taken in between.
try {
  await probePort("the API", config.host, config.port);
  if (config.metricsPort !== undefined)
    await probePort("the metrics", config.metricsHost, config.metricsPort);
} catch (err) {
  fail(log, err);
}

let database: Database;
try {
  database = await openDatabase(
    config.databaseUrl
      ? { databaseUrl: config.databaseUrl }
      : { dataDir: join(config.dataDir, "postgres"), fsync: config.pgliteFsync },
  );
} catch (err) {
  fail(log, databaseFailure(config, err));
}
log.info(
  {
    database: database.kind,
    dataDir: database.kind === "pglite" ? join(config.dataDir, "postgres") : undefined,
  },
  "database ready",
);

const events = new EventBus(database, { heartbeatMs: config.eventHeartbeatMs, log });
const metrics =
  config.metricsPort !== undefined
    ? new Metrics({ db: database.prisma, poolStats: () => database.poolStats() })
    : undefined;
const deps = {
  db: database.prisma,
  databaseKind: database.kind,
  events,
  log,
  config,
  metrics,
  now: () => new Date(),
};
const app = createApp(deps);
let server: Server;
let metricsServer: Server | undefined;
try {
  await events.ready();
  if ((await database.prisma.realm.count()) === 0)
    log.warn(
      {
        hint: "npm run manage -- create-realm --name NAME --email EMAIL --password-stdin    (or, for the development organization: npm run manage -- populate-db --credentials creds.json)",
      },
      "this server has no organization yet: create one (with the embedded database, stop the server first), then start it again",
    );
  server = createServer(app);
  // Idle keep-alive connections are kept longer than clients keep theirs (Node's 5 s default
  // races clients that reuse a connection just as the server drops it), and requests Node's
  // parser refuses still get a JSON envelope.
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server);
  await listen(server, config.port, config.host).catch((err: NodeJS.ErrnoException) => {
    throw listenFailure("the API", config.host, config.port, err);
  });
  if (metrics) {
    metricsServer = metrics.server();
    await listen(metricsServer, config.metricsPort!, config.metricsHost).catch(
      (err: NodeJS.ErrnoException) => {
        throw listenFailure("the metrics", config.metricsHost, config.metricsPort!, err);
      },
    );
  }
} catch (err) {
  events.close();
  await database.close().catch(() => {});
  fail(log, err);
}
const address = server.address();
const port = typeof address === "object" && address ? address.port : config.port;
const metricsAddress = metricsServer?.address();
log.info(
  {
    url: `http://${config.host}:${port}`,
    docs: `http://${config.host}:${port}/api/docs`,
    metrics:
      metricsAddress && typeof metricsAddress === "object"
        ? `http://${config.metricsHost}:${metricsAddress.port}/metrics`
        : undefined,
    pid: process.pid,
  },
  `listening on http://${config.host}:${port}`,
);
ensureDocs(log);
// Every process sends due scheduled messages; row locks keep each one sent once.
const delivery = new ScheduledDelivery(deps, {
  intervalMs: config.scheduledDeliveryIntervalMs,
}).start();
// And sends the email outbox; claims keep each message sent once (workers/email-delivery.ts).
const emailDelivery = new EmailDelivery(deps, {
  intervalMs: config.emailDeliveryIntervalMs,
}).start();
// And emails users about the messages they missed; the transaction that takes a user's rows
// queues the emails, so each is emailed once (workers/missed-message-emails.ts).
const missedMessageEmails = new MissedMessageEmails(deps, {
  intervalMs: config.emailDeliveryIntervalMs,
}).start();
// And pushes notifications to phones through the bouncer; leases keep each row pushed once
// (workers/push-notifications.ts).
const pushNotifications = new PushNotifications(deps, {
  intervalMs: config.emailDeliveryIntervalMs,
}).start();
// And makes the data exports administrators request; claims with leases keep each made once
// (workers/realm-exports.ts).
const realmExports = new RealmExports(deps, {
  intervalMs: config.emailDeliveryIntervalMs,
}).start();
// And applies the message retention policy; SKIP LOCKED keeps each message archived once.
const retention = new MessageRetention(deps, { intervalMs: config.retentionIntervalMs }).start();
// And sends the weekly digests on each organization's digest day; a claim per user and day keeps
// each user's digest sent once (workers/digest-emails.ts).
const digestEmails = new DigestEmails(deps, { intervalMs: DIGEST_INTERVAL_MS }).start();

const drain = gracefulShutdown(server);
let stopping = false;
/**
 * Stop accepting, let requests in flight finish (bounded by SHUTDOWN_TIMEOUT_MS; see
 * http/shutdown.ts), and only then close the database: a client whose request was accepted gets
 * its response, one that was not gets ECONNREFUSED. Exit code 0 when every request finished,
 * 1 when the bound cut some off or the database did not close.
 */
async function shutdown(signal: string) {
  // A second signal is only logged: one Ctrl-C under `npm start` can deliver SIGINT twice (the
  // terminal signals the whole process group and npm forwards its own), and the bounds below
  // already guarantee the exit.
  if (stopping) return log.info({ signal }, "already shutting down");
  stopping = true;
  log.info(
    { signal, timeoutMs: config.shutdownTimeoutMs },
    "shutting down: finishing requests in flight",
  );
  // Backstop for the database close after the drain (cut-off handlers may still be querying).
  setTimeout(() => {
    log.error("shutdown did not finish in time: exiting");
    process.exit(1);
  }, config.shutdownTimeoutMs + 5_000).unref();
  metricsServer?.close();
  let clean = await drain({
    timeoutMs: config.shutdownTimeoutMs,
    log,
    release: () => events.close(),
  });
  events.close();
  await Promise.all([
    delivery.stop(),
    emailDelivery.stop(),
    missedMessageEmails.stop(),
    pushNotifications.stop(),
    realmExports.stop(),
    retention.stop(),
    digestEmails.stop(),
  ]);
  try {
    await database.close();
  } catch (err) {
    log.error({ err }, "closing the database failed");
    clean = false;
  }
  log.info({ clean }, "stopped");
  process.exit(clean ? 0 : 1);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
