/**
 * Which emoji a request may name (zerver/lib/emoji.py get_emoji_data, check_emoji_request): the
 * Unicode emoji by Zulip's names and codes (the Markdown renderer's tables), the organization's
 * active custom emoji (code = the realm_emoji row's id), and Zulip's extra emoji (`zulip`).
 * Statuses and reactions use it, so it knows nothing of either.
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { isStorableId } from "../ids.ts";
import { emojiCodeForName, emojiNameForCode } from "../markdown/emoji.ts";

/** Reaction.reaction_type / UserStatus.reaction_type values. */
export const ReactionType = {
  UNICODE: "unicode_emoji",
  REALM: "realm_emoji",
  ZULIP_EXTRA: "zulip_extra_emoji",
} as const;

/** Zulip's extra emoji: their code is their name. */
const ZULIP_EXTRA_EMOJI = ["zulip"];

/** Our contract calls Zulip's extra emoji `service_extra_emoji`: the same type, stored as Zulip's. */
export const canonicalReactionType = (type: string) =>
  type === "service_extra_emoji" ? ReactionType.ZULIP_EXTRA : type;

export interface EmojiData {
  emojiCode: string;
  reactionType: string;
}

/**
 * The code and type an emoji name stands for (get_emoji_data): an active custom emoji of that
 * name first (it hides a Unicode emoji of the same name), then `zulip`, then the Unicode emoji.
 */
export async function emojiDataForName(
  db: Db,
  realmId: number,
  emojiName: string,
): Promise<EmojiData> {
  // PostgreSQL text cannot hold NUL: such a name names nothing, and must not reach a query.
  if (emojiName.includes("\0")) throw new JsonableError(`Emoji '${emojiName}' does not exist`);
  const custom = await db.realmEmoji.findFirst({
    where: { realmId, name: emojiName, deactivated: false, fileName: { not: null } },
    select: { id: true },
  });
  if (custom) return { emojiCode: String(custom.id), reactionType: ReactionType.REALM };
  if (ZULIP_EXTRA_EMOJI.includes(emojiName))
    return { emojiCode: emojiName, reactionType: ReactionType.ZULIP_EXTRA };
  const code = emojiCodeForName(emojiName);
  if (code !== undefined) return { emojiCode: code, reactionType: ReactionType.UNICODE };
  throw new JsonableError(`Emoji '${emojiName}' does not exist`);
}

/** Whether name, code and type name one emoji the organization offers (check_emoji_request). */
export async function checkEmojiRequest(
  db: Db,
  realmId: number,
  emojiName: string,
  emojiCode: string,
  reactionType: string,
): Promise<void> {
  switch (canonicalReactionType(reactionType)) {
    case ReactionType.REALM: {
      // Custom emoji are keyed by their id's text: "07" or "x" names none. Rows still being
      // uploaded (no file yet) are not emoji yet.
      const id = /^[1-9][0-9]*$/.test(emojiCode) ? Number(emojiCode) : NaN;
      const custom = isStorableId(id)
        ? await db.realmEmoji.findFirst({
            where: { id, realmId, fileName: { not: null } },
            select: { name: true, deactivated: true },
          })
        : null;
      if (!custom) throw new JsonableError("Invalid custom emoji.");
      if (custom.name !== emojiName) throw new JsonableError("Invalid custom emoji name.");
      if (custom.deactivated) throw new JsonableError("This custom emoji has been deactivated.");
      return;
    }
    case ReactionType.ZULIP_EXTRA:
      if (!ZULIP_EXTRA_EMOJI.includes(emojiCode)) throw new JsonableError("Invalid emoji code.");
      if (emojiName !== emojiCode) throw new JsonableError("Invalid emoji name.");
      return;
    case ReactionType.UNICODE:
      if (emojiNameForCode(emojiCode) === undefined) throw new JsonableError("Invalid emoji code.");
      if (emojiCodeForName(emojiName) !== emojiCode) throw new JsonableError("Invalid emoji name.");
      return;
    default:
      throw new JsonableError("Invalid emoji type.");
  }
}
