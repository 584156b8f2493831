/** GET, POST and DELETE /users/me/subscriptions (zerver/views/streams.py). */
import type { ChannelCreation } from "../actions/channels/channels.ts";
import { doAddSubscriptions, doRemoveSubscriptions } from "../actions/channels/subscriptions.ts";
import { accessPrincipals } from "../actions/channels/subscription-messages.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { gatherSubscriptions, subscribedChannelIdsFor } from "../lib/channels/subscriptions.ts";
import {
  canAddSubscribers,
  canRemoveSubscribers,
  channelsByName,
} from "../lib/access/subscriptions.ts";
import { accessChannel } from "../lib/channels/channels.ts";
import { accessChannels } from "../lib/access/channels.ts";
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
  const subscribingOthers = principals.length > 0;
  const users = subscribingOthers ? await accessPrincipals(ctx, principals) : [ctx.user];
  const othersThanSelf = users.some((u) => u.id !== ctx.user.id);
  const requested = body.subscriptions.map((s) => ({ ...s, name: s.name.trim() }));
  const existing = await channelsByName(
    ctx.db,
    ctx.realm.id,
    requested.map((s) => s.name),
  );
  const { accessible: authorized, inaccessible: unauthorized } = await accessChannels(
    ctx.db,
    ctx.user,
    existing.values(),
  );
  if (unauthorized.length > 0 && body.authorization_errors_fatal !== false)
    throw new JsonableError(`Unable to access channel (${unauthorized[0]!.name}).`);
  if (othersThanSelf)
    for (const stream of authorized)
      if (!(await canAddSubscribers(ctx, stream)))
        throw new JsonableError("Insufficient permission");
  const toCreate: ChannelCreation[] = [];
  const seen = new Set<string>();
  for (const s of requested) {
    if (existing.has(s.name.toLowerCase()) || seen.has(s.name.toLowerCase())) continue;
    seen.add(s.name.toLowerCase());
    toCreate.push(channelCreation(s.name, s.description, body));
  }
  const { streams, result } = await doAddSubscriptions(ctx, {
    existing: authorized,
    create: toCreate,
    users,
    sendNewSubscriptionMessages: body.send_new_subscription_messages !== false,
    announce: body.announce ?? false,
  });
  const names = new Map(streams.map((s) => [s.id, s.name]));
  const byUser = (pairs: [number, number][]) => {
    const out: Record<string, string[]> = {};
    for (const [u, id] of pairs) (out[String(u)] ??= []).push(names.get(id)!);
    return out;
  };
  return {
    subscribed: byUser(result.subscribed),
    already_subscribed: byUser(result.alreadySubscribed),
    ...(body.authorization_errors_fatal === false
      ? { unauthorized: unauthorized.map((s) => s.name) }
      : {}),
  };
};

/** DELETE /users/me/subscriptions (remove_subscriptions_backend). */
export const unsubscribe: Handler<"unsubscribe"> = async ({ body }, ctx) => {
  const principals = (body.principals ?? []) as (number | string)[];
  const users = principals.length > 0 ? await accessPrincipals(ctx, principals) : [ctx.user];
  // Bots a user owns are theirs to unsubscribe (user_directly_controls_user).
  const others = users.some(
    (u) => u.id !== ctx.user.id && !(u.isBot && u.botOwnerId === ctx.user.id),
  );
  const names = body.subscriptions.map((n) => n.trim());
  const found = await channelsByName(ctx.db, ctx.realm.id, names);
  const missing = names.filter((n) => !found.has(n.toLowerCase()));
  if (missing.length > 0)
    throw new JsonableError(`Channel(s) (${missing.join(", ")}) do not exist`);
  const streams = [...found.values()];
  if (others)
    for (const stream of streams)
      if (!(await canRemoveSubscribers(ctx, stream)))
        throw new JsonableError("Insufficient permission");
  const { removed, notSubscribed } = await doRemoveSubscriptions(
    ctx,
    streams,
    users.map((u) => u.id),
  );
  const name = (id: number) => streams.find((s) => s.id === id)!.name;
  return {
    removed: removed.map(([, id]) => name(id)),
    not_removed: notSubscribed.map(([, id]) => name(id)),
  };
};

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
