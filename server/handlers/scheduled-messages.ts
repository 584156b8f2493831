import {
  checkDeliveryTime,
  checkEditScheduledMessage,
  checkScheduleMessage,
  doDeleteScheduledMessage,
  recipientTypeName,
} from "../actions/messages/scheduled-messages.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { clientNameFromUserAgent } from "../lib/clients.ts";
import { listScheduledMessages } from "../lib/messages/scheduled-messages.ts";

/** GET /scheduled_messages (zerver/views/scheduled_messages.py fetch_scheduled_messages). */
export const getScheduledMessages: Handler<"get-scheduled-messages"> = async (_input, ctx) => {
  return { scheduled_messages: await listScheduledMessages(ctx.db, ctx.user) };
};

/** POST /scheduled_messages (create_scheduled_message_backend). */
export const createScheduledMessage: Handler<"create-scheduled-message"> = async (
  { body },
  ctx,
) => {
  const id = await checkScheduleMessage(ctx, {
    type: recipientTypeName(body.type),
    to: body.to,
    topic: body.topic,
    content: body.content,
    scheduledDeliveryTimestamp: body.scheduled_delivery_timestamp,
    readBySender: body.read_by_sender,
    clientName: clientNameFromUserAgent(ctx.userAgent),
  });
  return { scheduled_message_id: id };
};

/** PATCH /scheduled_messages/{scheduled_message_id} (update_scheduled_message_backend), its checks in Zulip's order. */
export const updateScheduledMessage: Handler<"update-scheduled-message"> = async (
  { path, body },
  ctx,
) => {
  const { type, to, topic, content, scheduled_delivery_timestamp: timestamp } = body;
  if (
    type === undefined &&
    to === undefined &&
    topic === undefined &&
    content === undefined &&
    timestamp === undefined
  )
    throw new JsonableError("Nothing to change");
  if (type !== undefined && to === undefined)
    throw new JsonableError("Recipient required when updating type of scheduled message.");
  if (type !== undefined && recipientTypeName(type) === "channel" && topic === undefined)
    throw new JsonableError("Topic required when updating scheduled message type to channel.");
  const deliverAt = timestamp === undefined ? undefined : checkDeliveryTime(ctx, timestamp);
  await checkEditScheduledMessage(ctx, {
    id: path.scheduled_message_id,
    type: type === undefined ? undefined : recipientTypeName(type),
    to,
    topic,
    content,
    deliverAt,
    clientName: clientNameFromUserAgent(ctx.userAgent),
  });
  return {};
};

/** DELETE /scheduled_messages/{scheduled_message_id} (delete_scheduled_messages). */
export const deleteScheduledMessage: Handler<"delete-scheduled-message"> = async (
  { path },
  ctx,
) => {
  await doDeleteScheduledMessage(ctx, path.scheduled_message_id);
  return {};
};
