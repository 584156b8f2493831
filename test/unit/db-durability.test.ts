/**
 * Durability of the embedded database: a data directory opened by openDatabase runs PostgreSQL
 * with fsync on, and its fsyncs reach the host: a commit calls fsync(2) on the WAL segment file
 * (PGlite's own defaults do neither). PGLITE_FSYNC=off, for tests only, turns both off.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { configFromEnv, pgliteFsyncFromEnv } from "../../server/config.ts";
import { openDatabase, pgliteHostFsyncCount, type Database } from "../../server/db/index.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "db-durability-test-"));
const dataDir = join(work, "data", "postgres");
const savedEnv = process.env.PGLITE_FSYNC;

afterEach(() => {
  if (savedEnv === undefined) delete process.env.PGLITE_FSYNC;
  else process.env.PGLITE_FSYNC = savedEnv;
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const show = async (db: Database, name: string) =>
  ((await db.prisma.$queryRawUnsafe<Record<string, string>[]>(`SHOW ${name}`))[0] ?? {})[name];

async function commitCountingHostFsyncs(db: Database): Promise<number> {
  await db.prisma.$executeRawUnsafe(
    "CREATE TABLE IF NOT EXISTS durability_probe (id serial PRIMARY KEY, at timestamptz DEFAULT now())",
  );
  const before = pgliteHostFsyncCount();
  await db.prisma.$executeRawUnsafe("INSERT INTO durability_probe DEFAULT VALUES");
  return pgliteHostFsyncCount() - before;
}

describe("embedded database durability", () => {
  beforeAll(() => {
    delete process.env.PGLITE_FSYNC;
  });

  it("opens a data directory with fsync on by default, and a commit fsyncs a host file", async () => {
    delete process.env.PGLITE_FSYNC;
    const db = await openDatabase({ dataDir });
    try {
      expect(await show(db, "fsync")).toBe("on");
      expect(await show(db, "synchronous_commit")).toBe("on");
      expect(await show(db, "full_page_writes")).toBe("on");
      expect(await show(db, "wal_sync_method")).toBe("fsync"); // fdatasync would reach nothing
      expect(await commitCountingHostFsyncs(db)).toBeGreaterThanOrEqual(1);
      const count = (
        await db.prisma.$queryRawUnsafe<{ n: number }[]>(
          "SELECT count(*)::int AS n FROM durability_probe",
        )
      )[0]!.n;
      expect(count).toBe(1);
    } finally {
      await db.close();
    }
  }, 120_000); // initdb and migrations, slow on a loaded machine

  it("PGLITE_FSYNC=off (tests only) opens it with fsync off, and commits fsync nothing", async () => {
    process.env.PGLITE_FSYNC = "off";
    const db = await openDatabase({ dataDir });
    try {
      expect(await show(db, "fsync")).toBe("off");
      expect(await commitCountingHostFsyncs(db)).toBe(0);
    } finally {
      await db.close();
    }
  });

  const hasStrace = (() => {
    if (process.platform !== "linux") return false;
    try {
      execFileSync("strace", ["-o", "/dev/null", "true"], { stdio: "ignore" });
      return true;
    } catch {
      return false; // not installed, or ptrace not permitted here
    }
  })();

  /**
   * strace -f splits a call that another thread interrupts ("123 fsync(7</x> <unfinished ...>",
   * later "123 <... fsync resumed>) = 0"): an fsync slowed by a loaded disk often is. Each call is
   * put back on one line, at the place it started.
   */
  const joinResumed = (lines: string[]): string[] => {
    const out: string[] = [];
    const open = new Map<string, number>();
    for (const line of lines) {
      const unfinished = /^(\d+) (.*) <unfinished \.\.\.>$/.exec(line);
      const resumed = /^(\d+) <\.\.\. \w+ resumed>(.*)$/.exec(line);
      if (unfinished) {
        open.set(unfinished[1]!, out.length);
        out.push(`${unfinished[1]} ${unfinished[2]}`);
      } else if (resumed && open.has(resumed[1]!)) {
        out[open.get(resumed[1]!)!] += resumed[2]!;
        open.delete(resumed[1]!);
      } else out.push(line);
    }
    return out;
  };

  it.runIf(hasStrace)(
    "strace: the commit's fsync(2) reaches the WAL segment on the host, and none with PGLITE_FSYNC=off",
    async () => {
      const script = join(work, "commit.mts");
      writeFileSync(
        script,
        `import { openDatabase } from ${JSON.stringify(join(root, "server/db/index.ts"))};
const db = await openDatabase({ dataDir: process.argv[2], migrate: false });
await db.prisma.$executeRawUnsafe("CREATE TABLE IF NOT EXISTS durability_probe (id serial PRIMARY KEY, at timestamptz DEFAULT now())");
process.stderr.write("COMMIT-BEGIN\\n");
await db.prisma.$executeRawUnsafe("INSERT INTO durability_probe DEFAULT VALUES");
process.stderr.write("COMMIT-END\\n");
await db.close();
`,
      );
      const syncsDuringCommit = async (fsync: "on" | "off") => {
        const trace = join(work, `strace-${fsync}.txt`);
        await new Promise<void>((resolve, reject) => {
          const child = spawn(
            "strace",
            [
              "-f",
              "-y",
              "-e",
              "trace=fsync,fdatasync,write",
              "-o",
              trace,
              process.execPath,
              "--import",
              "tsx",
              script,
              dataDir,
            ],
            {
              cwd: root,
              env: { ...process.env, PGLITE_FSYNC: fsync },
              stdio: ["ignore", "ignore", "pipe"],
            },
          );
          let err = "";
          child.stderr.on("data", (d) => (err += d));
          child.on("exit", (code) =>
            code === 0 ? resolve() : reject(new Error(`exit ${code}: ${err}`)),
          );
        });
        const lines = joinResumed(readFileSync(trace, "utf8").split("\n"));
        const from = lines.findIndex((l) => l.includes("COMMIT-BEGIN"));
        const to = lines.findIndex((l) => l.includes("COMMIT-END"));
        expect(from).toBeGreaterThanOrEqual(0);
        expect(to).toBeGreaterThan(from);
        return lines.slice(from, to).filter((l) => /\b(fsync|fdatasync)\(/.test(l));
      };
      const on = await syncsDuringCommit("on");
      expect(
        on.some((l) =>
          new RegExp(`fsync\\(\\d+<${dataDir}/pg_wal/[0-9A-F]{24}>\\)\\s+= 0`).test(l),
        ),
        `the fsyncs during the commit:\n${on.join("\n")}`,
      ).toBe(true);
      expect(await syncsDuringCommit("off")).toEqual([]);
    },
    120_000,
  );
});

describe("PGLITE_FSYNC", () => {
  it("is on unless set to off, and refuses other values", () => {
    expect(pgliteFsyncFromEnv({})).toBe(true);
    expect(pgliteFsyncFromEnv({ PGLITE_FSYNC: "on" })).toBe(true);
    expect(pgliteFsyncFromEnv({ PGLITE_FSYNC: "off" })).toBe(false);
    expect(configFromEnv({ PGLITE_FSYNC: "off" }).pgliteFsync).toBe(false);
    expect(() => pgliteFsyncFromEnv({ PGLITE_FSYNC: "of" })).toThrow(
      /PGLITE_FSYNC must be "on" or "off"/,
    );
  });
});
