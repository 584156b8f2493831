/** Configuration from the environment; documented in README.md. */
import { resolve } from "node:path";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  logLevel: string;
  /** The externally visible host of the server, used for dummy emails and URLs. */
  externalHost: string;
  /** Validate every response against the spec (on in tests and development). */
  validateResponses: boolean;
  /** Milliseconds GET /events waits before a heartbeat. */
  eventHeartbeatMs: number;
  /** On SIGTERM/SIGINT, how long requests in flight may run before their connections are closed. */
  shutdownTimeoutMs: number;
  /** Longest time between two looks for due scheduled messages (other processes add them too). */
  scheduledDeliveryIntervalMs: number;
  /**
   * Embedded database only: PostgreSQL's fsync on, forwarded to the host files (true unless
   * PGLITE_FSYNC=off, which is for tests only). openDatabase reads it from the environment too.
   */
  pgliteFsync: boolean;
  /** Largest file POST /user_uploads accepts, in MiB (Zulip's MAX_FILE_UPLOAD_SIZE). */
  maxFileUploadSizeMib: number;
  /** Whether organizations may have web-public channels (Zulip's WEB_PUBLIC_STREAMS_ENABLED; off by default, as in production). */
  webPublicStreamsEnabled: boolean;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 9991);
  const host = env.HOST ?? "127.0.0.1";
  return {
    port,
    host,
    dataDir: resolve(env.DATA_DIR ?? "data"),
    databaseUrl: env.DATABASE_URL || undefined,
    logLevel: env.LOG_LEVEL ?? "info",
    externalHost: env.EXTERNAL_HOST ?? `${host}:${port}`,
    validateResponses: (env.VALIDATE_RESPONSES ?? (env.NODE_ENV === "production" ? "false" : "true")) === "true",
    eventHeartbeatMs: Number(env.EVENT_HEARTBEAT_MS ?? 50_000),
    shutdownTimeoutMs: Number(env.SHUTDOWN_TIMEOUT_MS ?? 10_000),
    // Other processes' scheduled messages are found by looking: often on a shared PostgreSQL, and
    // rarely on the embedded database, which no other process writes (its own wake the loop).
    scheduledDeliveryIntervalMs: Number(env.SCHEDULED_DELIVERY_INTERVAL_MS ?? (env.DATABASE_URL ? 1000 : 60_000)),
    pgliteFsync: pgliteFsyncFromEnv(env),
    maxFileUploadSizeMib: Number(env.MAX_FILE_UPLOAD_SIZE ?? 25),
    webPublicStreamsEnabled: env.WEB_PUBLIC_STREAMS_ENABLED === "true",
  };
}

/** PGLITE_FSYNC: `on` (default) or `off` (tests only: a power loss can then lose commits or corrupt the data directory). */
export function pgliteFsyncFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.PGLITE_FSYNC ?? "on").trim().toLowerCase();
  if (v === "on" || v === "true" || v === "1" || v === "") return true;
  if (v === "off" || v === "false" || v === "0") return false;
  throw new Error(`PGLITE_FSYNC must be "on" or "off", not ${JSON.stringify(env.PGLITE_FSYNC)}`);
}
