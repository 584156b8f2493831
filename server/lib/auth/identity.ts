/**
 * Who is asking, without a query per request: organizations and users cached in this process
 * (per database client), dropped through the event log's cache keys (lib/caches.ts) when they
 * change here or in any other process: `realm:<id>`, `user:<id>`, `users:<realm id>`, `*`.
 *
 * Every write to `realm` or `user_profile` must name its key (`events.invalidate(…)` inside
 * `inTransaction`), or other requests keep seeing the old row.
 */
import type { Db, PrismaClient, Realm, UserProfile } from "../../db/index.ts";
import { perClientCache } from "../caches.ts";

/** Users kept per process; the least recently used beyond this are dropped. */
const MAX_CACHED_USERS = 10_000;

interface Cache {
  realms: Map<number, Realm>;
  realmIdsByHost: Map<string, number>;
  usersByKey: Map<string, UserProfile>;
  keysByUser: Map<number, string>;
  /** See perClientCache. */
  generation: number;
}

function dropUser(cache: Cache, userId: number) {
  const key = cache.keysByUser.get(userId);
  if (key !== undefined) cache.usersByKey.delete(key);
  cache.keysByUser.delete(userId);
}

const cacheFor = perClientCache<Cache>(
  () => ({
    realms: new Map(),
    realmIdsByHost: new Map(),
    usersByKey: new Map(),
    keysByUser: new Map(),
    generation: 0,
  }),
  (cache, kind, id) => {
    if (kind === "*") {
      cache.realms.clear();
      cache.realmIdsByHost.clear();
      cache.usersByKey.clear();
      cache.keysByUser.clear();
    } else if (kind === "realm") {
      cache.realms.delete(id);
      cache.realmIdsByHost.clear();
    } else if (kind === "user") dropUser(cache, id);
    else if (kind === "users") {
      for (const user of [...cache.usersByKey.values()])
        if (user.realmId === id) dropUser(cache, user.id);
    }
  },
);

export async function realmById(db: Db, id: number): Promise<Realm | null> {
  const cache = cacheFor(db);
  if (!cache) return db.realm.findUnique({ where: { id } });
  const known = cache.realms.get(id);
  if (known) return known;
  const generation = cache.generation;
  const realm = await db.realm.findUnique({ where: { id } });
  if (realm && generation === cache.generation) cache.realms.set(id, realm);
  return realm;
}

/**
 * The organization a request's host names: the realm whose string_id is the host's first label,
 * else the default (root) organization, so a single-organization server answers on any host.
 */
export async function resolveRealm(db: PrismaClient, host: string): Promise<Realm | null> {
  const cache = cacheFor(db)!;
  const knownId = cache.realmIdsByHost.get(host);
  if (knownId !== undefined) {
    const realm = await realmById(db, knownId);
    if (realm) return realm;
  }
  const label = host.split(":")[0]!.split(".")[0]!.toLowerCase();
  const generation = cache.generation;
  const realm =
    (label ? await db.realm.findFirst({ where: { stringId: label } }) : null) ??
    (await db.realm.findFirst({ orderBy: { id: "asc" } }));
  if (realm && generation === cache.generation) {
    cache.realmIdsByHost.set(host, realm.id);
    cache.realms.set(realm.id, realm);
  }
  return realm;
}

/** The user with this API key (one lookup through its unique index, then cached). */
export async function userByApiKey(db: PrismaClient, apiKey: string): Promise<UserProfile | null> {
  const cache = cacheFor(db)!;
  const known = cache.usersByKey.get(apiKey);
  if (known) {
    // Most recently used last, so the oldest are dropped first.
    cache.usersByKey.delete(apiKey);
    cache.usersByKey.set(apiKey, known);
    return known;
  }
  const generation = cache.generation;
  const user = await db.userProfile.findUnique({ where: { apiKey } });
  if (user && generation === cache.generation) {
    cache.usersByKey.set(apiKey, user);
    cache.keysByUser.set(user.id, apiKey);
    if (cache.usersByKey.size > MAX_CACHED_USERS)
      dropUser(cache, cache.usersByKey.values().next().value!.id);
  }
  return user;
}
