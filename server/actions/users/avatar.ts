/**
 * Changing one's avatar (Zulip's upload_avatar_image + do_change_avatar_fields, and
 * delete_avatar_backend's return to the Gravatar). One transaction bumps avatar_version, sets
 * avatar_source (and, for an upload, avatar_hash: the stored file's new random name), places the
 * image in the upload store and sends `realm_user` `update` with the new URLs to every active
 * user, as notify_avatar_url_change does; if anything fails the new image is removed again, and
 * once it committed the replaced image is deleted.
 *
 * The image is stored with its original bytes: Zulip resizes avatars to 100×100 (and 500×500
 * for the medium size) with PIL, and this server has no image library.
 */
import { randomBytes } from "node:crypto";
import type { RequestContext } from "../../context.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import type { ReceivedFile } from "../../lib/uploads/uploads.ts";
import { avatarPathId } from "../../lib/users/avatars.ts";
import { activeViewers, avatarUrl } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";

export const AVATAR_FROM_GRAVATAR = "G";
export const AVATAR_FROM_USER = "U";

/**
 * Sets the user's avatar: the uploaded `image` (with its extension, from avatarExtension), or
 * back to the Gravatar when there is none. Answers the new avatar URL.
 */
export async function doChangeAvatarFields(
  ctx: RequestContext,
  image: { file: ReceivedFile; ext: string } | null,
): Promise<string> {
  const storage = await uploadStorage(ctx.config);
  const realmId = ctx.realm.id;
  const hash = image ? randomBytes(20).toString("hex") + image.ext : null;
  let placed: string | null = null;
  let replaced: string | null = null;
  try {
    const url = await inTransaction(ctx, realmId, async ({ tx, events }) => {
      // The row locked: two changes at once each replace what the other left.
      const [before] = await tx.$queryRaw<{ avatarHash: string | null }[]>`
        SELECT avatar_hash AS "avatarHash" FROM user_profile WHERE id = ${ctx.user.id} FOR UPDATE`;
      if (hash) {
        placed = avatarPathId(realmId, hash);
        await storage.put(placed, image!.file);
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
      if (before?.avatarHash) replaced = avatarPathId(realmId, before.avatarHash);
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
    if (replaced) await storage.delete([replaced]).catch(() => undefined);
    return url;
  } catch (err) {
    if (placed) await storage.delete([placed]);
    throw err;
  }
}
