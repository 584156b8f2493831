/**
 * Who may delete a message (zerver/views/message_edit.py validate_can_delete_message), read-only:
 * members of the organization's or the channel's can_delete_any_message_group delete any message
 * they can access; for their own messages and their bots', the organization's or the channel's
 * can_delete_own_message_group, within the organization's message_content_delete_limit_seconds.
 */
import type { Message } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import { accessMessage } from "./messages.ts";
import { can, canInChannel } from "../groups/permissions.ts";

const noPermission = () => new JsonableError("You don't have permission to delete this message");

/** The message, once the caller may delete it; Zulip's errors otherwise, in its order. */
export async function checkCanDeleteMessage(
  ctx: RequestContext,
  messageId: number,
): Promise<Message> {
  const { db, realm, user } = ctx;
  // is_modifying_message: nobody deletes in an archived channel.
  const { message } = await accessMessage(db, user, messageId, realm, { change: true });
  if (await can(db, user, realm, "can_delete_any_message_group")) return message;

  const stream = message.isChannelMessage
    ? await db.stream.findUnique({
        where: { recipientId: message.recipientId },
        select: { canDeleteAnyMessageGroupId: true, canDeleteOwnMessageGroupId: true },
      })
    : null;
  if (stream && (await canInChannel(db, user, stream, "can_delete_any_message_group")))
    return message;

  if (message.senderId !== user.id) {
    const sender = await db.userProfile.findUnique({
      where: { id: message.senderId },
      select: { botOwnerId: true },
    });
    if (sender?.botOwnerId !== user.id) throw noPermission();
  }
  // The organization's permission, or for channel messages the channel's.
  if (
    !(await can(db, user, realm, "can_delete_own_message_group")) &&
    !(stream && (await canInChannel(db, user, stream, "can_delete_own_message_group")))
  )
    throw noPermission();

  const limit = realm.messageContentDeleteLimitSeconds;
  if (limit !== null && ctx.now().getTime() - message.dateSent.getTime() > limit * 1000)
    throw new JsonableError("The time limit for deleting this message has passed");
  return message;
}
