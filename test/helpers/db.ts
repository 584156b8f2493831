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
  return copyPostgresTemplate(url, await getPostgresTemplate(url));
}

/** A new database copied from `template` on the server of `url`, and how to drop it. */
async function copyPostgresTemplate(
  url: string,
  template: string,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
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

// ---------------------------------------------------------------------------
// Populated templates: the migrated template with the development organization in it.
//
// Every test server used to run populate-db itself (twelve scrypt hashes and a few hundred rows,
// about a second a server, some 150 servers a CI run). A server now starts from a copy of a
// database populated once per run (per PostgreSQL server), with the credentials populate-db
// returned. The key covers what could change its content: the migrations, the server's source
// (populate-db and the actions it runs) and the caller's own part (the settings populate reads).

const POPULATED_PREFIX = "chat-server-pglite-populated-";
const PG_POPULATED_PREFIX = "chat_test_pop_";
const PG_POPULATED_LOCK = 7_406_213_313;
const SERVER_DIR = path.join(MIGRATIONS_DIR, "..", "..", "server");

let sourceHashMemo: string | undefined;
/** A hash of the migrations and of every file under server/. */
function sourceHash(): string {
  if (sourceHashMemo) return sourceHashMemo;
  const h = createHash("sha256").update(migrationsHash());
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else
        h.update(`${path.relative(SERVER_DIR, full)}\0`)
          .update(readFileSync(full))
          .update("\0");
    }
  };
  walk(SERVER_DIR);
  return (sourceHashMemo = h.digest("hex").slice(0, 16));
}

/** Fills a fresh migrated database (the caller's `populate`) and answers what it returned. */
export type Populate<T> = (db: TestDatabase) => Promise<T>;

export interface PopulatedTestDatabase<T> {
  database: TestDatabase;
  /** What `populate` returned when the template was made (the same for every copy). */
  result: T;
}

/**
 * A fresh copy of the migrated database after `populate` (run once per `key`, the settings
 * populate depends on, and source): createTestDatabase plus populate, without paying populate
 * for each copy. `result` must survive JSON.
 */
export async function createPopulatedTestDatabase<T>(
  key: string,
  populate: Populate<T>,
): Promise<PopulatedTestDatabase<T>> {
  const hash = createHash("sha256").update(sourceHash()).update(key).digest("hex").slice(0, 16);
  const url = process.env.DATABASE_URL;
  if (url) {
    const { template, result } = await getPostgresPopulated<T>(url, hash, populate);
    const copy = await copyPostgresTemplate(url, template);
    const db = await openDatabase({ databaseUrl: copy.url, migrate: false, poolSize: 5 });
    let closing: Promise<void> | undefined;
    const database: TestDatabase = {
      ...db,
      name: copy.name,
      close() {
        closing ??= db.close().finally(() => copy.drop());
        return closing;
      },
    };
    return { database, result };
  }
  const { dump, result } = await getPGlitePopulated<T>(hash, populate);
  const { PGlite } = await import("@electric-sql/pglite");
  const pg = await PGlite.create({ loadDataDir: new Blob([new Uint8Array(dump)]) });
  const db = await openDatabase({ pglite: pg, migrate: false });
  return { database: { ...db, name: "memory" }, result };
}

const pglitePopulated = new Map<string, Promise<{ dump: Buffer; result: unknown }>>();

function getPGlitePopulated<T>(
  hash: string,
  populate: Populate<T>,
): Promise<{ dump: Buffer; result: T }> {
  let p = pglitePopulated.get(hash);
  if (!p) {
    p = buildPGlitePopulated(hash, populate).catch((e) => {
      pglitePopulated.delete(hash);
      throw e;
    });
    pglitePopulated.set(hash, p);
  }
  return p as Promise<{ dump: Buffer; result: T }>;
}

async function buildPGlitePopulated<T>(
  hash: string,
  populate: Populate<T>,
): Promise<{ dump: Buffer; result: unknown }> {
  const dir = os.tmpdir();
  const file = path.join(dir, `${POPULATED_PREFIX}${hash}.tar`);
  const resultFile = `${file}.json`;
  const read = () => ({
    dump: readFileSync(file),
    result: JSON.parse(readFileSync(resultFile, "utf8")) as unknown,
  });
  const lock = `${file}.lock`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (existsSync(file)) return read();
    try {
      mkdirSync(lock);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
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
      if (existsSync(file)) return read();
      const { PGlite } = await import("@electric-sql/pglite");
      const pg = await PGlite.create({
        loadDataDir: new Blob([new Uint8Array(await getPGliteTemplate())]),
      });
      const db = await openDatabase({ pglite: pg, migrate: false });
      let result: unknown;
      let dump: Blob;
      try {
        result = await populate({ ...db, name: "memory" });
        dump = await pg.dumpDataDir("none");
      } finally {
        await db.close();
      }
      const buf = Buffer.from(await dump.arrayBuffer());
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
      // The result first: the dump's name is what says the pair is complete.
      writeFileSync(resultFile, JSON.stringify(result));
      writeFileSync(tmp, buf);
      renameSync(tmp, file);
      for (const name of readdirSync(dir)) {
        if (name.startsWith(POPULATED_PREFIX) && !name.startsWith(path.basename(file)))
          rmSync(path.join(dir, name), { force: true, recursive: true });
      }
      return { dump: buf, result };
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

const pgPopulated = new Map<string, Promise<{ template: string; result: unknown }>>();

function getPostgresPopulated<T>(
  url: string,
  hash: string,
  populate: Populate<T>,
): Promise<{ template: string; result: T }> {
  const k = `${url} ${hash}`;
  let p = pgPopulated.get(k);
  if (!p) {
    p = buildPostgresPopulated(url, hash, populate).catch((e) => {
      pgPopulated.delete(k);
      throw e;
    });
    pgPopulated.set(k, p);
  }
  return p as Promise<{ template: string; result: T }>;
}

/** The result is kept as the template database's comment (pg_shdescription), beside its data. */
async function buildPostgresPopulated<T>(
  url: string,
  hash: string,
  populate: Populate<T>,
): Promise<{ template: string; result: unknown }> {
  const name = `${PG_POPULATED_PREFIX}${hash}`;
  const admin = await adminClient(url);
  const comment = async () => {
    const r = await admin.query<{ c: string | null }>(
      "SELECT shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname = $1",
      [name],
    );
    return r.rows[0]?.c ?? undefined;
  };
  try {
    await admin.query("SELECT pg_advisory_lock($1)", [PG_POPULATED_LOCK]);
    const existing = await comment();
    if (existing !== undefined) return { template: name, result: JSON.parse(existing) as unknown };
    const copy = await copyPostgresTemplate(url, await getPostgresTemplate(url));
    const db = await openDatabase({ databaseUrl: copy.url, migrate: false, poolSize: 2 });
    let result: T;
    try {
      result = await populate({ ...db, name: copy.name });
    } finally {
      await db.close();
    }
    await admin.query(
      `COMMENT ON DATABASE "${copy.name}" IS ${escapeLiteral(JSON.stringify(result))}`,
    );
    await admin.query(`ALTER DATABASE "${copy.name}" RENAME TO "${name}"`);
    const old = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2",
      [`${PG_POPULATED_PREFIX}%`, name],
    );
    for (const { datname } of old.rows) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => {});
    }
    return { template: name, result };
  } finally {
    await admin.query("SELECT pg_advisory_unlock($1)", [PG_POPULATED_LOCK]).catch(() => {});
    await admin.end();
  }
}

function escapeLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}
