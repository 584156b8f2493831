/**
 * Reads and checks behind emoji reactions (zerver/actions/reactions.py check_add_reaction,
 * zerver/views/reactions.py remove_reaction): which emoji a request names. (Who hears of a
 * reaction: lib/access/messages.ts messageEventRecipientIds.)
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { canonicalReactionType, checkEmojiRequest, emojiDataForName } from "../realm/emoji.ts";
import type { Related } from "./message-dicts.ts";

export interface ReactionRequest {
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

/** The emoji a reaction is stored with. */
export interface ReactionEmoji {
  emojiName: string;
  emojiCode: string;
  reactionType: string;
}

/**
 * The emoji a new reaction takes (check_add_reaction): a missing code or type is the name's;
 * the caller's own reaction with that emoji is refused; one another user already added with
 * the same code and type is a vote for it, taken without checking the emoji again (it may be a
 * custom emoji deactivated since: the vote takes that reaction's name);
 * otherwise name, code and type must name an emoji the organization offers.
 */
export async function checkNewReaction(
  db: Db,
  realmId: number,
  userId: number,
  existing: Related["reactions"],
  request: ReactionRequest & { emojiName: string },
): Promise<ReactionEmoji> {
  let { emojiCode, reactionType } = request;
  if (emojiCode === undefined || reactionType === undefined) {
    const data = await emojiDataForName(db, realmId, request.emojiName);
    emojiCode ??= data.emojiCode;
    reactionType ??= data.reactionType;
  }
  reactionType = canonicalReactionType(reactionType);
  const same = existing.filter((r) => r.emojiCode === emojiCode && r.reactionType === reactionType);
  if (same.some((r) => r.userProfileId === userId))
    throw new JsonableError("Reaction already exists.", { code: "REACTION_ALREADY_EXISTS" });
  if (same[0]) return { emojiName: same[0].emojiName, emojiCode, reactionType };
  await checkEmojiRequest(db, realmId, request.emojiName, emojiCode, reactionType);
  return { emojiName: request.emojiName, emojiCode, reactionType };
}

/**
 * The code and type of the reaction to remove (remove_reaction): the code sent, or the name's;
 * the type sent, `unicode_emoji` when none (even when the code came from a custom emoji's
 * name, as in Zulip). The emoji is not checked again: the reaction's row is what counts.
 */
export async function reactionToRemove(
  db: Db,
  realmId: number,
  request: ReactionRequest,
): Promise<{ emojiCode: string; reactionType: string }> {
  let { emojiCode } = request;
  if (emojiCode === undefined) {
    if (request.emojiName === undefined)
      throw new JsonableError(
        "At least one of the following arguments must be present: emoji_name, emoji_code",
      );
    emojiCode = (await emojiDataForName(db, realmId, request.emojiName)).emojiCode;
  }
  const reactionType = canonicalReactionType(request.reactionType ?? "unicode_emoji");
  // PostgreSQL text cannot hold NUL: no stored reaction has such a code or type.
  if (emojiCode.includes("\0") || reactionType.includes("\0"))
    throw new JsonableError("Reaction doesn't exist.", { code: "REACTION_DOES_NOT_EXIST" });
  return { emojiCode, reactionType };
}
