import { createHash } from "node:crypto";

/** Recipient types, as in Zulip's zerver/models/recipients.py. */
export const RecipientType = { PERSONAL: 1, STREAM: 2, DIRECT_MESSAGE_GROUP: 3 } as const;

/** Zulip's huddle hash: SHA-1 of the sorted member ids joined by commas. */
export function directMessageGroupHash(userIds: number[]): string {
  return createHash("sha1")
    .update([...new Set(userIds)].sort((a, b) => a - b).join(","))
    .digest("hex");
}
