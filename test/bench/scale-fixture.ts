/**
 * The benches' organization at scale (`npm run manage -- populate-scale --messages N`): with
 * DATABASE_URL, the database `scale_<N>` on that server, made once and kept for the next run
 * (`fresh` makes it again), shared by bench:scale and bench:web; otherwise embedded PGlite in a
 * temporary DATA_DIR, removed at the end. `shape` asks for other counts of users and channels than
 * populate-scale's defaults (the web bench's 10,000 people and 1,000 channels): the database is
 * then `scale_<N>_u<users>_c<channels>`. Gives a connection to it, the environment a server needs
 * to serve it, and a label for the report.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import { onCleanUp, run } from "./children.ts";

export type Query = (text: string, params?: unknown[]) => Promise<any[]>;

export interface ScaleFixture {
  query: Query;
  close: () => Promise<void>;
  env: Record<string, string | undefined>;
  label: string;
}

export interface Shape {
  users?: number;
  channels?: number;
}

function shapeArgs(shape: Shape): string[] {
  return [
    ...(shape.users ? ["--users", String(shape.users)] : []),
    ...(shape.channels ? ["--channels", String(shape.channels)] : []),
  ];
}

export async function openScaleFixture(
  N: number,
  fresh: boolean,
  tmpPrefix: string,
  shape: Shape = {},
): Promise<ScaleFixture> {
  const adminUrl = process.env.DATABASE_URL || undefined;
  if (adminUrl) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const name =
      shape.users || shape.channels
        ? `scale_${N}_u${shape.users ?? "d"}_c${shape.channels ?? "d"}`
        : `scale_${N}`;
    const exists =
      (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount! > 0;
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    let filled = false;
    if (exists && !fresh) {
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      filled =
        (
          await db
            .query("SELECT 1 FROM realm WHERE string_id = 'scale'")
            .catch(() => ({ rowCount: 0 }))
        ).rowCount! > 0;
      await db.end();
    }
    if (!filled) {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.query(`CREATE DATABASE ${name}`);
    }
    const version = (await admin.query("SHOW server_version")).rows[0].server_version;
    // The settings that decide whether the fixture fits in PostgreSQL's cache and how it plans
    // (docs/operations.md, "Tuning PostgreSQL for a large organization").
    const settings = (
      await admin.query(
        "SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'random_page_cost', 'effective_cache_size') ORDER BY name",
      )
    ).rows
      .map((r: { name: string; setting: string; unit: string | null }) =>
        r.unit === "8kB"
          ? `${r.name} ${Math.round((Number(r.setting) * 8) / 1024)} MB`
          : r.unit === "kB"
            ? `${r.name} ${Math.round(Number(r.setting) / 1024)} MB`
            : `${r.name} ${r.setting}`,
      )
      .join(", ");
    await admin.end();
    const env = {
      DATABASE_URL: url.toString(),
      DATA_DIR: mkdtempSync(join(os.tmpdir(), tmpPrefix)),
    };
    onCleanUp(() => rmSync(env.DATA_DIR, { recursive: true, force: true }));
    if (!filled) await fill(N, env, shape);
    else console.log(`using the existing database ${name} (--fresh to make it again)`);
    const db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    return {
      query: async (text, params) => (await db.query(text, params as unknown[])).rows,
      close: () => db.end(),
      env,
      label: `PostgreSQL ${version} (${settings}), database ${name}`,
    };
  }
  const work = mkdtempSync(join(os.tmpdir(), tmpPrefix));
  onCleanUp(() => rmSync(work, { recursive: true, force: true }));
  const env = { DATABASE_URL: undefined, DATA_DIR: join(work, "data"), PGLITE_FSYNC: "off" };
  await fill(N, env, shape);
  // One process owns a PGlite directory: a bench reads and writes it before the server starts, on
  // a connection closed again.
  const { PGlite } = await import("@electric-sql/pglite");
  const db = await PGlite.create({ dataDir: join(env.DATA_DIR, "postgres") });
  return {
    query: async (text, params) => (await db.query(text, params as unknown[])).rows as any[],
    close: () => db.close(),
    env,
    label: "PGlite (embedded)",
  };
}

async function fill(N: number, env: Record<string, string | undefined>, shape: Shape) {
  const extra = shapeArgs(shape);
  console.log(`filling: populate-scale --messages ${N} ${extra.join(" ")}…`);
  const t0 = performance.now();
  // The first management command migrates the database.
  const out = await run(
    "npm",
    ["run", "--silent", "manage", "--", "populate-scale", "--messages", String(N), ...extra],
    { ...env, LOG_LEVEL: "warn" },
  );
  console.log(out.trimEnd().replace(/^/gm, "  "));
  console.log(`  (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
}
