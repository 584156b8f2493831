/**
 * Archiving and unarchiving a channel (zerver/actions/streams.py do_deactivate_stream,
 * do_unarchive_stream). Nobody is unsubscribed: an archived channel keeps its subscribers and
 * messages, takes no new messages, and leaves the default channels and the organization settings
 * that named it. Clients hear of it by their `archived_channels` capability: `stream` update of
 * `is_archived` for those that declared it, `stream` delete (or create, when unarchived) marked
 * `for_archiving` / `for_unarchiving` for the others.
 */
import type { Realm, Stream } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { toChannelDicts } from "../../lib/channels/channels.ts";
import {
  accessChannelForUpdate,
  activeSubscriberIds,
  metadataUserIds,
} from "../../lib/channels/channel-settings.ts";
import { defaultChannelIds } from "../../lib/channels/default-streams.ts";
import { activeUserIds } from "../../lib/users/users.ts";
import { sendChannelEventsNotice } from "./channels.ts";
import { notificationBot, type InternalSender } from "../messages/internal-send.ts";
import { inTransaction } from "../transaction.ts";

/** The organization settings that name a channel and stop naming it when it is archived. */
const REALM_CHANNEL_FIELDS = {
  moderation_request_channel_id: "moderationRequestChannelId",
  new_stream_announcements_stream_id: "newStreamAnnouncementsStreamId",
  signup_announcements_stream_id: "signupAnnouncementsStreamId",
  zulip_update_announcements_stream_id: "zulipUpdateAnnouncementsStreamId",
} as const satisfies Record<string, keyof Realm>;

/** DELETE /streams/{id}: do_deactivate_stream, for a caller who administers the channel. */
export async function doArchiveChannel(ctx: RequestContext, streamId: number) {
  const bot = await notificationBot(ctx, ctx.realm);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const { stream } = await accessChannelForUpdate(tx, ctx.user, streamId);
    if (stream.isArchived) throw new JsonableError("Channel is already deactivated");
    // Who could see it before it is archived (can_access_stream_metadata_user_ids).
    const affected = await metadataUserIds(tx, ctx.realm.id, stream);
    await tx.stream.update({ where: { id: stream.id }, data: { isArchived: true } });
    await clearRealmChannelSettings({ tx, events }, ctx.realm, stream.id);
    const removed = await tx.defaultStream.deleteMany({
      where: { realmId: ctx.realm.id, streamId: stream.id },
    });
    if (removed.count > 0)
      events.add(
        { type: "default_streams", default_streams: await defaultChannelIds(tx, ctx.realm.id) },
        await activeUserIds(tx, ctx.realm.id),
      );
    const update = { type: "stream", op: "update", stream_id: stream.id, name: stream.name };
    events.add({ ...update, property: "is_archived", value: true }, affected);
    events.add(
      {
        type: "stream",
        op: "delete",
        streams: [{ stream_id: stream.id }],
        stream_ids: [stream.id],
        for_archiving: true,
      },
      affected,
    );
    // limit_unread_user_ids=set(): the notice is unread for nobody (its sender included).
    const readers = new Set([bot.bot.id, ...(await activeSubscriberIds(tx, stream))]);
    await sendChannelEventsNotice(
      { tx, events },
      ctx,
      bot,
      stream,
      `Channel #**${stream.name}** has been archived.`,
      readers,
    );
  });
}

/** maybe_set_moderation_or_announcement_channels_none: `realm` update_dict with -1 for each setting cleared. */
async function clearRealmChannelSettings(
  { tx, events }: UnitOfWork,
  realm: Realm,
  streamId: number,
) {
  const data: Record<string, null> = {};
  const cleared: Record<string, number> = {};
  for (const [name, field] of Object.entries(REALM_CHANNEL_FIELDS))
    if (realm[field] === streamId) {
      data[field] = null;
      cleared[name] = -1;
    }
  if (Object.keys(data).length === 0) return;
  await tx.realm.update({ where: { id: realm.id }, data });
  events.invalidate(`realm:${realm.id}`);
  events.add(
    { type: "realm", op: "update_dict", property: "default", data: cleared },
    await activeUserIds(tx, realm.id),
  );
}

/**
 * do_unarchive_stream, inside the caller's transaction (PATCH /streams/{id} with
 * is_archived=false): refused for a channel that is not archived and for a private channel with
 * no subscriber left (deactivated users count, as in Zulip).
 */
export async function doUnarchiveChannel(
  { tx, events }: UnitOfWork,
  ctx: RequestContext,
  bot: InternalSender,
  stream: Stream,
): Promise<Stream> {
  if (!stream.isArchived) throw new JsonableError("Channel is not currently deactivated");
  if (
    stream.inviteOnly &&
    (await tx.subscription.count({ where: { recipientId: stream.recipientId!, active: true } })) ===
      0
  )
    throw new JsonableError("Channel is private and have no subscribers");
  const unarchived = await tx.stream.update({
    where: { id: stream.id },
    // A private channel is never web-public (archiving once left that state behind in Zulip).
    data: { isArchived: false, ...(stream.inviteOnly ? { isWebPublic: false } : {}) },
  });
  const notify = await metadataUserIds(tx, ctx.realm.id, unarchived);
  events.add(
    {
      type: "stream",
      op: "update",
      stream_id: stream.id,
      name: stream.name,
      property: "is_archived",
      value: false,
    },
    notify,
  );
  events.add(
    {
      type: "stream",
      op: "create",
      streams: await toChannelDicts(tx, [unarchived]),
      for_unarchiving: true,
    },
    notify,
  );
  await sendChannelEventsNotice(
    { tx, events },
    ctx,
    bot,
    unarchived,
    `Channel #**${stream.name}** has been unarchived.`,
  );
  return unarchived;
}
