/**
 * Channels as sending and reading need them: the row's permission-relevant columns and its
 * active subscribers, in one statement; names matched case-insensitively through the
 * (realm_id, lower(name)) unique index.
 */
import { Prisma, type Db, type UserProfile } from "../db.ts";
import { JsonableError } from "../errors.ts";
import { userGroupIds } from "./permissions.ts";
import { hasContentAccessIn, hasMetadataAccess } from "./channels.ts";
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
  /** Who may subscribe others, or themselves, to it (content access to a private channel). */
  canAddSubscribersGroupId: number;
  canSubscribeGroupId: number;
  canRemoveSubscribersGroupId: number;
  /** Who may start a new topic (feature level 441); `anyoneCreatesTopics` when that is role:everyone. */
  canCreateTopicGroupId: number;
  anyoneCreatesTopics: boolean;
  topicsPolicy: string;
  firstMessageId: number | null;
  /** Active subscriptions of active users, by user id. */
  subscriberIds: number[];
}

export async function findChannel(db: Db, realmId: number, by: { id: number } | { name: string }): Promise<ChannelRow | null> {
  // An id the column cannot hold names no channel (PostgreSQL would refuse the comparison).
  if ("id" in by ? !isStorableId(by.id) : !isStorableText(by.name)) return null;
  const match = "id" in by ? Prisma.sql`s.id = ${by.id}` : Prisma.sql`lower(s.name) = lower(${by.name})`;
  return (await findChannelsWhere(db, realmId, match))[0] ?? null;
}

/** The organization's channels with any of these ids, in one statement. */
export async function findChannelsById(db: Db, realmId: number, ids: number[]): Promise<ChannelRow[]> {
  const wanted = [...new Set(ids.filter(isStorableId))];
  if (wanted.length === 0) return [];
  return findChannelsWhere(db, realmId, Prisma.sql`s.id = ANY(${wanted}::int[])`);
}

/** The organization's default channels that are not archived (new users are subscribed to them), in one statement. */
export function findDefaultChannels(db: Db, realmId: number): Promise<ChannelRow[]> {
  return findChannelsWhere(db, realmId, Prisma.sql`NOT s.is_archived AND s.id IN (SELECT stream_id FROM default_stream WHERE realm_id = ${realmId})`);
}

/** The organization's channels with any of these names (case-insensitive), in one statement. */
export async function findChannelsByName(db: Db, realmId: number, names: string[]): Promise<ChannelRow[]> {
  const wanted = [...new Set(names.filter(isStorableText).map((n) => n.toLowerCase()))];
  if (wanted.length === 0) return [];
  return findChannelsWhere(db, realmId, Prisma.sql`lower(s.name) = ANY(${wanted}::text[])`);
}

async function findChannelsWhere(db: Db, realmId: number, match: Prisma.Sql): Promise<ChannelRow[]> {
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
      can_add_subscribers_group_id: number;
      can_subscribe_group_id: number;
      can_remove_subscribers_group_id: number;
      can_create_topic_group_id: number;
      anyone_creates_topics: boolean;
      topics_policy: string;
      first_message_id: number | null;
      subscriber_ids: number[];
    }[]
  >`
    SELECT s.id, s.name, s.recipient_id, s.invite_only, s.is_archived, s.is_web_public, s.history_public_to_subscribers,
           s.can_send_message_group_id, s.can_administer_channel_group_id, s.can_move_messages_out_of_channel_group_id,
           s.can_move_messages_within_channel_group_id, s.can_resolve_topics_group_id,
           s.can_add_subscribers_group_id, s.can_subscribe_group_id, s.can_remove_subscribers_group_id, s.can_create_topic_group_id,
           EXISTS (SELECT 1 FROM named_user_group n WHERE n.id = s.can_create_topic_group_id AND n.name = 'role:everyone') AS anyone_creates_topics,
           s.topics_policy::text AS topics_policy, s.first_message_id,
           ARRAY(SELECT sub.user_profile_id FROM subscription sub
                 WHERE sub.recipient_id = s.recipient_id AND sub.active AND sub.is_user_active) AS subscriber_ids
    FROM stream s
    WHERE s.realm_id = ${realmId} AND ${match}`;
  return rows.map((r) => ({
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
    canAddSubscribersGroupId: r.can_add_subscribers_group_id,
    canSubscribeGroupId: r.can_subscribe_group_id,
    canRemoveSubscribersGroupId: r.can_remove_subscribers_group_id,
    canCreateTopicGroupId: r.can_create_topic_group_id,
    anyoneCreatesTopics: r.anyone_creates_topics,
    topicsPolicy: r.topics_policy,
    firstMessageId: r.first_message_id,
    subscriberIds: r.subscriber_ids,
  }));
}

/** Whether the user may read the channel's messages (lib/channels.ts hasContentAccessIn, the user's groups cached). */
export async function hasContentAccess(db: Db, user: Pick<UserProfile, "id" | "realmId" | "role">, stream: ChannelRow): Promise<boolean> {
  const subscribed = stream.subscriberIds.includes(user.id);
  return hasContentAccessIn(user, stream, subscribed, subscribed || stream.isWebPublic ? new Set() : await userGroupIds(db, user));
}

/**
 * A channel the user may access by id or name, else Zulip's "Invalid channel ID" / "Invalid channel
 * name '<name>'" (access_stream_by_id / access_stream_by_name): archived channels only when
 * `allowArchived`; with `requireContentAccess: false`, knowing the channel exists is enough
 * (user_has_metadata_access), else its messages must be readable.
 */
export async function accessChannel(
  db: Db,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  by: { id: number } | { name: string },
  options: { allowArchived?: boolean; requireContentAccess?: boolean } = {},
): Promise<ChannelRow & { subscribed: boolean }> {
  const error = () => new JsonableError("id" in by ? "Invalid channel ID" : `Invalid channel name '${by.name}'`);
  const stream = await findChannel(db, user.realmId, by);
  if (!stream || (stream.isArchived && !options.allowArchived)) throw error();
  const subscribed = stream.subscriberIds.includes(user.id);
  const allowed =
    options.requireContentAccess === false ? hasMetadataAccess(user, stream, subscribed, await userGroupIds(db, user)) : await hasContentAccess(db, user, stream);
  if (!allowed) throw error();
  return { ...stream, subscribed };
}
