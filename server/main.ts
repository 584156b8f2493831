/**
 * `npm start`: opens the database (embedded PGlite in DATA_DIR, or PostgreSQL at
 * DATABASE_URL), applies pending migrations, listens, and shuts down cleanly on SIGTERM/SIGINT
 * so that the embedded data directory stays usable.
 */
import { createApp } from "./app.ts";
import { configFromEnv } from "./config.ts";
import { openDatabase } from "./db.ts";
import { EventBus } from "./events.ts";
import { createLogger } from "./logger.ts";
import { join } from "node:path";

const config = configFromEnv();
const log = createLogger(config.logLevel);
const database = await openDatabase(config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: join(config.dataDir, "postgres") });
log.info({ database: database.kind, dataDir: database.kind === "pglite" ? join(config.dataDir, "postgres") : undefined }, "database ready");
const events = new EventBus({ heartbeatMs: config.eventHeartbeatMs });
const app = createApp({ db: database.prisma, events, log, config, now: () => new Date() });
const server = app.listen(config.port, config.host, () => log.info(`listening on http://${config.host}:${config.port} (API docs at /api/docs)`));
server.on("error", async (err) => {
  log.error({ err }, "cannot listen");
  await database.close();
  process.exit(1);
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  events.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await database.close();
  log.info("stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
