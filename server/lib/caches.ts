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

/**
 * A cache kept per root database client (a test process may run several servers), dropped
 * through the keys above. A transaction client gets none (undefined): it must see its own
 * uncommitted writes and not leave them behind, and it is known by lacking `$disconnect`.
 * `generation` is bumped by every invalidation: a read that started before one must not store
 * what it read, which may predate the change (it committed while the query ran).
 */
export function perClientCache<C extends { generation: number }>(
  create: () => C,
  drop: (cache: C, kind: string, id: number) => void,
): (db: object) => C | undefined {
  const caches = new WeakMap<object, C>();
  const all = new Set<WeakRef<C>>();
  onInvalidate((key) => {
    const [kind, id] = key.split(":") as [string, string | undefined];
    for (const ref of all) {
      const cache = ref.deref();
      if (!cache) {
        all.delete(ref);
        continue;
      }
      cache.generation++;
      drop(cache, kind, Number(id));
    }
  });
  return (db) => {
    if (typeof (db as { $disconnect?: unknown }).$disconnect !== "function") return undefined;
    let cache = caches.get(db);
    if (!cache) {
      cache = create();
      caches.set(db, cache);
      all.add(new WeakRef(cache));
    }
    return cache;
  };
}
