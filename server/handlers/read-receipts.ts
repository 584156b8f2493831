/** GET /messages/{message_id}/read_receipts (zerver/views/read_receipts.py). */
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { readReceipts } from "../lib/messages/read-receipts.ts";

export const getReadReceipts: Handler<"get-read-receipts"> = async ({ path }, ctx) => {
  // Access first, then the organization's setting, as Zulip checks them.
  const userIds = await readReceipts(ctx.db, ctx.user, path.message_id);
  if (userIds === null) throw new JsonableError("Invalid message(s)");
  if (!ctx.realm.enableReadReceipts)
    throw new JsonableError("Read receipts are disabled in this organization.");
  return { user_ids: userIds };
};
