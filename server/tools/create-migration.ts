// Usage: node --import tsx server/tools/create-migration.ts <name>
// Diffs prisma/migrations (replayed in a shadow in-memory PGlite) against
// prisma/schema.prisma with Prisma's WebAssembly schema engine and writes
// prisma/migrations/<timestamp>_<name>/migration.sql. Prints "no changes"
// when the schema matches the migrations. No native engine, no network.
import path from "node:path";
import { createMigration } from "../db/migrate.ts";
import { PROJECT_ROOT } from "../db/schema-engine.ts";

const name = process.argv[2];
if (!name || process.argv.length > 3) {
  console.error("usage: create-migration.ts <name>   (letters, digits and _)");
  process.exit(2);
}
try {
  const res = await createMigration(name);
  if (res.name === null) {
    console.log("no changes");
  } else {
    console.log(`created ${path.relative(PROJECT_ROOT, res.path!)}`);
  }
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
