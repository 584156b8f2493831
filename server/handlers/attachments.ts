/** GET /attachments and DELETE /attachments/{attachment_id} (zerver/views/attachments.py). */
import { doRemoveAttachment } from "../actions/uploads/attachments.ts";
import type { Handler } from "../http/types.ts";
import { userAttachments } from "../lib/uploads/attachments.ts";

export const getAttachments: Handler<"get-attachments"> = async (_input, ctx) => {
  const { attachments, uploadSpaceUsed } = await userAttachments(ctx.db, ctx.user);
  return { attachments, upload_space_used: uploadSpaceUsed };
};

export const removeAttachment: Handler<"remove-attachment"> = async ({ path }, ctx) => {
  await doRemoveAttachment(ctx, path.attachment_id);
  return {};
};
