/** Submessages: widget data attached to messages (zerver/views/submessage.py process_submessage). */
import { checkAddSubmessage } from "../actions/messages/submessages.ts";
import type { Handler } from "../http/types.ts";

export const createSubmessage: Handler<"create-submessage"> = async ({ body }, ctx) => {
  await checkAddSubmessage(ctx, body.message_id, body.msg_type, body.content);
  return {};
};
