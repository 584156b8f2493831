/**
 * Web sessions (Django's sessions as Zulip's web app uses them): the `sessionid` cookie holds a
 * random key, the `session` table only its SHA-256, with the user, the organization, the CSRF
 * token and the expiry (SESSION_COOKIE_AGE, two weeks). Nothing is cached per process: every
 * /json request reads its row (one statement by the primary key, joined to the user's API key,
 * after which the user and the organization come from lib/auth/identity.ts's cache), so a logout or
 * an expiry takes effect in every process at once. Creating and deleting: actions/auth/sessions.ts.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { PrismaClient, Realm, UserProfile } from "../../db/index.ts";
import { realmById, userByApiKey } from "./identity.ts";

export const SESSION_COOKIE = "sessionid";
/** Zulip's SESSION_COOKIE_AGE: two weeks. */
export const SESSION_COOKIE_AGE_SECONDS = 14 * 24 * 60 * 60;

/** A new session key or CSRF token: 32 random bytes, URL-safe base64 (43 characters). */
export const randomToken = () => randomBytes(32).toString("base64url");

/** What the table stores for a key: its SHA-256, hex. */
export const sessionIdOf = (key: string) => createHash("sha256").update(key).digest("hex");

/** Keys as randomToken makes them; anything else is not looked up. */
const KEY_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export interface WebSession {
  id: string;
  csrfToken: string;
  expires: Date;
  user: UserProfile;
  realm: Realm;
}

/**
 * The live session a cookie's key names (not expired), with its user and organization as they
 * are now (active or not: the caller refuses deactivated ones with its own answer), or null.
 */
export async function sessionByKey(
  db: PrismaClient,
  key: string,
  now: Date,
): Promise<WebSession | null> {
  if (!KEY_FORMAT.test(key)) return null;
  const id = sessionIdOf(key);
  const [row] = await db.$queryRaw<
    { csrf_token: string; expires: Date; user_id: number; realm_id: number; api_key: string }[]
  >`
    SELECT s.csrf_token, s.expires, s.user_id, s.realm_id, u.api_key
    FROM session s JOIN user_profile u ON u.id = s.user_id
    WHERE s.id = ${id} AND s.expires > ${now}`;
  if (!row) return null;
  const [user, realm] = await Promise.all([
    userByApiKey(db, row.api_key),
    realmById(db, row.realm_id),
  ]);
  // The key was just changed by another request: the session's user is still the row's.
  if (!user || user.id !== row.user_id || !realm || user.realmId !== realm.id) return null;
  return { id, csrfToken: row.csrf_token, expires: row.expires, user, realm };
}

/** Constant-time comparison of a token sent with its expected value. */
export function tokensEqual(sent: string | undefined, expected: string): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of one cookie in a Cookie header (the first of that name), or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2)
      value = value.slice(1, -1);
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}
