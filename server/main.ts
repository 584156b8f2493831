/**
 * `npm start`: opens the database (embedded PGlite in DATA_DIR, or PostgreSQL at
 * DATABASE_URL), applies pending migrations, listens, and shuts down cleanly on SIGTERM/SIGINT
 * so that the embedded data directory stays usable.
 */
import { createApp } from "./app.ts";
import { configFromEnv } from "./config.ts";
import { openDatabase } from "./db.ts";
import { EventBus } from "./events.ts";
import { ScheduledDelivery } from "./actions/scheduled-delivery.ts";
import { answerClientErrors } from "./http/client-error.ts";
import { gracefulShutdown } from "./http/shutdown.ts";
import { createLogger } from "./logger.ts";
import { join } from "node:path";

const config = configFromEnv();
const log = createLogger(config.logLevel);
const database = await openDatabase(config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: join(config.dataDir, "postgres"), fsync: config.pgliteFsync });
log.info({ database: database.kind, dataDir: database.kind === "pglite" ? join(config.dataDir, "postgres") : undefined }, "database ready");
const events = new EventBus(database, { heartbeatMs: config.eventHeartbeatMs, log });
await events.ready();
const deps = { db: database.prisma, events, log, config, now: () => new Date() };
const app = createApp(deps);
// Every process sends due scheduled messages; row locks keep each one sent once.
const delivery = new ScheduledDelivery(deps, { intervalMs: config.scheduledDeliveryIntervalMs }).start();
const server = app.listen(config.port, config.host, () => log.info(`listening on http://${config.host}:${config.port} (API docs at /api/docs)`));
// Idle keep-alive connections are kept longer than clients keep theirs (Node's 5 s default
// races clients that reuse a connection just as the server drops it), and requests Node's
// parser refuses still get a JSON envelope.
server.keepAliveTimeout = 65_000;
answerClientErrors(server);
server.on("error", async (err) => {
  log.error({ err }, "cannot listen");
  await database.close();
  process.exit(1);
});

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
  log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, "shutting down: finishing requests in flight");
  // Backstop for the database close after the drain (cut-off handlers may still be querying).
  setTimeout(() => {
    log.error("shutdown did not finish in time: exiting");
    process.exit(1);
  }, config.shutdownTimeoutMs + 5_000).unref();
  let clean = await drain({ timeoutMs: config.shutdownTimeoutMs, log, release: () => events.close() });
  events.close();
  await delivery.stop();
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
