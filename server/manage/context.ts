/** What the management commands run with: the same database and configuration as the server. */
import { configFromEnv, type Config } from "../config.ts";
import type { AppDeps, RequestContext } from "../context.ts";
import { openDatabase, type Database, type Realm, type UserProfile } from "../db/index.ts";
import { EventBus } from "../events/index.ts";
import { createLogger } from "../logger.ts";
import { join } from "node:path";

export async function openForCommand(
  config: Config = configFromEnv(),
): Promise<{ deps: AppDeps; database: Database }> {
  const database = await openDatabase(
    config.databaseUrl
      ? { databaseUrl: config.databaseUrl }
      : { dataDir: join(config.dataDir, "postgres"), fsync: config.pgliteFsync },
  );
  // Commands run while the server is stopped: events have no listener, but actions still queue them.
  const deps: AppDeps = {
    db: database.prisma,
    events: new EventBus(database),
    log: createLogger(config.logLevel === "info" ? "warn" : config.logLevel),
    config,
    now: () => new Date(),
  };
  return { deps, database };
}

/** An acting-user context for actions run from the command line. */
export function actAs(deps: AppDeps, realm: Realm, user: UserProfile): RequestContext {
  return { ...deps, realm, user, host: deps.config.externalHost, userAgent: "Internal" };
}
