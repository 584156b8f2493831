/**
 * Changing one's avatar (Zulip's upload_avatar_image + do_change_avatar_fields, and
 * delete_avatar_backend's return to the Gravatar). One transaction bumps avatar_version, sets
 * avatar_source (and, for an upload, avatar_hash: the stored file's new random name), places the
 * image in the upload store and sends `realm_user` `update` with the new URLs to every active
 * user, as notify_avatar_url_change does; if anything fails the new image is removed again, and
 * once it committed the replaced image is deleted.
 *
 * An upload is stored as Zulip's write_avatar_images stores it (lib/users/avatars.ts): the
 * original bytes, and PNGs of 100×100 and 500×500 made by avatarImages, whose URLs the user gets.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { RequestContext } from "../../context.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import { incomingDir, removeFile, type ReceivedFile } from "../../lib/uploads/uploads.ts";
import {
  avatarPathId,
  avatarPathIds,
  mediumAvatarPathId,
  originalAvatarPathId,
} from "../../lib/users/avatars.ts";
import { activeViewers, avatarUrl } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";

export const AVATAR_FROM_GRAVATAR = "G";
export const AVATAR_FROM_USER = "U";

/** An uploaded avatar: the file as received, and its two sizes as PNG (avatarImages). */
export interface AvatarUpload {
  file: ReceivedFile;
  small: Buffer;
  medium: Buffer;
}

/**
 * Sets the user's avatar: the uploaded `image`, or back to the Gravatar when there is none.
 * Answers the new avatar URL.
 */
export async function doChangeAvatarFields(
  ctx: RequestContext,
  image: AvatarUpload | null,
): Promise<string> {
  const storage = await uploadStorage(ctx.config);
  const realmId = ctx.realm.id;
  const hash = image ? randomBytes(20).toString("hex") + ".png" : null;
  let placed: string[] = [];
  let replaced: string[] = [];
  try {
    const url = await inTransaction(ctx, realmId, async ({ tx, events }) => {
      // The row locked: two changes at once each replace what the other left.
      const [before] = await tx.$queryRaw<{ avatarHash: string | null }[]>`
        SELECT avatar_hash AS "avatarHash" FROM user_profile WHERE id = ${ctx.user.id} FOR UPDATE`;
      if (hash) {
        placed = avatarPathIds(realmId, hash);
        await placeAvatar(ctx, realmId, hash, image!);
      }
      const updated = await tx.userProfile.update({
        where: { id: ctx.user.id },
        data: {
          avatarSource: hash ? AVATAR_FROM_USER : AVATAR_FROM_GRAVATAR,
          avatarHash: hash,
          avatarVersion: { increment: 1 },
        },
      });
      events.invalidate(`user:${ctx.user.id}`);
      if (before?.avatarHash) replaced = avatarPathIds(realmId, before.avatarHash);
      const viewers = await activeViewers(tx, realmId);
      events.add(
        {
          type: "realm_user",
          op: "update",
          person: {
            avatar_source: updated.avatarSource,
            avatar_url: avatarUrl(updated),
            avatar_url_medium: avatarUrl(updated, true),
            avatar_version: updated.avatarVersion,
            user_id: updated.id,
          },
        },
        viewers.map((v) => v.id),
      );
      return avatarUrl(updated);
    });
    if (replaced.length) await storage.delete(replaced).catch(() => undefined);
    return url;
  } catch (err) {
    if (placed.length) await storage.delete(placed);
    throw err;
  }
}

/** Stores the three files of an upload: the original (moved from where it was received), then both sizes. */
async function placeAvatar(
  ctx: RequestContext,
  realmId: number,
  hash: string,
  image: AvatarUpload,
) {
  const storage = await uploadStorage(ctx.config);
  await storage.put(originalAvatarPathId(realmId, hash), image.file);
  for (const [pathId, data] of [
    [avatarPathId(realmId, hash), image.small],
    [mediumAvatarPathId(realmId, hash), image.medium],
  ] as const) {
    const path = join(incomingDir(ctx.config), randomBytes(16).toString("hex"));
    try {
      await writeFile(path, data);
      await storage.put(pathId, { path, contentType: "image/png" });
    } finally {
      await removeFile(path);
    }
  }
}
