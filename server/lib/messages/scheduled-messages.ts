/**
 * Reading scheduled messages (zerver/lib/scheduled_messages.py): a user's own, by id or all
 * that are not sent yet, and their API form (ScheduledMessage.to_dict).
 */
import { unixSeconds } from "../time.ts";
import { Prisma, type Db } from "../../db/index.ts";
import { ResourceNotFoundError } from "../../errors.ts";
import type { Schemas } from "../schemas.ts";
import { isStorableId } from "../ids.ts";
import { RecipientType } from "../recipients.ts";

/** ScheduledMessage.SEND_LATER; reminders (REMIND, 2) are another feature's rows. */
export const SEND_LATER = 1;

export type ApiScheduledMessage = Schemas["ScheduledMessage"];

/** A scheduled message with what its API form and its re-check need. */
export interface ScheduledMessageRow {
  id: number;
  realmId: number;
  senderId: number;
  recipientId: number;
  recipientType: number;
  /** The channel's id, or for a direct message the user whose personal recipient it is. */
  recipientTypeId: number;
  streamId: number | null;
  subject: string;
  content: string;
  renderedContent: string | null;
  sendingClientId: number;
  scheduledTimestamp: Date;
  readBySender: boolean | null;
  delivered: boolean;
  failed: boolean;
  failureMessage: string | null;
  hasAttachment: boolean;
  /** A direct-message group's members (the sender included), in increasing order; else []. */
  groupMemberIds: number[];
  /** SEND_LATER or REMIND (lib/messages/reminders.ts); read by delivery only. */
  deliveryType?: number;
}

export const SCHEDULED_MESSAGE_COLUMNS = Prisma.sql`sm.id, sm.realm_id AS "realmId", sm.sender_id AS "senderId", sm.recipient_id AS "recipientId",
  r.type AS "recipientType", r.type_id AS "recipientTypeId", sm.stream_id AS "streamId", sm.subject, sm.content,
  sm.rendered_content AS "renderedContent", sm.sending_client_id AS "sendingClientId", sm.scheduled_timestamp AS "scheduledTimestamp",
  sm.read_by_sender AS "readBySender", sm.delivered, sm.failed, sm.failure_message AS "failureMessage", sm.has_attachment AS "hasAttachment",
  sm.delivery_type AS "deliveryType",
  CASE WHEN r.type = ${RecipientType.DIRECT_MESSAGE_GROUP}
       THEN ARRAY(SELECT s.user_profile_id FROM subscription s WHERE s.recipient_id = r.id ORDER BY s.user_profile_id)
       ELSE '{}'::int[] END AS "groupMemberIds"`;

/**
 * The user's scheduled message with this id, or 404 "Scheduled message does not exist" (Zulip's
 * access_scheduled_message: another user's is missing too). `lock` takes the row lock that
 * delivery takes, so an edit waits for a delivery in progress and then sees it delivered.
 */
export async function accessScheduledMessage(
  db: Db,
  user: { id: number; realmId: number },
  id: number,
  lock = false,
): Promise<ScheduledMessageRow> {
  const rows = isStorableId(id)
    ? await db.$queryRaw<ScheduledMessageRow[]>`
        SELECT ${SCHEDULED_MESSAGE_COLUMNS}
        FROM scheduled_message sm JOIN recipient r ON r.id = sm.recipient_id
        WHERE sm.id = ${id} AND sm.sender_id = ${user.id} AND sm.realm_id = ${user.realmId} AND sm.delivery_type = ${SEND_LATER}
        ${lock ? Prisma.sql`FOR UPDATE OF sm` : Prisma.empty}`
    : [];
  if (!rows[0]) throw new ResourceNotFoundError("Scheduled message does not exist");
  return rows[0];
}

/** The user's scheduled messages not sent yet (failed ones included), by delivery time. */
export async function listScheduledMessages(
  db: Db,
  user: { id: number; realmId: number },
): Promise<ApiScheduledMessage[]> {
  const rows = await db.$queryRaw<ScheduledMessageRow[]>`
    SELECT ${SCHEDULED_MESSAGE_COLUMNS}
    FROM scheduled_message sm JOIN recipient r ON r.id = sm.recipient_id
    WHERE sm.realm_id = ${user.realmId} AND sm.sender_id = ${user.id} AND NOT sm.delivered AND sm.delivery_type = ${SEND_LATER}
    ORDER BY sm.scheduled_timestamp, sm.id`;
  return rows.map(toApiScheduledMessage);
}

/**
 * The users a direct message goes to, as sending would name them: the personal recipient's
 * user, or every member of the group (Zulip's Addressee.for_user_ids over the subscriptions).
 */
export function directRecipientUserIds(
  row: Pick<ScheduledMessageRow, "recipientType" | "recipientTypeId" | "groupMemberIds">,
): number[] {
  return row.recipientType === RecipientType.DIRECT_MESSAGE_GROUP
    ? row.groupMemberIds
    : [row.recipientTypeId];
}

/** ScheduledMessage.to_dict: `to` of a direct message leaves out the sender (get_recipient_ids). */
export function toApiScheduledMessage(row: ScheduledMessageRow): ApiScheduledMessage {
  const common = {
    scheduled_message_id: row.id,
    content: row.content,
    rendered_content: row.renderedContent ?? "",
    scheduled_delivery_timestamp: unixSeconds(row.scheduledTimestamp),
    failed: row.failed,
  };
  if (row.recipientType === RecipientType.STREAM)
    return { ...common, type: "stream", to: row.recipientTypeId, topic: row.subject };
  const to =
    row.recipientType === RecipientType.DIRECT_MESSAGE_GROUP
      ? row.groupMemberIds.filter((id) => id !== row.senderId)
      : [row.recipientTypeId];
  return { ...common, type: "private", to };
}
