/** GET, POST, PATCH and DELETE /users/me/subscriptions (zerver/views/streams.py). */
import {
  doAddSubscriptions,
  doRemoveSubscriptions,
  doUpdateSubscriptions,
  type SubscribedChannel,
  type SubscriptionResult,
} from "../actions/channels/subscriptions.ts";
import { accessPrincipals } from "../actions/channels/subscription-messages.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { gatherSubscriptions, subscribedChannelIdsFor } from "../lib/channels/subscriptions.ts";
import {
  channelsToUnsubscribe,
  checkSubscriptionAdds,
} from "../lib/channels/subscription-requests.ts";
import { accessChannel } from "../lib/channels/channels.ts";
import { requireMemberOrAdmin } from "../lib/users/users.ts";
import { accessUserForRead } from "../lib/access/users.ts";
import { channelCreation } from "../http/channel-creation.ts";

/** GET /users/me/subscriptions (list_subscriptions_backend). */
export const getSubscriptions: Handler<"get-subscriptions"> = async ({ query }, ctx) => {
  const { subscriptions } = await gatherSubscriptions(ctx, query.include_subscribers ?? false);
  return { subscriptions: subscriptions as never };
};

/** POST /users/me/subscriptions (add_subscriptions_backend). */
export const subscribe: Handler<"subscribe"> = async ({ body }, ctx) => {
  requireMemberOrAdmin(ctx.user);
  const principals = (body.principals ?? []) as (number | string)[];
  const users = principals.length > 0 ? await accessPrincipals(ctx, principals) : [ctx.user];
  const fatal = body.authorization_errors_fatal !== false;
  const adds = await checkSubscriptionAdds(ctx, users, body.subscriptions, fatal);
  const { streams, result } = await doAddSubscriptions(ctx, {
    existing: adds.authorized,
    create: adds.missing.map((s) => channelCreation(s.name, s.description, body)),
    users,
    sendNewSubscriptionMessages: body.send_new_subscription_messages !== false,
    announce: body.announce ?? false,
    colors: adds.colors,
  });
  return {
    ...subscribedAnswer(streams, result),
    ...(fatal ? {} : { unauthorized: adds.unauthorized.map((s) => s.name) }),
  };
};

/** DELETE /users/me/subscriptions (remove_subscriptions_backend). */
export const unsubscribe: Handler<"unsubscribe"> = async ({ body }, ctx) => {
  const principals = (body.principals ?? []) as (number | string)[];
  const users = principals.length > 0 ? await accessPrincipals(ctx, principals) : [ctx.user];
  const streams = await channelsToUnsubscribe(ctx, ctx.db, users, body.subscriptions);
  const outcome = await doRemoveSubscriptions(
    ctx,
    streams,
    users.map((u) => u.id),
  );
  return removedAnswer(streams, outcome);
};

/**
 * PATCH /users/me/subscriptions (update_subscriptions_backend): the caller subscribes to `add`
 * (creating the channels that do not exist, with the defaults of POST /users/me/subscriptions) and
 * unsubscribes from `delete`, in one transaction; the answer has both views' fields. Guests cannot
 * use it, even only to unsubscribe, since Zulip runs the subscribe view first.
 */
export const updateSubscriptions: Handler<"update-subscriptions"> = async ({ body }, ctx) => {
  const add = body?.add ?? [];
  const remove = body?.delete ?? [];
  if (add.length === 0 && remove.length === 0)
    throw new JsonableError('Nothing to do. Specify at least one of "add" or "delete".');
  requireMemberOrAdmin(ctx.user);
  const adds = await checkSubscriptionAdds(ctx, [ctx.user], add, true);
  const { added, removed, removedFrom } = await doUpdateSubscriptions(
    ctx,
    {
      existing: adds.authorized,
      create: adds.missing.map((s) => channelCreation(s.name, s.description, {})),
      users: [ctx.user],
      sendNewSubscriptionMessages: true,
      announce: false,
      colors: adds.colors,
    },
    remove,
  );
  return {
    ...subscribedAnswer(added.streams, added.result),
    ...removedAnswer(removedFrom, removed),
  };
};

/** add_subscriptions_backend's answer: channel names by subscriber id. */
function subscribedAnswer(streams: SubscribedChannel[], result: SubscriptionResult) {
  const names = new Map(streams.map((s) => [s.id, s.name]));
  const byUser = (pairs: [number, number][]) => {
    const out: Record<string, string[]> = {};
    for (const [u, id] of pairs) (out[String(u)] ??= []).push(names.get(id)!);
    return out;
  };
  return {
    subscribed: byUser(result.subscribed),
    already_subscribed: byUser(result.alreadySubscribed),
  };
}

/** remove_subscriptions_backend's answer: channel names, one per (user, channel) pair. */
function removedAnswer(
  streams: SubscribedChannel[],
  outcome: { removed: [number, number][]; notSubscribed: [number, number][] },
) {
  const name = (id: number) => streams.find((s) => s.id === id)!.name;
  return {
    removed: outcome.removed.map(([, id]) => name(id)),
    not_removed: outcome.notSubscribed.map(([, id]) => name(id)),
  };
}

/**
 * GET /users/{user_id}/subscriptions/{stream_id} (get_subscription_backend): the user first,
 * then the channel, which the caller needs only to see (administrators see every one).
 */
export const getSubscriptionStatus: Handler<"get-subscription-status"> = async ({ path }, ctx) => {
  // Bots too since feature level 458 (before, "No such user").
  const target = await accessUserForRead(ctx.db, ctx.user, ctx.realm, path.user_id, {
    allowBots: true,
  });
  const stream = await accessChannel(
    ctx.db,
    ctx.user,
    { id: path.stream_id },
    { requireContentAccess: false },
  );
  return { is_subscribed: stream.subscriberIds.includes(target.id) };
};

/**
 * GET /users/{user_id}/channels (get_user_channels, feature level 440; bots too since 458): the
 * user's channels whose subscribers the caller may see.
 */
export const getUserChannels: Handler<"get-user-channels"> = async ({ path }, ctx) => {
  const target = await accessUserForRead(ctx.db, ctx.user, ctx.realm, path.user_id, {
    allowBots: true,
  });
  return { subscribed_channel_ids: await subscribedChannelIdsFor(ctx.db, ctx.user, target.id) };
};
