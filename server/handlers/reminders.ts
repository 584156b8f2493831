import { doDeleteReminder, scheduleReminder } from "../actions/messages/reminders.ts";
import type { Handler } from "../http/types.ts";
import { clientNameFromUserAgent } from "../lib/clients.ts";
import { listReminders } from "../lib/messages/reminders.ts";

/** GET /reminders (zerver/views/reminders.py get_reminders). */
export const getReminders: Handler<"get-reminders"> = async (_input, ctx) => {
  return { reminders: await listReminders(ctx.db, ctx.user) };
};

/** POST /reminders (create_reminders_message_backend). */
export const createMessageReminder: Handler<"create-message-reminder"> = async ({ body }, ctx) => {
  const id = await scheduleReminder(ctx, {
    messageId: body.message_id,
    scheduledDeliveryTimestamp: body.scheduled_delivery_timestamp,
    note: body.note,
    clientName: clientNameFromUserAgent(ctx.userAgent),
  });
  return { reminder_id: id };
};

/** DELETE /reminders/{reminder_id} (delete_reminder). */
export const deleteReminder: Handler<"delete-reminder"> = async ({ path }, ctx) => {
  await doDeleteReminder(ctx, path.reminder_id);
  return {};
};
