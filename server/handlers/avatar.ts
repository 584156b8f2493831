/** Own avatar (zerver/views/user_settings.py set_avatar_backend, delete_avatar_backend). */
import { readFile } from "node:fs/promises";
import { doChangeAvatarFields } from "../actions/users/avatar.ts";
import type { RequestContext } from "../context.ts";
import { JsonableError } from "../errors.ts";
import { receivedUpload } from "../http/uploads.ts";
import type { Handler } from "../http/types.ts";
import { avatarImages, checkAvatarType } from "../lib/users/avatars.ts";
import { isRealmAdmin } from "../lib/users/users.ts";

/** Zulip's avatar_changes_disabled(realm), for everyone but administrators. */
function checkAvatarChangesAllowed(ctx: RequestContext) {
  if (ctx.realm.avatarChangesDisabled && !isRealmAdmin(ctx.user))
    throw new JsonableError("Avatar changes are disabled in this organization.");
}

/**
 * Zulip's order: exactly one file, avatar changes allowed, the size, the image's declared type,
 * then its decoding and resizing (BAD_IMAGE errors); nothing changes when any of them fails.
 */
export const uploadAvatar: Handler<"upload-avatar"> = async ({ body }, ctx) => {
  const upload = receivedUpload(body ?? {});
  if (upload.tooMany || (upload.files.length !== 1 && !upload.tooLarge))
    throw new JsonableError("You must upload exactly one avatar.");
  checkAvatarChangesAllowed(ctx);
  if (upload.tooLarge)
    throw new JsonableError(
      `Uploaded file is larger than the allowed limit of ${ctx.config.maxAvatarFileSizeMib} MiB`,
    );
  const file = upload.files[0]!;
  checkAvatarType(file.contentType);
  const { small, medium } = await avatarImages(await readFile(file.path));
  return { avatar_url: await doChangeAvatarFields(ctx, { file, small, medium }) };
};

export const deleteAvatar: Handler<"delete-avatar"> = async (_req, ctx) => {
  checkAvatarChangesAllowed(ctx);
  return { avatar_url: await doChangeAvatarFields(ctx, null) };
};
