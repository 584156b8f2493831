/** A channel's email gateway address (zerver/lib/email_mirror_helpers.py encode_email_address). */
import type { Db } from "../../db/index.ts";

/**
 * encode_email_address_helper: every run of characters Python's `\W` matches (not a letter, digit
 * or `_`) becomes one `-`, lower case, then `.<token>` and `.show-sender`, in the pattern's `%s`.
 */
export function encodeEmailAddress(pattern: string, channelName: string, token: string): string {
  const name = channelName.replace(/[^\p{L}\p{N}\p{M}_]+/gu, "-").toLowerCase();
  return pattern.replace("%s", `${name}.${token}.show-sender`);
}

/** The address of a channel the caller was allowed to see, from its stored email token. */
export async function channelEmailAddress(
  db: Db,
  pattern: string,
  stream: { id: number; name: string },
): Promise<string> {
  const { emailToken } = await db.stream.findUniqueOrThrow({
    where: { id: stream.id },
    select: { emailToken: true },
  });
  return encodeEmailAddress(pattern, stream.name, emailToken);
}
