/**
 * DELETE /attachments/{attachment_id} (Zulip's zerver/views/attachments.py remove): the
 * caller's own upload only ("Invalid attachment" otherwise). The row goes, with its `attachment`
 * remove event, in one transaction; the stored file is deleted after the commit, so a failed
 * transaction leaves the file served as before.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import { isStorableId } from "../../lib/ids.ts";
import { deleteImageAttachments, thumbnailPathIds } from "../../lib/uploads/thumbnails.ts";
import { inTransaction } from "../transaction.ts";

export async function doRemoveAttachment(ctx: RequestContext, attachmentId: number) {
  const pathId = await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const [row] = isStorableId(attachmentId)
      ? await tx.$queryRaw<{ path_id: string; used: bigint }[]>`
          WITH del AS (
            DELETE FROM attachment WHERE id = ${attachmentId} AND owner_id = ${ctx.user.id} AND realm_id = ${ctx.realm.id}
            RETURNING path_id, size)
          SELECT del.path_id, ((SELECT COALESCE(sum(size), 0) FROM attachment WHERE realm_id = ${ctx.realm.id}) - del.size)::bigint AS used FROM del`
      : [];
    if (!row) throw new JsonableError("Invalid attachment");
    await deleteImageAttachments(tx, [row.path_id]);
    events.add(
      {
        type: "attachment",
        op: "remove",
        attachment: { id: attachmentId },
        upload_space_used: Number(row.used),
      },
      [ctx.user.id],
    );
    return row.path_id;
  });
  const storage = await uploadStorage(ctx.config);
  await storage.delete([pathId, ...thumbnailPathIds([pathId])]);
}
