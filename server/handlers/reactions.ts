/** Emoji reactions (zerver/views/reactions.py add_reaction, remove_reaction). */
import { checkAddReaction, checkRemoveReaction } from "../actions/messages/reactions.ts";
import type { Handler } from "../http/types.ts";

export const addReaction: Handler<"add-reaction"> = async ({ path, body }, ctx) => {
  await checkAddReaction(ctx, path.message_id, {
    emojiName: body.emoji_name,
    emojiCode: body.emoji_code,
    reactionType: body.reaction_type,
  });
  return {};
};

export const removeReaction: Handler<"remove-reaction"> = async ({ path, body }, ctx) => {
  await checkRemoveReaction(ctx, path.message_id, {
    emojiName: body?.emoji_name,
    emojiCode: body?.emoji_code,
    reactionType: body?.reaction_type,
  });
  return {};
};
