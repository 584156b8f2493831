/** Custom emoji (zerver/views/realm_emoji.py list_emoji, upload_emoji, delete_emoji). */
import { checkAddRealmEmoji, doRemoveRealmEmoji } from "../actions/realm/realm-emoji.ts";
import { JsonableError } from "../errors.ts";
import { receivedUpload } from "../http/uploads.ts";
import type { Handler } from "../http/types.ts";
import {
  checkAddEmoji,
  checkEmojiName,
  checkOverridesBuiltIn,
  checkRemoveEmoji,
  realmEmojiDicts,
} from "../lib/realm/realm-emoji.ts";
import { requireMemberOrAdmin } from "../lib/users/users.ts";

/** The list is public to the organization's users: no check. */
export const getCustomEmoji: Handler<"get-custom-emoji"> = async (_req, ctx) => ({
  emoji: await realmEmojiDicts(ctx.db, ctx.realm.id),
});

export const uploadCustomEmoji: Handler<"upload-custom-emoji"> = async ({ path, body }, ctx) => {
  requireMemberOrAdmin(ctx.user);
  const name = checkEmojiName(path.emoji_name);
  await checkAddEmoji(ctx.db, ctx.user, ctx.realm, name);
  const upload = receivedUpload(body ?? {});
  if (upload.tooMany || (upload.files.length !== 1 && !upload.tooLarge))
    throw new JsonableError("You must upload exactly one file.");
  checkOverridesBuiltIn(ctx.user, name);
  if (upload.tooLarge)
    throw new JsonableError(
      `Uploaded file is larger than the allowed limit of ${ctx.config.maxEmojiFileSizeMib} MiB`,
    );
  await checkAddRealmEmoji(ctx, name, upload.files[0]!);
  return {};
};

export const deactivateCustomEmoji: Handler<"deactivate-custom-emoji"> = async ({ path }, ctx) => {
  await doRemoveRealmEmoji(ctx, await checkRemoveEmoji(ctx.db, ctx.user, path.emoji_name));
  return {};
};
