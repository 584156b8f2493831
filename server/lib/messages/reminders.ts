/**
 * Reading reminders (zerver/lib/reminders.py): scheduled messages of delivery type REMIND that
 * the notification bot sends to their owner, and their API form (ScheduledMessage.to_dict for a
 * reminder).
 */
import type { Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { Schemas } from "../schemas.ts";
import { unixSeconds } from "../time.ts";

/** ScheduledMessage.REMIND. */
export const REMIND = 2;
/** settings.MAX_REMINDER_NOTE_LENGTH (the register's max_reminder_note_length). */
export const MAX_REMINDER_NOTE_LENGTH = 1000;

export type ApiReminder = Schemas["Reminder"];

export interface ReminderRow {
  id: number;
  senderId: number;
  content: string;
  renderedContent: string | null;
  scheduledTimestamp: Date;
  failed: boolean;
  reminderTargetMessageId: number | null;
}

const REMINDER_SELECT = {
  id: true,
  senderId: true,
  content: true,
  renderedContent: true,
  scheduledTimestamp: true,
  failed: true,
  reminderTargetMessageId: true,
} as const;

/** A reminder is always a direct message to its owner. */
export function toApiReminder(row: ReminderRow): ApiReminder {
  return {
    reminder_id: row.id,
    type: "private",
    to: [row.senderId],
    content: row.content,
    rendered_content: row.renderedContent ?? "",
    scheduled_delivery_timestamp: unixSeconds(row.scheduledTimestamp),
    failed: row.failed,
    reminder_target_message_id: row.reminderTargetMessageId ?? 0,
  };
}

/** The user's reminders not sent yet (failed ones included), by delivery time. */
export async function listReminders(
  db: Db,
  user: { id: number; realmId: number },
): Promise<ApiReminder[]> {
  const rows = await db.scheduledMessage.findMany({
    where: { realmId: user.realmId, senderId: user.id, deliveryType: REMIND, delivered: false },
    orderBy: [{ scheduledTimestamp: "asc" }, { id: "asc" }],
    select: REMINDER_SELECT,
  });
  return rows.map(toApiReminder);
}

/** normalize_note_text: trailing whitespace and leading newlines go; then the length is checked. */
export function normalizeNote(note: string): string {
  const body = note.replace(/\s+$/u, "").replace(/^\n+/, "");
  if ([...body].length > MAX_REMINDER_NOTE_LENGTH)
    throw new JsonableError(`Maximum reminder note length: ${MAX_REMINDER_NOTE_LENGTH} characters`);
  return body;
}
