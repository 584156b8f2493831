/**
 * Confirmation links (Zulip's confirmation app, confirmation/models.py): a random key in a URL
 * stands for one row of another table (an invitation, a multiuse invitation link). The key is
 * the only secret; the row says what it grants and until when.
 */
import { randomBytes } from "node:crypto";
import type { Db, Tx } from "../../db/index.ts";

/** Confirmation.type values (confirmation/models.py Confirmation.*). */
export const ConfirmationType = {
  USER_REGISTRATION: 1,
  INVITATION: 2,
  MULTIUSE_INVITE: 6,
} as const;

/**
 * PreregistrationUser.status and MultiuseInvite.status (confirmation/settings.py STATUS_USED,
 * STATUS_REVOKED; 0 is a pending invitation).
 */
export const InviteStatus = { PENDING: 0, USED: 1, REVOKED: 2 } as const;

/** Zulip's generate_key: 15 random bytes in lower-case base32, 24 characters of [a-z2-7]. */
export function generateConfirmationKey(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  const bytes = randomBytes(15);
  let bits = 0;
  let value = 0;
  let key = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      key += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return key;
}

/** A key's shape, checked before any lookup (Zulip's ConfirmationKeyError.WRONG_LENGTH). */
export function isConfirmationKey(key: string): boolean {
  return /^[a-z2-7]{24}$/.test(key);
}

/** Writes the confirmation row for `objectId` in the caller's transaction; returns its key. */
export async function createConfirmation(
  tx: Tx,
  input: { realmId: number; type: number; objectId: number; now: Date; expiryDate: Date | null },
): Promise<string> {
  const confirmationKey = generateConfirmationKey();
  await tx.confirmation.create({
    data: {
      realmId: input.realmId,
      type: input.type,
      objectId: input.objectId,
      confirmationKey,
      dateSent: input.now,
      expiryDate: input.expiryDate,
    },
  });
  return confirmationKey;
}

/** The page a confirmation link opens: the sign-up form at `/join/<key>/` on the organization's URL. */
export function confirmationUrl(realmUrl: string, key: string): string {
  return `${realmUrl.replace(/\/$/, "")}/join/${key}/`;
}

export type ConfirmationLookup =
  | { ok: true; type: number; objectId: number; realmId: number | null; expiryDate: Date | null }
  | { ok: false; problem: "invalid" | "expired" };

/**
 * Zulip's get_object_from_key without the object: the confirmation of one of `types` behind
 * `key`, or why there is none (`invalid`: malformed or unknown; `expired`: past its expiry).
 * Whether the object is still pending (not used, not revoked) is for its own table to say.
 */
export async function confirmationByKey(
  db: Db,
  key: string,
  types: readonly number[],
  now: Date,
): Promise<ConfirmationLookup> {
  if (!isConfirmationKey(key)) return { ok: false, problem: "invalid" };
  const row = await db.confirmation.findUnique({
    where: { confirmationKey: key },
    select: { type: true, objectId: true, realmId: true, expiryDate: true },
  });
  if (!row || !types.includes(row.type)) return { ok: false, problem: "invalid" };
  if (row.expiryDate && row.expiryDate <= now) return { ok: false, problem: "expired" };
  return { ok: true, ...row };
}
