/**
 * Which organization a request is for. Zulip picks the realm by subdomain; this server does
 * the same when the Host's first label is a realm's string_id, and otherwise serves its
 * default (root) organization, so a single-organization server answers on any host name.
 */
import type { PrismaClient, Realm, Tx } from "../db.ts";
import type { Config } from "../config.ts";

export { resolveRealm } from "./identity.ts";

/**
 * The root organization, the first one created, is served on EXTERNAL_HOST itself (and on any
 * host that names no other organization); Zulip's Realm.SUBDOMAIN_FOR_ROOT_DOMAIN. Its id never
 * changes, so it is cached per database client (a transaction client just asks).
 */
const rootRealmIds = new WeakMap<object, number>();

export async function rootRealmId(db: PrismaClient | Tx): Promise<number | undefined> {
  const known = rootRealmIds.get(db);
  if (known !== undefined) return known;
  const first = await db.realm.findFirst({ orderBy: { id: "asc" }, select: { id: true } });
  if (first) rootRealmIds.set(db, first.id);
  return first?.id;
}

/**
 * The organization's host (Zulip's Realm.host_for_subdomain): EXTERNAL_HOST for the root
 * organization, `<string_id>.<EXTERNAL_HOST>` for every other one.
 */
export async function realmHost(db: PrismaClient | Tx, realm: Pick<Realm, "id" | "stringId">, config: Pick<Config, "externalHost">): Promise<string> {
  if (realm.stringId === "" || realm.id === (await rootRealmId(db))) return config.externalHost;
  return `${realm.stringId}.${config.externalHost}`;
}

export async function realmUrl(db: PrismaClient | Tx, realm: Pick<Realm, "id" | "stringId">, config: Pick<Config, "externalHost">): Promise<string> {
  return `http://${await realmHost(db, realm, config)}`;
}

/** Domain of dummy API emails `user<id>@<domain>` (Zulip's get_fake_email_domain: the realm's host without port). */
export async function fakeEmailDomain(db: PrismaClient | Tx, realm: Pick<Realm, "id" | "stringId">, config: Pick<Config, "externalHost">): Promise<string> {
  return (await realmHost(db, realm, config)).split(":")[0]!;
}
