/**
 * Channels (zerver/lib/streams.py): in API form (stream_to_dict, the `Channel` schema), as sending
 * and reading need them (the permission-relevant columns and the active subscribers, in one
 * statement; names matched case-insensitively through the (realm_id, lower(name)) unique index),
 * and which channels a user may see, read and subscribe to (the rules of lib/access/channels.ts).
 * A list of channels in API form costs two statements: the rows, then every group-setting value at
 * once.
 */
import { activeViewers } from "../users/users.ts";
import { Prisma, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { Schemas } from "../schemas.ts";
import { unixSeconds } from "../time.ts";
import {
  accessFacts,
  allowedUsers,
  allows,
  allowsReadingGroups,
  type AccessChannel,
} from "../access/channels.ts";
import { CHANNEL_GROUP_SETTINGS } from "../groups/group-settings.ts";
import { groupSettingValuesAndNames } from "../groups/user-groups.ts";
import { groupMembers, userGroupIds } from "../groups/permissions.ts";
import { isStorableId } from "../ids.ts";
import { isStorableText } from "../text.ts";

export type ChannelDict = Schemas["Channel"];

/** Stream.SYSTEM_GROUPS_ENUM_MAP: the legacy stream_post_policy of a channel whose can_send_message_group is a system group. */
const STREAM_POST_POLICY_EVERYONE = 1;
const STREAM_POST_POLICY: Record<string, number> = {
  "role:administrators": 2,
  "role:fullmembers": 3,
  "role:moderators": 4,
};

/** The stream columns the API form and the access rules read. */
export interface StreamRecord {
  id: number;
  name: string;
  description: string;
  renderedDescription: string;
  dateCreated: Date;
  creatorId: number | null;
  isArchived: boolean;
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
  messageRetentionDays: number | null;
  topicsPolicy: string;
  folderId: number | null;
  recipientId: number | null;
  firstMessageId: number | null;
  subscriberCount: number;
  isRecentlyActive: boolean;
  canAddSubscribersGroupId: number;
  canAdministerChannelGroupId: number;
  canCreateTopicGroupId: number;
  canDeleteAnyMessageGroupId: number;
  canDeleteOwnMessageGroupId: number;
  canMoveMessagesOutOfChannelGroupId: number;
  canMoveMessagesWithinChannelGroupId: number;
  canRemoveSubscribersGroupId: number;
  canResolveTopicsGroupId: number;
  canSendMessageGroupId: number;
  canSubscribeGroupId: number;
}

export const STREAM_RECORD_SELECT = {
  id: true,
  name: true,
  description: true,
  renderedDescription: true,
  dateCreated: true,
  creatorId: true,
  isArchived: true,
  inviteOnly: true,
  isWebPublic: true,
  historyPublicToSubscribers: true,
  messageRetentionDays: true,
  topicsPolicy: true,
  folderId: true,
  recipientId: true,
  firstMessageId: true,
  subscriberCount: true,
  isRecentlyActive: true,
  canAddSubscribersGroupId: true,
  canAdministerChannelGroupId: true,
  canCreateTopicGroupId: true,
  canDeleteAnyMessageGroupId: true,
  canDeleteOwnMessageGroupId: true,
  canMoveMessagesOutOfChannelGroupId: true,
  canMoveMessagesWithinChannelGroupId: true,
  canRemoveSubscribersGroupId: true,
  canResolveTopicsGroupId: true,
  canSendMessageGroupId: true,
  canSubscribeGroupId: true,
} satisfies Prisma.StreamSelect;

/** The API form of channels already loaded, with every group-setting value read in one statement. */
export async function toChannelDicts(db: Db, streams: StreamRecord[]): Promise<ChannelDict[]> {
  const settings = Object.values(CHANNEL_GROUP_SETTINGS);
  const { values, systemNames } = await groupSettingValuesAndNames(
    db,
    streams.flatMap((s) =>
      settings.map((setting) => s[setting.field as keyof StreamRecord] as number),
    ),
  );
  return streams.map((s) => {
    const dict: Record<string, unknown> = {
      stream_id: s.id,
      name: s.name,
      description: s.description,
      rendered_description: s.renderedDescription,
      date_created: unixSeconds(s.dateCreated),
      creator_id: s.creatorId,
      invite_only: s.inviteOnly,
      is_web_public: s.isWebPublic,
      is_archived: s.isArchived,
      history_public_to_subscribers: s.historyPublicToSubscribers,
      first_message_id: s.firstMessageId,
      folder_id: s.folderId,
      message_retention_days: s.messageRetentionDays,
      topics_policy: s.topicsPolicy,
      is_recently_active: s.isRecentlyActive,
      stream_weekly_traffic: null,
      subscriber_count: s.subscriberCount,
      // Legacy fields Zulip still sends (get_stream_post_policy_value_based_on_group_setting).
      stream_post_policy:
        STREAM_POST_POLICY[systemNames.get(s.canSendMessageGroupId) ?? ""] ??
        STREAM_POST_POLICY_EVERYONE,
      is_announcement_only: systemNames.get(s.canSendMessageGroupId) === "role:administrators",
    };
    for (const setting of settings)
      dict[setting.name] = values.get(s[setting.field as keyof StreamRecord] as number);
    return dict as ChannelDict;
  });
}

/** Channels of the organization by id, in API form, in id order. */
export async function channelDicts(
  db: Db,
  realm: Pick<Realm, "id">,
  streamIds: number[],
): Promise<Map<number, ChannelDict>> {
  const rows = await db.stream.findMany({
    where: { realmId: realm.id, id: { in: streamIds } },
    select: STREAM_RECORD_SELECT,
    orderBy: { id: "asc" },
  });
  const dicts = await toChannelDicts(db, rows);
  return new Map(dicts.map((d) => [d.stream_id, d]));
}

type Viewer = Pick<UserProfile, "id" | "realmId" | "role">;

/** Whether the user may see that a channel exists and who is subscribed (Zulip's user_has_metadata_access; channel-access.ts). */
export function hasMetadataAccess(
  viewer: Pick<UserProfile, "role">,
  stream: AccessChannel,
  subscribed: boolean,
  groups: ReadonlySet<number>,
): boolean {
  return allows("CHANNEL_METADATA", accessFacts(viewer, stream, subscribed, groups));
}

/** Whether the user may access the channel's content (Zulip's user_has_content_access; channel-access.ts). */
export function hasContentAccessIn(
  viewer: Pick<UserProfile, "role">,
  stream: AccessChannel,
  subscribed: boolean,
  groups: ReadonlySet<number>,
): boolean {
  return allows("CHANNEL_CONTENT", accessFacts(viewer, stream, subscribed, groups));
}

/**
 * The organization's channels as one viewer sees them: the rows (archived ones only when asked),
 * whether the viewer is subscribed to each, and the viewer's groups for the access rules above;
 * two statements (a third for the default-channel rows, only when asked for).
 */
export async function channelsForViewer(
  db: Db,
  realm: Pick<Realm, "id">,
  viewer: Viewer,
  options: { includeArchived?: boolean; withDefaults?: boolean } = {},
) {
  const rows = (await db.stream.findMany({
    where: { realmId: realm.id, ...(options.includeArchived ? {} : { isArchived: false }) },
    select: {
      ...STREAM_RECORD_SELECT,
      ...(options.withDefaults ? { defaultStreams: { select: { id: true } } } : {}),
    },
    orderBy: { id: "asc" },
  })) as (StreamRecord & { defaultStreams?: { id: number }[] })[];
  const subscribed = new Set(
    (
      await db.subscription.findMany({
        where: {
          userProfileId: viewer.id,
          active: true,
          recipientId: { in: rows.map((r) => r.recipientId!) },
        },
        select: { recipientId: true },
      })
    ).map((s) => s.recipientId),
  );
  return {
    rows: rows.map((r) => ({ ...r, subscribed: subscribed.has(r.recipientId!) })),
    groups: await userGroupIds(db, viewer),
  };
}

/** register's `streams`: every channel the user may see, archived ones left out. */
export async function visibleChannels(
  ctx: { db: Db; realm: Pick<Realm, "id">; user: Viewer },
  options: { includeArchived?: boolean } = {},
): Promise<ChannelDict[]> {
  const { rows, groups } = await channelsForViewer(ctx.db, ctx.realm, ctx.user, options);
  return toChannelDicts(
    ctx.db,
    rows.filter((s) => hasMetadataAccess(ctx.user, s, s.subscribed, groups)),
  );
}

/** What deciding who may see a channel reads of it. */
export type AudienceChannel = Pick<StreamRecord, "id"> & AccessChannel;

/**
 * Who may see each channel and its subscribers besides its subscribers (user_has_metadata_access,
 * the CHANNEL_METADATA rule for each active user of the organization; the holders of the
 * channel's group settings read only where the rule can turn on them).
 */
export async function metadataAudience(
  tx: Db,
  realmId: number,
  streams: AudienceChannel[],
): Promise<Map<number, Set<number>>> {
  const users = await activeViewers(tx, realmId);
  const audience = new Map<number, Set<number>>();
  for (const stream of streams) {
    const allowed = await allowedUsers("CHANNEL_METADATA", users, stream, (groupIds) =>
      groupMembers(tx, realmId, groupIds),
    );
    audience.set(stream.id, new Set(allowed.map((u) => u.id)));
  }
  return audience;
}

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

export async function findChannel(
  db: Db,
  realmId: number,
  by: { id: number } | { name: string },
): Promise<ChannelRow | null> {
  // An id the column cannot hold names no channel (PostgreSQL would refuse the comparison).
  if ("id" in by ? !isStorableId(by.id) : !isStorableText(by.name)) return null;
  const match =
    "id" in by ? Prisma.sql`s.id = ${by.id}` : Prisma.sql`lower(s.name) = lower(${by.name})`;
  return (await findChannelsWhere(db, realmId, match))[0] ?? null;
}

/** The organization's channels with any of these ids, in one statement. */
export async function findChannelsById(
  db: Db,
  realmId: number,
  ids: number[],
): Promise<ChannelRow[]> {
  const wanted = [...new Set(ids.filter(isStorableId))];
  if (wanted.length === 0) return [];
  return findChannelsWhere(db, realmId, Prisma.sql`s.id = ANY(${wanted}::int[])`);
}

/** The organization's default channels that are not archived (new users are subscribed to them), in one statement. */
export function findDefaultChannels(db: Db, realmId: number): Promise<ChannelRow[]> {
  return findChannelsWhere(
    db,
    realmId,
    Prisma.sql`NOT s.is_archived AND s.id IN (SELECT stream_id FROM default_stream WHERE realm_id = ${realmId})`,
  );
}

/** The organization's channels with any of these names (case-insensitive), in one statement. */
export async function findChannelsByName(
  db: Db,
  realmId: number,
  names: string[],
): Promise<ChannelRow[]> {
  const wanted = [...new Set(names.filter(isStorableText).map((n) => n.toLowerCase()))];
  if (wanted.length === 0) return [];
  return findChannelsWhere(db, realmId, Prisma.sql`lower(s.name) = ANY(${wanted}::text[])`);
}

async function findChannelsWhere(
  db: Db,
  realmId: number,
  match: Prisma.Sql,
): Promise<ChannelRow[]> {
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

/** Whether the user may read the channel's messages (hasContentAccessIn, the user's groups cached). */
export async function hasContentAccess(
  db: Db,
  user: Pick<UserProfile, "id" | "realmId" | "role">,
  stream: ChannelRow,
): Promise<boolean> {
  return allowsReadingGroups(
    "CHANNEL_CONTENT",
    user,
    stream,
    stream.subscriberIds.includes(user.id),
    () => userGroupIds(db, user),
  );
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
  const error = () =>
    new JsonableError("id" in by ? "Invalid channel ID" : `Invalid channel name '${by.name}'`);
  const stream = await findChannel(db, user.realmId, by);
  if (!stream || (stream.isArchived && !options.allowArchived)) throw error();
  const subscribed = stream.subscriberIds.includes(user.id);
  const allowed = await allowsReadingGroups(
    options.requireContentAccess === false ? "CHANNEL_METADATA" : "CHANNEL_CONTENT",
    user,
    stream,
    subscribed,
    () => userGroupIds(db, user),
  );
  if (!allowed) throw error();
  return { ...stream, subscribed };
}
