/**
 * Recording an upload (Zulip's upload_message_attachment): the file goes from the incoming
 * directory to the upload store under its path id, then its attachment row is written in one
 * transaction with the `attachment` event that tells the uploader's clients (the file first, so
 * that no transaction waits on a transfer to S3); nothing stays behind if either fails.
 */
import type { RequestContext } from "../../context.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import { newPathId, type ReceivedFile } from "../../lib/uploads/uploads.ts";
import { unixSeconds } from "../../lib/time.ts";
import { inTransaction } from "../transaction.ts";

export async function doUploadMessageAttachment(
  ctx: RequestContext,
  file: ReceivedFile,
): Promise<{ url: string; filename: string }> {
  const pathId = newPathId(ctx.realm.id, file.name);
  const createTime = ctx.now();
  const storage = await uploadStorage(ctx.config);
  await storage.put(pathId, file);
  try {
    await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
      // The space the organization's uploads take after this one (the event's upload_space_used).
      const [row] = await tx.$queryRaw<{ id: number; used: bigint }[]>`
        WITH ins AS (
          INSERT INTO attachment (realm_id, owner_id, file_name, path_id, size, content_type, create_time)
          VALUES (${ctx.realm.id}, ${ctx.user.id}, ${file.name}, ${pathId}, ${file.size}, ${file.contentType}, ${createTime})
          RETURNING id)
        SELECT ins.id, (SELECT COALESCE(sum(size), 0) FROM attachment WHERE realm_id = ${ctx.realm.id})::bigint + ${file.size} AS used FROM ins`;
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
    await storage.delete([pathId]);
    throw err;
  }
  return { url: `/user_uploads/${pathId}`, filename: file.name };
}
