/** POST /channels/create, GET /streams, GET /streams/{stream_id}, GET /get_stream_id, GET /streams/{stream_id}/members. */
import { announceNewChannels, createChannels, type ChannelCreation } from "../actions/channels.ts";
import { bulkAddSubscriptions } from "../actions/subscriptions.ts";
import { notificationBot } from "../actions/internal-send.ts";
import { sendNewSubscriptionMessages, subscriberUsers } from "../actions/subscription-messages.ts";
import { inTransaction } from "../actions/transaction.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { CHANNEL_GROUP_SETTINGS, type ChannelSettingName } from "../lib/group-settings.ts";
import { channelDicts, hasMetadataAccess, STREAM_RECORD_SELECT, toChannelDicts, type StreamRecord } from "../lib/channels.ts";
import { userGroupIds } from "../lib/permissions.ts";
import { accessChannel, findChannel } from "../lib/streams.ts";
import { isRealmAdmin } from "../lib/users.ts";
import type { GroupSettingValue } from "../lib/user-groups.ts";

/** The options of a channel to create, as POST /channels/create and POST /users/me/subscriptions name them. */
interface CreationOptions {
  invite_only?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  folder_id?: number | null;
  topics_policy?: ChannelCreation["topicsPolicy"];
  message_retention_days?: number | string;
}

/** A channel to create from a request's options (and every channel group setting it names). */
export function channelCreation(name: string, description: string | undefined, body: CreationOptions): ChannelCreation {
  const groupSettings: Partial<Record<ChannelSettingName, GroupSettingValue>> = {};
  for (const setting of Object.keys(CHANNEL_GROUP_SETTINGS) as ChannelSettingName[]) {
    const value = (body as Record<string, unknown>)[setting];
    if (value !== undefined) groupSettings[setting] = value as GroupSettingValue;
  }
  return {
    name,
    description,
    inviteOnly: body.invite_only,
    isWebPublic: body.is_web_public,
    historyPublicToSubscribers: body.history_public_to_subscribers,
    isDefaultStream: body.is_default_stream,
    folderId: body.folder_id,
    topicsPolicy: body.topics_policy,
    messageRetentionDays: body.message_retention_days,
    groupSettings,
  };
}

/** POST /channels/create (zerver/views/streams.py create_channel). */
export const createChannel: Handler<"create-channel"> = async ({ body }, ctx) => {
  const input = channelCreation(body.name, body.description, body);
  const subscribers = await subscriberUsers(ctx, body.subscribers);
  const bot = await notificationBot(ctx, ctx.realm);
  const stream = await inTransaction(ctx, ctx.realm.id, async (tx, events) => {
    const [stream] = await createChannels(tx, events, ctx, [input]);
    const result = await bulkAddSubscriptions(tx, events, ctx, [stream!], subscribers.map((u) => u.id));
    if (body.send_new_subscription_messages !== false) await sendNewSubscriptionMessages(tx, events, ctx, bot, subscribers, result, [stream!]);
    await announceNewChannels(tx, events, ctx, bot, [stream!], { announce: body.announce ?? false });
    return stream!;
  });
  return { id: stream.id };
};

/** GET /streams (do_get_streams). */
export const getStreams: Handler<"get-streams"> = async ({ query }, ctx) => {
  const { db, user, realm } = ctx;
  const includeAll = query.include_all === true || query.include_all_active === true;
  if (includeAll && !isRealmAdmin(user)) throw new JsonableError("User not authorized for this query");
  const rows = (await db.stream.findMany({
    where: { realmId: realm.id, ...(query.exclude_archived !== false ? { isArchived: false } : {}) },
    // The default-channel rows are a statement of their own: read only when asked for.
    select: { ...STREAM_RECORD_SELECT, ...(query.include_default === true ? { defaultStreams: { select: { id: true } } } : {}) },
  })) as (StreamRecord & { defaultStreams?: { id: number }[] })[];
  const subscribed = new Set(
    (await db.subscription.findMany({ where: { userProfileId: user.id, active: true, recipientId: { in: rows.map((r) => r.recipientId!) } }, select: { recipientId: true } })).map((s) => s.recipientId),
  );
  const ownerSubscribed =
    query.include_owner_subscribed && user.isBot && user.botOwnerId !== null
      ? new Set((await db.subscription.findMany({ where: { userProfileId: user.botOwnerId, active: true }, select: { recipientId: true } })).map((s) => s.recipientId))
      : new Set<number>();
  const groups = await userGroupIds(db, user);
  const guest = user.role === 600;
  const chosen = rows.filter((s) => {
    const isSub = subscribed.has(s.recipientId!);
    if (includeAll) return true;
    if (query.include_public !== false && !s.inviteOnly && !guest) return true;
    if (query.include_web_public === true && s.isWebPublic) return true;
    if (query.include_subscribed !== false && isSub) return true;
    if (query.include_default === true && s.defaultStreams!.length > 0) return true;
    if (ownerSubscribed.has(s.recipientId!) && hasMetadataAccess(user, s, isSub, groups)) return true;
    // Content access: subscribed, public for non-guests, web-public, or allowed to subscribe.
    if (query.include_can_access_content === true)
      return isSub || s.isWebPublic || (!guest && (!s.inviteOnly || groups.has(s.canAddSubscribersGroupId) || groups.has(s.canSubscribeGroupId)));
    return false;
  });
  const streams = await toChannelDicts(db, chosen);
  streams.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { streams };
};

/** A channel whose existence the caller may know (access_stream_by_id with require_content_access=False). */
async function accessChannelMetadata(ctx: Parameters<Handler<"get-stream-by-id">>[1], streamId: number) {
  const stream = await findChannel(ctx.db, ctx.realm.id, { id: streamId });
  if (!stream) throw new JsonableError("Invalid channel ID");
  const subscribed = stream.subscriberIds.includes(ctx.user.id);
  if (!hasMetadataAccess(ctx.user, stream, subscribed, await userGroupIds(ctx.db, ctx.user))) throw new JsonableError("Invalid channel ID");
  return stream;
}

/** GET /streams/{stream_id} (get_stream_backend). */
export const getStreamById: Handler<"get-stream-by-id"> = async ({ path }, ctx) => {
  const stream = await accessChannelMetadata(ctx, path.stream_id);
  return { stream: (await channelDicts(ctx.db, ctx.realm, [stream.id])).get(stream.id)! };
};

/** GET /get_stream_id (json_get_stream_id: access_stream_by_name). */
export const getStreamId: Handler<"get-stream-id"> = async ({ query }, ctx) => {
  const stream = await accessChannel(ctx.db, ctx.user, { name: query.stream }, { allowArchived: true });
  return { stream_id: stream.id };
};

/** GET /streams/{stream_id}/members (get_subscribers_backend). */
export const getSubscribers: Handler<"get-subscribers"> = async ({ path }, ctx) => {
  const stream = await accessChannelMetadata(ctx, path.stream_id);
  return { subscribers: [...stream.subscriberIds].sort((a, b) => a - b) };
};
