// Migrations with Prisma's WebAssembly schema engine:
// - applyPendingMigrations: what `prisma migrate deploy` does (records every
//   applied migration, with its checksum, in _prisma_migrations);
// - createMigration: what `prisma migrate dev --create-only` does (replays
//   prisma/migrations into a shadow database and diffs it against the schema).

import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import {
  MIGRATIONS_DIR,
  MIGRATION_LOCK_CONTENT,
  MIGRATION_LOCK_FILE,
  NO_FILTERS,
  SCHEMA_PATH,
  openSchemaEngine,
  pgMigrationFactory,
  pgliteMigrationFactory,
  readMigrationsList,
  takeLastEnginePanic,
  type TrackedFactory,
} from "./schema-engine.ts";

function wrapEngineError(what: string, e: unknown): Error {
  const panic = takeLastEnginePanic();
  const msg = e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e);
  return new Error(`${what} failed: ${msg}${panic ? `\nengine panic: ${panic}` : ""}`, {
    cause: e,
  });
}

type Query = (sql: string) => Promise<{ rows: { migration_name: string; checksum: string }[] }>;

/**
 * Whether every migration of the directory is recorded as applied, with the checksum of its file
 * as it is now. Then the schema engine (WebAssembly, tens of MB once instantiated, and most of a
 * start-up's time) is not needed; otherwise it applies what is pending and checks the rest.
 */
async function allApplied(query: Query, migrationsDir: string): Promise<boolean> {
  const list = readMigrationsList(migrationsDir);
  let rows;
  try {
    ({ rows } = await query(
      `SELECT migration_name, checksum FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    ));
  } catch {
    return false; // no migrations table yet
  }
  const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
  return list.migrationDirectories.every((d) => {
    const file = d.migrationFile.content;
    return (
      file.tag === "ok" &&
      applied.get(d.path) === createHash("sha256").update(file.value).digest("hex")
    );
  });
}

async function applyWith(factory: TrackedFactory, migrationsDir: string): Promise<string[]> {
  const list = readMigrationsList(migrationsDir);
  if (list.migrationDirectories.length === 0) return [];
  const handle = await openSchemaEngine(factory);
  try {
    const out = await handle.engine.applyMigrations({ migrationsList: list, filters: NO_FILTERS });
    return out.appliedMigrationNames;
  } catch (e) {
    throw wrapEngineError("applying migrations", e);
  } finally {
    await handle.close();
  }
}

/** Applies pending migrations to a PGlite database. Returns the names applied. */
export async function applyPendingMigrationsPGlite(
  pg: PGlite,
  migrationsDir: string = MIGRATIONS_DIR,
): Promise<string[]> {
  if (await allApplied((sql) => pg.query(sql), migrationsDir)) return [];
  return applyWith(await pgliteMigrationFactory(pg), migrationsDir);
}

// Session-level advisory lock serializing migrations between processes that
// start at the same time (distinct from any key the engine may use itself).
const MIGRATION_LOCK_KEY = 7_406_213_311;

/** Applies pending migrations to a PostgreSQL database. Returns the names applied. */
export async function applyPendingMigrationsPostgres(
  connectionString: string,
  migrationsDir: string = MIGRATIONS_DIR,
): Promise<string[]> {
  const pg = await import("pg");
  const lockClient = new pg.default.Client({ connectionString });
  await lockClient.connect();
  try {
    await lockClient.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    if (await allApplied((sql) => lockClient.query(sql), migrationsDir)) return [];
    return await applyWith(await pgMigrationFactory(connectionString), migrationsDir);
  } finally {
    await lockClient.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => {});
    await lockClient.end();
  }
}

export interface CreateMigrationResult {
  /** Directory name (<timestamp>_<name>), or null when there were no changes. */
  name: string | null;
  path: string | null;
  sql: string | null;
}

/**
 * Diffs prisma/migrations (replayed in a shadow in-memory PGlite) against the
 * schema and, if anything changed, writes <dir>/<timestamp>_<name>/migration.sql
 * (and migration_lock.toml when missing).
 */
export async function createMigration(
  name: string,
  opts: { migrationsDir?: string; schemaPath?: string; draft?: boolean } = {},
): Promise<CreateMigrationResult> {
  const migrationsDir = opts.migrationsDir ?? MIGRATIONS_DIR;
  const schemaPath = opts.schemaPath ?? SCHEMA_PATH;
  if (!/^[A-Za-z0-9_]+$/.test(name)) {
    throw new Error(`invalid migration name ${JSON.stringify(name)} (use letters, digits, _)`);
  }
  mkdirSync(migrationsDir, { recursive: true });
  const lockPath = path.join(migrationsDir, MIGRATION_LOCK_FILE);
  if (!existsSync(lockPath)) writeFileSync(lockPath, MIGRATION_LOCK_CONTENT);

  const schemaText = readFileSync(schemaPath, "utf8");
  const { PGlite } = await import("@electric-sql/pglite");
  // The "main" database is never touched by createMigration; only the shadow
  // database (a fresh in-memory PGlite) is used.
  const mainPg = await PGlite.create();
  try {
    const handle = await openSchemaEngine(await pgliteMigrationFactory(mainPg), { schemaText });
    try {
      // (engine.createMigration cannot use an adapter-provided shadow database
      // for PostgreSQL in the wasm build, so do what it does: diff the
      // migrations folder against the schema.)
      const out = await handle.engine.diff({
        from: { tag: "migrations", ...readMigrationsList(migrationsDir) },
        to: { tag: "schemaDatamodel", files: [{ path: schemaPath, content: schemaText }] },
        script: true,
        exitCode: null,
        filters: NO_FILTERS,
      });
      const sql = out.stdout ?? "";
      if (isEmptyMigration(sql) && !opts.draft) return { name: null, path: null, sql: null };
      const dirName = `${migrationTimestamp(new Date())}_${name}`;
      const dir = path.join(migrationsDir, dirName);
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, "migration.sql");
      writeFileSync(file, sql);
      return { name: dirName, path: file, sql };
    } catch (e) {
      throw wrapEngineError("creating the migration", e);
    } finally {
      await handle.close();
    }
  } finally {
    await mainPg.close();
  }
}

/** The engine's script for "no difference" is only comments/whitespace. */
function isEmptyMigration(sql: string): boolean {
  return sql
    .split("\n")
    .map((l) => l.trim())
    .every((l) => l === "" || l.startsWith("--"));
}

/** YYYYMMDDHHMMSS in UTC, like Prisma's migration directory names. */
function migrationTimestamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return (
    `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}` +
    `${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`
  );
}
