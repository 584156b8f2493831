/**
 * Subscribing and unsubscribing users (zerver/actions/streams.py bulk_add_subscriptions,
 * bulk_remove_subscriptions). Interim body: the subscriptions part of issue 8 replaces it,
 * keeping the signature.
 */
import type { Tx } from "../db.ts";
import type { PendingEvents } from "../events.ts";
import type { RequestContext } from "../context.ts";
import { doSubscribe } from "./channels.ts";

export interface SubscriptionResult {
  /** [user id, channel id] pairs newly subscribed. */
  subscribed: [number, number][];
  /** [user id, channel id] pairs that already were. */
  alreadySubscribed: [number, number][];
}

/**
 * Subscribes the users to the channels in the caller's transaction with Zulip's events
 * (`subscription` add to each new subscriber, `peer_add` to those who may see it, `stream` create
 * for users who could not see a private channel before). Uses `tx` only, never `ctx.db`.
 * `actingUser` null means the server itself (organization setup).
 */
export async function bulkAddSubscriptions(
  tx: Tx,
  _events: PendingEvents,
  ctx: Pick<RequestContext, "realm" | "config" | "now"> & { user: RequestContext["user"] | null },
  streams: { id: number; recipientId: number | null }[],
  userIds: number[],
  _options: { sendNewSubscriptionMessages?: boolean } = {},
): Promise<SubscriptionResult> {
  const result: SubscriptionResult = { subscribed: [], alreadySubscribed: [] };
  for (const stream of streams) {
    const before = await tx.subscription.findMany({ where: { recipientId: stream.recipientId!, userProfileId: { in: userIds }, active: true }, select: { userProfileId: true } });
    const had = new Set(before.map((s) => s.userProfileId));
    await doSubscribe(tx, ctx.realm.id, stream, userIds);
    for (const id of userIds) (had.has(id) ? result.alreadySubscribed : result.subscribed).push([id, stream.id]);
  }
  return result;
}
