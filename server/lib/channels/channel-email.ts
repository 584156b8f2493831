/** A channel's email gateway address (zerver/lib/email_mirror_helpers.py encode_email_address). */

/**
 * encode_email_address_helper: every run of characters Python's `\W` matches (not a letter, digit
 * or `_`) becomes one `-`, lower case, then `.<token>` and `.show-sender`, in the pattern's `%s`.
 */
export function encodeEmailAddress(pattern: string, channelName: string, token: string): string {
  const name = channelName.replace(/[^\p{L}\p{N}\p{M}_]+/gu, "-").toLowerCase();
  return pattern.replace("%s", `${name}.${token}.show-sender`);
}
