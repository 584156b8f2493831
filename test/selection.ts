/**
 * Which test file runs on which database: the one list (test/vitest.config.ts reads it).
 *
 * `.ci/run` runs `npm test` twice, first on the embedded database (PGlite), then with DATABASE_URL
 * and DATABASE_URLS on PostgreSQL. Running the whole suite in both passes doubled CI's time for
 * little: most files test the API, whose code is the same on both, and files that touch no
 * database test nothing new the second time. So each file runs where what it checks can differ:
 *
 * - `postgres`: the pass with DATABASE_URL; the whole API suite (PostgreSQL is what a deployment
 *   of several processes runs on) and what needs several processes on one database;
 * - `pglite`: the pass without it (`npm test` on a machine with no PostgreSQL); what depends on the
 *   adapter (transactions, locks, durability, the wake-up path in-process rather than through
 *   NOTIFY, bigint, array and JSON conversion) and the web app's page tests;
 * - `both`: adapter-sensitive files and one smoke file per adapter-sensitive feature, on both;
 * - `once`: files that touch no database (or only through a server whose API other files test
 *   on both): in the PGlite pass, so that they run where there is no PostgreSQL.
 *
 * TEST_SET picks the pass: `pglite` (the default without DATABASE_URL/DATABASE_URLS), `postgres`
 * (the default with them) or `all` (every file, on whichever database is configured: `npm run
 * test:all`). A file that no rule names fails the run (see `selectTestFiles`), so a new file is
 * placed here on purpose.
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

export type Where = "pglite" | "postgres" | "both" | "once";
export type TestSet = "pglite" | "postgres" | "all";

/**
 * First match wins: an exact file, or a folder (ending in "/") for every file below it. The
 * reason is what the file checks that makes it run there.
 */
export const RULES: ReadonlyArray<readonly [path: string, where: Where, why: string]> = [
  // The embedded database's own machinery: no such thing on PostgreSQL.
  ["test/unit/db-lock.test.ts", "pglite", "the DATA_DIR lock (one process per data directory)"],
  ["test/unit/db-durability.test.ts", "pglite", "PGlite's fsync of its data directory"],
  // The real processes on a DATA_DIR (their PostgreSQL cases use an unreachable URL, no server).
  ["test/cli/server-run.test.ts", "pglite", "`npm start`'s process: logs, settings, locks"],
  ["test/cli/manage.test.ts", "pglite", "`npm run manage`'s process on a DATA_DIR"],
  [
    "test/cli/port-in-use.test.ts",
    "pglite",
    "a busy port stops start-up before a DATA_DIR is made",
  ],

  // Adapter-sensitive: transactions, the event log and its wake-up path, shutdown under load.
  ["test/unit/raw-transaction.test.ts", "both", "raw transactions through each adapter"],
  ["test/unit/event-bus.test.ts", "both", "a long-poll that starts waiting during a log read"],
  ["test/api/event-log.test.ts", "both", "the event log's window: xids, snapshots, NOTIFY"],
  ["test/cli/shutdown.test.ts", "both", "draining requests and transactions on SIGTERM"],
  // One smoke file per feature whose conversion or SQL the adapters handle differently.
  ["test/api/message-flags.test.ts", "both", "flags as bigint, ids as arrays"],
  ["test/api/custom-profile-fields.test.ts", "both", "JSON columns (field_data)"],
  ["test/api/push.test.ts", "both", "bigint device ids and bytes (push keys)"],
  ["test/api/search.test.ts", "both", "full-text search (tsvector, GIN)"],
  [
    "test/api/topics.test.ts",
    "both",
    "channel_topic's statement-level triggers (PL/pgSQL, transition tables)",
  ],
  [
    "test/api/user-message-integrity.test.ts",
    "both",
    "user_message's statement-level integrity triggers (PL/pgSQL, transition tables, row locks)",
  ],
  ["test/api/access-truth-table.test.ts", "both", "the access rules' SQL against their predicates"],
  [
    "test/api/user-access-truth-table.test.ts",
    "both",
    "the user-access rule's SQL against its predicate",
  ],
  ["test/api/events.test.ts", "both", "long-polls woken in-process vs through NOTIFY"],
  ["test/api/email-delivery.test.ts", "both", "the outbox loop woken by a commit"],
  [
    "test/api/missed-message-emails.test.ts",
    "both",
    "the decision in the send's statement, its loop woken by a commit, the signing key before the transaction",
  ],
  [
    "test/api/export-import.test.ts",
    "both",
    "the import's one long transaction, sequences and JSON row casts on each database",
  ],
  [
    "test/api/push-notifications.test.ts",
    "both",
    "the decision in the send's statement, the lease and retry of the push loop",
  ],
  ["test/api/scheduled-messages.test.ts", "both", "the delivery loop's locks and clock"],
  [
    "test/api/digest-emails.test.ts",
    "both",
    "the per-user claim (an upsert) racing between two loops, the signing key before the transaction",
  ],
  ["test/api/rate-limits.test.ts", "both", "in-memory vs database lease store"],

  // The web app's page tests: the page, with the API (tested on both) behind it. Their part that
  // needs several processes (web-history's) runs on PostgreSQL.
  ["test/browser/web-history.test.ts", "both", "page tests; two processes on PostgreSQL"],
  ["test/browser/", "pglite", "the web app's pages (BROWSER_TESTS=always: also on PostgreSQL)"],

  // Several server processes on one database: PostgreSQL only (they skip without it).
  ["test/cli/soak.test.ts", "postgres", "a short soak of the compiled server"],
  ["test/cli/", "postgres", "several processes on one database"],
  // The API, on the database a deployment of several processes runs on.
  ["test/api/", "postgres", "the API"],
  ["test/unit/group-settings-engine.test.ts", "postgres", "permissions through SQL"],

  // No database (test/client's package test starts a server, but tests the package).
  ["test/unit/", "once", "no database"],
  ["test/conformance/", "once", "the spec, no database"],
  ["test/client/", "once", "the client package"],
  ["test/web/", "once", "the web app's code and bundle"],
];

export function whereOf(file: string): Where | undefined {
  return RULES.find(([path]) => (path.endsWith("/") ? file.startsWith(path) : file === path))?.[1];
}

export function testSetFromEnv(env: NodeJS.ProcessEnv = process.env): TestSet {
  const set = env.TEST_SET;
  if (set === "pglite" || set === "postgres" || set === "all") return set;
  if (set) throw new Error(`TEST_SET must be pglite, postgres or all, not ${JSON.stringify(set)}`);
  return env.DATABASE_URL || env.DATABASE_URLS ? "postgres" : "pglite";
}

function testFiles(root: string, dir = join(root, "test")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(root, path);
    return entry.name.endsWith(".test.ts") ? [relative(root, path).split("\\").join("/")] : [];
  });
}

/** The test files of a set, relative to the repository's root, sorted. */
export function selectTestFiles(root: string, set: TestSet): string[] {
  const files = testFiles(root).sort();
  const unplaced = files.filter((f) => whereOf(f) === undefined);
  if (unplaced.length > 0)
    throw new Error(`test/selection.ts places no rule on: ${unplaced.join(", ")}`);
  if (set === "all") return files;
  return files.filter((f) => {
    const where = whereOf(f)!;
    return where === "both" || where === set || (where === "once" && set === "pglite");
  });
}
