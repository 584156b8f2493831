/**
 * Adding and removing alert words (zerver/actions/alert_words.py): one statement changes the
 * words and reads back the whole list for the `alert_words` event; a change names
 * `alert_words:<realm id>`, so every process matches sends against the new words.
 */
import type { RequestContext } from "../../context.ts";
import type { PendingEvents } from "../../events/index.ts";
import { alertWordsCacheKey } from "../../lib/users/alert-words.ts";
import { inRawTransaction } from "../transaction.ts";

type Ctx = Pick<RequestContext, "db" | "events" | "realm" | "user">;

function changed(events: PendingEvents, ctx: Ctx, words: string[], count: number) {
  if (count > 0) events.invalidate(alertWordsCacheKey(ctx.realm.id));
  events.add({ type: "alert_words", alert_words: words }, [ctx.user.id]);
  return words;
}

/**
 * add_user_alert_words: words the user has in any case are skipped; of repeats within the
 * request the last spelling is kept, at the place of the first (a Python dict's order). The
 * user's row is locked first, so that concurrent requests cannot add one word twice.
 */
export function doAddAlertWords(ctx: Ctx, words: string[]): Promise<string[]> {
  const byLower = new Map<string, string>();
  for (const w of words) byLower.set(w.toLowerCase(), w);
  const fresh = [...byLower.values()];
  return inRawTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await tx.$queryRaw`SELECT 1 FROM user_profile WHERE id = ${ctx.user.id} FOR UPDATE`;
    const rows = await tx.$queryRaw<{ word: string; added: boolean }[]>`
      WITH ins AS (
        INSERT INTO alert_word (realm_id, user_profile_id, word)
        SELECT ${ctx.realm.id}, ${ctx.user.id}, t.w FROM unnest(${fresh}::text[]) WITH ORDINALITY AS t(w, i)
        WHERE NOT EXISTS (SELECT 1 FROM alert_word a WHERE a.user_profile_id = ${ctx.user.id} AND lower(a.word) = lower(t.w))
        ORDER BY t.i
        RETURNING id, word)
      SELECT word, added FROM (
        SELECT id, word, false AS added FROM alert_word WHERE user_profile_id = ${ctx.user.id}
        UNION ALL SELECT id, word, true FROM ins) x
      ORDER BY id`;
    const count = rows.filter((r) => r.added).length;
    return changed(
      events,
      ctx,
      rows.map((r) => r.word),
      count,
    );
  });
}

/** remove_user_alert_words: each word removed case-insensitively; unknown words are ignored. */
export function doRemoveAlertWords(ctx: Ctx, words: string[]): Promise<string[]> {
  const lowered = words.map((w) => w.toLowerCase());
  return inRawTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const rows = await tx.$queryRaw<{ word: string | null; removed: number }[]>`
      WITH del AS (
        DELETE FROM alert_word WHERE user_profile_id = ${ctx.user.id} AND lower(word) = ANY (${lowered}::text[])
        RETURNING id)
      SELECT a.word, (SELECT count(*) FROM del)::int AS removed
      FROM (SELECT 1) one LEFT JOIN alert_word a
        ON a.user_profile_id = ${ctx.user.id} AND a.id NOT IN (SELECT id FROM del)
      ORDER BY a.id`;
    const remaining = rows.flatMap((r) => (r.word === null ? [] : [r.word]));
    return changed(events, ctx, remaining, rows[0]?.removed ?? 0);
  });
}
