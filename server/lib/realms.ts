/**
 * Which organization a request is for. Zulip picks the realm by subdomain; this server does
 * the same when the Host's first label is a realm's string_id, and otherwise serves its
 * default (root) organization, so a single-organization server answers on any host name.
 */
import type { PrismaClient, Realm, Tx } from "../db.ts";
import type { Config } from "../config.ts";

type Db = PrismaClient | Tx;

export async function resolveRealm(db: Db, host: string): Promise<Realm | null> {
  const label = host.split(":")[0]!.split(".")[0]!.toLowerCase();
  const bySubdomain = label ? await db.realm.findFirst({ where: { stringId: label } }) : null;
  return bySubdomain ?? (await db.realm.findFirst({ orderBy: { id: "asc" } }));
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
