/**
 * Which organization a request is for. Zulip picks the realm by subdomain; this server does
 * the same when the Host's first label is a realm's string_id, and otherwise serves its
 * default (root) organization, so a single-organization server answers on any host name.
 */
import type { PrismaClient, Realm } from "../db.ts";
import type { Config } from "../config.ts";


// Host → realm id, per database: which organization a host names does not change while the
// server runs (only a new realm on a new subdomain would), so each host costs one lookup.
const realmIdsByHost = new WeakMap<object, Map<string, number>>();

export async function resolveRealm(db: PrismaClient, host: string): Promise<Realm | null> {
  let byHost = realmIdsByHost.get(db);
  if (!byHost) realmIdsByHost.set(db, (byHost = new Map()));
  const known = byHost.get(host);
  if (known !== undefined) {
    const realm = await db.realm.findUnique({ where: { id: known } });
    if (realm) return realm;
  }
  const label = host.split(":")[0]!.split(".")[0]!.toLowerCase();
  const realm = (label ? await db.realm.findFirst({ where: { stringId: label } }) : null) ?? (await db.realm.findFirst({ orderBy: { id: "asc" } }));
  if (realm) byHost.set(host, realm.id);
  return realm;
}

/** The realm's host: the server's external host (a second realm would get a subdomain). */
export function realmHost(_realm: Pick<Realm, "stringId">, config: Pick<Config, "externalHost">): string {
  return config.externalHost;
}

export function realmUrl(realm: Pick<Realm, "stringId">, config: Pick<Config, "externalHost">): string {
  return `http://${realmHost(realm, config)}`;
}

/** Domain of dummy API emails `user<id>@<domain>` (Zulip's get_fake_email_domain: the host without port). */
export function fakeEmailDomain(realm: Pick<Realm, "stringId">, config: Pick<Config, "externalHost">): string {
  return realmHost(realm, config).split(":")[0]!;
}
