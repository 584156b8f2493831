/**
 * Default channels (zerver/actions/default_streams.py, zerver/views/streams.py add_default_stream
 * and remove_default_stream): administrators only; the `default_streams` event carries the
 * complete new list of channel IDs.
 */
import type { RequestContext } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { PendingEvents } from "../../events/index.ts";
import { accessChannel } from "../../lib/channels/channels.ts";
import { defaultChannelIds } from "../../lib/channels/default-streams.ts";
import { activeUserIds, isRealmAdmin } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";

/** check_if_user_can_manage_default_streams (can_manage_default_streams: administrators). */
export function requireDefaultChannelManager(ctx: RequestContext) {
  if (!isRealmAdmin(ctx.user))
    throw new JsonableError("You do not have permission to change default channels.");
}

/**
 * do_add_default_stream / do_remove_default_stream inside the caller's unit of work: a change
 * only when it is one, then `default_streams` to everyone.
 */
export async function setDefaultChannel(
  { tx, events }: { tx: Tx; events: PendingEvents },
  realmId: number,
  streamId: number,
  isDefault: boolean,
) {
  const where = { realmId, streamId };
  const changed = isDefault
    ? (await tx.defaultStream.createMany({ data: [where], skipDuplicates: true })).count > 0
    : (await tx.defaultStream.deleteMany({ where })).count > 0;
  if (changed)
    events.add(
      { type: "default_streams", default_streams: await defaultChannelIds(tx, realmId) },
      await activeUserIds(tx, realmId),
    );
}

/** POST /default_streams: a channel the caller may read, never a private one. */
export async function doAddDefaultStream(ctx: RequestContext, streamId: number) {
  requireDefaultChannelManager(ctx);
  await inTransaction(ctx, ctx.realm.id, async (unit) => {
    const stream = await accessChannel(unit.tx, ctx.user, { id: streamId });
    if (stream.inviteOnly) throw new JsonableError("Private channels cannot be made default.");
    await setDefaultChannel(unit, ctx.realm.id, stream.id, true);
  });
}

/** DELETE /default_streams: knowing the channel exists is enough (require_content_access=False). */
export async function doRemoveDefaultStream(ctx: RequestContext, streamId: number) {
  requireDefaultChannelManager(ctx);
  await inTransaction(ctx, ctx.realm.id, async (unit) => {
    const stream = await accessChannel(
      unit.tx,
      ctx.user,
      { id: streamId },
      {
        requireContentAccess: false,
      },
    );
    await setDefaultChannel(unit, ctx.realm.id, stream.id, false);
  });
}
