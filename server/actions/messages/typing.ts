/**
 * Typing notifications (zerver/actions/typing.py): no state is kept; each call checks the
 * conversation and logs one `typing` event for who takes part in it. Two statements in all: one
 * read (the recipients, or the channel with its subscribers; the caller's groups and permissions
 * come from the per-process caches) and the event's append (transaction.ts logEvents).
 */
import type { RequestContext } from "../../context.ts";
import type { ChannelRow } from "../../lib/channels/channels.ts";
import { JsonableError } from "../../errors.ts";
import { accessMessage } from "../../lib/messages/messages.ts";
import { editTypingRecipients, typingRecipients } from "../../lib/messages/typing.ts";
import { checkContentEditable } from "./message-edit-checks.ts";
import { checkMaySendToChannel } from "./messages.ts";
import { logEvents } from "../transaction.ts";

export type TypingOp = "start" | "stop";

/**
 * check_send_typing_notification: the sender is always among the recipients; the event names
 * them all and goes to the active ones (the sender included, for their other clients).
 */
export async function checkSendTypingNotification(
  ctx: RequestContext,
  userIds: number[],
  op: TypingOp,
): Promise<void> {
  const ids = [...new Set([...userIds, ctx.user.id])];
  const recipients = await typingRecipients(ctx.db, ctx.realm.id, ids);
  const event = {
    type: "typing",
    message_type: "direct",
    op,
    sender: { user_id: ctx.user.id, email: ctx.user.email },
    recipients: recipients.map((u) => ({ user_id: u.id, email: u.email })),
  };
  const users = recipients.filter((u) => u.isActive).map((u) => u.id);
  await logEvents(ctx, ctx.realm.id, [{ event, users }]);
}

/**
 * do_send_stream_typing_notification, once the caller may post in the channel: to its active
 * subscribers (all of whom may see it), and to nobody in a channel bigger than
 * MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS. Queues whose client did not declare the
 * `stream_typing_notifications` capability drop it when they take it (server/events).
 */
export async function checkSendChannelTypingNotification(
  ctx: RequestContext,
  stream: ChannelRow,
  topic: string,
  op: TypingOp,
): Promise<void> {
  await checkMaySendToChannel(ctx, stream);
  if (stream.subscriberIds.length > ctx.config.maxStreamSizeForTypingNotifications) return;
  const event = {
    type: "typing",
    message_type: "stream",
    op,
    sender: { user_id: ctx.user.id, email: ctx.user.email },
    stream_id: stream.id,
    topic,
  };
  await logEvents(ctx, ctx.realm.id, [{ event, users: stream.subscriberIds }]);
}

/**
 * send_message_edit_notification_backend: the caller may modify the message and edit its
 * content (no time-limit buffer), has the typing notifications of its kind on; then a
 * `typing_edit_message` event to who would be told of the edit and receives typing
 * notifications (nobody in a channel bigger than MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS).
 */
export async function checkSendMessageEditTypingNotification(
  ctx: RequestContext,
  messageId: number,
  op: TypingOp,
): Promise<void> {
  const { message } = await accessMessage(ctx.db, ctx.user, messageId, ctx.realm, {
    change: true,
  });
  checkContentEditable(ctx, message, 0);
  const channel = message.isChannelMessage;
  if (channel && !ctx.user.sendStreamTypingNotifications)
    throw new JsonableError("User has disabled typing notifications for channel messages");
  if (!channel && !ctx.user.sendPrivateTypingNotifications)
    throw new JsonableError("User has disabled typing notifications for direct messages");
  const { userIds, total } = await editTypingRecipients(ctx.db, message);
  let recipient;
  if (channel) {
    if (total > ctx.config.maxStreamSizeForTypingNotifications) return;
    const stream = await ctx.db.stream.findFirstOrThrow({
      where: { recipientId: message.recipientId },
      select: { id: true },
    });
    recipient = { type: "channel", channel_id: stream.id, topic: message.subject };
  } else recipient = { type: "direct", user_ids: userIds };
  const event = {
    type: "typing_edit_message",
    op,
    sender_id: ctx.user.id,
    message_id: message.id,
    recipient,
  };
  await logEvents(ctx, ctx.realm.id, [{ event, users: userIds }]);
}
