/**
 * Deleting messages (zerver/actions/message_delete.py do_delete_messages, zerver/lib/retention.py
 * move_messages_to_archive, zerver/views/streams.py delete_in_topic): the messages move to the
 * archive tables with their recipients' rows, reactions, widgets, edit history and links to
 * uploads, in one set-based statement whatever their number, so an administrator could restore
 * them until the archive is cleaned (workers/retention.ts). An upload no message links any more
 * is left unclaimed, and its file deleted later by the same loop.
 */
import { Prisma } from "../../db/index.ts";
import type { RawTx } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { accessChannel } from "../../lib/channels/channels.ts";
import { checkCanDeleteMessage } from "../../lib/messages/message-delete.ts";
import { isStorableText } from "../../lib/text.ts";
import { namesEmptyTopic, TopicVisibility } from "../../lib/messages/topics.ts";
import { messageEventRecipientsSql } from "../../lib/access/messages.ts";
import {
  messageAccessSql,
  subscribersNeedRows,
  type AccessChannel,
} from "../../lib/access/channels.ts";
import { unixSeconds } from "../../lib/time.ts";
import { isRealmAdmin } from "../../lib/users/users.ts";
import { JsonableError } from "../../errors.ts";
import { topicMessages } from "./message-edit-checks.ts";
import { afterCommit, inRawTransaction, inTransaction } from "../transaction.ts";
import { mutedTopics } from "../channels/user-topics.ts";
import { FLAG_BITS } from "../../lib/messages/flags.ts";
import { pushNotificationsQueued } from "../../workers/push-notifications.ts";

/** Zulip's ArchiveTransaction types. */
export const ArchiveType = { RETENTION_POLICY_BASED: 1, MANUAL: 2 } as const;

/** retention.py STREAM_MESSAGE_BATCH_SIZE: a topic is deleted this many messages at a time. */
export const STREAM_MESSAGE_BATCH_SIZE = 100;
/** delete_in_topic stops starting batches after this long and answers `complete: false`. */
const DELETE_TOPIC_TIME_LIMIT_MS = 50_000;

interface DeletedGroup {
  ids: number[];
  /** Lowercased, as Zulip groups a channel's messages by topic (topic_name().lower()). */
  topic: string | null;
  stream_id: number | null;
  name: string | null;
  first_message_id: number | null;
  first_changed: boolean;
  user_ids: number[];
  /** The messages of the group the acting user may read (feature level 457); null without one. */
  actor_ids: number[] | null;
}

/**
 * Moves the messages `target` selects (a `SELECT m.id FROM message m …`, which should lock them)
 * to the archive in one statement: an archive transaction, copies of the message rows and of
 * everything that hangs on them, then the messages' deletion (the rest follows by its foreign
 * keys' ON DELETE CASCADE). Channels whose first message went get their next one. Users whose
 * phone shows a notification of one of them (active_mobile_push_notification) get a `remove`
 * push of those, queued in the same statement (Zulip's do_delete_messages clears them with
 * do_clear_mobile_push_notifications_for_ids before archiving). With `notify`,
 * answers who is told of each (channel, topic) or conversation's deletion: those who may still read
 * its messages (event_recipient_ids_for_action_on_messages, lib/access/messages.ts), and which
 * of them `actingUserId` may read (read before the deletion, in the statement's snapshot).
 */
export async function archiveMessages(
  tx: RawTx,
  realmId: number,
  target: Prisma.Sql,
  type: number,
  notify: boolean,
  actingUserId: number | null = null,
): Promise<{ archived: number; groups: DeletedGroup[] }> {
  const active = FLAG_BITS.active_mobile_push_notification;
  const actorIds =
    actingUserId === null
      ? Prisma.sql`NULL::int[]`
      : Prisma.sql`ARRAY(SELECT x FROM unnest(g.ids) x JOIN user_profile act_u ON act_u.id = ${actingUserId}::int
          WHERE COALESCE(${messageAccessSql(
            { alias: "act_u" },
            Prisma.sql`EXISTS (SELECT 1 FROM user_message act_um WHERE act_um.user_profile_id = act_u.id AND act_um.message_id = x)`,
            { stream: "s" },
          )}, FALSE))`;
  const [row] = await tx.$queryRaw<{ archived: number; removals: number; groups: unknown }[]>`
    WITH target AS (${target}),
    t AS (SELECT m.* FROM message m WHERE m.id IN (SELECT id FROM target)),
    atx AS (INSERT INTO archive_transaction (realm_id, type) SELECT ${realmId}::int, ${type}::int WHERE EXISTS (SELECT 1 FROM target) RETURNING id),
    am AS (
      INSERT INTO archived_message (id, archive_transaction_id, realm_id, sender_id, recipient_id, subject, content, rendered_content,
        rendered_content_version, date_sent, sending_client_id, last_edit_time, last_moved_time, type, has_attachment, has_image, has_link, is_channel_message)
      SELECT t.id, atx.id, t.realm_id, t.sender_id, t.recipient_id, t.subject, t.content, t.rendered_content, t.rendered_content_version,
        t.date_sent, t.sending_client_id, t.last_edit_time, t.last_moved_time, t.type, t.has_attachment, t.has_image, t.has_link, t.is_channel_message
      FROM t, atx RETURNING id),
    aum AS (INSERT INTO archived_user_message (user_profile_id, message_id, flags)
      SELECT user_profile_id, message_id, flags FROM user_message WHERE message_id IN (SELECT id FROM target)),
    ar AS (INSERT INTO archived_reaction (id, realm_id, user_profile_id, message_id, emoji_name, emoji_code, reaction_type)
      SELECT id, realm_id, user_profile_id, message_id, emoji_name, emoji_code, reaction_type FROM reaction WHERE message_id IN (SELECT id FROM target)),
    asm AS (INSERT INTO archived_submessage (id, realm_id, message_id, sender_id, msg_type, content)
      SELECT id, realm_id, message_id, sender_id, msg_type, content FROM submessage WHERE message_id IN (SELECT id FROM target)),
    ae AS (INSERT INTO archived_message_edit (id, realm_id, message_id, user_id, edit_time, prev_content, prev_rendered_content,
        prev_rendered_content_version, prev_topic, topic, prev_stream_id, stream_id)
      SELECT id, realm_id, message_id, user_id, edit_time, prev_content, prev_rendered_content, prev_rendered_content_version,
        prev_topic, topic, prev_stream_id, stream_id FROM message_edit WHERE message_id IN (SELECT id FROM target)),
    aa AS (INSERT INTO archived_attachment (id, realm_id, owner_id, file_name, path_id, size, content_type, create_time, is_realm_public, is_web_public)
      SELECT a.id, a.realm_id, a.owner_id, a.file_name, a.path_id, a.size, a.content_type, a.create_time, a.is_realm_public, a.is_web_public
      FROM attachment a WHERE a.id IN (SELECT attachment_id FROM attachment_message WHERE message_id IN (SELECT id FROM target))
      ON CONFLICT (id) DO NOTHING),
    aam AS (INSERT INTO archived_attachment_message (attachment_id, message_id)
      SELECT attachment_id, message_id FROM attachment_message WHERE message_id IN (SELECT id FROM target)),
    pr AS (INSERT INTO push_notification_queue (user_profile_id, type, message_ids)
      SELECT user_profile_id, 'remove', array_agg(message_id ORDER BY message_id) FROM user_message
      WHERE message_id IN (SELECT id FROM target) AND flags & ${active}::bigint <> 0
      GROUP BY user_profile_id RETURNING 1),
    del AS (DELETE FROM message WHERE id IN (SELECT id FROM target)),
    first AS (
      UPDATE stream s SET first_message_id = (
        SELECT min(m.id) FROM message m WHERE m.realm_id = s.realm_id AND m.recipient_id = s.recipient_id AND m.id NOT IN (SELECT id FROM target))
      WHERE s.realm_id = ${realmId}::int AND s.first_message_id IN (SELECT id FROM target)
      RETURNING s.id, s.first_message_id),
    groups AS (
      SELECT t.recipient_id, t.is_channel_message, CASE WHEN t.is_channel_message THEN lower(t.subject) END AS topic, array_agg(t.id ORDER BY t.id) AS ids
      FROM t WHERE ${notify} GROUP BY 1, 2, 3)
    SELECT (SELECT count(*) FROM am)::int AS archived, (SELECT count(*) FROM pr)::int AS removals,
      COALESCE((SELECT json_agg(json_build_object(
        'ids', g.ids, 'topic', g.topic, 'stream_id', s.id, 'name', s.name,
        'first_message_id', f.first_message_id, 'first_changed', f.id IS NOT NULL,
        'user_ids', ARRAY(${messageEventRecipientsSql(Prisma.sql`g.ids`, Prisma.sql`g.recipient_id`, Prisma.sql`g.is_channel_message`)}),
        'actor_ids', ${actorIds}))
        FROM groups g LEFT JOIN stream s ON g.is_channel_message AND s.recipient_id = g.recipient_id
        LEFT JOIN first f ON f.id = s.id), '[]'::json) AS groups`;
  const groups = (
    typeof row!.groups === "string" ? JSON.parse(row!.groups) : row!.groups
  ) as DeletedGroup[];
  if (row!.removals > 0) afterCommit(tx, pushNotificationsQueued);
  return { archived: row!.archived, groups };
}

/**
 * Archives the selected messages and tells who had them (do_delete_messages): a channel's
 * `first_message_id` update where its first message went, then one `delete_message` event per
 * channel topic or conversation, in its bulk form, to its recipients; the acting user, when not
 * one of them, gets the event only for the messages they may still read (feature level 457:
 * none, no event). The retention policy has no acting user (feature level 452).
 */
export async function deleteMessages(
  { tx, events }: UnitOfWork<RawTx>,
  realmId: number,
  target: Prisma.Sql,
  actingUserId: number | null,
  type: number = ArchiveType.MANUAL,
): Promise<number> {
  const { archived, groups } = await archiveMessages(tx, realmId, target, type, true, actingUserId);
  const firstChanged = new Map<number, { group: DeletedGroup; users: Set<number> }>();
  for (const g of groups) {
    if (!g.first_changed || g.stream_id === null) continue;
    const entry = firstChanged.get(g.stream_id) ?? { group: g, users: new Set<number>() };
    if (actingUserId !== null && g.actor_ids?.length) entry.users.add(actingUserId);
    for (const id of g.user_ids) entry.users.add(id);
    firstChanged.set(g.stream_id, entry);
  }
  for (const [streamId, { group, users }] of firstChanged)
    events.add(
      {
        type: "stream",
        op: "update",
        property: "first_message_id",
        value: group.first_message_id,
        stream_id: streamId,
        name: group.name,
      },
      [...users],
    );
  for (const g of groups) {
    const event = (ids: number[]) =>
      g.stream_id === null
        ? { type: "delete_message", message_ids: ids, message_type: "private" }
        : {
            type: "delete_message",
            message_ids: ids,
            stream_id: g.stream_id,
            topic: g.topic,
            message_type: "stream",
          };
    const actorIds = g.actor_ids ?? [];
    const others = g.user_ids.filter((id) => id !== actingUserId);
    if (actingUserId === null) {
      if (others.length) events.add(event(g.ids), others);
      continue;
    }
    const actorTold = g.user_ids.includes(actingUserId) && actorIds.length === g.ids.length;
    if (actorTold) others.push(actingUserId);
    if (others.length) events.add(event(g.ids), others);
    if (!actorTold && actorIds.length) events.add(event(actorIds), [actingUserId]);
  }
  return archived;
}

/** DELETE /messages/{message_id} (delete_message_backend). */
export async function doDeleteMessage(ctx: RequestContext, messageId: number): Promise<void> {
  const message = await checkCanDeleteMessage(ctx, messageId);
  const deleted = await inRawTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    deleteMessages(
      { tx, events },
      ctx.realm.id,
      Prisma.sql`SELECT id FROM message WHERE id = ${message.id}::int FOR UPDATE`,
      ctx.user.id,
    ),
  );
  // Someone else deleted it between the checks and the lock.
  if (deleted === 0) throw new JsonableError("Invalid message(s)");
}

/**
 * POST /streams/{stream_id}/delete_topic (delete_in_topic): administrators delete the messages of
 * a topic they can access, newest first, a batch per transaction, until none is left or the time
 * is up (`complete: false`: the client asks again).
 */
export async function doDeleteTopic(
  ctx: RequestContext,
  streamId: number,
  topicName: string,
): Promise<{ complete: boolean }> {
  if (!isRealmAdmin(ctx.user))
    throw new JsonableError("Must be an organization administrator", {
      code: "UNAUTHORIZED_PRINCIPAL",
    });
  const stream = await accessChannel(ctx.db, ctx.user, { id: streamId });
  // A name the database cannot hold (a NUL) names no message: nothing to delete.
  if (!isStorableText(topicName)) return { complete: true };
  const topic = namesEmptyTopic(topicName, ctx.realm) ? "" : topicName;
  const batch = Prisma.sql`SELECT m.id FROM ${topicMessages(ctx.realm.id, stream.recipientId, topic, ctx.user)}
    ORDER BY m.id DESC LIMIT ${STREAM_MESSAGE_BATCH_SIZE}::int FOR UPDATE OF m`;
  const start = ctx.now().getTime();
  for (;;) {
    if (ctx.now().getTime() >= start + DELETE_TOPIC_TIME_LIMIT_MS) return { complete: false };
    const deleted = await inRawTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
      deleteMessages({ tx, events }, ctx.realm.id, batch, ctx.user.id),
    );
    if (deleted === 0) break;
  }
  await inTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    forgetTopic(ctx, { tx, events }, stream, topic),
  );
  return { complete: true };
}

/**
 * The topic is gone: its users' visibility policies go too (back to inherit, with `user_topic`
 * events and, for those who had muted it, the legacy `muted_topics` list). In a channel with
 * protected history, only for those who no longer have any message of the topic.
 */
async function forgetTopic(
  ctx: RequestContext,
  { tx, events }: UnitOfWork,
  stream: AccessChannel & { id: number; recipientId: number },
  topic: string,
) {
  const rows = await tx.$queryRaw<
    { user_profile_id: number; topic_name: string; muted: boolean }[]
  >`
    DELETE FROM user_topic t WHERE t.stream_id = ${stream.id} AND t.topic_name_lower = lower(${topic})
      AND (${!subscribersNeedRows(stream)} OR NOT EXISTS (
        SELECT 1 FROM user_message um JOIN message m ON m.id = um.message_id
        WHERE um.user_profile_id = t.user_profile_id AND m.realm_id = ${ctx.realm.id} AND m.recipient_id = ${stream.recipientId}
          AND lower(m.subject) = lower(${topic}) AND m.is_channel_message))
    RETURNING t.user_profile_id, t.topic_name, t.visibility_policy = ${TopicVisibility.MUTED} AS muted`;
  const now = unixSeconds(ctx.now());
  for (const row of rows) {
    events.add(
      {
        type: "user_topic",
        stream_id: stream.id,
        topic_name: row.topic_name,
        last_updated: now,
        visibility_policy: TopicVisibility.INHERIT,
      },
      [row.user_profile_id],
    );
    // One list per user who had muted it (few: those who muted this one topic).
    if (row.muted)
      events.add(
        { type: "muted_topics", muted_topics: await mutedTopics(tx, row.user_profile_id) },
        [row.user_profile_id],
      );
  }
}
