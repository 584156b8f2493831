/**
 * Adding and removing emoji reactions (zerver/actions/reactions.py check_add_reaction,
 * do_add_reaction, do_remove_reaction; zerver/views/reactions.py). The message is read with the
 * access rule (as for a change: not in an archived channel) and its reactions in the same
 * statement; then one transaction locks the message and writes the reaction (with the caller's
 * `historical` row when they never received the message, as create_historical_user_messages)
 * in one statement, and sends the `reaction` event to those who hear of actions on the message.
 */
import type { RequestContext } from "../../context.ts";
import type { Message, RawTx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { FLAG_BITS } from "../../lib/messages/flags.ts";
import { accessMessage } from "../../lib/messages/messages.ts";
import { messageEventRecipientIds } from "../../lib/access/messages.ts";
import {
  checkNewReaction,
  reactionToRemove,
  type ReactionEmoji,
  type ReactionRequest,
} from "../../lib/messages/reactions.ts";
import { inRawTransaction } from "../transaction.ts";

const HISTORICAL = FLAG_BITS.read | FLAG_BITS.historical;

export async function checkAddReaction(
  ctx: RequestContext,
  messageId: number,
  request: ReactionRequest & { emojiName: string },
): Promise<void> {
  const { message, flags, related } = await accessMessage(ctx.db, ctx.user, messageId, ctx.realm, {
    change: true,
  });
  const emoji = await checkNewReaction(
    ctx.db,
    ctx.realm.id,
    ctx.user.id,
    related.reactions,
    request,
  );
  await inRawTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    // A vote for a reaction another user added takes that reaction's name.
    const [row] = await tx.$queryRaw<{ found: boolean; emojiName: string | null }[]>`
      WITH m AS (SELECT id FROM message WHERE id = ${message.id} FOR UPDATE),
      hist AS (INSERT INTO user_message (user_profile_id, message_id, flags)
               SELECT ${ctx.user.id}, m.id, ${HISTORICAL}::bigint FROM m WHERE ${flags === null}
               ON CONFLICT (user_profile_id, message_id) DO NOTHING),
      ins AS (INSERT INTO reaction (realm_id, user_profile_id, message_id, emoji_name, emoji_code, reaction_type)
              SELECT ${ctx.realm.id}, ${ctx.user.id}, m.id,
                     COALESCE((SELECT r.emoji_name FROM reaction r WHERE r.message_id = m.id
                                 AND r.emoji_code = ${emoji.emojiCode} AND r.reaction_type = ${emoji.reactionType}
                               ORDER BY r.id LIMIT 1), ${emoji.emojiName}),
                     ${emoji.emojiCode}, ${emoji.reactionType}
              FROM m
              ON CONFLICT (user_profile_id, message_id, reaction_type, emoji_code) DO NOTHING
              RETURNING emoji_name)
      SELECT EXISTS (SELECT 1 FROM m) AS found, (SELECT emoji_name FROM ins) AS "emojiName"`;
    if (!row?.found) throw new JsonableError("Invalid message(s)");
    // A concurrent request of the same user won the race.
    if (row.emojiName === null)
      throw new JsonableError("Reaction already exists.", { code: "REACTION_ALREADY_EXISTS" });
    await notifyReactionUpdate(ctx, { tx, events }, message, "add", {
      ...emoji,
      emojiName: row.emojiName,
    });
  });
}

export async function checkRemoveReaction(
  ctx: RequestContext,
  messageId: number,
  request: ReactionRequest,
): Promise<void> {
  const { message } = await accessMessage(ctx.db, ctx.user, messageId, ctx.realm, {
    change: true,
  });
  const { emojiCode, reactionType } = await reactionToRemove(ctx.db, ctx.realm.id, request);
  await inRawTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const [row] = await tx.$queryRaw<{ emojiName: string }[]>`
      WITH m AS (SELECT id FROM message WHERE id = ${message.id} FOR UPDATE)
      DELETE FROM reaction r USING m
      WHERE r.message_id = m.id AND r.user_profile_id = ${ctx.user.id}
        AND r.emoji_code = ${emojiCode} AND r.reaction_type = ${reactionType}
      RETURNING r.emoji_name AS "emojiName"`;
    if (!row)
      throw new JsonableError("Reaction doesn't exist.", { code: "REACTION_DOES_NOT_EXIST" });
    await notifyReactionUpdate(ctx, { tx, events }, message, "remove", {
      emojiName: row.emojiName,
      emojiCode,
      reactionType,
    });
  });
}

/**
 * notify_reaction_update: Zulip's event, to those who hear of the message's changes; without the
 * deprecated `user` object since feature level 484 (clients read `user_id`).
 */
async function notifyReactionUpdate(
  ctx: RequestContext,
  { tx, events }: UnitOfWork<RawTx>,
  message: Pick<Message, "id" | "recipientId" | "isChannelMessage">,
  op: "add" | "remove",
  emoji: ReactionEmoji,
): Promise<void> {
  const userIds = await messageEventRecipientIds(
    tx,
    [message.id],
    message.recipientId,
    message.isChannelMessage,
  );
  events.add(
    {
      type: "reaction",
      op,
      user_id: ctx.user.id,
      message_id: message.id,
      emoji_name: emoji.emojiName,
      emoji_code: emoji.emojiCode,
      reaction_type: emoji.reactionType,
    },
    userIds,
  );
}
