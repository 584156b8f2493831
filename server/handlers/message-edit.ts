import { checkUpdateMessage } from "../actions/messages/message-edit.ts";
import { messageHistory } from "../lib/messages/message-history.ts";
import type { Handler } from "../http/types.ts";

/** PATCH /messages/{message_id} (zerver/views/message_edit.py update_message_backend). */
export const updateMessage: Handler<"update-message"> = async ({ path, body }, ctx) => {
  return checkUpdateMessage(ctx, {
    messageId: path.message_id,
    topic: body.topic ?? body.subject,
    propagateMode: body.propagate_mode ?? "change_one",
    sendNotificationToOldThread: body.send_notification_to_old_thread ?? false,
    sendNotificationToNewThread: body.send_notification_to_new_thread ?? true,
    content: body.content,
    prevContentSha256: body.prev_content_sha256,
    streamId: body.stream_id,
  });
};

/** GET /messages/{message_id}/history (zerver/views/message_edit.py get_message_edit_history). */
export const getMessageHistory: Handler<"get-message-history"> = async ({ path, query }, ctx) => {
  return {
    message_history: await messageHistory(
      ctx,
      path.message_id,
      query.allow_empty_topic_name ?? false,
    ),
  };
};
