/**
 * One-click unsubscribe links (Zulip's one_click_unsubscribe_link and its email_unsubscribe view,
 * zerver/views/unsubscribe.py): `/accounts/unsubscribe/<type>/<token>` turns one kind of email
 * off for the user it was sent to, with no login. The token names the user and is signed for
 * that user and kind with the server's signing key (lib/uploads/uploads.ts), so it cannot be
 * made for another user or kind; it stays good, as Zulip's unsubscribe confirmations do.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { PrismaClient, Realm, UserProfile } from "../../db/index.ts";
import { signingKey } from "../uploads/uploads.ts";

/** Each kind of email and the setting that turns it off (Zulip's email_unsubscribers). */
export const UNSUBSCRIBE_SETTINGS = {
  missed_messages: "enable_offline_email_notifications",
  digest: "enable_digest_emails",
  login: "enable_login_emails",
  marketing: "enable_marketing_emails",
} as const;
export type UnsubscribeType = keyof typeof UNSUBSCRIBE_SETTINGS;

/** What each kind is called on the page that confirms it ("…emails"). */
export const UNSUBSCRIBE_NAMES: Record<UnsubscribeType, string> = {
  missed_messages: "missed messages",
  digest: "digest",
  login: "new login",
  marketing: "marketing",
};

export const isUnsubscribeType = (type: string): type is UnsubscribeType =>
  Object.hasOwn(UNSUBSCRIBE_SETTINGS, type);

const mac = (key: Buffer, type: UnsubscribeType, userId: number) =>
  createHmac("sha256", key).update(`unsubscribe:${type}:${userId}`).digest("base64url");

/**
 * The absolute link that turns `type` off for the user, signed with `key` (the server's
 * signingKey, loaded before any transaction: on the embedded database a read outside the
 * transaction would wait for it).
 */
export function unsubscribeUrl(
  key: Buffer,
  realmUrl: string,
  userId: number,
  type: UnsubscribeType,
): string {
  return `${realmUrl}/accounts/unsubscribe/${type}/${userId}.${mac(key, type, userId)}`;
}

/** The user a token was made for, or null when it is not one of ours. */
export async function unsubscribeTokenUser(
  db: PrismaClient,
  type: UnsubscribeType,
  token: string,
): Promise<number | null> {
  const match = /^([1-9]\d{0,9})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return null;
  const userId = Number(match[1]);
  const expected = Buffer.from(mac(await signingKey(db), type, userId));
  const given = Buffer.from(match[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? userId : null;
}

/** The user and organization a link names, or what is wrong with it (as the page says). */
export async function unsubscribeTarget(
  db: PrismaClient,
  type: string,
  token: string,
): Promise<{ type: UnsubscribeType; user: UserProfile; realm: Realm } | "malformed" | "missing"> {
  if (!isUnsubscribeType(type)) return "malformed";
  const userId = await unsubscribeTokenUser(db, type, token);
  if (userId === null) return "malformed";
  const user = await db.userProfile.findUnique({ where: { id: userId }, include: { realm: true } });
  if (!user) return "missing";
  const { realm, ...profile } = user;
  return { type, user: profile, realm };
}
