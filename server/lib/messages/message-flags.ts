/**
 * Reads behind the flag operations (zerver/actions/message_flags.py, zerver/views/message_flags.py):
 * what a flag change needs to know about the listed messages, and whether a topic exists for the
 * user, each in one statement.
 */
import { Prisma, type Db, type RawTx, type UserProfile } from "../../db/index.ts";
import { messageAccessSql } from "../access/channels.ts";
import { isStorableId } from "../ids.ts";

/** One listed message as a flag change sees it (absent from the result: no such message in the organization). */
export interface FlagTarget {
  id: number;
  /** The user's flags on it, or null without a user_message row. */
  flags: bigint | null;
  /** Its channel, for a channel message. */
  streamId: number | null;
  /** Whether the user is subscribed (actively) to that channel. */
  subscribed: boolean;
  /** Whether the user may read it (has_message_access, lib/access/channels.ts). */
  accessible: boolean;
}

/**
 * The listed messages of the user's organization, with the user's row, its channel and the access
 * rule's answer: what removing `read` (subscriptions) and adding a flag to a message never
 * received (access, a historical row) need.
 */
export async function flagTargets(
  tx: RawTx,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  messageIds: number[],
): Promise<FlagTarget[]> {
  const ids = [...new Set(messageIds.filter(isStorableId))];
  if (!ids.length) return [];
  const received = Prisma.sql`(um.message_id IS NOT NULL)`;
  const rows = await tx.$queryRaw<
    {
      id: number;
      flags: bigint | number | string | null;
      stream_id: number | null;
      subscribed: boolean;
      accessible: boolean;
    }[]
  >`SELECT m.id, um.flags, s.id AS stream_id,
      (s.id IS NOT NULL AND EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_profile_id = ${user.id}
         AND sub.recipient_id = m.recipient_id AND sub.active)) AS subscribed,
      COALESCE(${messageAccessSql(user, received)}, FALSE) AS accessible
    FROM message m
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}
    LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
    WHERE m.id = ANY (${ids}::int[]) AND m.realm_id = ${user.realmId}`;
  return rows.map((r) => ({
    id: r.id,
    flags: r.flags === null ? null : BigInt(r.flags),
    streamId: r.stream_id,
    subscribed: r.subscribed,
    accessible: r.accessible,
  }));
}

/** Whether the user received a message in the topic (user_message_exists_for_topic: case-insensitive). */
export async function userMessageExistsForTopic(
  db: Db,
  userId: number,
  recipientId: number,
  topic: string,
): Promise<boolean> {
  const rows = await db.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM user_message um JOIN message m ON m.id = um.message_id
      WHERE um.user_profile_id = ${userId} AND m.recipient_id = ${recipientId}
        AND lower(m.subject) = lower(${topic})) AS found`;
  return rows[0]!.found;
}
