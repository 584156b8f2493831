import { JsonableError } from "../errors.ts";

/**
 * Case-insensitive text filters for Prisma. Prisma compiles `mode: "insensitive"` (and every
 * `contains`/`startsWith`) to PostgreSQL LIKE/ILIKE without escaping the pattern, so `a_b@x.com`
 * would match `aXb@x.com`; these helpers escape `\`, `%` and `_` first.
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export const iexact = (text: string) => ({
  equals: escapeLike(text),
  mode: "insensitive" as const,
});
export const icontains = (text: string) => ({
  contains: escapeLike(text),
  mode: "insensitive" as const,
});
export const startsWith = (text: string) => ({ startsWith: escapeLike(text) });

/**
 * Free text the API stores (descriptions, names): PostgreSQL cannot hold NUL, so such a value is
 * refused as Zulip refuses unprintable characters in names ("Invalid character in <what>, at
 * position N.").
 */
export function refuseNul(text: string, what: string): string {
  const at = [...text].indexOf("\0");
  if (at >= 0) throw new JsonableError(`Invalid character in ${what}, at position ${at + 1}.`);
  return text;
}

/**
 * check_string_is_printable: the 1-based position of the first control, surrogate or unassigned
 * character of a name, or 0 (channel and channel-folder names).
 */
export function unprintablePosition(text: string): number {
  return [...text].findIndex((c) => /[\p{Cc}\p{Cs}\p{Cn}]/u.test(c)) + 1;
}

/** PostgreSQL text cannot hold NUL: such a value names nothing, and raw SQL must not compare it. */
export const isStorableText = (text: string) => !text.includes("\0");

/**
 * PostgreSQL text and jsonb cannot hold NUL either. Where a client's free-form strings are only
 * kept (a queue's options and narrow, event payloads), NUL is stored as U+FFFD: a narrow operand
 * or an event type with a NUL matches nothing either way.
 */
export const storable = (text: string) => text.replaceAll("\0", "\ufffd");

/**
 * JSON text of `value` for a jsonb column, every NUL (JSON's `\u0000` escape, which jsonb refuses)
 * stored as U+FFFD, in keys and strings alike. JSON text escapes a backslash as `\\`, so an escape
 * is one preceded by an even number of backslashes.
 */
export const storableJson = (value: unknown): string => {
  const json = JSON.stringify(value);
  return json.includes("\\u0000") ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1\ufffd") : json;
};
