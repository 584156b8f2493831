/**
 * Muting and unmuting a user (zerver/actions/muted_users.py). Muting also marks every unread
 * message the muted user sent the muter read, in the same statement that records the mute
 * (do_mark_muted_user_messages_as_read), whatever their number; later messages from the muted
 * user are written read by doSendMessage.
 */
import type { RequestContext } from "../../context.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { JsonableError } from "../../errors.ts";
import { FLAG_BITS } from "../../lib/messages/flags.ts";
import { mutedUsers } from "../../lib/users/muted-users.ts";
import { inTransaction } from "../transaction.ts";

type Ctx = Pick<RequestContext, "db" | "events" | "realm" | "user" | "now">;

async function notifyMutedUsers({ tx, events }: UnitOfWork, userId: number) {
  events.add({ type: "muted_users", muted_users: await mutedUsers(tx, userId) }, [userId]);
}

/** do_mute_user: "User already muted" when it is. */
export function doMuteUser(ctx: Ctx, mutedUserId: number): Promise<void> {
  const userId = ctx.user.id;
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const [result] = await tx.$queryRaw<[{ inserted: number; read_ids: number[] }]>`
      WITH ins AS (
        INSERT INTO muted_user (realm_id, user_profile_id, muted_user_id, date_muted)
        VALUES (${ctx.realm.id}, ${userId}, ${mutedUserId}, ${ctx.now()})
        ON CONFLICT (user_profile_id, muted_user_id) DO NOTHING
        RETURNING id),
      upd AS (
        UPDATE user_message um SET flags = um.flags | ${FLAG_BITS.read}
        FROM message m
        WHERE EXISTS (SELECT 1 FROM ins) AND um.user_profile_id = ${userId} AND m.id = um.message_id
          AND m.sender_id = ${mutedUserId} AND (um.flags & ${FLAG_BITS.read}) = 0
        RETURNING um.message_id)
      SELECT (SELECT count(*) FROM ins)::int AS inserted, ARRAY(SELECT message_id FROM upd ORDER BY 1) AS read_ids`;
    if (result.inserted === 0) throw new JsonableError("User already muted");
    // Zulip's ReadMessagesEvent, sent only when something was marked read.
    if (result.read_ids.length > 0)
      events.add(
        {
          type: "update_message_flags",
          op: "add",
          operation: "add",
          flag: "read",
          messages: result.read_ids.map(Number),
          all: false,
        },
        [userId],
      );
    await notifyMutedUsers({ tx, events }, userId);
  });
}

/** do_unmute_user: "User is not muted" when it is not. */
export function doUnmuteUser(ctx: Ctx, mutedUserId: number): Promise<void> {
  const userId = ctx.user.id;
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const { count } = await tx.mutedUser.deleteMany({
      where: { userProfileId: userId, mutedUserId },
    });
    if (count === 0) throw new JsonableError("User is not muted");
    await notifyMutedUsers({ tx, events }, userId);
  });
}
