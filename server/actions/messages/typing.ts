/**
 * Typing notifications (zerver/actions/typing.py): no state is kept; each call checks the
 * conversation and logs one `typing` event for who takes part in it. Two statements in all: one
 * read (the recipients, or the channel with its subscribers; the caller's groups and permissions
 * come from the per-process caches) and the event's append (transaction.ts logEvents).
 */
import type { RequestContext } from "../../context.ts";
import type { ChannelRow } from "../../lib/channels/channels.ts";
import { typingRecipients } from "../../lib/messages/typing.ts";
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
