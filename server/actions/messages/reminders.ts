/**
 * Message reminders (zerver/actions/reminders.py, zerver/lib/reminders.py): a reminder is a
 * scheduled message of delivery type REMIND owned by the user, holding a link to the message and
 * a quote of it; the scheduled-delivery worker has the notification bot send it to the owner.
 * Each change is one transaction with its `reminders` event for the owner's clients.
 */
import type { Message } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { clientIdFor } from "../../lib/clients.ts";
import {
  messageLinkSyntax,
  messageLinkUrl,
  silentMentionSyntax,
} from "../../lib/messages/message-links.ts";
import { accessMessage } from "../../lib/messages/messages.ts";
import { normalizeNote, REMIND, toApiReminder } from "../../lib/messages/reminders.ts";
import { MAX_MESSAGE_LENGTH } from "../../lib/messages/topics.ts";
import { realmUrl } from "../../lib/realm/realm.ts";
import { scheduledMessageChanged } from "../../workers/scheduled-delivery.ts";
import { checkMessageWith } from "./messages.ts";
import {
  mentionList,
  reportedMessage,
  truncate,
  unusedFence,
  type ReportedMessage,
} from "./message-reports.ts";
import { checkDeliveryTime, deleteOwnScheduledRow } from "./scheduled-messages.ts";
import { inTransaction } from "../transaction.ts";

export interface ReminderInput {
  messageId: number;
  scheduledDeliveryTimestamp: number;
  note?: string;
  clientName: string;
}

/**
 * POST /reminders (schedule_reminder_for_message): the delivery time, then the message's access,
 * then the note. The reminder is checked as a direct message from the user to themself.
 */
export async function scheduleReminder(ctx: RequestContext, input: ReminderInput): Promise<number> {
  const deliverAt = checkDeliveryTime(ctx, input.scheduledDeliveryTimestamp);
  const { message, related } = await accessMessage(ctx.db, ctx.user, input.messageId, ctx.realm);
  const note = input.note ? normalizeNote(input.note) : "";
  const url = await realmUrl(ctx.db, ctx.realm, ctx.config);
  const content = reminderContent(reportedMessage(message, related), note, url);
  const clientId = await clientIdFor(ctx.db, input.clientName);
  const request = await checkMessageWith(
    ctx,
    {
      target: { kind: "direct", userIds: [ctx.user.id] },
      content,
      clientName: input.clientName,
      sendLater: true,
    },
    clientId,
  );
  const id = await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const row = await tx.scheduledMessage.create({
      data: {
        realmId: ctx.realm.id,
        senderId: ctx.user.id,
        recipientId: ctx.user.recipientId!,
        content: request.content,
        renderedContent: request.rendered.html,
        sendingClientId: clientId,
        scheduledTimestamp: deliverAt,
        readBySender: false,
        deliveryType: REMIND,
        reminderTargetMessageId: message.id,
      },
    });
    events.add({ type: "reminders", op: "add", reminders: [toApiReminder(row)] }, [ctx.user.id]);
    return row.id;
  });
  scheduledMessageChanged(deliverAt);
  return id;
}

/** DELETE /reminders/{id} (access_reminder, do_delete_reminder). */
export async function doDeleteReminder(ctx: RequestContext, id: number): Promise<void> {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await deleteOwnScheduledRow(tx, ctx, id, REMIND, "Reminder does not exist");
    events.add({ type: "reminders", op: "remove", reminder_id: id }, [ctx.user.id]);
  });
}

/** get_reminder_formatted_content: why, who said it where (a link), and a quote of it. */
export function reminderContent(reminded: ReportedMessage, note: string, url: string): string {
  const { message, sender, participants, link } = reminded;
  const what = link.kind === "channel" ? "message" : "direct message";
  let content = note
    ? `You requested a reminder for the following ${what}. Note:\n > ${note}`
    : `You requested a reminder for the following ${what}.`;
  content += "\n\n";
  const said = `${silentMentionSyntax(sender)} [${widget(message) ? "sent" : "said"}](${messageLinkUrl(url, link)})`;
  let where: string;
  if (link.kind === "channel")
    where = `in ${messageLinkSyntax(link.channelId, link.channelName, link.topic, message.id)}`;
  else {
    const others = participants.filter((p) => p.id !== sender.id);
    where = `to ${mentionList(others.length ? others : [sender])}`;
  }
  const kind = widget(message);
  if (kind) return content + `${said} a ${kind} ${where}.`;
  content += `${said} ${where}:\n`;
  const fence = unusedFence(message.content);
  const room = MAX_MESSAGE_LENGTH - [...`${content}${fence}quote\n\n${fence}`].length;
  const quoted = truncate(message.content, room, "\n[message truncated]");
  return `${content}${fence}quote\n${quoted}\n${fence}`;
}

/** Polls and todo lists are named, not quoted. */
function widget(message: Message): string | null {
  if (message.content.startsWith("/poll")) return "poll";
  if (message.content.startsWith("/todo")) return "todo list";
  return null;
}
