/**
 * Sending clients (Zulip's Client table: "website", "ZulipMobile", …). Rows are never renamed or
 * deleted, so both directions are cached per database for the life of the process.
 */
import type { Db, PrismaClient } from "../db/index.ts";

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
  if (missing.length)
    for (const c of await db.client.findMany({ where: { id: { in: missing } } }))
      names.set(c.id, c.name);
  return names;
}

/** Client.MAX_NAME_LENGTH: Zulip keeps the first 30 characters of a client's name. */
export const MAX_CLIENT_NAME_LENGTH = 30;

/** The name stored (and shown) for a client. */
export const storedClientName = (fullName: string) =>
  Array.from(fullName).slice(0, MAX_CLIENT_NAME_LENGTH).join("");

/**
 * The id of the client with this name (truncated as Zulip truncates it), created on first use.
 * Concurrent first uses race to insert the row: `ON CONFLICT DO NOTHING` lets one win, and the
 * others read the winner's row in a statement of their own, whose snapshot sees it. Pass the
 * root client (not a transaction): a row created inside a transaction that rolls back must not
 * be cached.
 */
export async function clientIdFor(db: PrismaClient, fullName: string): Promise<number> {
  const name = storedClientName(fullName);
  const { ids, names } = cacheFor(db);
  const known = ids.get(name);
  if (known !== undefined) return known;
  const inserted = await db.$queryRaw<
    { id: number }[]
  >`INSERT INTO client (name) VALUES (${name}) ON CONFLICT (name) DO NOTHING RETURNING id`;
  const id =
    inserted[0]?.id ??
    (await db.client.findUniqueOrThrow({ where: { name }, select: { id: true } })).id;
  ids.set(name, id);
  names.set(id, name);
  return id;
}

/** The sending client's name, from the User-Agent (Zulip's get_client_name), e.g. "ZulipMobile". */
export function clientNameFromUserAgent(userAgent: string | undefined): string {
  return userAgent?.split(/[/\s]/)[0]?.trim() || "Unspecified";
}

/**
 * Clients whose messages are the user's own typing (Zulip's Client.default_read_by_sender), as
 * opposed to integrations posting with the user's API key: their messages start read for the sender.
 */
const INTERACTIVE_CLIENTS = new Set([
  "zulipandroid",
  "zulipios",
  "zulipdesktop",
  "zulipmobile",
  "zulipelectron",
  "zulipterminal",
  "snipe",
  "website",
  "ios",
  "android",
]);

export function defaultReadBySender(clientName: string): boolean {
  const name = clientName.toLowerCase();
  return INTERACTIVE_CLIENTS.has(name) || name.includes("desktop app");
}
