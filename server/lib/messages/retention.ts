/**
 * Which messages the retention policy expires (zerver/lib/retention.py): a channel's messages
 * after its message_retention_days, or, when it has none, the organization's; direct messages
 * after the organization's. -1 (and an organization's null) keeps them forever.
 */
import { Prisma, type Db } from "../../db/index.ts";

/** retention.py MESSAGE_BATCH_SIZE and STREAM_MESSAGE_BATCH_SIZE. */
export const MESSAGE_BATCH_SIZE = 1000;
export const STREAM_MESSAGE_BATCH_SIZE = 100;

/** Organizations where some message may expire: their own policy or one of their channels'. */
export async function realmsWithRetention(db: Db): Promise<number[]> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT id FROM realm WHERE message_retention_days IS NOT NULL AND message_retention_days <> -1
    UNION SELECT realm_id FROM stream WHERE message_retention_days IS NOT NULL AND message_retention_days <> -1`;
  return rows.map((r) => r.id);
}

/**
 * The next batch of the organization's expired messages, channel or direct, oldest first,
 * locked; rows another process holds are skipped, so processes sharing the database each take
 * other messages and every message is archived once.
 */
export function expiredMessages(realmId: number, channels: boolean, now: Date): Prisma.Sql {
  const days = channels
    ? Prisma.sql`COALESCE(s.message_retention_days, r.message_retention_days, -1)`
    : Prisma.sql`COALESCE(r.message_retention_days, -1)`;
  return Prisma.sql`
    SELECT m.id FROM message m JOIN realm r ON r.id = m.realm_id
    ${channels ? Prisma.sql`JOIN stream s ON s.recipient_id = m.recipient_id` : Prisma.empty}
    WHERE m.realm_id = ${realmId}::int AND m.is_channel_message = ${channels} AND ${days} <> -1
      AND m.date_sent < ${now}::timestamptz - ${days} * interval '1 day'
    ORDER BY m.id LIMIT ${channels ? STREAM_MESSAGE_BATCH_SIZE : MESSAGE_BATCH_SIZE}::int
    FOR UPDATE OF m SKIP LOCKED`;
}
