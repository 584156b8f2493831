/**
 * Sending clients (Zulip's Client table: "website", "ZulipMobile", …). Rows are never renamed or
 * deleted, so both directions are cached per database for the life of the process.
 */
import type { PrismaClient, Tx } from "../db.ts";

type Db = PrismaClient | Tx;
const caches = new WeakMap<object, { names: Map<number, string>; ids: Map<string, number> }>();

function cacheFor(db: Db) {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = { names: new Map(), ids: new Map() }));
  return cache;
}

/** Names of the given client ids. */
export async function clientNames(db: Db, ids: number[]): Promise<Map<number, string>> {
  const { names } = cacheFor(db);
  const missing = [...new Set(ids)].filter((id) => !names.has(id));
  if (missing.length) for (const c of await db.client.findMany({ where: { id: { in: missing } } })) names.set(c.id, c.name);
  return names;
}

/**
 * The id of the client with this name, created on first use. Pass the root client (not a
 * transaction): a row created inside a transaction that rolls back must not be cached.
 */
export async function clientIdFor(db: PrismaClient, name: string): Promise<number> {
  const { ids, names } = cacheFor(db);
  const known = ids.get(name);
  if (known !== undefined) return known;
  const { id } = await db.client.upsert({ where: { name }, create: { name }, update: {}, select: { id: true } });
  ids.set(name, id);
  names.set(id, name);
  return id;
}
