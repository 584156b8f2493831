/**
 * The rule of channels.ts turned round: not whether a known user may read a message, but which
 * users may (the same formula, in SQL over a `user_profile` row of the statement), and who hears
 * of an action on messages (zerver/lib/message.py event_recipient_ids_for_action_on_messages).
 */
import { Prisma, type Db, type RawTx } from "../../db/index.ts";
import { accessSql, messageAccessSql } from "./channels.ts";

type Sql = Prisma.Sql;

/**
 * Whether the user row `user` (an alias) may read a message of the channel row `stream` (an
 * alias), `received` being the statement's test of their user_message row (has_message_access).
 */
export function mayReadChannelMessageSql(user: string, stream: string, received: Sql): Sql {
  return accessSql("CHANNEL_MESSAGE", { alias: user }, stream, received);
}

/**
 * Who gets the event of an action on messages of one conversation (reactions, deletions;
 * Zulip's event_recipient_ids_for_action_on_messages, which follows has_message_access): among
 * the conversation's active subscribers and whoever has a user_message row for the messages, those
 * the rule lets read them (for direct messages, those with a row). Users who merely fetched a
 * public channel's messages are not told, as in Zulip. As a subquery (its column `id`), over SQL
 * expressions, for statements that act on many conversations.
 */
export function messageEventRecipientsSql(
  messageIds: Sql,
  recipientId: Sql,
  isChannelMessage: Sql,
): Sql {
  const received = Prisma.sql`EXISTS (SELECT 1 FROM user_message access_um
    WHERE access_um.user_profile_id = access_u.id AND access_um.message_id = ANY(${messageIds}))`;
  return Prisma.sql`
    SELECT access_u.id FROM (
        SELECT um.user_profile_id AS id FROM user_message um WHERE um.message_id = ANY(${messageIds})
        UNION
        SELECT sub.user_profile_id FROM subscription sub
        WHERE sub.recipient_id = ${recipientId} AND sub.active AND sub.is_user_active) candidate
      JOIN user_profile access_u ON access_u.id = candidate.id
      LEFT JOIN stream access_s ON ${isChannelMessage} AND access_s.recipient_id = ${recipientId}
    WHERE COALESCE(${messageAccessSql({ alias: "access_u" }, received, { stream: "access_s" })}, FALSE)`;
}

/** The same for one conversation, run: the users' ids. One statement. */
export async function messageEventRecipientIds(
  tx: RawTx | Db,
  messageIds: number[],
  recipientId: number,
  isChannelMessage: boolean,
): Promise<number[]> {
  const rows = await tx.$queryRaw<{ id: number }[]>`${messageEventRecipientsSql(
    Prisma.sql`${messageIds}::int[]`,
    Prisma.sql`${recipientId}::int`,
    Prisma.sql`${isChannelMessage}`,
  )}`;
  return rows.map((r) => r.id);
}
