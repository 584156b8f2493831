/**
 * Subscribing and unsubscribing users (zerver/actions/streams.py bulk_add_subscriptions,
 * bulk_remove_subscriptions): set-based, a fixed number of statements for any number of users and
 * channels, with Zulip's events.
 */
import type { Stream, Tx } from "../../db/index.ts";
import type { UnitOfWork } from "../../events/index.ts";
import type { RequestContext } from "../../context.ts";
import { metadataAudience, type AudienceChannel } from "../../lib/channels/channels.ts";
import {
  channelPartOf,
  personalSettingsOf,
  subscriptionDicts,
} from "../../lib/channels/subscriptions.ts";
import { doAnnounceNewChannels, doCreateChannels, type ChannelCreation } from "./channels.ts";
import { notificationBot } from "../messages/internal-send.ts";
import {
  doSendNewSubscriptionMessages,
  type Principal,
  type SubscriptionResult,
} from "./subscription-messages.ts";
import { inTransaction } from "../transaction.ts";
import { watchUserAccess } from "../users/user-access.ts";
import { channelsToUnsubscribe } from "../../lib/channels/subscription-requests.ts";

/** Zulip's palette for new subscriptions (a few of its STREAM_ASSIGNMENT_COLORS). */
const COLORS = [
  "#76ce90",
  "#fae589",
  "#a6c7e5",
  "#e79ab5",
  "#bfd56f",
  "#f4ae55",
  "#b0a5fd",
  "#addfe5",
  "#f5ce6e",
  "#c2726a",
];

export type { SubscriptionResult } from "./subscription-messages.ts";

/** What the events need of a channel. */
export type SubscribedChannel = AudienceChannel & { name: string; recipientId: number | null };

type Actor = Pick<RequestContext, "realm"> & { user: RequestContext["user"] | null };

/** Active subscribers of the channels, by channel id, in one statement. */
async function subscribersOf(tx: Tx, streams: SubscribedChannel[]) {
  const rows = await tx.$queryRaw<{ stream_id: number; user_ids: number[] }[]>`
    SELECT s.id AS stream_id, ARRAY(SELECT sub.user_profile_id FROM subscription sub
      WHERE sub.recipient_id = s.recipient_id AND sub.active AND sub.is_user_active ORDER BY sub.user_profile_id) AS user_ids
    FROM stream s WHERE s.id = ANY(${streams.map((s) => s.id)}::int[])`;
  return new Map(rows.map((r) => [Number(r.stream_id), r.user_ids.map(Number)]));
}

async function updateSubscriberCounts(tx: Tx, streamIds: number[]) {
  await tx.$executeRaw`
    UPDATE stream s SET subscriber_count = (SELECT count(*) FROM subscription sub WHERE sub.recipient_id = s.recipient_id AND sub.active AND sub.is_user_active)
    WHERE s.id = ANY(${streamIds}::int[])`;
}

/**
 * New subscription rows and reactivated ones (their settings kept), in one statement for any
 * number of users and channels; RETURNING names exactly the subscriptions it added.
 */
type Channel = { id: number; recipientId: number | null };
const pairsOf = <S extends Channel>(streams: S[], users: number[]) =>
  streams.flatMap((s) => users.map((u) => [u, s] as const));

/** The colour asked for in the request (bulk_add_subscriptions's color_map), else one of the palette. */
const colorOf = (u: number, s: Channel & { name?: string }, asked?: ReadonlyMap<string, string>) =>
  (s.name !== undefined ? asked?.get(s.name.toLowerCase()) : undefined) ??
  COLORS[(u + s.id) % COLORS.length]!;

async function insertSubscriptions(
  tx: Tx,
  realmId: number,
  pairs: (readonly [number, Channel & { name?: string }])[],
  colors?: ReadonlyMap<string, string>,
) {
  // A reactivated subscription keeps its colour; only new rows take the one asked for.
  return tx.$queryRaw<{ user_profile_id: number; recipient_id: number }[]>`
    INSERT INTO subscription (realm_id, user_profile_id, recipient_id, color, active, is_user_active)
    SELECT ${realmId}, p.user_id, p.recipient_id, p.color, true, u.is_active
    FROM unnest(${pairs.map(([u]) => u)}::int[], ${pairs.map(([, s]) => s.recipientId)}::int[], ${pairs.map(([u, s]) => colorOf(u, s, colors))}::text[])
      AS p(user_id, recipient_id, color)
    JOIN user_profile u ON u.id = p.user_id
    ON CONFLICT (user_profile_id, recipient_id) DO UPDATE SET active = true WHERE subscription.active = false
    RETURNING user_profile_id, recipient_id`;
}

/** Subscribes users without events (organization setup and tests): bulkAddSubscriptions's rows and count. */
export async function doSubscribe(
  tx: Tx,
  realmId: number,
  stream: { id: number; recipientId: number | null },
  userIds: number[],
): Promise<number> {
  const added = await insertSubscriptions(tx, realmId, pairsOf([stream], [...new Set(userIds)]));
  await updateSubscriberCounts(tx, [stream.id]);
  return added.length;
}

/**
 * Subscribes the users to the channels in the caller's transaction (inactive rows come back to
 * life with their settings) and adds Zulip's events: `subscription` add with the new subscriptions
 * to each new subscriber, `peer_add` to the others who may see the subscribers, and `stream` create
 * to new subscribers who could not see the channel before. Uses `tx` only.
 */
export async function bulkAddSubscriptions(
  { tx, events }: UnitOfWork,
  ctx: Actor,
  streams: SubscribedChannel[],
  userIds: number[],
  colors?: ReadonlyMap<string, string>,
): Promise<SubscriptionResult> {
  const result: SubscriptionResult = { subscribed: [], alreadySubscribed: [] };
  const users = [...new Set(userIds)];
  if (streams.length === 0 || users.length === 0) return result;
  const realmId = ctx.realm.id;
  const pairs = pairsOf(streams, users);
  const audience = await metadataAudience(tx, realmId, streams);
  const access = await watchUserAccess({ tx, events }, ctx.realm, users, recipientsOf(streams));
  const added = await insertSubscriptions(tx, realmId, pairs, colors);
  const addedSet = new Set(added.map((r) => `${r.user_profile_id}:${r.recipient_id}`));
  for (const [u, s] of pairs)
    (addedSet.has(`${u}:${s.recipientId}`) ? result.subscribed : result.alreadySubscribed).push([
      u,
      s.id,
    ]);
  if (result.subscribed.length === 0) return result;

  const changed = streams.filter((s) => result.subscribed.some(([, id]) => id === s.id));
  await updateSubscriberCounts(
    tx,
    changed.map((s) => s.id),
  );
  const subscribers = await subscribersOf(tx, changed);
  // Restricted guests learn of the users they now share a channel with, before the subscription
  // events name them (send_user_creation_events_on_adding_subscriptions comes first in Zulip).
  await access({ tx, events });
  const newByUser = new Map<number, number[]>();
  for (const [u, id] of result.subscribed) newByUser.set(u, [...(newByUser.get(u) ?? []), id]);
  const dicts = await subscriptionDicts(
    tx,
    ctx.realm,
    [...newByUser.keys()],
    changed.map((s) => s.id),
    { includeSubscribers: true },
  );
  // Users whose new subscriptions read alike (the same channels, unseen before by the same ones,
  // with the same settings of their own; the rest is the channels') get their events together:
  // 10,000 people joining a channel are a few events naming them, not 10,000 events each with
  // the 10,000 subscribers (a log write beyond PostgreSQL's 256 MB jsonb limit).
  const alike = new Map<string, { userIds: number[]; streamIds: number[]; unseen: number[] }>();
  for (const [userId, streamIds] of newByUser) {
    // Those who could not see a channel learn that it exists first (private channels, guests).
    const unseen = streamIds.filter((id) => !audience.get(id)!.has(userId));
    const key = JSON.stringify([
      streamIds,
      unseen,
      streamIds.map((id) => personalSettingsOf(dicts.get(`${userId}:${id}`)!)),
    ]);
    const group = alike.get(key);
    if (group) group.userIds.push(userId);
    else alike.set(key, { userIds: [userId], streamIds, unseen });
  }
  for (const { userIds: group, streamIds, unseen } of alike.values()) {
    const first = group[0]!;
    if (unseen.length > 0)
      events.add(
        {
          type: "stream",
          op: "create",
          streams: unseen.map((id) => channelPartOf(dicts.get(`${first}:${id}`)!)),
        },
        group,
      );
    events.add(
      {
        type: "subscription",
        op: "add",
        subscriptions: streamIds.map((id) => dicts.get(`${first}:${id}`)!),
      },
      group,
    );
  }
  for (const stream of changed) {
    const newIds = result.subscribed.filter(([, id]) => id === stream.id).map(([u]) => u);
    const peers = new Set([...audience.get(stream.id)!, ...subscribers.get(stream.id)!]);
    for (const u of newIds) peers.delete(u);
    if (peers.size > 0)
      events.add(
        { type: "subscription", op: "peer_add", stream_ids: [stream.id], user_ids: newIds },
        peers,
      );
  }
  return result;
}

/**
 * A user's deactivation or reactivation, for their subscriptions (change_user_is_active,
 * send_peer_remove_events / send_peer_add_events): the rows stay, `is_user_active` follows the
 * users, the channels' subscriber counts are recomputed, and those who may see each channel's
 * subscribers get `peer_remove` (or `peer_add`) with the users it lost (or regained). Archived
 * channels count only on deactivation, as in Zulip. Uses `tx` only; the users' own row is
 * already updated.
 */
export async function setSubscriptionsUserActive(
  { tx, events }: UnitOfWork,
  realmId: number,
  userIds: number[],
  active: boolean,
) {
  const rows = await tx.$queryRaw<{ user_profile_id: number; stream_id: number }[]>`
    WITH upd AS (UPDATE subscription SET is_user_active = ${active} WHERE user_profile_id = ANY(${userIds}::int[])
                 RETURNING user_profile_id, recipient_id, active)
    SELECT upd.user_profile_id, s.id AS stream_id FROM upd JOIN stream s ON s.recipient_id = upd.recipient_id
    WHERE upd.active AND (${!active} OR NOT s.is_archived)`;
  if (rows.length === 0) return;
  const streamIds = [...new Set(rows.map((r) => r.stream_id))];
  await updateSubscriberCounts(tx, streamIds);
  const streams = await tx.stream.findMany({
    where: { id: { in: streamIds } },
    select: {
      id: true,
      name: true,
      recipientId: true,
      inviteOnly: true,
      isWebPublic: true,
      historyPublicToSubscribers: true,
      isArchived: true,
      canAdministerChannelGroupId: true,
      canAddSubscribersGroupId: true,
      canSubscribeGroupId: true,
    },
    orderBy: { id: "asc" },
  });
  const audience = await metadataAudience(tx, realmId, streams);
  const subscribers = await subscribersOf(tx, streams);
  for (const stream of streams) {
    const changed = rows.filter((r) => r.stream_id === stream.id).map((r) => r.user_profile_id);
    const peers = new Set([...audience.get(stream.id)!, ...subscribers.get(stream.id)!]);
    for (const u of changed) peers.delete(u);
    if (peers.size > 0)
      events.add(
        {
          type: "subscription",
          op: active ? "peer_add" : "peer_remove",
          stream_ids: [stream.id],
          user_ids: changed.sort((a, b) => a - b),
        },
        peers,
      );
  }
}

/**
 * Unsubscribes the users from the channels (rows kept, inactive, so settings survive a
 * resubscription) with `subscription` remove to each, `peer_remove` to the others who may see the
 * subscribers, and `stream` delete to users who can no longer see a private channel. Uses `tx` only.
 */
export async function bulkRemoveSubscriptions(
  { tx, events }: UnitOfWork,
  ctx: Actor,
  streams: SubscribedChannel[],
  userIds: number[],
) {
  const removed: [number, number][] = [];
  const notSubscribed: [number, number][] = [];
  const users = [...new Set(userIds)];
  if (streams.length === 0 || users.length === 0) return { removed, notSubscribed };
  const access = await watchUserAccess({ tx, events }, ctx.realm, users, recipientsOf(streams));
  const rows = await tx.$queryRaw<{ user_profile_id: number; recipient_id: number }[]>`
    UPDATE subscription SET active = false
    WHERE user_profile_id = ANY(${users}::int[]) AND recipient_id = ANY(${streams.map((s) => s.recipientId)}::int[]) AND active
    RETURNING user_profile_id, recipient_id`;
  const done = new Set(rows.map((r) => `${r.user_profile_id}:${r.recipient_id}`));
  for (const s of streams)
    for (const u of users)
      (done.has(`${u}:${s.recipientId}`) ? removed : notSubscribed).push([u, s.id]);
  if (removed.length === 0) return { removed, notSubscribed };

  const changed = streams.filter((s) => removed.some(([, id]) => id === s.id));
  await updateSubscriberCounts(
    tx,
    changed.map((s) => s.id),
  );
  const audience = await metadataAudience(tx, ctx.realm.id, changed);
  const subscribers = await subscribersOf(tx, changed);
  const byUser = new Map<number, SubscribedChannel[]>();
  for (const [u, id] of removed)
    byUser.set(u, [...(byUser.get(u) ?? []), changed.find((s) => s.id === id)!]);
  for (const [userId, lost] of byUser) {
    events.add(
      {
        type: "subscription",
        op: "remove",
        subscriptions: lost.map((s) => ({ stream_id: s.id, name: s.name })),
      },
      [userId],
    );
    const hidden = lost.filter((s) => !audience.get(s.id)!.has(userId));
    if (hidden.length > 0)
      events.add(
        {
          type: "stream",
          op: "delete",
          streams: hidden.map((s) => ({ stream_id: s.id, name: s.name })),
          stream_ids: hidden.map((s) => s.id),
        },
        [userId],
      );
  }
  for (const stream of changed) {
    const goneIds = removed.filter(([, id]) => id === stream.id).map(([u]) => u);
    const peers = new Set([...audience.get(stream.id)!, ...subscribers.get(stream.id)!]);
    for (const u of goneIds) peers.delete(u);
    if (peers.size > 0)
      events.add(
        { type: "subscription", op: "peer_remove", stream_ids: [stream.id], user_ids: goneIds },
        peers,
      );
  }
  // Restricted guests see the users they no longer share anything with leave, and the reverse.
  await access({ tx, events });
  return { removed, notSubscribed };
}

const recipientsOf = (streams: SubscribedChannel[]) =>
  streams.flatMap((s) => (s.recipientId === null ? [] : [s.recipientId]));

/** What a subscribe request adds once its checks passed (SubscriptionAdds, with the channels to create made ChannelCreation). */
export interface AddSubscriptionsInput {
  existing: SubscribedChannel[];
  create: ChannelCreation[];
  users: Principal[];
  sendNewSubscriptionMessages: boolean;
  announce: boolean;
  /** The colour asked for each channel, by lower-case name. */
  colors?: ReadonlyMap<string, string>;
}

/**
 * Creates the channels to create, subscribes the users to them and to the existing ones, and sends
 * Notification Bot's messages about it (send_messages_for_new_subscribers), in the caller's
 * transaction.
 */
async function addSubscriptions(
  { tx, events }: UnitOfWork,
  ctx: RequestContext,
  bot: Awaited<ReturnType<typeof notificationBot>>,
  input: AddSubscriptionsInput,
) {
  const created = await doCreateChannels({ tx, events }, ctx, input.create);
  const streams: SubscribedChannel[] = [...input.existing, ...created];
  const result = await bulkAddSubscriptions(
    { tx, events },
    ctx,
    streams,
    input.users.map((u) => u.id),
    input.colors,
  );
  if (input.sendNewSubscriptionMessages)
    await doSendNewSubscriptionMessages(
      { tx, events },
      ctx,
      bot,
      input.users,
      result,
      created,
      streams,
    );
  await doAnnounceNewChannels({ tx, events }, ctx, bot, created, { announce: input.announce });
  return { streams, created, result };
}

/**
 * POST /users/me/subscriptions and POST /channels/create, once their checks passed:
 * addSubscriptions in a transaction of its own.
 */
export async function doAddSubscriptions(
  ctx: RequestContext,
  input: AddSubscriptionsInput,
): Promise<{ streams: SubscribedChannel[]; created: Stream[]; result: SubscriptionResult }> {
  const bot = await notificationBot(ctx, ctx.realm);
  return inTransaction(ctx, ctx.realm.id, (uow) => addSubscriptions(uow, ctx, bot, input));
}

/** DELETE /users/me/subscriptions, once its checks passed: bulkRemoveSubscriptions in a transaction of its own. */
export function doRemoveSubscriptions(
  ctx: RequestContext,
  streams: SubscribedChannel[],
  userIds: number[],
) {
  return inTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    bulkRemoveSubscriptions({ tx, events }, ctx, streams, userIds),
  );
}

/**
 * PATCH /users/me/subscriptions (update_subscriptions_backend): the caller's additions, then their
 * removals, in one transaction, as Zulip's compose_views runs the two views. The removals are
 * checked after the additions are made, so a channel this request creates can be left in it, and
 * a failed check undoes the additions.
 */
export async function doUpdateSubscriptions(
  ctx: RequestContext,
  add: AddSubscriptionsInput,
  remove: string[],
) {
  const bot = await notificationBot(ctx, ctx.realm);
  return inTransaction(ctx, ctx.realm.id, async (uow) => {
    const added = await addSubscriptions(uow, ctx, bot, add);
    const gone = await channelsToUnsubscribe(ctx, uow.tx, [ctx.user], remove);
    const removed = await bulkRemoveSubscriptions(uow, ctx, gone, [ctx.user.id]);
    return { added, removed, removedFrom: gone };
  });
}
