/**
 * GET /messages/{id}/read_receipts (zerver/views/read_receipts.py): who has read a message, in one
 * statement that also applies the access rule (lib/access/channels.ts) to the message.
 */
import { Prisma, type Db, type UserProfile } from "../../db/index.ts";
import { messageAccessSql } from "../access/channels.ts";
import { isStorableId } from "../ids.ts";

/**
 * The users with the message read, or null when the viewer may not read it. As Zulip: active
 * users with send_read_receipts on, bots included, not the sender, nobody the viewer muted and
 * nobody who muted the viewer; a historical row counts like any other.
 */
export async function readReceipts(
  db: Db,
  viewer: Pick<UserProfile, "id" | "realmId" | "role">,
  messageId: number,
): Promise<number[] | null> {
  if (!isStorableId(messageId)) return null;
  const received = Prisma.sql`(vm.message_id IS NOT NULL)`;
  const rows = await db.$queryRaw<{ user_ids: number[] }[]>`
    WITH target AS (
      SELECT m.id, m.sender_id FROM message m
      LEFT JOIN user_message vm ON vm.message_id = m.id AND vm.user_profile_id = ${viewer.id}
      LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
      WHERE m.id = ${messageId} AND m.realm_id = ${viewer.realmId}
        AND COALESCE(${messageAccessSql(viewer, received)}, FALSE))
    SELECT ARRAY(
      SELECT um.user_profile_id FROM target t
      JOIN user_message um ON um.message_id = t.id
      JOIN user_profile up ON up.id = um.user_profile_id
      WHERE (um.flags & 1) <> 0 AND up.is_active AND up.send_read_receipts
        AND um.user_profile_id <> t.sender_id
        AND NOT EXISTS (SELECT 1 FROM muted_user mu
          WHERE (mu.user_profile_id = ${viewer.id} AND mu.muted_user_id = um.user_profile_id)
             OR (mu.user_profile_id = um.user_profile_id AND mu.muted_user_id = ${viewer.id}))
      ORDER BY um.user_profile_id) AS user_ids
    FROM target`;
  return rows[0] ? rows[0].user_ids.map(Number) : null;
}
