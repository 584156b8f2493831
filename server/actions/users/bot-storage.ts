/**
 * Changing a bot's storage (zerver/lib/bot_storage.py set_bot_storage, remove_bot_storage): one
 * transaction each, the bot's row locked so that two requests cannot both pass the size check.
 * Bot storage has no events: only the bot reads it.
 */
import type { RequestContext } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { keyDoesNotExist } from "../../lib/users/bot-storage.ts";
import { inTransaction } from "../transaction.ts";

async function lockBot(tx: Tx, botId: number) {
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${botId}::int FOR UPDATE`;
}

/**
 * Stores the entries, replacing the values of keys already held, unless the bot's storage would
 * then take more than the limit (keys and values counted in characters, as Python's len).
 */
export async function doSetBotStorage(ctx: RequestContext, entries: Record<string, string>) {
  const keys = Object.keys(entries);
  const values = keys.map((k) => entries[k]!);
  const limit = ctx.config.botStorageSizeLimit;
  await inTransaction(ctx, ctx.realm.id, async ({ tx }) => {
    await lockBot(tx, ctx.user.id);
    const [row] = await tx.$queryRaw<{ size: bigint }[]>`
      WITH new(key, value) AS (SELECT * FROM unnest(${keys}::text[], ${values}::text[]))
      SELECT (COALESCE((SELECT sum(char_length(d.key) + char_length(d.value)) FROM bot_storage_data d
                        WHERE d.bot_profile_id = ${ctx.user.id}::int AND d.key NOT IN (SELECT key FROM new)), 0)
            + COALESCE((SELECT sum(char_length(key) + char_length(value)) FROM new), 0))::bigint AS size`;
    const size = Number(row!.size);
    if (size > limit)
      throw new JsonableError(
        `Request exceeds storage limit by ${size - limit} characters. The limit is ${limit} characters.`,
      );
    if (keys.length === 0) return;
    await tx.$executeRaw`
      INSERT INTO bot_storage_data (bot_profile_id, key, value)
      SELECT ${ctx.user.id}::int, key, value FROM unnest(${keys}::text[], ${values}::text[]) AS t(key, value)
      ON CONFLICT (bot_profile_id, key) DO UPDATE SET value = EXCLUDED.value`;
  });
}

/** Removes the keys (every key when undefined); if one is not held, nothing is removed. */
export async function doRemoveBotStorage(ctx: RequestContext, keys: string[] | undefined) {
  await inTransaction(ctx, ctx.realm.id, async ({ tx }) => {
    await lockBot(tx, ctx.user.id);
    if (keys === undefined) {
      await tx.botStorageData.deleteMany({ where: { botProfileId: ctx.user.id } });
      return;
    }
    const wanted = [...new Set(keys)];
    const { count } = await tx.botStorageData.deleteMany({
      where: { botProfileId: ctx.user.id, key: { in: wanted } },
    });
    // The transaction rolls the deletions back.
    if (count < wanted.length) throw keyDoesNotExist();
  });
}
