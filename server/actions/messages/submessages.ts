/**
 * Adding a submessage (zerver/views/submessage.py process_submessage, zerver/actions/submessage.py
 * do_add_submessage). The message is read through the access rule (as a change: not in an
 * archived channel) with its submessages; the checks run on them; then one transaction locks
 * the message, writes the submessage and sends the `submessage` event to those who hear of
 * actions on the message. Also the widget submessage a `/poll` or `/todo` message gets when it
 * is sent (do_widget_post_save_actions), inside doSendMessage's transaction.
 */
import type { RequestContext } from "../../context.ts";
import type { RawTx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { messageEventRecipientIds } from "../../lib/access/messages.ts";
import { accessMessage } from "../../lib/messages/messages.ts";
import { checkSubmessage, pythonJson, type WidgetContent } from "../../lib/messages/submessages.ts";
import { refuseNul } from "../../lib/text.ts";
import { inRawTransaction } from "../transaction.ts";

export async function checkAddSubmessage(
  ctx: RequestContext,
  messageId: number,
  msgType: string,
  content: string,
): Promise<void> {
  const { message, related } = await accessMessage(ctx.db, ctx.user, messageId, ctx.realm, {
    change: true,
  });
  checkSubmessage(message, related.submessages, ctx.user.id, content);
  // PostgreSQL text cannot hold NUL (content with one is never JSON, so only msg_type can).
  refuseNul(msgType, "msg_type");
  await inRawTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const [row] = await tx.$queryRaw<{ id: number | null }[]>`
      WITH m AS (SELECT id FROM message WHERE id = ${message.id} FOR UPDATE),
      ins AS (INSERT INTO submessage (realm_id, message_id, sender_id, msg_type, content)
              SELECT ${ctx.realm.id}, m.id, ${ctx.user.id}, ${msgType}, ${content} FROM m
              RETURNING id)
      SELECT (SELECT id FROM ins) AS id`;
    // Deleted since it was read.
    if (row?.id == null) throw new JsonableError("Invalid message(s)");
    const userIds = await messageEventRecipientIds(
      tx,
      [message.id],
      message.recipientId,
      message.isChannelMessage,
    );
    events.add(
      {
        type: "submessage",
        msg_type: msgType,
        message_id: message.id,
        submessage_id: row.id,
        sender_id: ctx.user.id,
        content,
      },
      userIds,
    );
  });
}

/** The widget submessage of a message just sent, in the sending transaction; its dict. */
export async function doAddWidgetSubmessage(
  tx: RawTx,
  ids: { realmId: number; messageId: number; senderId: number },
  widget: WidgetContent,
) {
  const content = pythonJson(widget);
  const [row] = await tx.$queryRaw<[{ id: number }]>`
    INSERT INTO submessage (realm_id, message_id, sender_id, msg_type, content)
    VALUES (${ids.realmId}, ${ids.messageId}, ${ids.senderId}, 'widget', ${content})
    RETURNING id`;
  return {
    msg_type: "widget",
    content,
    message_id: ids.messageId,
    sender_id: ids.senderId,
    id: row.id,
  };
}
