import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";
import { selectTestFiles, testSetFromEnv } from "./selection.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Which files run in this pass: test/selection.ts (TEST_SET, or from DATABASE_URL/DATABASE_URLS). */
const testSet = testSetFromEnv();
const databaseUrls = (process.env.DATABASE_URLS ?? "").split(",").filter(Boolean);

export default defineConfig({
  root,
  test: {
    include: selectTestFiles(root, testSet),
    // Each API test file starts its own server on its own database copy.
    pool: "forks",
    // On the embedded database, two files at a time (vitest's default is one fewer than the CPUs:
    // one on a 2-core machine); much of a file's time is spent waiting on timers and spawned
    // servers. On PostgreSQL, one: transaction ids and snapshots are shared by every database of
    // the server, so another file's long transaction holds back this file's event-log window,
    // and a `dont_block` poll right after a change may not see it yet.
    // With DATABASE_URLS (one PostgreSQL server per worker: test/helpers/worker-database.ts), one
    // worker per server.
    maxWorkers: Number(
      process.env.TEST_WORKERS ?? (databaseUrls.length || (process.env.DATABASE_URL ? 1 : 2)),
    ),
    setupFiles: ["test/helpers/worker-database.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    globalSetup: ["test/helpers/global-setup.ts"],
    reporters: ["default", "./test/helpers/plain-summary-reporter.ts"],
  },
});
