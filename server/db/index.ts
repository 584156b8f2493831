// Database access: opens PGlite (embedded PostgreSQL, data directory on disk
// or in memory) or a PostgreSQL server, applies pending migrations from
// prisma/migrations with Prisma's WebAssembly schema engine (recorded in
// _prisma_migrations exactly like `prisma migrate deploy`), and returns a
// Prisma client bound to it through a driver adapter.
//
// No Node flag is needed: the wasm engine is instantiated by hand (see
// server/db/schema-engine.ts).

import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import pgDriver from "pg";
import { pgliteFsyncFromEnv } from "../config.ts";
import { PrismaClient, Prisma } from "../../generated/prisma/client.ts";
import { fsyncTree, pgliteDurability } from "./durability.ts";
import { lockDataDir } from "./lock.ts";
import { applyPendingMigrationsPGlite, applyPendingMigrationsPostgres } from "./migrate.ts";
import { listenPostgres } from "./listen.ts";
import { countingAdapter } from "./statements.ts";
import { capturingTransactions, directRawQueries } from "./direct-raw.ts";
import type { SqlDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { unmatchableValuesFindNothing } from "./unmatchable.ts";

export { pgliteHostFsyncCount } from "./durability.ts";

// Everything callers need from the generated client: PrismaClient, the
// Prisma namespace, model types (Realm, UserProfile, Message, ...) and enums.
export * from "../../generated/prisma/client.ts";

/**
 * The embedded PostgreSQL runs inside this process, in WebAssembly memory that grows but never
 * shrinks: a smaller buffer cache than PostgreSQL's 128 MB default keeps the server's memory
 * bounded (reads beyond it still come from the operating system's file cache).
 */
const EMBEDDED_SETTINGS = ["shared_buffers=16MB"];

/**
 * Statements are prepared by name on each PostgreSQL connection, so that PostgreSQL plans a
 * statement once per connection rather than on every execution (planning the message queries costs
 * more than running them). Names are bounded: texts that vary with their input (Prisma's IN lists)
 * could otherwise grow every connection's prepared statements without limit; the first distinct
 * texts a process sees, its hot paths, are named, and the rest run unnamed.
 *
 * A statement that starts with CUSTOM_PLAN always runs unnamed, so PostgreSQL plans it for its
 * values every time, as Zulip's (Django's) statements are: after five executions of a named
 * statement PostgreSQL may keep a generic plan, made without the values, and for the message
 * fetch (whose best plan depends on how many rows the user, the flag or the search word has) a
 * generic plan can read a user's whole history (3 s for a rare phrase at 200,000 messages).
 */
export const CUSTOM_PLAN = "/* custom plan */";
const MAX_PREPARED_STATEMENTS = 500;
const preparedNames = new Map<string, string>();
// (Its type says a string, but the adapter passes undefined on to pg, which then runs the statement unnamed.)
function preparedStatementName(query: { sql: string }): string | undefined {
  if (query.sql.startsWith(CUSTOM_PLAN)) return undefined;
  let name = preparedNames.get(query.sql);
  if (name === undefined && preparedNames.size < MAX_PREPARED_STATEMENTS) {
    name = `s${createHash("sha1").update(query.sql).digest("hex").slice(0, 20)}`;
    preparedNames.set(query.sql, name);
  }
  return name;
}

/** The client handed to `prisma.$transaction(async (tx) => …)` callbacks. */
export type Tx = Prisma.TransactionClient;
export type { RawTx } from "./direct-raw.ts";
/** The one type for "a database to read or write": the root client or a transaction client. Take the
 * root `PrismaClient` only where a transaction would be wrong (caches of committed rows), `Tx` where
 * the work must run inside the caller's transaction. */
export type Db = PrismaClient | Tx;

export interface Database {
  prisma: PrismaClient;
  kind: "pglite" | "postgres";
  /**
   * LISTEN on a channel (PostgreSQL: a dedicated connection, reconnected when it drops, with
   * `onReconnect` called so the listener can catch up on what it may have missed). On the embedded
   * database, which one process owns, there is nothing to listen to: changes are announced in
   * memory, and this returns a no-op.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onReconnect?: () => void,
  ): Promise<() => Promise<void>>;
  /** Disconnects (and closes PGlite, leaving its data directory reusable). Idempotent. */
  close(): Promise<void>;
  /** Connections of the PostgreSQL pool (for metrics); the embedded database has one connection and no pool. */
  poolStats(): { total: number; idle: number; waiting: number } | null;
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
  /**
   * With dataDir: PostgreSQL's fsync on, its fsyncs reaching the host files (see pgliteDurability).
   * Default: the PGLITE_FSYNC environment variable, on unless it says `off` (for tests only).
   */
  fsync?: boolean;
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
    // The pool is ours (not the adapter's) so that its use can be measured; we end it on close.
    // JIT off for every session: our statements are short, index-driven reads, and a plan whose
    // estimated cost passes jit_above_cost (a first-unread anchor or the register's unread rows at
    // a million messages) would spend ~400 ms compiling with LLVM to run for a few milliseconds.
    // Many large PostgreSQL deployments turn it off for OLTP work for the same reason. An
    // `options` parameter in DATABASE_URL replaces this one (node-postgres lets the URL win).
    const pool = new pgDriver.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      options: "-c jit=off",
    });
    // An idle connection that drops (server restart, network) is discarded by the pool and the
    // next query opens a new one; without a listener the error would end the process.
    pool.on("error", () => {});
    const adapter = capturingTransactions(
      countingAdapter(
        new PrismaPg(pool, {
          statementNameGenerator: preparedStatementName as (query: { sql: string }) => string,
        }),
      ),
    );
    const prisma = withExtensions(new PrismaClient({ adapter, log: opts.log }), adapter);
    const listeners = new Set<() => Promise<void>>();
    return {
      prisma,
      kind: "postgres",
      listen: async (channel, onNotify, onReconnect) => {
        const stop = await listenPostgres(url, channel, onNotify, onReconnect);
        listeners.add(stop);
        return async () => {
          listeners.delete(stop);
          await stop();
        };
      },
      close: once(async () => {
        await Promise.all([...listeners].map((stop) => stop()));
        await prisma.$disconnect();
        await pool.end().catch(() => {});
      }),
      poolStats: () => ({
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
      }),
    };
  }

  let pg = opts.pglite;
  let unlock = async () => {};
  if (!pg) {
    const { PGlite } = await import("@electric-sql/pglite");
    if (opts.dataDir) {
      const dataDir = opts.dataDir;
      const fsync = opts.fsync ?? pgliteFsyncFromEnv();
      mkdirSync(dataDir, { recursive: true });
      unlock = await lockDataDir(dataDir);
      try {
        const fresh = !existsSync(join(dataDir, "PG_VERSION"));
        const durability = fsync ? await pgliteDurability(dataDir) : {};
        const startParams = [
          ...(durability.startParams ?? PGlite.defaultStartParams),
          ...EMBEDDED_SETTINGS.flatMap((s) => ["-c", s]),
        ];
        pg = await PGlite.create({ dataDir, ...durability, startParams });
        if (fsync) {
          const { rows } = await pg.query<{ fsync: string }>("SHOW fsync");
          if (rows[0]?.fsync !== "on")
            throw new Error(`PGlite ignored fsync=on (SHOW fsync says ${rows[0]?.fsync})`);
          // initdb ran in memory and PGlite copied its result in without fsync.
          if (fresh) fsyncTree(dataDir, true);
        }
      } catch (e) {
        await pg?.close().catch(() => {});
        await unlock();
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
    await unlock();
    throw e;
  }
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  const adapter = capturingTransactions(countingAdapter(new PrismaPGlite(pglite)));
  const prisma = withExtensions(new PrismaClient({ adapter, log: opts.log }), adapter);
  return {
    prisma,
    kind: "pglite",
    listen: async () => async () => {},
    poolStats: () => null,
    close: once(async () => {
      try {
        await prisma.$disconnect();
      } finally {
        if (!pglite.closed) await pglite.close();
        await unlock();
      }
    }),
  };
}

/**
 * The extended client keeps PrismaClient's API for models, transactions and raw queries (the
 * extension only changes what some failed reads return, and `$queryRaw` outside a transaction
 * goes to the driver directly: db/direct-raw.ts), so callers keep the plain type.
 */
function withExtensions(client: PrismaClient, adapter: SqlDriverAdapterFactory): PrismaClient {
  return directRawQueries(
    client.$extends(unmatchableValuesFindNothing) as unknown as PrismaClient,
    adapter,
  );
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}
