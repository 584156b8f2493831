/** POST /channels/create, GET /streams, GET /streams/{stream_id}, GET /get_stream_id, GET /streams/{stream_id}/members. */
import { channelCreation } from "../http/channel-creation.ts";
import { doAddSubscriptions } from "../actions/channels/subscriptions.ts";
import { accessPrincipals } from "../actions/channels/subscription-messages.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import {
  channelDicts,
  channelsForViewer,
  hasContentAccessIn,
  hasMetadataAccess,
  toChannelDicts,
} from "../lib/channels/channels.ts";
import { accessChannel } from "../lib/channels/channels.ts";
import { channelEmailAddress } from "../lib/channels/channel-email.ts";
import { canInChannel } from "../lib/groups/permissions.ts";
import { accessBotById } from "../lib/users/bots.ts";
import { subscribedRecipientIds } from "../lib/channels/subscriptions.ts";
import { isRealmAdmin } from "../lib/users/users.ts";
import { accessFacts, allows } from "../lib/access/channels.ts";

/** POST /channels/create (zerver/views/streams.py create_channel). */
export const createChannel: Handler<"create-channel"> = async ({ body }, ctx) => {
  const input = channelCreation(body.name, body.description, body);
  const subscribers = await accessPrincipals(ctx, body.subscribers);
  const { created } = await doAddSubscriptions(ctx, {
    existing: [],
    create: [input],
    users: subscribers,
    sendNewSubscriptionMessages: body.send_new_subscription_messages !== false,
    announce: body.announce ?? false,
  });
  const stream = created[0]!;
  return { id: stream.id };
};

/** GET /streams (do_get_streams). */
export const getStreams: Handler<"get-streams"> = async ({ query }, ctx) => {
  const { db, user, realm } = ctx;
  const includeAll = query.include_all === true || query.include_all_active === true;
  if (includeAll && !isRealmAdmin(user))
    throw new JsonableError("User not authorized for this query");
  const { rows, groups } = await channelsForViewer(db, realm, user, {
    includeArchived: query.exclude_archived === false,
    withDefaults: query.include_default === true,
  });
  const ownerSubscribed =
    query.include_owner_subscribed && user.isBot && user.botOwnerId !== null
      ? await subscribedRecipientIds(db, user.botOwnerId)
      : new Set<number>();
  const chosen = rows.filter(
    (s) =>
      includeAll ||
      (query.include_public !== false &&
        allows("CHANNEL_PUBLIC", accessFacts(user, s, s.subscribed, groups))) ||
      (query.include_web_public === true && s.isWebPublic) ||
      (query.include_subscribed !== false && s.subscribed) ||
      (query.include_default === true && s.defaultStreams!.length > 0) ||
      (ownerSubscribed.has(s.recipientId!) && hasMetadataAccess(user, s, s.subscribed, groups)) ||
      (query.include_can_access_content === true &&
        hasContentAccessIn(user, s, s.subscribed, groups)),
  );
  const streams = await toChannelDicts(db, chosen);
  streams.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { streams };
};

/** A channel whose existence the caller may know (access_stream_by_id with require_content_access=False). */
const accessChannelMetadata = (ctx: Parameters<Handler<"get-stream-by-id">>[1], streamId: number) =>
  accessChannel(
    ctx.db,
    ctx.user,
    { id: streamId },
    { allowArchived: true, requireContentAccess: false },
  );

/** GET /streams/{stream_id} (get_stream_backend). */
export const getStreamById: Handler<"get-stream-by-id"> = async ({ path }, ctx) => {
  const stream = await accessChannelMetadata(ctx, path.stream_id);
  return { stream: (await channelDicts(ctx.db, ctx.realm, [stream.id])).get(stream.id)! };
};

/** GET /get_stream_id (json_get_stream_id: access_stream_by_name). */
export const getStreamId: Handler<"get-stream-id"> = async ({ query }, ctx) => {
  const stream = await accessChannel(
    ctx.db,
    ctx.user,
    { name: query.stream },
    { allowArchived: true },
  );
  return { stream_id: stream.id };
};

/** GET /streams/{stream_id}/members (get_subscribers_backend). */
export const getSubscribers: Handler<"get-subscribers"> = async ({ path }, ctx) => {
  const stream = await accessChannelMetadata(ctx, path.stream_id);
  return { subscribers: [...stream.subscriberIds].sort((a, b) => a - b) };
};

/**
 * GET /streams/{stream_id}/email_address (get_stream_email_address): a channel the caller may read
 * and post in (feature level 448); `sender_id` the caller or a bot they administer. One token per
 * channel here, so the sender does not change the address.
 */
export const getStreamEmailAddress: Handler<"get-stream-email-address"> = async (
  { path, query },
  ctx,
) => {
  const stream = await accessChannel(ctx.db, ctx.user, { id: path.stream_id });
  if (!(await canInChannel(ctx.db, ctx.user, stream, "can_send_message_group")))
    throw new JsonableError("You do not have permission to post in this channel.");
  if (query.sender_id !== undefined && query.sender_id !== ctx.user.id)
    await accessBotById(ctx.db, ctx.user, query.sender_id);
  return { email: await channelEmailAddress(ctx.db, ctx.config.emailGatewayPattern, stream) };
};
