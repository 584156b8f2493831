/**
 * The organization's custom emoji (zerver/views/realm_emoji.py, zerver/lib/emoji.py
 * check_valid_emoji_name, check_remove_custom_emoji, get_emoji_file_name;
 * zerver/models/realm_emoji.py get_all_custom_emoji_for_realm): their dicts, the name rules,
 * who may add and remove them, and where their images live.
 */
import { createHmac } from "node:crypto";
import type { Db, Realm, UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { emojiCodeForName } from "../markdown/emoji.ts";
import { can } from "../groups/permissions.ts";
import { isRealmAdmin } from "../users/users.ts";

/** Image types a custom emoji may have (Zulip's THUMBNAIL_ACCEPT_IMAGE_TYPES that are also INLINE_MIME_TYPES), with Python's guess_extension. */
const EMOJI_IMAGE_TYPES: Record<string, string> = {
  "image/gif": ".gif",
  "image/jpeg": ".jpg",
  "image/png": ".png",
  "image/webp": ".webp",
};

/** The images' URL, public as Zulip's (`get_emoji_url` of the local backend). */
export const emojiUrl = (realmId: number, fileName: string) =>
  `/user_avatars/${realmId}/emoji/images/${fileName}`;

/** Where an image is stored: a path id in the upload store, outside any attachment's. */
export const emojiPathId = (realmId: number, fileName: string) =>
  `avatars/${realmId}/emoji/images/${fileName}`;

/** `realm_emoji` (register, GET /realm/emoji, the event): every custom emoji by id, deactivated ones included (Realm.get_emoji). */
export async function realmEmojiDicts(db: Db, realmId: number) {
  const rows = await db.realmEmoji.findMany({
    // Rows still being uploaded have no image yet, and are no emoji yet.
    where: { realmId, fileName: { not: null } },
    orderBy: { id: "asc" },
  });
  return Object.fromEntries(
    rows.map((e) => [
      String(e.id),
      {
        id: String(e.id),
        name: e.name,
        source_url: emojiUrl(realmId, e.fileName!),
        still_url: e.isAnimated ? emojiUrl(realmId, `still/${e.fileName!}`) : null,
        deactivated: e.deactivated,
        author_id: e.authorId,
      },
    ]),
  );
}

/** The name as upload_emoji takes it: stripped, spaces made `_`, then check_valid_emoji_name. */
export function checkEmojiName(raw: string): string {
  const name = raw.trim().replaceAll(" ", "_");
  if (!name) throw new JsonableError("Emoji name is missing");
  if (/^[0-9a-z_-]+$/.test(name)) {
    if (/[^_-]$/.test(name)) return name;
    throw new JsonableError("Emoji names must end with either a letter or digit.");
  }
  throw new JsonableError(
    "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
  );
}

/**
 * upload_emoji's checks, in Zulip's order after the name: not a guest (require_member_or_admin,
 * which the setting's "never guests" gives too), the organization's can_add_custom_emoji_group,
 * no active custom emoji of that name, and a Unicode emoji's name only for administrators.
 */
export async function checkAddEmoji(
  db: Db,
  user: UserProfile,
  realm: Realm,
  name: string,
): Promise<void> {
  if (!(await can(db, user, realm, "can_add_custom_emoji_group")))
    throw new JsonableError("Insufficient permission");
  if (await activeEmojiNamed(db, realm.id, name))
    throw new JsonableError("A custom emoji with this name already exists.");
}

/** After the file count is known: overriding a built-in emoji is for administrators only. */
export function checkOverridesBuiltIn(user: UserProfile, name: string): void {
  if (emojiCodeForName(name) !== undefined && !isRealmAdmin(user))
    throw new JsonableError("Only administrators can override default emoji.");
}

/** The file's extension for an image type, or Zulip's refusal of anything else. */
export function emojiExtension(contentType: string): string {
  const ext = EMOJI_IMAGE_TYPES[contentType.split(";")[0]!.trim().toLowerCase()];
  if (!ext) throw new JsonableError("Invalid image format");
  return ext;
}

/** The image's file name: a keyed hash of the id (not enumerable, as Zulip salts it), then the extension. */
export function emojiFileName(key: Buffer, emojiId: number, ext: string): string {
  const hash = createHmac("sha256", key).update(`emoji:${emojiId}`).digest("hex");
  return hash.slice(0, 8) + ext;
}

export async function activeEmojiNamed(db: Db, realmId: number, name: string) {
  // PostgreSQL text cannot hold NUL: such a name names no emoji.
  if (name.includes("\0")) return null;
  return db.realmEmoji.findFirst({
    where: { realmId, name, deactivated: false },
    select: { id: true, authorId: true },
  });
}

/**
 * delete_emoji: an active emoji of that name (404 otherwise, since feature level 190), and an
 * administrator or its author (check_remove_custom_emoji).
 */
export async function checkRemoveEmoji(db: Db, user: UserProfile, name: string): Promise<number> {
  const emoji = await activeEmojiNamed(db, user.realmId, name);
  if (!emoji) throw new JsonableError(`Emoji '${name}' does not exist`, { httpStatus: 404 });
  if (!isRealmAdmin(user) && emoji.authorId !== user.id)
    throw new JsonableError("Must be an organization administrator or emoji author");
  return emoji.id;
}
