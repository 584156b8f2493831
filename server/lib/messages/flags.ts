/** Per-user message flags: Zulip's UserMessage.flags bit field. */
import { JsonableError } from "../../errors.ts";

/** Bit positions of UserMessage.flags, in Zulip's order (zerver/models/messages.py). */
export const FLAG_BITS = {
  read: 1n << 0n,
  starred: 1n << 1n,
  collapsed: 1n << 2n,
  mentioned: 1n << 3n,
  stream_wildcard_mentioned: 1n << 4n,
  topic_wildcard_mentioned: 1n << 5n,
  group_mentioned: 1n << 6n,
  // Unused by Zulip's clients, but flags all the same: the API refuses to edit them.
  force_expand: 1n << 7n,
  force_collapse: 1n << 8n,
  has_alert_word: 1n << 9n,
  historical: 1n << 10n,
  is_private: 1n << 11n,
  active_mobile_push_notification: 1n << 12n,
} as const;
export type FlagName = keyof typeof FLAG_BITS;

/** Flags the API shows (is_private and active_mobile_push_notification are internal). */
const API_FLAGS: FlagName[] = [
  "read",
  "starred",
  "collapsed",
  "mentioned",
  "stream_wildcard_mentioned",
  "topic_wildcard_mentioned",
  "has_alert_word",
  "historical",
];

export function flagsToList(flags: bigint): string[] {
  const out: string[] = [];
  for (const name of API_FLAGS) if (flags & FLAG_BITS[name]) out.push(name);
  // `wildcard_mentioned` is the union of the two wildcard flags, for older clients.
  if (flags & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned))
    out.push("wildcard_mentioned");
  return out;
}

export function flagsOf(...names: FlagName[]): bigint {
  return names.reduce((acc, n) => acc | FLAG_BITS[n], 0n);
}

/** Flags that never reach the API (Zulip's NON_API_FLAGS): "Invalid flag" like an unknown name. */
const NON_API_FLAGS: ReadonlySet<string> = new Set([
  "is_private",
  "active_mobile_push_notification",
]);
/** The flags a user may add and remove (Zulip's flags outside NON_EDITABLE_FLAGS). */
const EDITABLE_FLAGS: ReadonlySet<string> = new Set(["read", "starred", "collapsed"]);

/** What a read is taken to have where the user has no user_message row (Zulip's DEFAULT_HISTORICAL_FLAGS). */
export const DEFAULT_HISTORICAL_FLAGS = FLAG_BITS.read | FLAG_BITS.historical;

/** Checks a flag named by the API: unknown gives "Invalid flag", bookkeeping ones "Flag not editable". */
export function editableFlag(flag: string): FlagName {
  if (!Object.hasOwn(FLAG_BITS, flag) || NON_API_FLAGS.has(flag))
    throw new JsonableError(`Invalid flag: '${flag}'`);
  if (!EDITABLE_FLAGS.has(flag)) throw new JsonableError(`Flag not editable: '${flag}'`);
  return flag as FlagName;
}
