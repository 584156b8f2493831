/**
 * Alert words (zerver/lib/alert_words.py): each user's words, and which users' words a message's
 * content contains (the markdown processor's AlertWordNotificationProcessor). The organization's
 * words are kept per process, per database client, and dropped through lib/caches.ts: a change of
 * anyone's words names `alert_words:<realm id>`, so a send reads none once they are known.
 */
import type { Db } from "../../db/index.ts";
import { perClientCache } from "../caches.ts";
import { isStorableText, refuseNul } from "../text.ts";

/** Zulip's AlertWord.MAX_WORD_LENGTH (also in the spec, as each item's maxLength). */
export const MAX_ALERT_WORD_LENGTH = 100;

export const alertWordsCacheKey = (realmId: number) => `alert_words:${realmId}`;

/** The caller's words, in the order they were added (Zulip's user_alert_words). */
export async function userAlertWords(db: Db, userId: number): Promise<string[]> {
  const rows = await db.alertWord.findMany({
    where: { userProfileId: userId },
    orderBy: { id: "asc" },
    select: { word: true },
  });
  return rows.map((r) => r.word);
}

/**
 * clean_alert_words: stripped, empty ones dropped. PostgreSQL cannot store NUL, so a word with
 * one is refused as the project refuses it in other stored text.
 */
export function cleanAlertWords(words: string[]): string[] {
  words.forEach((w, i) => refuseNul(w, `alert_words[${i}]`));
  return words.map((w) => w.trim()).filter((w) => w !== "");
}

/** Words to remove: one with a NUL names none (and must not reach a query). */
export const storableAlertWords = (words: string[]) => words.filter(isStorableText);

/** An organization's words, lowercased, each with the users who have it. */
type RealmWords = Map<string, ReadonlySet<number>>;

interface Cache {
  realms: Map<number, RealmWords>;
  generation: number;
}

const cacheFor = perClientCache<Cache>(
  () => ({ realms: new Map(), generation: 0 }),
  (cache, kind, id) => {
    if (kind === "*") cache.realms.clear();
    else if (kind === "alert_words") cache.realms.delete(id);
  },
);

/** `cacheDb`: as linkifiers.ts loaded's, the root client whose cache serves a send's transaction. */
async function realmAlertWords(db: Db, realmId: number, cacheDb?: Db): Promise<RealmWords> {
  const cache = cacheFor(cacheDb ?? db);
  const hit = cache?.realms.get(realmId);
  if (hit) return hit;
  const generation = cache?.generation;
  const rows = await db.$queryRaw<{ user_profile_id: number; word: string }[]>`
    SELECT user_profile_id, word FROM alert_word WHERE realm_id = ${realmId}`;
  const words = new Map<string, Set<number>>();
  for (const { user_profile_id, word } of rows) {
    const lower = word.toLowerCase();
    const users = words.get(lower) ?? new Set<number>();
    users.add(user_profile_id);
    words.set(lower, users);
  }
  if (cache && cache.generation === generation) cache.realms.set(realmId, words);
  return words;
}

// What may stand right before and right after an alert word (Zulip's allowed_before_punctuation
// and allowed_after_punctuation; its after-set lists `",` as one two-character entry, which no
// single character equals, so `"` is not allowed after a word there either).
const BEFORE = new Set([" ", "\n", "(", '"', ".", ",", "'", ";", "[", "*", "`", ">"]);
const AFTER = new Set([" ", "\n", ")", "?", ":", ".", ",", "'", ";", "]", "!", "*", "`"]);

/** Whether `word` (lowercased) occurs in `content` (lowercased) with a boundary on both sides. */
function occursBounded(content: string, word: string): boolean {
  for (let at = content.indexOf(word); at !== -1; at = content.indexOf(word, at + 1)) {
    const end = at + word.length;
    // Zulip tests the character before the match, and takes index 0 (or before) as the start of
    // the content: a match starting at index 1 is accepted whatever precedes it.
    const before = at - 1 <= 0 || BEFORE.has(content[at - 1]!);
    const after = end >= content.length || AFTER.has(content[end]!);
    if (before && after) return true;
  }
  return false;
}

/**
 * The users whose alert word the content contains (the sender included, as in Zulip; a message
 * flags only its recipients). Costs one statement the first time an organization's words are
 * needed in a process, none after.
 */
export async function alertedUserIds(
  db: Db,
  realmId: number,
  content: string,
  cacheDb?: Db,
): Promise<Set<number>> {
  const alerted = new Set<number>();
  const words = await realmAlertWords(db, realmId, cacheDb);
  if (words.size === 0) return alerted;
  const lower = content.toLowerCase();
  for (const [word, users] of words) {
    if ([...users].every((u) => alerted.has(u))) continue;
    if (occursBounded(lower, word)) for (const u of users) alerted.add(u);
  }
  return alerted;
}
