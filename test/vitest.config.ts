import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: ["test/**/*.test.ts"],
    // Each API test file starts its own server on its own database copy.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    globalSetup: ["test/helpers/global-setup.ts"],
    reporters: ["default", "./test/helpers/plain-summary-reporter.ts"],
  },
});
