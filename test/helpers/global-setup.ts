/** Runs once before the test files: builds the migrated database template they copy. */
import { prepareTestDatabaseTemplate } from "./db.ts";

export default async function setup() {
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
