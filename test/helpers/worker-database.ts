/**
 * With DATABASE_URLS (several PostgreSQL servers, comma-separated), each vitest worker takes its
 * own server as DATABASE_URL before a test file loads. Transaction ids and snapshots are shared
 * by every database of one server, so two files on one server hold back each other's event-log
 * window; on servers of their own, files run in parallel as they do on the embedded database.
 */
const urls = (process.env.DATABASE_URLS ?? "").split(",").filter(Boolean);
if (urls.length > 0) {
  const worker = Number(process.env.VITEST_POOL_ID ?? "1");
  process.env.DATABASE_URL = urls[(worker - 1) % urls.length];
}
