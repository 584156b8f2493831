/**
 * Subscriptions in API form (zerver/lib/subscription_info.py gather_subscriptions_helper): the
 * channel dict plus the user's settings for it, and the register's `subscriptions`,
 * `unsubscribed` and `never_subscribed`. A fixed number of statements for any number of channels.
 */
import type { Db, Realm } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import {
  hasMetadataAccess,
  STREAM_RECORD_SELECT,
  toChannelDicts,
  type StreamRecord,
} from "./channels.ts";
import { userGroupIds } from "../groups/permissions.ts";
import { RecipientType } from "../recipients.ts";
import { accessFacts, accessSql, allows, type Reader } from "../access/channels.ts";

/** Channels with at least this many subscribers may get `partial_subscribers` (include_subscribers=partial). */
const PARTIAL_SUBSCRIBERS_THRESHOLD = 250;
/** `partial_subscribers` holds every user active within this long, and every bot. */
const RECENTLY_ACTIVE_MS = 14 * 24 * 3600 * 1000;

export type IncludeSubscribers = boolean | "partial";
type SubscriberList = { subscribers: number[] } | { partial_subscribers: number[] };

/**
 * Subscriber lists of the given channels (by recipient), in one query (two for partial lists):
 * `subscribers` for each, or with `partialAt` (now), `partial_subscribers` (bots and users active
 * in the 14 days before it) for large channels.
 */
export async function subscriberLists(
  db: Db,
  realmId: number,
  recipientIds: number[],
  mode: { partialAt: Date } | "full",
): Promise<Map<number, SubscriberList>> {
  const rows = await db.subscription.findMany({
    where: { recipientId: { in: recipientIds }, active: true, isUserActive: true },
    select: { recipientId: true, userProfileId: true, userProfile: { select: { isBot: true } } },
    orderBy: { userProfileId: "asc" },
  });
  const byRecipient = new Map<number, typeof rows>(recipientIds.map((id) => [id, []]));
  for (const row of rows) byRecipient.get(row.recipientId)!.push(row);
  const large = [...byRecipient.values()].some((r) => r.length >= PARTIAL_SUBSCRIBERS_THRESHOLD);
  const partial = mode === "full" ? null : mode.partialAt;
  const active =
    partial && large
      ? new Set(
          (
            await db.userPresence.findMany({
              where: {
                realmId,
                lastActiveTime: { gte: new Date(partial.getTime() - RECENTLY_ACTIVE_MS) },
              },
              select: { userProfileId: true },
            })
          ).map((p) => p.userProfileId),
        )
      : new Set<number>();
  const lists = new Map<number, SubscriberList>();
  for (const [recipientId, subs] of byRecipient) {
    if (partial && subs.length >= PARTIAL_SUBSCRIBERS_THRESHOLD)
      lists.set(recipientId, {
        partial_subscribers: subs
          .filter((s) => s.userProfile.isBot || active.has(s.userProfileId))
          .map((s) => s.userProfileId),
      });
    else lists.set(recipientId, { subscribers: subs.map((s) => s.userProfileId) });
  }
  return lists;
}

interface SubscriptionRow {
  userProfileId: number;
  recipientId: number;
  active: boolean;
  color: string;
  isMuted: boolean;
  pinToTop: boolean;
  desktopNotifications: boolean | null;
  audibleNotifications: boolean | null;
  pushNotifications: boolean | null;
  emailNotifications: boolean | null;
  wildcardMentionsNotify: boolean | null;
}

const SUBSCRIPTION_SELECT = {
  userProfileId: true,
  recipientId: true,
  active: true,
  color: true,
  isMuted: true,
  pinToTop: true,
  desktopNotifications: true,
  audibleNotifications: true,
  pushNotifications: true,
  emailNotifications: true,
  wildcardMentionsNotify: true,
} as const;

/** A subscription dict's user's own settings (what two users' dicts for one channel differ by). */
export const personalSettingsOf = (dict: Record<string, unknown>) =>
  PERSONAL_FIELDS.map((field) => dict[field]);

/** A subscription dict as the channel's own (a `stream` event's): without the user's settings and the subscribers. */
export function channelPartOf(dict: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(dict).filter(([key]) => !NOT_THE_CHANNELS.has(key)));
}

function personal(sub: SubscriptionRow) {
  return {
    color: sub.color,
    is_muted: sub.isMuted,
    in_home_view: !sub.isMuted,
    pin_to_top: sub.pinToTop,
    desktop_notifications: sub.desktopNotifications,
    audible_notifications: sub.audibleNotifications,
    push_notifications: sub.pushNotifications,
    email_notifications: sub.emailNotifications,
    wildcard_mentions_notify: sub.wildcardMentionsNotify,
  };
}

const PERSONAL_FIELDS = [
  "color",
  "is_muted",
  "in_home_view",
  "pin_to_top",
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
] as const satisfies readonly (keyof ReturnType<typeof personal>)[];

/** What a subscription dict holds beyond its channel's own fields (channelPartOf). */
const NOT_THE_CHANNELS = new Set<string>([...PERSONAL_FIELDS, "subscribers"]);

/**
 * The subscription dicts of several users for several channels, keyed `<user id>:<channel id>`,
 * with the subscriber lists when asked (subscription `add` events carry them).
 */
export async function subscriptionDicts(
  db: Db,
  realm: Pick<Realm, "id">,
  userIds: number[],
  streamIds: number[],
  options: { includeSubscribers: boolean },
) {
  const streams = (await db.stream.findMany({
    where: { realmId: realm.id, id: { in: streamIds } },
    select: STREAM_RECORD_SELECT,
  })) as StreamRecord[];
  const subs = await db.subscription.findMany({
    where: {
      userProfileId: { in: userIds },
      recipientId: { in: streams.map((s) => s.recipientId!) },
    },
    select: SUBSCRIPTION_SELECT,
  });
  const dicts = await toChannelDicts(db, streams);
  const lists = options.includeSubscribers
    ? await subscriberLists(
        db,
        realm.id,
        streams.map((s) => s.recipientId!),
        "full",
      )
    : null;
  const byRecipient = new Map(
    streams.map((s, i) => [s.recipientId!, { stream: s, dict: dicts[i]! }]),
  );
  const result = new Map<string, Record<string, unknown>>();
  for (const sub of subs) {
    const { stream, dict } = byRecipient.get(sub.recipientId)!;
    result.set(`${sub.userProfileId}:${stream.id}`, {
      ...dict,
      ...personal(sub),
      ...(lists?.get(sub.recipientId) ?? {}),
    });
  }
  return result;
}

/**
 * gather_subscriptions_helper: the user's active subscriptions; the channels they left
 * (`unsubscribed`, those they may still see); and the channels they may see but never joined
 * (`never_subscribed`). Subscriber lists only where the user may see them.
 */
export async function gatherSubscriptions(
  ctx: Pick<RequestContext, "db" | "realm" | "user" | "now">,
  includeSubscribers: IncludeSubscribers,
) {
  const { db, user, realm } = ctx;
  const subs = await db.subscription.findMany({
    where: { userProfileId: user.id, recipient: { type: RecipientType.STREAM } },
    select: SUBSCRIPTION_SELECT,
  });
  const subByRecipient = new Map(subs.map((s) => [s.recipientId, s]));
  // Every channel the user has or had a subscription to, and every public / web-public one.
  const streams = (await db.stream.findMany({
    where: {
      realmId: realm.id,
      OR: [{ recipientId: { in: subs.map((s) => s.recipientId) } }, { isArchived: false }],
    },
    select: STREAM_RECORD_SELECT,
    orderBy: { id: "asc" },
  })) as StreamRecord[];
  const groups = await userGroupIds(db, user);
  const visible = streams.filter((s) => {
    const sub = subByRecipient.get(s.recipientId!);
    return sub?.active || hasMetadataAccess(user, s, false, groups);
  });
  const dicts = await toChannelDicts(db, visible);
  const seeSubscribers = (s: StreamRecord) =>
    allows(
      "CHANNEL_SUBSCRIBERS",
      accessFacts(user, s, subByRecipient.get(s.recipientId!)?.active ?? false, groups),
    );
  const lists =
    includeSubscribers === false
      ? null
      : await subscriberLists(
          db,
          realm.id,
          visible.filter(seeSubscribers).map((s) => s.recipientId!),
          includeSubscribers === "partial" ? { partialAt: ctx.now() } : "full",
        );
  const subscriptions: Record<string, unknown>[] = [];
  const unsubscribed: Record<string, unknown>[] = [];
  const neverSubscribed: Record<string, unknown>[] = [];
  visible.forEach((s, i) => {
    const sub = subByRecipient.get(s.recipientId!);
    const withSubscribers = { ...dicts[i]!, ...(lists?.get(s.recipientId!) ?? {}) };
    if (sub?.active) subscriptions.push({ ...withSubscribers, ...personal(sub) });
    else if (sub) unsubscribed.push({ ...withSubscribers, ...personal(sub) });
    else neverSubscribed.push(withSubscribers);
  });
  return { subscriptions, unsubscribed, never_subscribed: neverSubscribed };
}

/** The recipient ids of the user's active subscriptions. */
export async function subscribedRecipientIds(db: Db, userId: number): Promise<Set<number>> {
  return new Set(
    (
      await db.subscription.findMany({
        where: { userProfileId: userId, active: true },
        select: { recipientId: true },
      })
    ).map((s) => s.recipientId),
  );
}

/**
 * GET /users/{user_id}/channels (get_user_channels, feature level 440): the channels `targetId`
 * is subscribed to whose subscribers `viewer` may see (the access rule's CHANNEL_SUBSCRIBERS),
 * ascending, in one statement.
 */
export async function subscribedChannelIdsFor(
  db: Db,
  viewer: Reader,
  targetId: number,
): Promise<number[]> {
  const rows = await db.$queryRaw<{ id: number }[]>`
    SELECT s.id FROM subscription sub JOIN stream s ON s.recipient_id = sub.recipient_id
    WHERE sub.user_profile_id = ${targetId} AND sub.active AND s.realm_id = ${viewer.realmId}
      AND ${accessSql("CHANNEL_SUBSCRIBERS", viewer, "s")}
    ORDER BY s.id`;
  return rows.map((r) => r.id);
}
