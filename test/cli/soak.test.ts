/**
 * `npm run soak`, briefly: the same script (test/soak.ts) for SOAK_TEST_SECONDS (default 20: CI's
 * slice; `npm run soak` is the long run) after a 3-second peak,
 * on the suite's database (a copy of the migrated template, so that the set-up is only
 * populate-db and a start). No request of the mix may fail, and memory may grow only boundedly
 * after the warm-up; the script's other verdicts need its long runs. The run itself is about
 * 30 s (peak 5 s, soak 20 s, the queues' first registers); the rest is set-up (the template's
 * copy, populate-db, a start). Measured with a load average of 22 on 2 cores: 50 s on
 * PostgreSQL, 78 s on PGlite; the timeout allows for such a machine.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { createPGliteTestDataDir, createPostgresTestDatabaseUrl } from "../helpers/db.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), "soak-test-"));
/** The soak's length in seconds: a short slice in CI. */
const SECONDS = Number(process.env.SOAK_TEST_SECONDS ?? 20);
let drop: (() => Promise<void>) | undefined;
afterAll(async () => {
  await drop?.();
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

it(
  `a ${SECONDS}-second soak at half the peak: no failed request, bounded memory growth`,
  async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PGLITE_FSYNC: "off" };
    if (process.env.DATABASE_URL) {
      const db = await createPostgresTestDatabaseUrl();
      drop = () => db.drop();
      env.DATABASE_URL = db.url;
    } else {
      mkdirSync(join(work, "data"));
      await createPGliteTestDataDir(join(work, "data", "postgres"));
      env.DATA_DIR = join(work, "data");
    }
    await run(process.execPath, ["server/tools/build.mjs", "--if-stale"], { cwd: root });
    const out = join(work, "soak.json");
    const result = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        "test/soak.ts",
        "--use-database",
        "--duration",
        String(SECONDS),
        "--peak-seconds",
        "3",
        "--json",
        out,
      ],
      // On SIGTERM the script stops its server and removes what it made.
      { cwd: root, env, timeout: 90_000 + SECONDS * 1000, killSignal: "SIGTERM" },
    ).catch((e: { stdout: string; stderr: string; code: number }) => e);
    const report = JSON.parse(readFileSync(out, "utf8")) as {
      sent: number;
      failed: number;
      shed: number;
      failures: unknown[];
      growth: { rssMiB: number; heapMiB: number };
      verdicts: { noFailure: boolean; memoryFlat: boolean };
    };
    expect(report.failures, result.stdout).toEqual([]);
    expect({ failed: report.failed, shed: report.shed }).toEqual({ failed: 0, shed: 0 });
    expect(report.sent).toBeGreaterThan(20);
    expect(report.growth.rssMiB).toBeLessThan(64);
    expect(report.growth.heapMiB).toBeLessThan(64);
    expect(report.verdicts).toMatchObject({ noFailure: true, memoryFlat: true });
  },
  100_000 + SECONDS * 1000,
);
