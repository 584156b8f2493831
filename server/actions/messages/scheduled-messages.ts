/**
 * Scheduling, editing and deleting messages to be sent later (zerver/actions/scheduled_messages.py
 * check_schedule_message, edit_scheduled_message, delete_scheduled_message), in Zulip's order of
 * checks. A message is checked as if it were sent now and stored rendered; delivery
 * (scheduled-delivery.ts) checks it again at its time. Each change is one transaction with its
 * `scheduled_messages` event for the owner's clients.
 */
import type { Tx } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError, ResourceNotFoundError } from "../../errors.ts";
import { claimAttachments } from "../../lib/uploads/attachments.ts";
import { clientIdFor, defaultReadBySender } from "../../lib/clients.ts";
import { isStorableId } from "../../lib/ids.ts";
import { RecipientType } from "../../lib/recipients.ts";
import {
  accessScheduledMessage,
  SEND_LATER,
  toApiScheduledMessage,
} from "../../lib/messages/scheduled-messages.ts";
import { normalizeTopic } from "../../lib/messages/topics.ts";
import {
  checkMessageWith,
  directRecipient,
  type MessageChecker,
  type MessageTarget,
  type SendMessageRequest,
} from "./messages.ts";
import { inTransaction } from "../transaction.ts";
import { scheduledMessageChanged } from "../../workers/scheduled-delivery.ts";

/** Python's datetime cannot go past year 9999, so Zulip takes no later delivery time. */
const MAX_TIMESTAMP = 253402300799;

export type RecipientTypeName = "channel" | "direct";

/** The API's `type` values, as the two kinds they stand for. */
export function recipientTypeName(
  type: "direct" | "private" | "channel" | "stream",
): RecipientTypeName {
  return type === "channel" || type === "stream" ? "channel" : "direct";
}

/** extract_stream_id / extract_direct_message_recipient_ids (zerver/lib/recipient_parsing.py). */
function parseTarget(
  type: RecipientTypeName,
  to: number | number[],
  topic: string | undefined,
): MessageTarget {
  if (type === "channel") {
    if (Array.isArray(to) && to.length !== 1)
      throw new JsonableError("Expected exactly one channel");
    // Zulip asks for the topic before it looks the channel up (Addressee.legacy_build).
    if (topic === undefined) throw new JsonableError("Missing topic");
    return { kind: "channel", streamId: Array.isArray(to) ? to[0]! : to, topic };
  }
  if (!Array.isArray(to)) throw new JsonableError("Invalid data type for recipients");
  return { kind: "direct", userIds: [...new Set(to)] };
}

/** The delivery time a request asks for, which must be in the future (DeliveryTimeNotInFutureError). */
export function checkDeliveryTime(ctx: Pick<RequestContext, "now">, timestamp: number): Date {
  if (timestamp > MAX_TIMESTAMP) throw new JsonableError("Invalid scheduled_delivery_timestamp");
  const deliverAt = new Date(timestamp * 1000);
  if (deliverAt <= ctx.now())
    throw new JsonableError("Scheduled delivery time must be in the future.");
  return deliverAt;
}

/** Where a checked message goes, as a scheduled_message row and its API form name it. */
interface StoredRecipient {
  recipientId: number;
  recipientType: number;
  recipientTypeId: number;
  streamId: number | null;
  groupMemberIds: number[];
}

/**
 * The recipient of a checked message. A direct message to a group that never talked gets its
 * group here (the first messages to a group may race to create it: ON CONFLICT lets one win).
 */
async function storedRecipient(tx: Tx, request: SendMessageRequest): Promise<StoredRecipient> {
  const { stream, sender } = request;
  if (stream)
    return {
      recipientId: stream.recipientId,
      recipientType: RecipientType.STREAM,
      recipientTypeId: stream.id,
      streamId: stream.id,
      groupMemberIds: [],
    };
  const direct = await directRecipient(tx, request.realm.id, sender, request.directUsers);
  const groupMemberIds =
    direct.recipientType === RecipientType.DIRECT_MESSAGE_GROUP ? direct.memberIds : [];
  return {
    recipientId: direct.recipientId,
    recipientType: direct.recipientType,
    recipientTypeId: direct.recipientTypeId,
    streamId: null,
    groupMemberIds,
  };
}

export interface ScheduleMessageInput {
  type: RecipientTypeName;
  to: number | number[];
  topic?: string;
  content: string;
  scheduledDeliveryTimestamp: number;
  readBySender?: boolean;
  clientName: string;
}

/**
 * POST /scheduled_messages (check_schedule_message): the delivery time first, then the message as
 * if sent now. Without `readBySender` the message starts read for its sender when it comes from an
 * interactive client and is not a direct message to the sender alone.
 */
export async function checkScheduleMessage(
  ctx: RequestContext,
  input: ScheduleMessageInput,
): Promise<number> {
  const deliverAt = checkDeliveryTime(ctx, input.scheduledDeliveryTimestamp);
  const target = parseTarget(input.type, input.to, input.topic);
  const clientId = await clientIdFor(ctx.db, input.clientName);
  const request = await checkMessageWith(
    ctx,
    { target, content: input.content, clientName: input.clientName, sendLater: true },
    clientId,
  );
  const toSelf = !request.stream && request.directUsers.every((u) => u.id === ctx.user.id);
  const readBySender = input.readBySender ?? (defaultReadBySender(input.clientName) && !toSelf);
  const id = await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const recipient = await storedRecipient(tx, request);
    const row = {
      realmId: ctx.realm.id,
      senderId: ctx.user.id,
      subject: request.topic,
      content: request.content,
      renderedContent: request.rendered.html,
      sendingClientId: clientId,
      scheduledTimestamp: deliverAt,
      readBySender,
      delivered: false,
      failed: false,
      failureMessage: null,
      hasAttachment: false,
      ...recipient,
    };
    const { groupMemberIds, recipientType, recipientTypeId, ...columns } = row;
    const { id } = await tx.scheduledMessage.create({
      data: { ...columns, deliveryType: SEND_LATER },
      select: { id: true },
    });
    // Sets has_attachment when the content links uploads the sender may share.
    await claimAttachments(tx, ctx.realm, ctx.user, { scheduledMessageId: id }, request.content);
    events.add(
      {
        type: "scheduled_messages",
        op: "add",
        scheduled_messages: [toApiScheduledMessage({ ...row, id })],
      },
      [ctx.user.id],
    );
    return id;
  });
  scheduledMessageChanged(deliverAt);
  return id;
}

export interface EditScheduledMessageInput {
  id: number;
  /** Sent only together with `to`. */
  type?: RecipientTypeName;
  to?: number | number[];
  topic?: string;
  content?: string;
  deliverAt?: Date;
  clientName: string;
}

/**
 * PATCH /scheduled_messages/{id} (edit_scheduled_message). The row is locked as delivery locks
 * it, so an edit either comes before a delivery (which then sends the edited message) or sees the
 * message sent. A new recipient or content is checked again as if sent now; a failed message
 * needs a new delivery time, and the edit clears its failure.
 */
export async function checkEditScheduledMessage(
  ctx: RequestContext,
  input: EditScheduledMessageInput,
): Promise<void> {
  const clientId = await clientIdFor(ctx.db, input.clientName);
  const deliverAt = await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const row = await accessScheduledMessage(tx, ctx.user, input.id, true);
    if (row.delivered) throw new JsonableError("Scheduled message was already sent");
    if (row.failed && input.deliverAt === undefined)
      throw new JsonableError("Scheduled delivery time must be in the future.");
    const existing = toApiScheduledMessage(row);
    const recipientChanged = input.type !== undefined || input.to !== undefined;
    let recipient: StoredRecipient = row;
    let { subject, content, renderedContent } = row;

    if (recipientChanged || input.content !== undefined) {
      const type = input.type ?? (existing.type === "stream" ? "channel" : "direct");
      const target = parseTarget(type, input.to ?? existing.to, input.topic ?? row.subject);
      const checker: MessageChecker = {
        db: tx,
        cacheDb: ctx.db,
        realm: ctx.realm,
        user: ctx.user,
        config: ctx.config,
        now: ctx.now,
      };
      const request = await checkMessageWith(
        checker,
        {
          target,
          content: input.content ?? row.content,
          clientName: input.clientName,
          sendLater: true,
        },
        clientId,
      );
      if (recipientChanged) {
        recipient = await storedRecipient(tx, request);
        subject = request.topic;
      }
      if (input.content !== undefined) {
        content = request.content;
        renderedContent = request.rendered.html;
      }
    }
    // A topic alone changes a channel message's topic; one sent for a direct message is ignored.
    if (!recipientChanged && input.topic !== undefined && existing.type === "stream")
      subject = normalizeTopic(input.topic, ctx.realm);
    const scheduledTimestamp = input.deliverAt ?? row.scheduledTimestamp;

    await tx.scheduledMessage.update({
      where: { id: row.id },
      data: {
        recipientId: recipient.recipientId,
        streamId: recipient.streamId,
        subject,
        content,
        renderedContent,
        ...(input.content !== undefined && { hasAttachment: false }),
        scheduledTimestamp,
        sendingClientId: clientId,
        failed: false,
        failureMessage: null,
      },
      select: { id: true },
    });
    if (input.content !== undefined) {
      // The new content's links replace the old ones (check_attachment_reference_change).
      if (row.hasAttachment)
        await tx.$executeRaw`DELETE FROM attachment_scheduled_message WHERE scheduled_message_id = ${row.id}`;
      await claimAttachments(tx, ctx.realm, ctx.user, { scheduledMessageId: row.id }, content);
    }
    const edited = {
      ...row,
      ...recipient,
      subject,
      content,
      renderedContent,
      scheduledTimestamp,
      failed: false,
    };
    events.add(
      {
        type: "scheduled_messages",
        op: "update",
        scheduled_message: toApiScheduledMessage(edited),
      },
      [ctx.user.id],
    );
    return scheduledTimestamp;
  });
  scheduledMessageChanged(deliverAt);
}

/**
 * Deletes the caller's own scheduled row of this delivery type (a scheduled message or a
 * reminder), else the feature's 404; in the caller's transaction.
 */
export async function deleteOwnScheduledRow(
  tx: Tx,
  ctx: Pick<RequestContext, "user" | "realm">,
  id: number,
  deliveryType: number,
  notFound: string,
): Promise<void> {
  const deleted = isStorableId(id)
    ? await tx.$queryRaw<{ id: number }[]>`
        DELETE FROM scheduled_message
        WHERE id = ${id} AND sender_id = ${ctx.user.id} AND realm_id = ${ctx.realm.id} AND delivery_type = ${deliveryType}
        RETURNING id`
    : [];
  if (!deleted[0]) throw new ResourceNotFoundError(notFound);
}

/** DELETE /scheduled_messages/{id} (delete_scheduled_message); a message already sent can be deleted too, as in Zulip. */
export async function doDeleteScheduledMessage(ctx: RequestContext, id: number): Promise<void> {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await deleteOwnScheduledRow(tx, ctx, id, SEND_LATER, "Scheduled message does not exist");
    events.add({ type: "scheduled_messages", op: "remove", scheduled_message_id: id }, [
      ctx.user.id,
    ]);
  });
}
