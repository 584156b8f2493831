/**
 * Reading a bot's storage (zerver/lib/bot_storage.py get_bot_storage): key-value strings kept
 * per bot, for bots only.
 */
import type { Db, UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";

/** The views' check (zerver/views/storage.py): bot storage is a bot's own. */
export function requireBot(user: Pick<UserProfile, "isBot">): void {
  if (!user.isBot) throw new JsonableError("Must be a bot user");
}

/** Zulip's StateError when a key asked for is not stored. */
export const keyDoesNotExist = () => new JsonableError("Key does not exist.");

/** The bot's entries of `keys` (all when undefined), in one statement; a missing key is refused. */
export async function botStorage(
  db: Db,
  botId: number,
  keys: string[] | undefined,
): Promise<Record<string, string>> {
  const wanted = keys ? [...new Set(keys)] : undefined;
  const rows = await db.botStorageData.findMany({
    where: { botProfileId: botId, ...(wanted ? { key: { in: wanted } } : {}) },
    select: { key: true, value: true },
    orderBy: { id: "asc" },
  });
  if (wanted && rows.length < wanted.length) throw keyDoesNotExist();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}
