/**
 * Recording an upload (Zulip's upload_message_attachment): the file goes from the incoming
 * directory to the upload store under its path id, then its attachment row is written in one
 * transaction with the `attachment` event that tells the uploader's clients (the file first, so
 * that no transaction waits on a transfer to S3); nothing stays behind if either fails.
 *
 * An image also gets its thumbnails here, in the request (lib/uploads/thumbnails.ts): Zulip makes
 * them in a worker and re-renders the messages showing them once they exist; made before the
 * upload's URL is returned, they exist before any message links it, so a message renders its
 * final HTML at once.
 */
import { readFile, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { RequestContext } from "../../context.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import {
  incomingDir,
  newPathId,
  removeFile,
  type ReceivedFile,
} from "../../lib/uploads/uploads.ts";
import {
  insertImageAttachment,
  isThumbnailedType,
  makeThumbnails,
  thumbnailPathId,
  type ImageThumbnails,
} from "../../lib/uploads/thumbnails.ts";
import type { UploadStorage } from "../../lib/uploads/upload-storage.ts";
import { unixSeconds } from "../../lib/time.ts";
import { inTransaction } from "../transaction.ts";

export async function doUploadMessageAttachment(
  ctx: RequestContext,
  file: ReceivedFile,
): Promise<{ url: string; filename: string }> {
  const pathId = newPathId(ctx.realm.id, file.name);
  const createTime = ctx.now();
  const storage = await uploadStorage(ctx.config);
  // Read before the store takes the file (an upload is at most the configured size).
  const image = isThumbnailedType(file.contentType)
    ? await makeThumbnails(await readFile(file.path), file.contentType)
    : null;
  const placed: string[] = [];
  try {
    await storage.put(pathId, file);
    placed.push(pathId);
    if (image) placed.push(...(await placeThumbnails(ctx, storage, pathId, image)));
    await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
      // The space the organization's uploads take after this one (the event's upload_space_used).
      const [row] = await tx.$queryRaw<{ id: number; used: bigint }[]>`
        WITH ins AS (
          INSERT INTO attachment (realm_id, owner_id, file_name, path_id, size, content_type, create_time)
          VALUES (${ctx.realm.id}, ${ctx.user.id}, ${file.name}, ${pathId}, ${file.size}, ${file.contentType}, ${createTime})
          RETURNING id)
        SELECT ins.id, (SELECT COALESCE(sum(size), 0) FROM attachment WHERE realm_id = ${ctx.realm.id})::bigint + ${file.size} AS used FROM ins`;
      if (image) await insertImageAttachment(tx, ctx.realm.id, pathId, image);
      const attachment = {
        id: row!.id,
        name: file.name,
        path_id: pathId,
        size: file.size,
        create_time: unixSeconds(createTime),
        message_ids: [],
      };
      events.add(
        { type: "attachment", op: "add", attachment, upload_space_used: Number(row!.used) },
        [ctx.user.id],
      );
    });
  } catch (err) {
    if (placed.length) await storage.delete(placed);
    throw err;
  }
  return { url: `/user_uploads/${pathId}`, filename: file.name };
}

/** Stores an image's thumbnails through the upload store; returns their path ids. */
async function placeThumbnails(
  ctx: RequestContext,
  storage: UploadStorage,
  pathId: string,
  image: ImageThumbnails,
): Promise<string[]> {
  const placed: string[] = [];
  try {
    for (const thumbnail of image.thumbnails) {
      const path = join(incomingDir(ctx.config), randomBytes(16).toString("hex"));
      const target = thumbnailPathId(pathId, thumbnail.name);
      try {
        await writeFile(path, thumbnail.data);
        await storage.put(target, { path, contentType: thumbnail.stored.content_type });
        placed.push(target);
      } finally {
        await removeFile(path);
      }
    }
    return placed;
  } catch (err) {
    await storage.delete(placed);
    throw err;
  }
}
