/**
 * Who may add and remove other users' subscriptions (zerver/lib/streams.py
 * can_add_subscribers / can_remove_subscribers_from_stream), and channels looked up by name.
 */
import type { Db } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { can, canInChannel } from "../groups/permissions.ts";
import { findChannelsByName, hasContentAccess, type ChannelRow } from "../channels/channels.ts";
import { canAdministerChannel } from "./channels.ts";

/** The organization's channels with these names (case-insensitive), keyed by lower-case name, in one statement. */
export async function channelsByName(
  db: Db,
  realmId: number,
  names: string[],
): Promise<Map<string, ChannelRow>> {
  return new Map(
    (await findChannelsByName(db, realmId, names)).map((r) => [r.name.toLowerCase(), r]),
  );
}

const administers = (ctx: { db: Db; user: RequestContext["user"] }, stream: ChannelRow) =>
  canAdministerChannel(ctx.db, ctx.user, stream);

/** Adding others: the organization's or the channel's can_add_subscribers_group, or administering it. */
export async function canAddSubscribers(
  ctx: Pick<RequestContext, "db" | "user" | "realm">,
  stream: ChannelRow,
) {
  if (await canInChannel(ctx.db, ctx.user, stream, "can_add_subscribers_group")) return true;
  if (stream.inviteOnly && !(await hasContentAccess(ctx.db, ctx.user, stream))) return false;
  return (
    (await can(ctx.db, ctx.user, ctx.realm, "can_add_subscribers_group")) ||
    administers(ctx, stream)
  );
}

/** Removing others: the channel's can_remove_subscribers_group, or administering it. */
export async function canRemoveSubscribers(
  ctx: { db: Db; user: RequestContext["user"] },
  stream: ChannelRow,
) {
  return (
    (await canInChannel(ctx.db, ctx.user, stream, "can_remove_subscribers_group")) ||
    administers(ctx, stream)
  );
}
