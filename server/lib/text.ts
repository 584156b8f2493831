/**
 * Case-insensitive text filters for Prisma. Prisma compiles `mode: "insensitive"` (and every
 * `contains`/`startsWith`) to PostgreSQL LIKE/ILIKE without escaping the pattern, so `a_b@x.com`
 * would match `aXb@x.com`; these helpers escape `\`, `%` and `_` first.
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export const iexact = (text: string) => ({ equals: escapeLike(text), mode: "insensitive" as const });
export const icontains = (text: string) => ({ contains: escapeLike(text), mode: "insensitive" as const });
export const startsWith = (text: string) => ({ startsWith: escapeLike(text) });
