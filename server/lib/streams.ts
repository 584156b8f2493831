/**
 * Channels as sending and reading need them: the row's permission-relevant columns and its
 * active subscribers, in one statement; names matched case-insensitively through the
 * (realm_id, lower(name)) unique index.
 */
import { Prisma, type Db } from "../db.ts";
import { isStorableId } from "./messages.ts";
import { isStorableText } from "./text.ts";

export interface ChannelRow {
  id: number;
  name: string;
  recipientId: number;
  inviteOnly: boolean;
  isArchived: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
  canSendMessageGroupId: number;
  /** Who may administer the channel and move or resolve topics in it (message edits). */
  canAdministerChannelGroupId: number;
  canMoveMessagesOutOfChannelGroupId: number;
  canMoveMessagesWithinChannelGroupId: number;
  canResolveTopicsGroupId: number;
  topicsPolicy: string;
  firstMessageId: number | null;
  /** Active subscriptions of active users, by user id. */
  subscriberIds: number[];
}

export async function findChannel(db: Db, realmId: number, by: { id: number } | { name: string }): Promise<ChannelRow | null> {
  // An id the column cannot hold names no channel (PostgreSQL would refuse the comparison).
  if ("id" in by ? !isStorableId(by.id) : !isStorableText(by.name)) return null;
  const match = "id" in by ? Prisma.sql`s.id = ${by.id}` : Prisma.sql`lower(s.name) = lower(${by.name})`;
  const rows = await db.$queryRaw<
    {
      id: number;
      name: string;
      recipient_id: number;
      invite_only: boolean;
      is_archived: boolean;
      is_web_public: boolean;
      history_public_to_subscribers: boolean;
      can_send_message_group_id: number;
      can_administer_channel_group_id: number;
      can_move_messages_out_of_channel_group_id: number;
      can_move_messages_within_channel_group_id: number;
      can_resolve_topics_group_id: number;
      topics_policy: string;
      first_message_id: number | null;
      subscriber_ids: number[];
    }[]
  >`
    SELECT s.id, s.name, s.recipient_id, s.invite_only, s.is_archived, s.is_web_public, s.history_public_to_subscribers,
           s.can_send_message_group_id, s.can_administer_channel_group_id, s.can_move_messages_out_of_channel_group_id,
           s.can_move_messages_within_channel_group_id, s.can_resolve_topics_group_id, s.topics_policy::text AS topics_policy, s.first_message_id,
           ARRAY(SELECT sub.user_profile_id FROM subscription sub
                 WHERE sub.recipient_id = s.recipient_id AND sub.active AND sub.is_user_active) AS subscriber_ids
    FROM stream s
    WHERE s.realm_id = ${realmId} AND ${match}`;
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    name: r.name,
    recipientId: r.recipient_id,
    inviteOnly: r.invite_only,
    isArchived: r.is_archived,
    isWebPublic: r.is_web_public,
    historyPublicToSubscribers: r.history_public_to_subscribers,
    canSendMessageGroupId: r.can_send_message_group_id,
    canAdministerChannelGroupId: r.can_administer_channel_group_id,
    canMoveMessagesOutOfChannelGroupId: r.can_move_messages_out_of_channel_group_id,
    canMoveMessagesWithinChannelGroupId: r.can_move_messages_within_channel_group_id,
    canResolveTopicsGroupId: r.can_resolve_topics_group_id,
    topicsPolicy: r.topics_policy,
    firstMessageId: r.first_message_id,
    subscriberIds: r.subscriber_ids,
  };
}
