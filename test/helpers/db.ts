// A fresh, migrated database per call, fast.
//
// PGlite (default): the first call of a test run builds a migrated template
// (initdb + migrations, ~6 s) and stores it as a tar dump under os.tmpdir(),
// keyed by a hash of prisma/migrations and the PGlite version, so it is
// rebuilt only when migrations change. Concurrent vitest workers coordinate
// with a lock directory plus an atomic rename. Every call then loads the dump
// into a new in-memory PGlite (~0.5 s); nothing is left on disk.
//
// PostgreSQL (env DATABASE_URL set, e.g. postgres://postgres@127.0.0.1:5432/postgres):
// a migrated template database `chat_test_tpl_<hash>` is built once (under a
// pg advisory lock, then renamed into place), and every call runs
// CREATE DATABASE … TEMPLATE … ; close() drops that database.

import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { openDatabase, type Database } from "../../server/db/index.ts";
import { MIGRATIONS_DIR } from "../../server/db/schema-engine.ts";

export interface TestDatabase extends Database {
  /** Name of the PostgreSQL database, or "memory" for PGlite. */
  name: string;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL;
  return url ? createPostgresTestDatabase() : createPGliteTestDatabase();
}

// ---------------------------------------------------------------------------

function migrationsHash(): string {
  const h = createHash("sha256");
  h.update(`pglite ${packageVersion("@electric-sql/pglite")}\n`);
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else
        h.update(`${path.relative(MIGRATIONS_DIR, full)}\0`)
          .update(readFileSync(full))
          .update("\0");
    }
  };
  if (existsSync(MIGRATIONS_DIR)) walk(MIGRATIONS_DIR);
  return h.digest("hex").slice(0, 16);
}

/** Version of an installed package whose exports hide package.json. */
function packageVersion(name: string): string {
  let dir = path.dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const pj = path.join(dir, "package.json");
    if (existsSync(pj)) {
      const pkg = JSON.parse(readFileSync(pj, "utf8")) as { name?: string; version?: string };
      if (pkg.name === name) return pkg.version ?? "unknown";
    }
    const up = path.dirname(dir);
    if (up === dir) return "unknown";
    dir = up;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// PGlite

const TEMPLATE_PREFIX = "chat-server-pglite-template-";
let pgliteTemplate: Promise<Buffer> | undefined;

function getPGliteTemplate(): Promise<Buffer> {
  pgliteTemplate ??= buildPGliteTemplate().catch((e) => {
    pgliteTemplate = undefined;
    throw e;
  });
  return pgliteTemplate;
}

async function buildPGliteTemplate(): Promise<Buffer> {
  const dir = os.tmpdir();
  const file = path.join(dir, `${TEMPLATE_PREFIX}${migrationsHash()}.tar`);
  const lock = `${file}.lock`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (existsSync(file)) return readFileSync(file);
    try {
      mkdirSync(lock);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      // Someone else is building it. Break a lock left by a crashed builder.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000)
          rmSync(lock, { recursive: true, force: true });
      } catch {
        /* lock vanished meanwhile */
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
      await sleep(100);
      continue;
    }
    try {
      if (existsSync(file)) return readFileSync(file);
      const { PGlite } = await import("@electric-sql/pglite");
      const pg = await PGlite.create();
      const db = await openDatabase({ pglite: pg }); // applies the migrations
      await db.prisma.$disconnect();
      const dump = await pg.dumpDataDir("none");
      await db.close();
      const buf = Buffer.from(await dump.arrayBuffer());
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
      writeFileSync(tmp, buf);
      renameSync(tmp, file);
      // Remove templates of older migration sets.
      for (const name of readdirSync(dir)) {
        if (
          name.startsWith(TEMPLATE_PREFIX) &&
          name.endsWith(".tar") &&
          path.join(dir, name) !== file
        ) {
          rmSync(path.join(dir, name), { force: true });
        }
      }
      return buf;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

async function createPGliteTestDatabase(): Promise<TestDatabase> {
  const template = await getPGliteTemplate();
  const { PGlite } = await import("@electric-sql/pglite");
  const pg = await PGlite.create({ loadDataDir: new Blob([new Uint8Array(template)]) });
  const db = await openDatabase({ pglite: pg, migrate: false });
  return { ...db, name: "memory" };
}

// ---------------------------------------------------------------------------
// PostgreSQL

const PG_TEMPLATE_PREFIX = "chat_test_tpl_";
const PG_TEMPLATE_LOCK = 7_406_213_312;
const pgTemplates = new Map<string, Promise<string>>();
let dbCounter = 0;

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminClient(url: string) {
  const pg = await import("pg");
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  return client;
}

function getPostgresTemplate(url: string): Promise<string> {
  let p = pgTemplates.get(url);
  if (!p) {
    p = buildPostgresTemplate(url).catch((e) => {
      pgTemplates.delete(url);
      throw e;
    });
    pgTemplates.set(url, p);
  }
  return p;
}

async function buildPostgresTemplate(url: string): Promise<string> {
  const name = `${PG_TEMPLATE_PREFIX}${migrationsHash()}`;
  const admin = await adminClient(url);
  try {
    await admin.query("SELECT pg_advisory_lock($1)", [PG_TEMPLATE_LOCK]);
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount) return name;
    const building = `${name}_building_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${building}"`);
    const db = await openDatabase({ databaseUrl: withDatabase(url, building), poolSize: 2 });
    await db.close();
    await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    // Drop templates of older migration sets (ignore ones still in use).
    const old = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2",
      [`${PG_TEMPLATE_PREFIX}%`, name],
    );
    for (const { datname } of old.rows) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => {});
    }
    return name;
  } finally {
    await admin.query("SELECT pg_advisory_unlock($1)", [PG_TEMPLATE_LOCK]).catch(() => {});
    await admin.end();
  }
}

async function createPostgresTestDatabase(): Promise<TestDatabase> {
  const copy = await createPostgresTestDatabaseUrl();
  const db = await openDatabase({ databaseUrl: copy.url, migrate: false, poolSize: 5 });
  let closing: Promise<void> | undefined;
  return {
    ...db,
    name: copy.name,
    close() {
      closing ??= (async () => {
        try {
          await db.close();
        } finally {
          await copy.drop();
        }
      })();
      return closing;
    },
  };
}

/**
 * Builds the template once (PGlite dump or PostgreSQL template database) so
 * that later createTestDatabase() calls only copy it; handy in a vitest
 * globalSetup. Safe to call from several processes at once.
 */
export async function prepareTestDatabaseTemplate(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url) await getPostgresTemplate(url);
  else await getPGliteTemplate();
}

/**
 * A fresh, migrated PostgreSQL database (a copy of the template, like createTestDatabase) that
 * this process does not open, for a child process to use through its URL (e.g. a spawned
 * server). drop() removes it, closing whatever connections are left. Needs DATABASE_URL.
 */
export async function createPostgresTestDatabaseUrl(): Promise<{
  name: string;
  url: string;
  drop(): Promise<void>;
}> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("createPostgresTestDatabaseUrl needs DATABASE_URL");
  const template = await getPostgresTemplate(url);
  const name = `chat_test_${process.pid}_${++dbCounter}_${randomBytes(3).toString("hex")}`;
  const admin = await adminClient(url);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        break;
      } catch (e) {
        // 55006: "source database is being accessed by other users" (another worker is
        // copying it at this very moment): retry shortly.
        if ((e as { code?: string }).code !== "55006" || attempt >= 50) throw e;
        await sleep(50 + Math.random() * 100);
      }
    }
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabase(url, name),
    async drop() {
      const a = await adminClient(url);
      try {
        await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/**
 * Fills `dataDir` (a PGlite data directory that does not exist yet) with a copy of the migrated
 * template, for another process (the server, a management command) to open as its embedded
 * database: much quicker than letting that process run initdb and every migration.
 */
export async function createPGliteTestDataDir(dataDir: string): Promise<void> {
  const template = await getPGliteTemplate();
  const { PGlite } = await import("@electric-sql/pglite");
  const pg = await PGlite.create({ dataDir, loadDataDir: new Blob([new Uint8Array(template)]) });
  await pg.close();
}
