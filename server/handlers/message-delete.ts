/** Deleting messages and topics (zerver/views/message_edit.py, zerver/views/streams.py). */
import { doDeleteMessage, doDeleteTopic } from "../actions/messages/message-delete.ts";
import type { Handler } from "../http/types.ts";

/** DELETE /messages/{message_id}. */
export const deleteMessage: Handler<"delete-message"> = async ({ path }, ctx) => {
  await doDeleteMessage(ctx, path.message_id);
  return {};
};

/** POST /streams/{stream_id}/delete_topic: `complete: false` when the client should ask again. */
export const deleteTopic: Handler<"delete-topic"> = async ({ path, body }, ctx) =>
  doDeleteTopic(ctx, path.stream_id, body.topic_name);
