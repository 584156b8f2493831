/**
 * Runs once before the test files: builds the server (the tests that start it as a process run
 * dist/server/: test/helpers/compiled.ts) and the web app (the browser tests load it,
 * test/web/bundle-size.test.ts measures it) if a source changed since their last build, and the
 * migrated database template the files copy.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { prepareTestDatabaseTemplate } from "./db.ts";

export default async function setup() {
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL("../../server/tools/build.mjs", import.meta.url)), "--if-stale"],
    { stdio: "inherit" },
  );
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL("../../web/build.mjs", import.meta.url)), "--if-stale"],
    {
      stdio: "inherit",
    },
  );
  const urls = (process.env.DATABASE_URLS ?? "").split(",").filter(Boolean);
  if (urls.length === 0) return prepareTestDatabaseTemplate();
  // One template per server of DATABASE_URLS (test/helpers/worker-database.ts), one at a time.
  const own = process.env.DATABASE_URL;
  try {
    for (const url of urls) {
      process.env.DATABASE_URL = url;
      await prepareTestDatabaseTemplate();
    }
  } finally {
    if (own === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = own;
  }
}
