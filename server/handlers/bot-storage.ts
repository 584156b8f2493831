/** A bot's storage (zerver/views/storage.py): bots only. */
import { doRemoveBotStorage, doSetBotStorage } from "../actions/users/bot-storage.ts";
import type { Handler } from "../http/types.ts";
import { botStorage, requireBot } from "../lib/users/bot-storage.ts";

/** PUT /bot_storage. */
export const updateBotStorage: Handler<"update-bot-storage"> = async ({ body }, ctx) => {
  requireBot(ctx.user);
  await doSetBotStorage(ctx, body.storage);
  return {};
};

/** GET /bot_storage. */
export const getBotStorage: Handler<"get-bot-storage"> = async ({ query }, ctx) => {
  requireBot(ctx.user);
  return { storage: await botStorage(ctx.db, ctx.user.id, query.keys) };
};

/** DELETE /bot_storage. */
export const removeBotStorage: Handler<"remove-bot-storage"> = async ({ body }, ctx) => {
  requireBot(ctx.user);
  await doRemoveBotStorage(ctx, body?.keys);
  return {};
};
