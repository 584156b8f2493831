// Database access: opens PGlite (embedded PostgreSQL, data directory on disk
// or in memory) or a PostgreSQL server, applies pending migrations from
// prisma/migrations with Prisma's WebAssembly schema engine (recorded in
// _prisma_migrations exactly like `prisma migrate deploy`), and returns a
// Prisma client bound to it through a driver adapter.
//
// No Node flag is needed: the wasm engine is instantiated by hand (see
// server/db/schema-engine.ts).

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { PGlite, PGliteOptions } from "@electric-sql/pglite";
import { pgliteFsyncFromEnv } from "./config.ts";
import { PrismaClient, Prisma } from "../generated/prisma/client.ts";
import { lockDataDir } from "./db/lock.ts";
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
    const adapter = new PrismaPg({ connectionString: url, max: opts.poolSize ?? 10 });
    const prisma = withExtensions(new PrismaClient({ adapter, log: opts.log }));
    return { prisma, kind: "postgres", close: once(() => prisma.$disconnect()) };
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
        pg = await PGlite.create({ dataDir, ...(fsync ? await pgliteDurability(dataDir) : {}) });
        if (fsync) {
          const { rows } = await pg.query<{ fsync: string }>("SHOW fsync");
          if (rows[0]?.fsync !== "on") throw new Error(`PGlite ignored fsync=on (SHOW fsync says ${rows[0]?.fsync})`);
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
  const prisma = withExtensions(new PrismaClient({ adapter: new PrismaPGlite(pglite), log: opts.log }));
  return {
    prisma,
    kind: "pglite",
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

// ---------------------------------------------------------------------------------------------
// Durability of the embedded database.
//
// PGlite (0.5.16) starts PostgreSQL with `-F`, i.e. fsync=off. Dropping it is not enough: in its
// WebAssembly build fsync() ends in Emscripten's fd_sync, which calls the file system's
// stream_ops.fsync, and NODEFS (the host-directory file system) has none, so nothing reaches the
// host; fdatasync() is a no-op syscall there whatever the file system. So a durable start:
// - PostgreSQL with fsync=on, synchronous_commit=on, full_page_writes=on, and
//   wal_sync_method=fsync (the default, fdatasync, would sync nothing);
// - NODEFS streams get an fsync that calls fsync(2) on the host file descriptor, so a commit
//   returns once its WAL is on disk, and checkpoints (and recovery's sync of the data directory
//   after a crash) reach the disk as PostgreSQL expects; a failed host fsync fails PostgreSQL's.

let hostFsyncs = 0;

/** How many host fsync(2) calls durable PGlite instances of this process have made (for tests). */
export function pgliteHostFsyncCount(): number {
  return hostFsyncs;
}

interface EmscriptenNodeFs {
  NODEFS?: { stream_ops: { fsync?: (stream: { nfd?: unknown }) => number }; tryFSOperation?: (f: () => unknown) => unknown };
  FS: { ErrnoError: new (errno: number) => Error };
}

async function pgliteDurability(dataDir: string): Promise<Pick<PGliteOptions, "fs" | "startParams">> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { NodeFS } = await import("@electric-sql/pglite/nodefs");
  type PreRun = NonNullable<Awaited<ReturnType<InstanceType<typeof NodeFS>["init"]>>["emscriptenOpts"]["preRun"]>[number];
  const hostFsync: PreRun = (mod) => {
    const { NODEFS, FS } = mod as unknown as EmscriptenNodeFs;
    if (!NODEFS?.stream_ops) throw new Error("this PGlite build has no NODEFS: cannot make the data directory durable");
    const run = NODEFS.tryFSOperation?.bind(NODEFS) ?? ((f: () => unknown) => f()); // host errors → errno
    NODEFS.stream_ops.fsync = (stream) => {
      if (typeof stream.nfd !== "number") throw new FS.ErrnoError(8); // EBADF
      run(() => fsyncSync(stream.nfd as number));
      hostFsyncs++;
      return 0;
    };
  };
  class HostFsyncNodeFS extends NodeFS {
    override async init(...args: Parameters<InstanceType<typeof NodeFS>["init"]>) {
      const result = await super.init(...args);
      result.emscriptenOpts.preRun = [...(result.emscriptenOpts.preRun ?? []), hostFsync];
      return result;
    }
  }
  const settings = { fsync: "on", synchronous_commit: "on", full_page_writes: "on", wal_sync_method: "fsync" };
  return {
    fs: new HostFsyncNodeFS(dataDir),
    startParams: [...PGlite.defaultStartParams.filter((p) => p !== "-F"), ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])],
  };
}

/** fsync(2) every file and directory under dir (and, if `entry`, the directory holding dir's own entry). */
function fsyncTree(dir: string, entry = false): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) fsyncTree(join(dir, e.name));
    else if (e.isFile()) fsyncPath(join(dir, e.name), false);
  }
  fsyncPath(dir, true);
  if (entry) fsyncPath(dirname(dir), true);
}

function fsyncPath(path: string, isDir: boolean): void {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if (isDir && process.platform === "win32") return; // directories cannot be opened there
    throw e;
  }
  try {
    fsyncSync(fd);
  } catch (e) {
    // Like PostgreSQL's fsync_fname: some file systems cannot fsync a directory.
    if (!(isDir && ["EINVAL", "EBADF", "EISDIR", "EPERM"].includes((e as NodeJS.ErrnoException).code ?? ""))) throw e;
  } finally {
    closeSync(fd);
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
