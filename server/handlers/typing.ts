/** Typing notifications (zerver/views/typing.py send_notification_backend): checks in Zulip's order. */
import {
  checkSendChannelTypingNotification,
  checkSendMessageEditTypingNotification,
  checkSendTypingNotification,
} from "../actions/messages/typing.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { accessChannel } from "../lib/channels/channels.ts";
import { namesEmptyTopic } from "../lib/messages/topics.ts";

/** POST /typing: `stream` and `channel` are the same; anything else is a direct message. */
export const setTypingStatus: Handler<"set-typing-status"> = async ({ body }, ctx) => {
  if (body.type === "stream" || body.type === "channel") {
    if (body.stream_id === undefined) throw new JsonableError("Missing 'stream_id' argument");
    if (body.topic === undefined) throw new JsonableError("Missing topic");
    if (!ctx.user.sendStreamTypingNotifications)
      throw new JsonableError("User has disabled typing notifications for channel messages");
    const stream = await accessChannel(ctx.db, ctx.user, { id: body.stream_id });
    // Zulip's maybe_rename_general_chat_to_empty_topic / maybe_rename_no_topic_to_empty_topic:
    // the empty topic's names mean it; any other text is told to the subscribers as it came.
    const topic = namesEmptyTopic(body.topic.trim(), ctx.realm) ? "" : body.topic;
    await checkSendChannelTypingNotification(ctx, stream, topic, body.op);
  } else {
    if (body.to === undefined) throw new JsonableError("Missing 'to' argument");
    if (body.to.length === 0) throw new JsonableError("Empty 'to' list");
    if (!ctx.user.sendPrivateTypingNotifications)
      throw new JsonableError("User has disabled typing notifications for direct messages");
    await checkSendTypingNotification(ctx, body.to, body.op);
  }
  return {};
};

/** POST /messages/{message_id}/typing (send_message_edit_notification_backend). */
export const setTypingStatusForMessageEdit: Handler<"set-typing-status-for-message-edit"> = async (
  { path, body },
  ctx,
) => {
  await checkSendMessageEditTypingNotification(ctx, path.message_id, body.op);
  return {};
};
