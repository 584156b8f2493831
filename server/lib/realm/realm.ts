/**
 * Which organization a request is for. Zulip picks the realm by subdomain; this server does
 * the same when the Host's first label is a realm's string_id, and otherwise serves its
 * default (root) organization, so a single-organization server answers on any host name.
 */
import type { Db, Realm } from "../../db/index.ts";
import type { Config } from "../../config.ts";
import { isValidEmail } from "../email/addresses.ts";

export { resolveRealm } from "../auth/identity.ts";

/**
 * The root organization, the first one created, is served on EXTERNAL_HOST itself (and on any
 * host that names no other organization); Zulip's Realm.SUBDOMAIN_FOR_ROOT_DOMAIN. Its id never
 * changes, so it is cached per database client (a transaction client just asks).
 */
const rootRealmIds = new WeakMap<object, number>();

export async function rootRealmId(db: Db): Promise<number | undefined> {
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
export async function realmHost(
  db: Db,
  realm: Pick<Realm, "id" | "stringId">,
  config: Pick<Config, "externalHost">,
): Promise<string> {
  if (realm.stringId === "" || realm.id === (await rootRealmId(db))) return config.externalHost;
  return `${realm.stringId}.${config.externalHost}`;
}

export async function realmUrl(
  db: Db,
  realm: Pick<Realm, "id" | "stringId">,
  config: Pick<Config, "externalHost">,
): Promise<string> {
  return `http://${await realmHost(db, realm, config)}`;
}

/** The icon an organization has until one is uploaded: the server's own, served from web/public/. */
export const DEFAULT_REALM_ICON = "/static/images/realm-icon.svg";

/**
 * The organization's icon URL (register's `realm_icon_url`, server_settings' `realm_icon`):
 * an uploaded one, else the server's default, relative to the organization's URL so that
 * `realm_uri + realm_icon` is an image (Zulip's desktop app downloads it so).
 */
export function realmIconUrl(realm: Pick<Realm, "id" | "iconSource" | "iconVersion">): string {
  return realm.iconSource === "U"
    ? `/user_avatars/${realm.id}/realm/icon.png?version=${realm.iconVersion}`
    : DEFAULT_REALM_ICON;
}

/**
 * The organization's uploaded icon and logos in the upload store, where their URLs
 * (`/user_avatars/<realm_id>/realm/icon.png`, …) name them, as Zulip's local storage keeps them:
 * each as shown (`.png`) and as uploaded (`.original`). An export carries whichever exist.
 */
export const REALM_IMAGE_FILES = [
  "icon.png",
  "icon.original",
  "logo.png",
  "logo.original",
  "night_logo.png",
  "night_logo.original",
] as const;

export const realmImagePathId = (realmId: number, name: string) =>
  `avatars/${realmId}/realm/${name}`;

/** Domain of dummy API emails `user<id>@<domain>` and of bots' addresses (Zulip's get_fake_email_domain). */
export async function fakeEmailDomain(
  db: Db,
  realm: Pick<Realm, "id" | "stringId">,
  config: Pick<Config, "externalHost" | "fakeEmailDomain">,
): Promise<string> {
  // get_fake_email_domain: the organization's host when it makes a valid address, else
  // FAKE_EMAIL_DOMAIN (bots could not be created on a server reached by IP address).
  const host = (await realmHost(db, realm, config)).split(":")[0]!;
  return isValidEmail(`bot@${host}`) ? host : config.fakeEmailDomain;
}

/** Realm.MAX_REALM_NAME_LENGTH and MAX_REALM_SUBDOMAIN_LENGTH. */
export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_SUBDOMAIN_LENGTH = 40;

/**
 * Subdomains Zulip keeps for itself or that would confuse users (a selection from
 * zerver/lib/name_restrictions.py): its own services and the names web hosts reserve.
 */
const RESERVED_SUBDOMAINS = new Set([
  "about",
  "abuse",
  "account",
  "accounts",
  "admin",
  "administrator",
  "api",
  "app",
  "apps",
  "archive",
  "assets",
  "auth",
  "billing",
  "blog",
  "cdn",
  "chat",
  "community",
  "contact",
  "customer",
  "dashboard",
  "dev",
  "docs",
  "download",
  "email",
  "events",
  "forum",
  "ftp",
  "git",
  "help",
  "home",
  "host",
  "hostmaster",
  "imap",
  "info",
  "invite",
  "login",
  "logout",
  "mail",
  "mailer",
  "media",
  "mention",
  "mx",
  "news",
  "noreply",
  "ns",
  "ns1",
  "ns2",
  "pop",
  "portal",
  "postmaster",
  "private",
  "register",
  "root",
  "search",
  "secure",
  "security",
  "server",
  "settings",
  "signin",
  "signup",
  "smtp",
  "static",
  "stats",
  "status",
  "store",
  "stream",
  "streams",
  "support",
  "sysadmin",
  "test",
  "topic",
  "topics",
  "upload",
  "uploads",
  "user",
  "users",
  "web",
  "webmail",
  "webmaster",
  "www",
  "zulip",
  "zulipchat",
]);

/**
 * check_subdomain_available (zerver/forms.py), in its order, for an organization's string_id
 * (its subdomain); `taken` is asked last, so the format is checked before the database opens.
 */
export function subdomainProblem(subdomain: string): string | null {
  if (subdomain.startsWith("-") || subdomain.endsWith("-"))
    return "Subdomain cannot start or end with a '-'.";
  if (!/^[a-z0-9-]*$/.test(subdomain))
    return "Subdomain can only have lowercase letters, numbers, and '-'s.";
  if (subdomain.length < 3) return "Subdomain needs to have length 3 or greater.";
  if (subdomain.length > MAX_REALM_SUBDOMAIN_LENGTH)
    return `Subdomain needs to have length ${MAX_REALM_SUBDOMAIN_LENGTH} or less.`;
  if (RESERVED_SUBDOMAINS.has(subdomain))
    return "Subdomain reserved. Please choose a different one.";
  return null;
}

export const SUBDOMAIN_IN_USE = "Subdomain already in use. Please choose a different one.";

/** What requests get before any organization exists (a new install): what to run. */
export const NO_ORGANIZATION =
  "This server has no organization yet: create one with `npm run manage -- create-realm` (or `npm run manage -- populate-db` for the development organization).";

/**
 * Realm.GIF_RATING_POLICY_OPTIONS (GIPHY_RATING_OPTIONS before feature level 453): the values of
 * `gif_rating_policy`, the highest rating of GIFs any GIF picker offers.
 */
export const GIF_RATING_POLICY_OPTIONS = {
  disabled: { name: "GIPHY integration disabled", id: 0 },
  y: { name: "Allow GIFs rated Y (Very young audience)", id: 1 },
  g: { name: "Allow GIFs rated G (General audience)", id: 2 },
  pg: { name: "Allow GIFs rated PG (Parental guidance)", id: 3 },
  "pg-13": { name: "Allow GIFs rated PG-13 (Parental guidance - under 13)", id: 4 },
  r: { name: "Allow GIFs rated R (Restricted)", id: 5 },
};
