/**
 * Editing and moving messages (zerver/actions/message_edit.py check_update_message and
 * do_update_message), in Zulip's order of checks.
 *
 * Everything the request decides is checked first, over the cached request path (permissions,
 * channels, rendering); then one transaction locks the message, finds it unchanged (or the
 * whole check runs again), and applies the edit with a fixed number of set-based statements
 * whatever the number of messages moved: the messages with their edit-history rows, the
 * recipients' user_message rows of a channel move, the topic preferences that follow a whole
 * topic, the notification bot's notices and the events. The checks are message-edit-checks.ts;
 * topic preferences and notices after a move, message-edit-moves.ts.
 */
import { Prisma, type Tx } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import type { ZulipEvent, UnitOfWork } from "../../events/index.ts";
import { JsonableError } from "../../errors.ts";
import { unixSeconds } from "../../lib/time.ts";
import { flagsOf, flagsToList } from "../../lib/messages/messages.ts";
import { Role } from "../../lib/users/users.ts";
import { compiledLinkifiers, topicLinksOf } from "../../lib/realm/linkifiers.ts";
import { reconcileMessageAttachments, type DetachedUpload } from "../../lib/uploads/attachments.ts";
import {
  checkEdit,
  topicMessages,
  type EditPlan,
  type MessageEditInput,
} from "./message-edit-checks.ts";
import { moveTopicPreferences, sendMoveNotices } from "./message-edit-moves.ts";
import { inTransaction } from "../transaction.ts";
import { subscribersNeedRows } from "../../lib/access/channels.ts";
import { mayReadChannelMessageSql } from "../../lib/access/messages.ts";

export type { MessageEditInput, PropagateMode } from "./message-edit-checks.ts";

/** The mention and alert-word flags a content edit recomputes (update_user_message_flags). */
const MENTION_FLAGS = flagsOf(
  "mentioned",
  "stream_wildcard_mentioned",
  "topic_wildcard_mentioned",
  "group_mentioned",
  "has_alert_word",
);

/** PATCH /messages/{message_id}: checks, then applies in one transaction; returns detached uploads. */
export async function checkUpdateMessage(
  ctx: RequestContext,
  input: MessageEditInput,
): Promise<{ detached_uploads: DetachedUpload[] }> {
  // A concurrent edit between the checks and the lock is rare: check again against the new state.
  for (let attempt = 0; ; attempt++) {
    const plan = await checkEdit(ctx, input);
    const result = await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
      const [locked] = await tx.$queryRaw<
        { content: string; subject: string; recipient_id: number }[]
      >`
        SELECT content, subject, recipient_id FROM message WHERE id = ${plan.message.id} FOR UPDATE`;
      if (
        !locked ||
        locked.content !== plan.message.content ||
        locked.subject !== plan.message.subject ||
        locked.recipient_id !== plan.message.recipientId
      )
        return null;
      return doUpdateMessage({ tx, events }, ctx, plan);
    });
    if (result) return result;
    if (attempt >= 2)
      throw new JsonableError("The message changed while it was being edited; please try again.");
  }
}

/** do_update_message: applies a checked edit inside the caller's transaction. */
async function doUpdateMessage(
  { tx, events }: UnitOfWork,
  ctx: RequestContext,
  plan: EditPlan,
): Promise<{ detached_uploads: DetachedUpload[] }> {
  const { realm, user } = ctx;
  const { message, origStream, targetStream } = plan;
  const now = ctx.now();
  const timestamp = unixSeconds(now);
  const event: ZulipEvent = {
    type: "update_message",
    user_id: user.id,
    edit_timestamp: timestamp,
    message_id: message.id,
    rendering_only: false,
  };
  const isMoved = plan.isTopicEdited || plan.isStreamEdited;
  // Resolving or unresolving alone is not a move for last_moved_timestamp (feature level 365).
  const movesForDisplay =
    plan.isStreamEdited || (plan.isTopicEdited && !plan.topicResolved && !plan.topicUnresolved);

  // The target message (and with propagate_mode, its topic) in one statement with their edit
  // history rows; only the target carries the content change.
  const mode = isMoved ? plan.propagateMode : "change_one";
  const targetRecipientId = targetStream?.recipientId ?? message.recipientId;
  const selection =
    mode === "change_one" || !origStream
      ? Prisma.sql`message m WHERE m.id = ${message.id}`
      : Prisma.sql`${topicMessages(realm.id, message.recipientId, plan.origTopic, user)} AND (m.id = ${message.id} OR ${mode === "change_all"} OR m.id > ${message.id})`;
  const rendered = plan.rendered;
  const [moved] = await tx.$queryRaw<{ ids: number[] }[]>`
    WITH target AS (SELECT m.id FROM ${selection} FOR UPDATE OF m),
    upd AS (
      UPDATE message m SET
        subject = ${plan.targetTopic},
        recipient_id = ${targetRecipientId},
        content = CASE WHEN m.id = ${message.id} THEN ${plan.content} ELSE m.content END,
        rendered_content = CASE WHEN m.id = ${message.id} AND ${plan.isContentEdited} THEN ${rendered?.html ?? null} ELSE m.rendered_content END,
        has_link = CASE WHEN m.id = ${message.id} AND ${plan.isContentEdited} THEN ${rendered?.hasLink ?? false} ELSE m.has_link END,
        has_image = CASE WHEN m.id = ${message.id} AND ${plan.isContentEdited} THEN ${rendered?.hasImage ?? false} ELSE m.has_image END,
        last_edit_time = CASE WHEN m.id = ${message.id} AND ${plan.isContentEdited} THEN ${now} ELSE m.last_edit_time END,
        last_moved_time = CASE WHEN ${movesForDisplay} THEN ${now} ELSE m.last_moved_time END
      FROM target WHERE m.id = target.id
      RETURNING m.id),
    hist AS (
      INSERT INTO message_edit (realm_id, message_id, user_id, edit_time, prev_content, prev_rendered_content, prev_rendered_content_version,
                                prev_topic, topic, prev_stream_id, stream_id)
      SELECT ${realm.id}, upd.id, ${user.id}, ${now},
             CASE WHEN upd.id = ${message.id} AND ${plan.isContentEdited} THEN ${message.content} END,
             CASE WHEN upd.id = ${message.id} AND ${plan.isContentEdited} THEN ${message.renderedContent} END,
             CASE WHEN upd.id = ${message.id} AND ${plan.isContentEdited} THEN ${message.renderedContentVersion}::int END,
             CASE WHEN ${plan.isTopicEdited} THEN ${plan.origTopic} END, CASE WHEN ${plan.isTopicEdited} THEN ${plan.targetTopic} END,
             CASE WHEN ${plan.isStreamEdited} THEN ${origStream?.id ?? null}::int END, CASE WHEN ${plan.isStreamEdited} THEN ${targetStream?.id ?? null}::int END
      FROM upd)
    SELECT COALESCE(array_agg(id ORDER BY id), '{}') AS ids FROM upd`;
  const changedIds = moved!.ids;

  let detached: DetachedUpload[] = [];
  if (plan.isContentEdited) {
    detached = await reconcileMessageAttachments(
      tx,
      realm,
      user,
      { id: message.id, senderId: message.senderId },
      plan.rendered!,
    );
    await updateMentionFlags(tx, plan);
    Object.assign(event, {
      orig_content: message.content,
      orig_rendered_content: message.renderedContent,
      content: plan.content,
      rendered_content: rendered!.html,
      is_me_message: /^\/me( |$)/.test(plan.content),
    });
  }

  if (!origStream) {
    // A direct message: everyone in the conversation, with their flags.
    const users = await tx.$queryRaw<{ user_profile_id: number; flags: bigint }[]>`
      SELECT user_profile_id, flags FROM user_message WHERE message_id = ${message.id}`;
    event.message_ids = [message.id];
    events.add(
      event,
      users.map((u) => u.user_profile_id),
      new Map(users.map((u) => [u.user_profile_id, { flags: flagsToList(BigInt(u.flags)) }])),
    );
    return { detached_uploads: detached };
  }

  event.stream_name = origStream.name;
  event.stream_id = origStream.id;
  if (isMoved) event.propagate_mode = plan.propagateMode;
  if (plan.isStreamEdited)
    Object.assign(event, { orig_subject: plan.origTopic, new_stream_id: targetStream!.id });
  if (plan.isTopicEdited)
    Object.assign(event, {
      orig_subject: plan.origTopic,
      subject: plan.targetTopic,
      topic_links: topicLinksOf(await compiledLinkifiers(tx, realm.id), plan.targetTopic),
    });
  event.message_ids = changedIds;

  // A channel move: who loses the messages' rows (not subscribed to the new channel), who gains
  // them (every subscriber, when the new channel's history is not shared), in one statement.
  let losingAccess: number[] = [];
  if (plan.isStreamEdited) {
    const [adjusted] = await tx.$queryRaw<{ losing: number[]; losing_access: number[] }[]>`
      WITH losing AS (
        SELECT DISTINCT s.user_profile_id AS id FROM subscription s WHERE s.recipient_id = ${origStream.recipientId}
        EXCEPT SELECT s.user_profile_id FROM subscription s WHERE s.recipient_id = ${targetStream!.recipientId} AND s.active),
      del AS (DELETE FROM user_message um USING losing WHERE um.user_profile_id = losing.id AND um.message_id = ANY(${changedIds}::int[])),
      ins AS (
        INSERT INTO user_message (user_profile_id, message_id, flags)
        SELECT s.user_profile_id, mid, ${flagsOf("read")} FROM subscription s, unnest(${changedIds}::int[]) AS mid
        WHERE ${subscribersNeedRows(targetStream!)} AND s.recipient_id = ${targetStream!.recipientId} AND s.active
        ON CONFLICT (user_profile_id, message_id) DO NOTHING)
      SELECT ARRAY(SELECT id FROM losing) AS losing,
             ARRAY(SELECT l.id FROM losing l JOIN user_profile u ON u.id = l.id JOIN stream t ON t.id = ${targetStream!.id}
                   WHERE NOT ${mayReadChannelMessageSql("u", "t", Prisma.raw("FALSE"))}) AS losing_access`;
    losingAccess = adjusted!.losing_access;
    if (losingAccess.length)
      events.add(
        {
          type: "delete_message",
          message_ids: changedIds,
          message_type: "stream",
          stream_id: origStream.id,
          topic: plan.origTopic,
        },
        losingAccess,
      );
  }

  // Who hears of the edit: the target message's recipients with their flags, and (for channels
  // whose history is shared) the target channel's subscribers (and a moved topic's old ones).
  const recipients = await tx.$queryRaw<{ id: number; flags: bigint | null }[]>`
    WITH ums AS (SELECT user_profile_id AS id, flags FROM user_message WHERE message_id = ${message.id}),
    subs AS (
      SELECT s.user_profile_id AS id FROM subscription s JOIN user_profile u ON u.id = s.user_profile_id
      WHERE ${!subscribersNeedRows(origStream)} AND s.active AND s.is_user_active
        AND (s.recipient_id = ${targetRecipientId} OR (${plan.isStreamEdited} AND s.recipient_id = ${origStream.recipientId}))
        AND NOT (u.role = ${Role.GUEST} AND ${plan.isStreamEdited} AND s.recipient_id = ${targetRecipientId}
                 AND NOT EXISTS (SELECT 1 FROM subscription o WHERE o.user_profile_id = u.id AND o.recipient_id = ${origStream.recipientId} AND o.active)))
    SELECT id, flags FROM ums UNION SELECT id, NULL FROM subs WHERE id NOT IN (SELECT id FROM ums)`;
  const losing = new Set(losingAccess);
  const notified = recipients.filter((r) => !losing.has(r.id));
  const userData = new Map(
    notified.map((r) => [
      r.id,
      { flags: r.flags === null ? ["read"] : flagsToList(BigInt(r.flags)) },
    ]),
  );

  // Whether the whole topic (as the caller sees it) moved: then topic preferences follow it.
  let movedAll = false;
  if (isMoved) {
    if (plan.propagateMode === "change_all") movedAll = true;
    else {
      const [left] = await tx.$queryRaw<{ left: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM ${topicMessages(realm.id, message.recipientId, plan.origTopic, user)}) AS left`;
      movedAll = !left!.left;
    }
  }
  if (movedAll) await moveTopicPreferences({ tx, events }, plan, changedIds, losing, now);

  events.add(
    event,
    notified.map((r) => r.id),
    userData,
  );

  if (!isMoved || !plan.bot) return { detached_uploads: detached };
  await sendMoveNotices({ tx, events }, ctx, plan, changedIds, movedAll);
  return { detached_uploads: detached };
}

/**
 * update_user_message_flags: the mention and alert-word flags of every recipient follow the new content, in one
 * statement. (Zulip's prior_mention_user_ids drive its push and email notifications, which this
 * server does not send; clients learn of a new mention from the event's flags.)
 */
async function updateMentionFlags(tx: Tx, plan: EditPlan): Promise<void> {
  const rendered = plan.rendered!;
  const mentioned = [...plan.mentionedUserIds];
  const topicMentioned = rendered.wildcardMention === "topic" ? [...plan.topicParticipantIds] : [];
  const channelWildcard = rendered.wildcardMention === "channel";
  const alerted = [...plan.alertedUserIds];
  await tx.$executeRaw`
      UPDATE user_message um SET flags = (um.flags & ~${MENTION_FLAGS}::bigint)
        | CASE WHEN um.user_profile_id = ANY(${mentioned}::int[]) THEN ${flagsOf("mentioned")}::bigint ELSE 0 END
        | CASE WHEN ${channelWildcard} THEN ${flagsOf("stream_wildcard_mentioned")}::bigint ELSE 0 END
        | CASE WHEN um.user_profile_id = ANY(${topicMentioned}::int[]) THEN ${flagsOf("topic_wildcard_mentioned")}::bigint ELSE 0 END
        | CASE WHEN um.user_profile_id = ANY(${alerted}::int[]) THEN ${flagsOf("has_alert_word")}::bigint ELSE 0 END
      WHERE um.message_id = ${plan.message.id}`;
}
