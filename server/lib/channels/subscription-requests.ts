/**
 * The checks of subscribing and unsubscribing by channel name, before anything is written
 * (zerver/views/streams.py add_subscriptions_backend and remove_subscriptions_backend, with
 * list_to_streams). POST and DELETE /users/me/subscriptions use them alone; the bulk PATCH runs
 * both, the removals inside the transaction that made the additions (as Zulip's compose_views).
 */
import type { Db } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import { accessChannels } from "../access/channels.ts";
import {
  canAddSubscribers,
  canRemoveSubscribers,
  channelsByName,
} from "../access/subscriptions.ts";
import type { ChannelRow } from "./channels.ts";

/** A channel named by a subscribe request: its name (stripped), and for a new one its description and the subscriber's colour. */
export interface RequestedChannel {
  name: string;
  description?: string;
  color?: string;
}

/** The users a request (un)subscribes, by what the checks need of them. */
type Subscriber = { id: number; isBot?: boolean; botOwnerId?: number | null };

export interface SubscriptionAdds {
  /** Existing channels the caller may subscribe the users to. */
  authorized: ChannelRow[];
  /** Existing channels the caller may not access (only when authorization errors are not fatal). */
  unauthorized: ChannelRow[];
  /** Names that are no channel yet, once each, in the order asked: channels to create. */
  missing: RequestedChannel[];
  /** The colour asked for each channel, by lower-case name (bulk_add_subscriptions's color_map). */
  colors: Map<string, string>;
}

/**
 * add_subscriptions_backend's checks of existing channels: one the caller may not access fails the
 * request ("Unable to access channel (Verona).") unless `authorizationErrorsFatal` is false, and
 * subscribing anyone else needs `can_add_subscribers_group` on each. Creating the missing ones is
 * checked when they are made (doCreateChannels).
 */
export async function checkSubscriptionAdds(
  ctx: Pick<RequestContext, "db" | "user" | "realm">,
  users: Subscriber[],
  requested: RequestedChannel[],
  authorizationErrorsFatal: boolean,
): Promise<SubscriptionAdds> {
  const wanted = requested.map((s) => ({ ...s, name: s.name.trim() }));
  const existing = await channelsByName(
    ctx.db,
    ctx.realm.id,
    wanted.map((s) => s.name),
  );
  const { accessible: authorized, inaccessible: unauthorized } = await accessChannels(
    ctx.db,
    ctx.user,
    existing.values(),
  );
  if (unauthorized.length > 0 && authorizationErrorsFatal)
    throw new JsonableError(`Unable to access channel (${unauthorized[0]!.name}).`);
  if (users.some((u) => u.id !== ctx.user.id))
    for (const stream of authorized)
      if (!(await canAddSubscribers(ctx, stream)))
        throw new JsonableError("Insufficient permission");
  const missing: RequestedChannel[] = [];
  const colors = new Map<string, string>();
  for (const s of wanted) {
    const key = s.name.toLowerCase();
    if (s.color !== undefined) colors.set(key, s.color);
    if (existing.has(key) || missing.some((m) => m.name.toLowerCase() === key)) continue;
    missing.push(s);
  }
  return { authorized, unauthorized, missing, colors };
}

/**
 * remove_subscriptions_backend's checks: every name must be a channel ("Channel(s) (a, b) do not
 * exist"), and unsubscribing anyone but oneself or one's own bots needs
 * `can_remove_subscribers_group` (or administering the channel) on each. Reads through `db`, which
 * is the transaction when the same request has just created channels.
 */
export async function channelsToUnsubscribe(
  ctx: Pick<RequestContext, "user" | "realm">,
  db: Db,
  users: Subscriber[],
  requested: string[],
): Promise<ChannelRow[]> {
  const names = requested.map((n) => n.trim());
  const found = await channelsByName(db, ctx.realm.id, names);
  const missing = names.filter((n) => !found.has(n.toLowerCase()));
  if (missing.length > 0)
    throw new JsonableError(`Channel(s) (${missing.join(", ")}) do not exist`);
  const streams = [...found.values()];
  // Bots a user owns are theirs to unsubscribe (user_directly_controls_user).
  const others = users.some(
    (u) => u.id !== ctx.user.id && !(u.isBot && u.botOwnerId === ctx.user.id),
  );
  if (others)
    for (const stream of streams)
      if (!(await canRemoveSubscribers({ db, user: ctx.user }, stream)))
        throw new JsonableError("Insufficient permission");
  return streams;
}
