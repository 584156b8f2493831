/**
 * Per-process caches (organizations, users, group membership) and their invalidation. A
 * mutation names the keys it makes stale in its event-log rows (`events.invalidate(key)` inside
 * `inTransaction`); after commit this process drops them at once, and every other process drops
 * them when it reads those rows from the log (server/events/). Keys: `realm:<id>`, `user:<id>`,
 * `groups:<realm id>` (memberships and group settings of an organization), `*` (everything, when a
 * process may have missed rows, e.g. its LISTEN connection dropped).
 */
export type Invalidator = (key: string) => void;

const invalidators = new Set<Invalidator>();

/** Registers a cache's invalidator; returns a function that unregisters it. */
export function onInvalidate(fn: Invalidator): () => void {
  invalidators.add(fn);
  return () => invalidators.delete(fn);
}

export function invalidateCaches(keys: Iterable<string>) {
  for (const key of keys) for (const fn of invalidators) fn(key);
}

/** Whether `key` (possibly `*`) covers the cache entry named `entry`. */
export function covers(key: string, entry: string) {
  return key === "*" || key === entry;
}
