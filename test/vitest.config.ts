import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: ["test/**/*.test.ts"],
    // Each API test file starts its own server on its own database copy.
    pool: "forks",
    // Two files at a time (vitest's default is one fewer than the CPUs: one on a 2-core machine).
    // Much of a test file's time is spent waiting on PostgreSQL, spawned servers and timers.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 2),
    testTimeout: 30_000,
    hookTimeout: 120_000,
    globalSetup: ["test/helpers/global-setup.ts"],
    reporters: ["default", "./test/helpers/plain-summary-reporter.ts"],
  },
});
