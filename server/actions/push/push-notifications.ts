/**
 * Removing pushed notifications once their messages are read (Zulip's
 * do_clear_mobile_push_notifications_for_ids): in the transaction that marks them read, the
 * messages whose notification was pushed (`active_mobile_push_notification`) lose that flag, and
 * one `remove` push of them is queued for the push loop (workers/push-notifications.ts).
 */
import type { RawTx } from "../../db/index.ts";
import { FLAG_BITS } from "../../lib/messages/flags.ts";
import { pushNotificationsQueued } from "../../workers/push-notifications.ts";
import { afterCommit } from "../transaction.ts";

/** Of `flags` rows just marked read, the messages a push notification is showing. */
export const pushedMessageIds = (rows: { message_id: number; flags: bigint | number }[]) =>
  rows
    .filter((r) => (BigInt(r.flags) & FLAG_BITS.active_mobile_push_notification) !== 0n)
    .map((r) => r.message_id);

/** Queues the removal of the notifications of `messageIds` (pushed, now read), in `tx`. */
export async function queuePushRemovals(
  tx: RawTx,
  userId: number,
  messageIds: number[],
): Promise<void> {
  if (messageIds.length === 0) return;
  const active = FLAG_BITS.active_mobile_push_notification;
  await tx.$executeRaw`
    WITH cleared AS (
      UPDATE user_message SET flags = flags & ~${active}::bigint
      WHERE user_profile_id = ${userId} AND message_id = ANY (${messageIds}::int[])
        AND flags & ${active}::bigint <> 0
      RETURNING message_id)
    INSERT INTO push_notification_queue (user_profile_id, type, message_ids)
    SELECT ${userId}, 'remove', array_agg(message_id ORDER BY message_id) FROM cleared
    HAVING count(*) > 0`;
  afterCommit(tx, pushNotificationsQueued);
}
