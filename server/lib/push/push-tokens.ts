/**
 * Legacy (non-E2EE) push tokens (zerver/lib/push_notifications.py validate_token,
 * zerver/lib/typed_endpoint.py ApnsAppId, Zulip's PushDeviceToken): the checks of a token and
 * an iOS app ID, and the lookups of a user's tokens.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";

/** PushDeviceToken.APNS and PushDeviceToken.FCM. */
export const TokenKind = { APNS: 1, FCM: 2 } as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

/**
 * validate_token: not empty, at most 4096 characters; an APNs token must be hexadecimal
 * (Python's bytes.fromhex: pairs of hex digits, whitespace allowed between them).
 */
export function validateToken(token: string, kind: TokenKind): void {
  if (token === "" || [...token].length > 4096)
    throw new JsonableError("Empty or invalid length token");
  if (kind === TokenKind.APNS && !/^(?:\s*[0-9a-fA-F]{2})*\s*$/.test(token))
    throw new JsonableError("Invalid APNS token");
}

/** check_app_id: an iOS bundle ID's characters only. */
export function checkAppId(appId: string): string {
  if (!/^[.a-zA-Z0-9-]+$/.test(appId)) throw new JsonableError("Invalid app ID");
  return appId;
}

/**
 * The caller's tokens a test notification goes to: the one named (any kind), or all of them.
 * An unknown token is InvalidPushDeviceTokenError.
 */
export async function testNotificationTokens(db: Db, userId: number, token?: string) {
  // PostgreSQL text cannot hold NUL: no stored token has one.
  const tokens =
    token === undefined || token.includes("\0")
      ? token === undefined
        ? await db.pushDeviceToken.findMany({ where: { userProfileId: userId } })
        : []
      : await db.pushDeviceToken.findMany({ where: { userProfileId: userId, token } });
  if (token !== undefined && tokens.length === 0)
    throw new JsonableError("Device not recognized", { code: "INVALID_PUSH_DEVICE_TOKEN" });
  return tokens;
}
