// Database access: opens PGlite (embedded PostgreSQL, data directory on disk
// or in memory) or a PostgreSQL server, applies pending migrations from
// prisma/migrations with Prisma's WebAssembly schema engine (recorded in
// _prisma_migrations exactly like `prisma migrate deploy`), and returns a
// Prisma client bound to it through a driver adapter.
//
// No Node flag is needed: the wasm engine is instantiated by hand (see
// server/db/schema-engine.ts).

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { PGlite } from "@electric-sql/pglite";
import { PrismaClient, Prisma } from "../generated/prisma/client.ts";
import { applyPendingMigrationsPGlite, applyPendingMigrationsPostgres } from "./db/migrate.ts";
import { unmatchableValuesFindNothing } from "./db/unmatchable.ts";

// Everything callers need from the generated client: PrismaClient, the
// Prisma namespace, model types (Realm, UserProfile, Message, ...) and enums.
export * from "../generated/prisma/client.ts";

/** The client handed to `prisma.$transaction(async (tx) => …)` callbacks. */
export type Tx = Prisma.TransactionClient;
/** Either the root client or a transaction client. */
export type Db = PrismaClient | Tx;

export interface Database {
  prisma: PrismaClient;
  kind: "pglite" | "postgres";
  /** Disconnects (and closes PGlite, leaving its data directory reusable). Idempotent. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PGlite data directory (created if missing). Ignored when databaseUrl is set. */
  dataDir?: string;
  /** postgres://… URL of a PostgreSQL server; takes precedence over dataDir. */
  databaseUrl?: string;
  /**
   * Advanced: an already-created PGlite instance to use instead of dataDir
   * (e.g. an in-memory copy of a template). close() closes it.
   */
  pglite?: PGlite;
  /** Apply pending migrations at open time (default true). */
  migrate?: boolean;
  /** Prisma log levels, e.g. ["query"]. */
  log?: Prisma.LogLevel[];
  /** PostgreSQL pool size (default 10). */
  poolSize?: number;
}

/**
 * Opens the database. With `databaseUrl` it uses @prisma/adapter-pg; otherwise
 * PGlite stored in `dataDir` (in memory when neither is given).
 */
export async function openDatabase(opts: OpenDatabaseOptions = {}): Promise<Database> {
  const migrate = opts.migrate ?? true;

  if (opts.databaseUrl) {
    const url = opts.databaseUrl;
    if (migrate) await applyPendingMigrationsPostgres(url);
    const { PrismaPg } = await import("@prisma/adapter-pg");
    const adapter = new PrismaPg({ connectionString: url, max: opts.poolSize ?? 10 });
    const prisma = withExtensions(new PrismaClient({ adapter, log: opts.log }));
    return { prisma, kind: "postgres", close: once(() => prisma.$disconnect()) };
  }

  let pg = opts.pglite;
  let unlock = () => {};
  if (!pg) {
    const { PGlite } = await import("@electric-sql/pglite");
    if (opts.dataDir) {
      mkdirSync(opts.dataDir, { recursive: true });
      unlock = lockDataDir(opts.dataDir);
      try {
        pg = await PGlite.create({ dataDir: opts.dataDir });
      } catch (e) {
        unlock();
        throw e;
      }
    } else {
      pg = await PGlite.create();
    }
  } else {
    await pg.waitReady;
  }
  const pglite = pg;
  try {
    if (migrate) await applyPendingMigrationsPGlite(pglite);
  } catch (e) {
    await pglite.close().catch(() => {});
    unlock();
    throw e;
  }
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  const prisma = withExtensions(new PrismaClient({ adapter: new PrismaPGlite(pglite), log: opts.log }));
  return {
    prisma,
    kind: "pglite",
    close: once(async () => {
      try {
        await prisma.$disconnect();
      } finally {
        if (!pglite.closed) await pglite.close();
        unlock();
      }
    }),
  };
}

/**
 * One process owns a PGlite data directory at a time (two would corrupt it): a pid file beside
 * the directory refuses a second opener while the first is alive; a stale one is taken over.
 */
function lockDataDir(dir: string): () => void {
  const file = `${dir.replace(/\/+$/, "")}.lock`;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => rmSync(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const pid = Number(readFileSync(file, "utf8"));
      let alive = false;
      try {
        alive = pid > 0 && pid !== process.pid && (process.kill(pid, 0), true);
      } catch {
        alive = false;
      }
      if (alive) throw new Error(`The data directory ${dir} is in use by process ${pid}: stop it first (one process owns an embedded database at a time).`);
      rmSync(file, { force: true });
    }
  }
}

/**
 * The extended client keeps PrismaClient's API for models, transactions and raw queries (the
 * extension only changes what some failed reads return), so callers keep the plain type.
 */
function withExtensions(client: PrismaClient): PrismaClient {
  return client.$extends(unmatchableValuesFindNothing) as unknown as PrismaClient;
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}
