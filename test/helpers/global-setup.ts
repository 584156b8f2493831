/** Runs once before the test files: builds the migrated database template they copy. */
import { prepareTestDatabaseTemplate } from "./db.ts";

export default async function setup() {
  await prepareTestDatabaseTemplate();
}
