/** What typing notifications read (zerver/actions/typing.py check_send_typing_notification). */
import type { Db } from "../../db/index.ts";
import { RecipientType } from "../recipients.ts";
import { JsonableError } from "../../errors.ts";
import { isStorableId } from "../ids.ts";

export interface TypingUser {
  id: number;
  email: string;
  isActive: boolean;
}

/**
 * The users of a direct-message typing notification, in the order asked, in one statement:
 * every id must name a user of the organization, deactivated ones included (they are named in
 * the event's recipients but get no event), else "Invalid user ID <id>" for the first that
 * does not, as Zulip refuses the whole request.
 */
export async function typingRecipients(
  db: Db,
  realmId: number,
  userIds: number[],
): Promise<TypingUser[]> {
  const rows = await db.$queryRaw<TypingUser[]>`
    SELECT id, email, is_active AS "isActive" FROM user_profile
    WHERE realm_id = ${realmId}::int AND id = ANY (${userIds.filter(isStorableId)}::int[])`;
  const byId = new Map(rows.map((u) => [u.id, u]));
  return userIds.map((id) => {
    const user = byId.get(id);
    if (!user) throw new JsonableError(`Invalid user ID ${id}`);
    return user;
  });
}

/**
 * Who is told that a message's edit is being typed, in one statement: a channel message's
 * active subscribers who receive typing notifications (`total`: every active subscriber, for
 * MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS); a direct message's participants (the sender and
 * the recipient of a one-on-one message, a group's members) who are active and receive them
 * (do_send_stream_message_edit_typing_notification / do_send_direct_message_edit_typing_notification).
 */
export async function editTypingRecipients(
  db: Db,
  message: { recipientId: number; senderId: number },
): Promise<{ userIds: number[]; total: number }> {
  const [row] = await db.$queryRaw<{ user_ids: number[] | null; total: number }[]>`
    WITH r AS (SELECT id, type, type_id FROM recipient WHERE id = ${message.recipientId}::int),
    participants AS (
      SELECT s.user_profile_id AS id FROM subscription s, r
      WHERE s.recipient_id = r.id AND s.active AND s.is_user_active AND r.type <> ${RecipientType.PERSONAL}
      UNION SELECT ${message.senderId}::int FROM r WHERE r.type = ${RecipientType.PERSONAL}
      UNION SELECT r.type_id FROM r WHERE r.type = ${RecipientType.PERSONAL})
    SELECT array_agg(u.id ORDER BY u.id) FILTER (WHERE u.receives_typing_notifications) AS user_ids,
           count(*)::int AS total
    FROM participants p JOIN user_profile u ON u.id = p.id AND u.is_active`;
  return { userIds: row?.user_ids ?? [], total: row?.total ?? 0 };
}
