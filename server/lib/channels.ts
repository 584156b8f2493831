/**
 * Channels in API form (zerver/lib/streams.py stream_to_dict, the `Channel` schema) and which
 * channels a user may see, read and subscribe to. A list of channels costs two statements: the rows,
 * then every group-setting value at once.
 */
import { Prisma, type Db, type Realm, type UserProfile } from "../db.ts";
import type { Schemas } from "./schemas.ts";
import { unixSeconds } from "./time.ts";
import { CHANNEL_GROUP_SETTINGS } from "./group-settings.ts";
import { groupSettingValuesAndNames } from "./user-groups.ts";
import { groupMembers, userGroupIds } from "./permissions.ts";
import { isGuest, isRealmAdmin, Role } from "./users.ts";

export type ChannelDict = Schemas["Channel"];

/** Stream.SYSTEM_GROUPS_ENUM_MAP: the legacy stream_post_policy of a channel whose can_send_message_group is a system group. */
const STREAM_POST_POLICY_EVERYONE = 1;
const STREAM_POST_POLICY: Record<string, number> = { "role:administrators": 2, "role:fullmembers": 3, "role:moderators": 4 };

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
  const { values, systemNames } = await groupSettingValuesAndNames(db, streams.flatMap((s) => settings.map((setting) => s[setting.field as keyof StreamRecord] as number)));
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
      stream_post_policy: STREAM_POST_POLICY[systemNames.get(s.canSendMessageGroupId) ?? ""] ?? STREAM_POST_POLICY_EVERYONE,
      is_announcement_only: systemNames.get(s.canSendMessageGroupId) === "role:administrators",
    };
    for (const setting of settings) dict[setting.name] = values.get(s[setting.field as keyof StreamRecord] as number);
    return dict as ChannelDict;
  });
}

/** Channels of the organization by id, in API form, in id order. */
export async function channelDicts(db: Db, realm: Pick<Realm, "id">, streamIds: number[]): Promise<Map<number, ChannelDict>> {
  const rows = await db.stream.findMany({ where: { realmId: realm.id, id: { in: streamIds } }, select: STREAM_RECORD_SELECT, orderBy: { id: "asc" } });
  const dicts = await toChannelDicts(db, rows);
  return new Map(dicts.map((d) => [d.stream_id, d]));
}

type Viewer = Pick<UserProfile, "id" | "realmId" | "role">;

/**
 * Whether the user may see that a channel exists and who is subscribed (Zulip's
 * user_has_metadata_access): public channels for non-guests, web-public ones for everyone, and
 * otherwise a subscription, administrators, or the channel's administrators and subscribers-managers.
 */
export function hasMetadataAccess(viewer: Viewer, stream: Pick<StreamRecord, "inviteOnly" | "isWebPublic" | "canAdministerChannelGroupId" | "canAddSubscribersGroupId" | "canSubscribeGroupId">, subscribed: boolean, groups: ReadonlySet<number>): boolean {
  if (stream.isWebPublic || subscribed) return true;
  if (isGuest(viewer)) return false;
  if (!stream.inviteOnly || isRealmAdmin(viewer)) return true;
  return groups.has(stream.canAdministerChannelGroupId) || groups.has(stream.canAddSubscribersGroupId) || groups.has(stream.canSubscribeGroupId);
}

/**
 * Whether the user may read the channel's messages (user_has_content_access): a web-public
 * channel, a subscription, a public channel for a non-guest, or for a private one the right to
 * subscribe others or themselves (settings guests never hold).
 */
export function hasContentAccessIn(viewer: Viewer, stream: Pick<StreamRecord, "inviteOnly" | "isWebPublic" | "canAddSubscribersGroupId" | "canSubscribeGroupId">, subscribed: boolean, groups: ReadonlySet<number>): boolean {
  if (stream.isWebPublic || subscribed) return true;
  if (isGuest(viewer)) return false;
  return !stream.inviteOnly || groups.has(stream.canAddSubscribersGroupId) || groups.has(stream.canSubscribeGroupId);
}

/**
 * The organization's channels as one viewer sees them: the rows (archived ones only when asked),
 * whether the viewer is subscribed to each, and the viewer's groups for the access rules above;
 * two statements (a third for the default-channel rows, only when asked for).
 */
export async function channelsForViewer(db: Db, realm: Pick<Realm, "id">, viewer: Viewer, options: { includeArchived?: boolean; withDefaults?: boolean } = {}) {
  const rows = (await db.stream.findMany({
    where: { realmId: realm.id, ...(options.includeArchived ? {} : { isArchived: false }) },
    select: { ...STREAM_RECORD_SELECT, ...(options.withDefaults ? { defaultStreams: { select: { id: true } } } : {}) },
    orderBy: { id: "asc" },
  })) as (StreamRecord & { defaultStreams?: { id: number }[] })[];
  const subscribed = new Set(
    (await db.subscription.findMany({ where: { userProfileId: viewer.id, active: true, recipientId: { in: rows.map((r) => r.recipientId!) } }, select: { recipientId: true } })).map(
      (s) => s.recipientId,
    ),
  );
  return { rows: rows.map((r) => ({ ...r, subscribed: subscribed.has(r.recipientId!) })), groups: await userGroupIds(db, viewer) };
}

/** register's `streams`: every channel the user may see, archived ones left out. */
export async function visibleChannels(ctx: { db: Db; realm: Pick<Realm, "id">; user: Viewer }): Promise<ChannelDict[]> {
  const { rows, groups } = await channelsForViewer(ctx.db, ctx.realm, ctx.user);
  return toChannelDicts(ctx.db, rows.filter((s) => hasMetadataAccess(ctx.user, s, s.subscribed, groups)));
}

/** What deciding who may see a channel reads of it. */
export type AudienceChannel = Pick<StreamRecord, "id" | "inviteOnly" | "isWebPublic" | "canAdministerChannelGroupId" | "canAddSubscribersGroupId" | "canSubscribeGroupId">;

/**
 * Who may see each channel and its subscribers besides its subscribers (user_has_metadata_access):
 * non-guests for a public channel, everyone for a web-public one, and for a private one the
 * administrators and the holders of its administer, add-subscribers and subscribe settings.
 */
export async function metadataAudience(tx: Db, realmId: number, streams: AudienceChannel[]): Promise<Map<number, Set<number>>> {
  const users = await tx.userProfile.findMany({ where: { realmId, isActive: true }, select: { id: true, role: true } });
  const audience = new Map<number, Set<number>>();
  for (const stream of streams) {
    if (stream.isWebPublic) audience.set(stream.id, new Set(users.map((u) => u.id)));
    else if (!stream.inviteOnly) audience.set(stream.id, new Set(users.filter((u) => u.role !== Role.GUEST).map((u) => u.id)));
    else {
      const holders = await groupMembers(tx, realmId, [stream.canAdministerChannelGroupId, stream.canAddSubscribersGroupId, stream.canSubscribeGroupId]);
      // None of the three settings may be role:everyone, so guests never hold them.
      audience.set(stream.id, new Set(users.filter((u) => u.role <= Role.ADMINISTRATOR || (holders.has(u.id) && u.role !== Role.GUEST)).map((u) => u.id)));
    }
  }
  return audience;
}
