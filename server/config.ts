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
  };
}
