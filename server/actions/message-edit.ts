/**
 * Editing and moving messages (zerver/actions/message_edit.py check_update_message and
 * do_update_message), in Zulip's order of checks.
 *
 * Everything the request decides is checked first, over the cached request path (permissions,
 * channels, rendering); then one transaction locks the message, finds it unchanged (or the
 * whole check runs again), and applies the edit with a fixed number of set-based statements
 * whatever the number of messages moved: the messages with their edit-history rows, the
 * recipients' user_message rows of a channel move, the topic preferences that follow a whole
 * topic, the notification bot's notices and the events.
 */
import { unixSeconds } from "../lib/time.ts";
import { createHash } from "node:crypto";
import { Prisma, type Message, type Realm, type Tx } from "../db.ts";
import type { RequestContext } from "../context.ts";
import type { PendingEvents, ZulipEvent } from "../events.ts";
import { JsonableError } from "../errors.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import type { RenderResult } from "../lib/markdown/types.ts";
import { accessMessage, flagsOf, flagsToList } from "../lib/messages.ts";
import { can, canInChannel } from "../lib/permissions.ts";
import { findChannel, hasContentAccess, type ChannelRow } from "../lib/channels.ts";
import { accessSql, canAdministerChannel, type Reader } from "../lib/channel-access.ts";
import { EMPTY_TOPIC_FALLBACK_NAME, namesEmptyTopic, normalizeContent, normalizeTopic, RESOLVED_TOPIC_PREFIX, TopicVisibility } from "../lib/topics.ts";
import { isModeratorOrAbove, Role } from "../lib/users.ts";
import { realmUrl } from "../lib/realms.ts";
import { messageLinkUrl, silentMentionSyntax, topicLinkSyntax } from "../lib/message-links.ts";
import { reconcileMessageAttachments, type DetachedUpload } from "../lib/attachments.ts";
import { checkCanCreateTopic, checkMentions, checkTopicPolicy, checkWildcardMention, markdownContext } from "./messages.ts";
import { internalSendMessage, notificationBot, type InternalSender } from "./internal-send.ts";
import { inTransaction } from "./transaction.ts";

/** Zulip lets a request through up to 20 s past each time limit (network delays, client rounding). */
const EDIT_LIMIT_BUFFER_SECONDS = 20;
/** The mention flags a content edit recomputes (update_user_message_flags). */
const MENTION_FLAGS = flagsOf("mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "group_mentioned");

export type PropagateMode = "change_one" | "change_later" | "change_all";

export interface MessageEditInput {
  messageId: number;
  topic?: string;
  propagateMode: PropagateMode;
  sendNotificationToOldThread: boolean;
  sendNotificationToNewThread: boolean;
  content?: string;
  prevContentSha256?: string;
  streamId?: number;
}

/** Zulip's StreamMessageEditRequest / DirectMessageEditRequest, with what the checks found. */
interface EditPlan {
  message: Message;
  /** The message's channel (null for a direct message) and the channel it moves to. */
  origStream: ChannelRow | null;
  targetStream: ChannelRow | null;
  origTopic: string;
  targetTopic: string;
  isContentEdited: boolean;
  isTopicEdited: boolean;
  isStreamEdited: boolean;
  topicResolved: boolean;
  topicUnresolved: boolean;
  propagateMode: PropagateMode;
  content: string;
  rendered: RenderResult | null;
  mentionedUserIds: Set<number>;
  /** Topic participants, when the new content has a topic wildcard mention. */
  topicParticipantIds: Set<number>;
  notifyOld: boolean;
  notifyNew: boolean;
  bot: InternalSender | null;
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const secondsSince = (ctx: RequestContext, d: Date) => (ctx.now().getTime() - d.getTime()) / 1000;

/** PATCH /messages/{message_id}: checks, then applies in one transaction; returns detached uploads. */
export async function checkUpdateMessage(ctx: RequestContext, input: MessageEditInput): Promise<{ detached_uploads: DetachedUpload[] }> {
  // A concurrent edit between the checks and the lock is rare: check again against the new state.
  for (let attempt = 0; ; attempt++) {
    const plan = await checkEdit(ctx, input);
    const result = await inTransaction(ctx, ctx.realm.id, async (tx, events) => {
      const [locked] = await tx.$queryRaw<{ content: string; subject: string; recipient_id: number }[]>`
        SELECT content, subject, recipient_id FROM message WHERE id = ${plan.message.id} FOR UPDATE`;
      if (!locked || locked.content !== plan.message.content || locked.subject !== plan.message.subject || locked.recipient_id !== plan.message.recipientId)
        return null;
      return doUpdateMessage(tx, events, ctx, plan);
    });
    if (result) return result;
    if (attempt >= 2) throw new JsonableError("The message changed while it was being edited; please try again.");
  }
}

/** Every check of check_update_message, in its order; reads only. */
async function checkEdit(ctx: RequestContext, input: MessageEditInput): Promise<EditPlan> {
  const { realm, user } = ctx;
  const { message, related } = await accessMessage(ctx.db, user, input.messageId, realm, { change: true });

  if (input.content !== undefined) {
    if (!realm.allowMessageEditing) throw new JsonableError("Your organization has turned off message editing");
    if (message.senderId !== user.id) throw new JsonableError("You don't have permission to edit this message");
    const limit = realm.messageContentEditLimitSeconds;
    if (limit !== null && secondsSince(ctx, message.dateSent) > limit + EDIT_LIMIT_BUFFER_SECONDS)
      throw new JsonableError("The time limit for editing this message has passed");
  }

  let topic: string | undefined;
  if (input.topic !== undefined) {
    // The names that stand for the empty topic ("general chat", "(no topic)", the organization's
    // display name) are the empty topic; the current topic is no change.
    topic = input.topic.trim();
    if (namesEmptyTopic(topic, realm)) topic = "";
    if (topic === message.subject) topic = undefined;
  }

  // validate_message_edit_payload
  if (topic === undefined && input.content === undefined && input.streamId === undefined) throw new JsonableError("Nothing to change");
  if (!message.isChannelMessage) {
    if (input.streamId !== undefined) throw new JsonableError("Direct messages cannot be moved to channels.");
    if (topic !== undefined) throw new JsonableError("Direct messages cannot have topics.");
  }
  if (input.propagateMode !== "change_one" && topic === undefined && input.streamId === undefined)
    throw new JsonableError("Invalid propagate_mode without topic edit");
  if (topic !== undefined && [RESOLVED_TOPIC_PREFIX.trim(), `${RESOLVED_TOPIC_PREFIX}${EMPTY_TOPIC_FALLBACK_NAME}`].includes(topic))
    throw new JsonableError("General chat cannot be marked as resolved");
  // check_stream_topic (printable characters) and truncation to the topic length.
  if (topic !== undefined) topic = normalizeTopic(topic, realm);
  if (input.streamId !== undefined && input.content !== undefined) throw new JsonableError("Cannot change message content while changing channel");
  if (input.content !== undefined && related.submessages.some((s) => s.msgType === "widget")) throw new JsonableError("Widgets cannot be edited.");
  if (input.prevContentSha256 !== undefined && input.prevContentSha256 !== sha256(message.content))
    throw new JsonableError("'prev_content_sha256' value does not match the expected value.", { code: "EXPECTATION_MISMATCH" });

  // build_message_edit_request
  const isContentEdited = input.content !== undefined;
  const content = isContentEdited ? normalizeContent(input.content!.trimEnd() === "" ? "(deleted)" : input.content!) : message.content;
  const origTopic = message.subject;
  const targetTopic = topic ?? origTopic;
  const isTopicEdited = topic !== undefined;
  const topicResolved = isTopicEdited && targetTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !origTopic.startsWith(RESOLVED_TOPIC_PREFIX) && (input.topic ?? "").trim().slice(RESOLVED_TOPIC_PREFIX.length) === origTopic;
  const topicUnresolved = isTopicEdited && origTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !targetTopic.startsWith(RESOLVED_TOPIC_PREFIX) && origTopic.replace(/^[✔ ]+/u, "") === targetTopic;

  let origStream: ChannelRow | null = null;
  let targetStream: ChannelRow | null = null;
  const isStreamEdited = input.streamId !== undefined;
  if (message.isChannelMessage) {
    const recipient = related.recipients.find((r) => r.id === message.recipientId)!;
    origStream = await findChannel(ctx.db, realm.id, { id: recipient.typeId });
    if (!origStream) throw new JsonableError("Invalid message(s)");
    targetStream = origStream;
    if (isStreamEdited) targetStream = await accessChannelForMessage(ctx, input.streamId!);
    checkTopicPolicy(realm, targetStream, targetTopic, isTopicEdited || isStreamEdited);
  }

  if (isTopicEdited) {
    if (topicResolved || topicUnresolved) {
      if (!(await canResolveTopics(ctx, origStream!, targetStream!))) throw new JsonableError("You don't have permission to resolve topics in this channel.");
    } else {
      if (!(await canEditTopic(ctx, origStream!, targetStream!))) throw new JsonableError("You don't have permission to edit this message");
      const limit = realm.moveMessagesWithinStreamLimitSeconds;
      if (limit !== null && !isModeratorOrAbove(user) && secondsSince(ctx, message.dateSent) > limit + EDIT_LIMIT_BUFFER_SECONDS)
        throw new JsonableError("The time limit for editing this message's topic has passed.");
    }
  }

  let rendered: RenderResult | null = null;
  let mentionedUserIds = new Set<number>();
  let topicParticipantIds = new Set<number>();
  if (isContentEdited) {
    const markdown = await markdownContext(ctx, content);
    rendered = renderMarkdown(content, markdown);
    // Only the sender edits content, so the caller's permissions are the sender's.
    if (origStream && rendered.wildcardMention === "channel") await checkWildcardMention(ctx, "channel", origStream.subscriberIds.length);
    if (origStream && rendered.wildcardMention === "topic") {
      topicParticipantIds = await topicParticipants(ctx, message.recipientId, origTopic);
      await checkWildcardMention(ctx, "topic", topicParticipantIds.size);
    }
    mentionedUserIds = await checkMentions(ctx, markdown, rendered);
  }

  const isMessageMoved = isTopicEdited || isStreamEdited;
  if (origStream && isStreamEdited) {
    if (!(await canMoveMessagesOutOfChannel(ctx, origStream))) throw new JsonableError("You don't have permission to move this message");
    if (!(await canInChannel(ctx.db, user, targetStream!, "can_send_message_group"))) throw new JsonableError("You do not have permission to post in this channel.");
    const limit = realm.moveMessagesBetweenStreamsLimitSeconds;
    if (limit !== null && !isModeratorOrAbove(user) && secondsSince(ctx, message.dateSent) > limit + EDIT_LIMIT_BUFFER_SECONDS)
      throw new JsonableError("The time limit for editing this message's channel has passed");
  }
  if (targetStream && isMessageMoved && !topicResolved && !topicUnresolved) await checkCanCreateTopic(ctx, targetStream, targetTopic);
  if (origStream && input.propagateMode === "change_all" && isMessageMoved && !isModeratorOrAbove(user) && !topicResolved && !topicUnresolved)
    await checkChangeAllTimeLimit(ctx, message, origTopic, isTopicEdited, isStreamEdited);

  return {
    message,
    origStream,
    targetStream,
    origTopic,
    targetTopic,
    isContentEdited,
    isTopicEdited,
    isStreamEdited,
    topicResolved,
    topicUnresolved,
    propagateMode: input.propagateMode,
    content,
    rendered,
    mentionedUserIds,
    topicParticipantIds,
    // The notification bot sends notices after moves; found (or created) before the transaction.
    bot: isMessageMoved && (input.sendNotificationToOldThread || input.sendNotificationToNewThread || topicResolved || topicUnresolved) ? await notificationBot(ctx, realm) : null,
    notifyOld: input.sendNotificationToOldThread,
    notifyNew: input.sendNotificationToNewThread,
  };
}

/** access_stream_by_id_for_message: an active channel whose content the caller may access, else "Invalid channel ID". */
async function accessChannelForMessage(ctx: RequestContext, streamId: number): Promise<ChannelRow> {
  const stream = await findChannel(ctx.db, ctx.realm.id, { id: streamId });
  if (!stream || stream.isArchived || !(await hasContentAccess(ctx.db, ctx.user, stream))) throw new JsonableError("Invalid channel ID");
  return stream;
}

/** can_move_messages_within_channel: administering the channel, or its can_move_messages_within_channel_group. */
async function canMoveMessagesWithinChannel(ctx: RequestContext, stream: ChannelRow) {
  if (await canAdministerChannel(ctx.db, ctx.user, stream)) return true;
  return canInChannel(ctx.db, ctx.user, stream, "can_move_messages_within_channel_group");
}

/** can_edit_topic: the organization's permission, or the channel permission of either channel. */
async function canEditTopic(ctx: RequestContext, orig: ChannelRow, target: ChannelRow) {
  if (await can(ctx.db, ctx.user, ctx.realm, "can_move_messages_between_topics_group")) return true;
  if (await canMoveMessagesWithinChannel(ctx, orig)) return true;
  return orig.id !== target.id && canMoveMessagesWithinChannel(ctx, target);
}

async function canResolveTopics(ctx: RequestContext, orig: ChannelRow, target: ChannelRow) {
  if (await can(ctx.db, ctx.user, ctx.realm, "can_resolve_topics_group")) return true;
  if (await canInChannel(ctx.db, ctx.user, orig, "can_resolve_topics_group")) return true;
  return orig.id !== target.id && canInChannel(ctx.db, ctx.user, target, "can_resolve_topics_group");
}

/** can_move_messages_out_of_channel: administering the channel, the organization's permission, or the channel's can_move_messages_out_of_channel_group. */
async function canMoveMessagesOutOfChannel(ctx: RequestContext, stream: ChannelRow) {
  if (await canAdministerChannel(ctx.db, ctx.user, stream)) return true;
  if (await can(ctx.db, ctx.user, ctx.realm, "can_move_messages_between_channels_group")) return true;
  return canInChannel(ctx.db, ctx.user, stream, "can_move_messages_out_of_channel_group");
}

/** Users who sent or reacted to a message in the topic (participants_for_topic). */
async function topicParticipants(ctx: RequestContext, recipientId: number, topic: string): Promise<Set<number>> {
  const rows = await ctx.db.$queryRaw<{ id: number }[]>`
    WITH t AS (SELECT id, sender_id FROM message WHERE realm_id = ${ctx.realm.id} AND recipient_id = ${recipientId} AND lower(subject) = lower(${topic}) AND is_channel_message)
    SELECT sender_id AS id FROM t UNION SELECT r.user_profile_id FROM reaction r WHERE r.message_id IN (SELECT id FROM t)`;
  return new Set(rows.map((r) => r.id));
}

/**
 * The messages of a topic that `reader` may read, as SQL (`message m` and its channel `s`; Zulip's
 * bulk_access_stream_messages_query): what a move takes, and what it leaves.
 */
function topicMessages(realmId: number, recipientId: number, topic: string, reader: Reader) {
  const received = Prisma.sql`EXISTS (SELECT 1 FROM user_message um WHERE um.user_profile_id = ${reader.id} AND um.message_id = m.id)`;
  return Prisma.sql`message m JOIN stream s ON s.recipient_id = m.recipient_id
    WHERE m.realm_id = ${realmId} AND m.recipient_id = ${recipientId} AND lower(m.subject) = lower(${topic}) AND m.is_channel_message
      AND ${accessSql("CHANNEL_MESSAGE", reader, "s", received)}`;
}

/**
 * check_time_limit_for_change_all_propagate_mode: the stricter applicable move limit, over the
 * messages of the topic the caller can see; MOVE_MESSAGES_TIME_LIMIT_EXCEEDED when some are older.
 */
async function checkChangeAllTimeLimit(ctx: RequestContext, message: Message, topic: string, topicEdited: boolean, streamEdited: boolean) {
  const limits: number[] = [];
  if (topicEdited && ctx.realm.moveMessagesWithinStreamLimitSeconds !== null) limits.push(ctx.realm.moveMessagesWithinStreamLimitSeconds + EDIT_LIMIT_BUFFER_SECONDS);
  if (streamEdited && ctx.realm.moveMessagesBetweenStreamsLimitSeconds !== null) limits.push(ctx.realm.moveMessagesBetweenStreamsLimitSeconds + EDIT_LIMIT_BUFFER_SECONDS);
  if (limits.length === 0) return;
  const oldest = new Date(ctx.now().getTime() - Math.min(...limits) * 1000);
  const [row] = await ctx.db.$queryRaw<{ total: number; allowed: number; first_allowed: number | null }[]>`
    SELECT count(*)::int AS total, count(*) FILTER (WHERE m.date_sent > ${oldest})::int AS allowed,
           min(m.id) FILTER (WHERE m.date_sent > ${oldest}) AS first_allowed
    FROM ${topicMessages(ctx.realm.id, message.recipientId, topic, ctx.user)}`;
  if (!row || row.total === row.allowed) return;
  throw new JsonableError(`You only have permission to move the ${row.allowed}/${row.total} most recent messages in this topic.`, {
    code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
    data: { first_message_id_allowed_to_move: row.first_allowed, total_messages_allowed_to_move: row.allowed, total_messages_in_topic: row.total },
  });
}

/** do_update_message: applies a checked edit inside the caller's transaction. */
async function doUpdateMessage(tx: Tx, events: PendingEvents, ctx: RequestContext, plan: EditPlan): Promise<{ detached_uploads: DetachedUpload[] }> {
  const { realm, user } = ctx;
  const { message, origStream, targetStream } = plan;
  const now = ctx.now();
  const timestamp = unixSeconds(now);
  const event: ZulipEvent = { type: "update_message", user_id: user.id, edit_timestamp: timestamp, message_id: message.id, rendering_only: false };
  const isMoved = plan.isTopicEdited || plan.isStreamEdited;
  // Resolving or unresolving alone is not a move for last_moved_timestamp (feature level 365).
  const movesForDisplay = plan.isStreamEdited || (plan.isTopicEdited && !plan.topicResolved && !plan.topicUnresolved);

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
    detached = await reconcileMessageAttachments(tx, realm, user, { id: message.id, senderId: message.senderId }, plan.rendered!);
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
    events.add(event, users.map((u) => u.user_profile_id), new Map(users.map((u) => [u.user_profile_id, { flags: flagsToList(BigInt(u.flags)) }])));
    return { detached_uploads: detached };
  }

  event.stream_name = origStream.name;
  event.stream_id = origStream.id;
  if (isMoved) event.propagate_mode = plan.propagateMode;
  if (plan.isStreamEdited) Object.assign(event, { orig_subject: plan.origTopic, new_stream_id: targetStream!.id });
  if (plan.isTopicEdited) Object.assign(event, { orig_subject: plan.origTopic, subject: plan.targetTopic, topic_links: [] });
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
        WHERE ${!targetStream!.historyPublicToSubscribers} AND s.recipient_id = ${targetStream!.recipientId} AND s.active
        ON CONFLICT (user_profile_id, message_id) DO NOTHING)
      SELECT ARRAY(SELECT id FROM losing) AS losing,
             ARRAY(SELECT l.id FROM losing l JOIN user_profile u ON u.id = l.id WHERE ${targetStream!.inviteOnly} OR u.role = ${Role.GUEST}) AS losing_access`;
    losingAccess = adjusted!.losing_access;
    if (losingAccess.length)
      events.add({ type: "delete_message", message_ids: changedIds, message_type: "stream", stream_id: origStream.id, topic: plan.origTopic }, losingAccess);
  }

  // Who hears of the edit: the target message's recipients with their flags, and (for channels
  // whose history is shared) the target channel's subscribers (and a moved topic's old ones).
  const recipients = await tx.$queryRaw<{ id: number; flags: bigint | null }[]>`
    WITH ums AS (SELECT user_profile_id AS id, flags FROM user_message WHERE message_id = ${message.id}),
    subs AS (
      SELECT s.user_profile_id AS id FROM subscription s JOIN user_profile u ON u.id = s.user_profile_id
      WHERE ${origStream.historyPublicToSubscribers} AND s.active AND s.is_user_active
        AND (s.recipient_id = ${targetRecipientId} OR (${plan.isStreamEdited} AND s.recipient_id = ${origStream.recipientId}))
        AND NOT (u.role = ${Role.GUEST} AND ${plan.isStreamEdited} AND s.recipient_id = ${targetRecipientId}
                 AND NOT EXISTS (SELECT 1 FROM subscription o WHERE o.user_profile_id = u.id AND o.recipient_id = ${origStream.recipientId} AND o.active)))
    SELECT id, flags FROM ums UNION SELECT id, NULL FROM subs WHERE id NOT IN (SELECT id FROM ums)`;
  const losing = new Set(losingAccess);
  const notified = recipients.filter((r) => !losing.has(r.id));
  const userData = new Map(notified.map((r) => [r.id, { flags: r.flags === null ? ["read"] : flagsToList(BigInt(r.flags)) }]));

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
  if (movedAll) await moveTopicPreferences(tx, events, plan, changedIds, losing, now);

  events.add(event, notified.map((r) => r.id), userData);

  if (!isMoved || !plan.bot) return { detached_uploads: detached };
  await sendMoveNotices(tx, events, ctx, plan, changedIds, movedAll);
  return { detached_uploads: detached };
}

/**
 * update_user_message_flags: the mention flags of every recipient follow the new content, in one
 * statement. (Zulip's prior_mention_user_ids drive its push and email notifications, which this
 * server does not send; clients learn of a new mention from the event's flags.)
 */
async function updateMentionFlags(tx: Tx, plan: EditPlan): Promise<void> {
  const rendered = plan.rendered!;
  const mentioned = [...plan.mentionedUserIds];
  const topicMentioned = rendered.wildcardMention === "topic" ? [...plan.topicParticipantIds] : [];
  const channelWildcard = rendered.wildcardMention === "channel";
  await tx.$executeRaw`
      UPDATE user_message um SET flags = (um.flags & ~${MENTION_FLAGS}::bigint)
        | CASE WHEN um.user_profile_id = ANY(${mentioned}::int[]) THEN ${flagsOf("mentioned")}::bigint ELSE 0 END
        | CASE WHEN ${channelWildcard} THEN ${flagsOf("stream_wildcard_mentioned")}::bigint ELSE 0 END
        | CASE WHEN um.user_profile_id = ANY(${topicMentioned}::int[]) THEN ${flagsOf("topic_wildcard_mentioned")}::bigint ELSE 0 END
      WHERE um.message_id = ${plan.message.id}`;
}

/**
 * Topic preferences follow a whole-topic move (do_update_message's user_topic migration): each
 * user's policy on the old topic moves to the new one, merged with their policy there when the
 * new topic already had messages (the more visible wins); users losing access to the messages
 * just lose the old topic's row. Two statements for any number of users.
 */
async function moveTopicPreferences(tx: Tx, events: PendingEvents, plan: EditPlan, changedIds: number[], losingAccess: Set<number>, now: Date) {
  const orig = plan.origStream!;
  const target = plan.targetStream!;
  // A change of case only keeps the same rows (topics match case-insensitively).
  if (orig.id === target.id && plan.origTopic.toLowerCase() === plan.targetTopic.toLowerCase()) return;
  const rows = await tx.$queryRaw<{ user_profile_id: number; visibility_policy: number; is_orig: boolean; target_had_messages: boolean }[]>`
    SELECT user_profile_id, visibility_policy, (stream_id = ${orig.id} AND topic_name_lower = lower(${plan.origTopic})) AS is_orig,
           EXISTS (SELECT 1 FROM message m WHERE m.realm_id = ${plan.message.realmId} AND m.recipient_id = ${target.recipientId}
                   AND lower(m.subject) = lower(${plan.targetTopic}) AND m.is_channel_message AND m.id <> ALL(${changedIds}::int[])) AS target_had_messages
    FROM user_topic
    WHERE (stream_id = ${orig.id} AND topic_name_lower = lower(${plan.origTopic})) OR (stream_id = ${target.id} AND topic_name_lower = lower(${plan.targetTopic}))`;
  if (rows.length === 0) return;
  const origPolicy = new Map(rows.filter((r) => r.is_orig).map((r) => [r.user_profile_id, r.visibility_policy]));
  const targetPolicy = new Map(rows.filter((r) => !r.is_orig).map((r) => [r.user_profile_id, r.visibility_policy]));
  const targetHadMessages = rows[0]!.target_had_messages;
  const clearOrig: number[] = [];
  const setTarget = new Map<number, number>();
  for (const userId of new Set(rows.map((r) => r.user_profile_id))) {
    const o = origPolicy.get(userId) ?? TopicVisibility.INHERIT;
    const t = targetPolicy.get(userId) ?? TopicVisibility.INHERIT;
    if (o !== TopicVisibility.INHERIT) clearOrig.push(userId);
    if (losingAccess.has(userId) && origPolicy.has(userId)) continue;
    const policy = targetHadMessages ? mergedVisibility(o, t) : o;
    if (policy !== t) setTarget.set(userId, policy);
  }
  const setIds = [...setTarget.keys()];
  const policies = setIds.map((id) => setTarget.get(id)!);
  await tx.$executeRaw`
    WITH cleared AS (
      DELETE FROM user_topic WHERE stream_id = ${orig.id} AND topic_name_lower = lower(${plan.origTopic}) AND user_profile_id = ANY(${clearOrig}::int[])),
    removed AS (
      DELETE FROM user_topic t USING unnest(${setIds}::int[], ${policies}::int[]) AS p(u, v)
      WHERE p.v = ${TopicVisibility.INHERIT} AND t.user_profile_id = p.u AND t.stream_id = ${target.id} AND t.topic_name_lower = lower(${plan.targetTopic}))
    INSERT INTO user_topic (realm_id, user_profile_id, stream_id, recipient_id, topic_name, topic_name_lower, visibility_policy, last_updated)
    SELECT ${plan.message.realmId}, p.u, ${target.id}, ${target.recipientId}, ${plan.targetTopic}, lower(${plan.targetTopic}), p.v, ${now}
    FROM unnest(${setIds}::int[], ${policies}::int[]) AS p(u, v) WHERE p.v <> ${TopicVisibility.INHERIT}
    ON CONFLICT (user_profile_id, stream_id, topic_name_lower) DO UPDATE SET visibility_policy = EXCLUDED.visibility_policy, last_updated = EXCLUDED.last_updated`;
  const last_updated = unixSeconds(now);
  for (const userId of clearOrig)
    events.add({ type: "user_topic", stream_id: orig.id, topic_name: plan.origTopic, last_updated, visibility_policy: TopicVisibility.INHERIT }, [userId]);
  for (const [userId, policy] of setTarget)
    events.add({ type: "user_topic", stream_id: target.id, topic_name: plan.targetTopic, last_updated, visibility_policy: policy }, [userId]);
}

/** get_visibility_policy_after_merge: the more visible policy of the two topics wins. */
function mergedVisibility(a: number, b: number): number {
  const both = new Set([a, b]);
  for (const policy of [TopicVisibility.FOLLOWED, TopicVisibility.UNMUTED, TopicVisibility.INHERIT]) if (both.has(policy)) return policy;
  return TopicVisibility.MUTED;
}

/** The notification bot's notices: resolved/unresolved, and the move breadcrumbs (send_message_moved_breadcrumbs). */
async function sendMoveNotices(
  tx: Tx,
  events: PendingEvents,
  ctx: RequestContext,
  plan: EditPlan,
  changedIds: number[],
  movedAll: boolean,
) {
  const { realm, user } = ctx;
  const bot = plan.bot!;
  const mention = silentMentionSyntax(user);
  const readByActor = new Set([user.id]);
  let resolvedNoticeId: number | null = null;
  if (plan.isTopicEdited && !plan.isContentEdited && !plan.isStreamEdited && (plan.topicResolved || plan.topicUnresolved)) {
    const text = plan.topicResolved ? `${mention} has marked this topic as resolved.` : `${mention} has marked this topic as unresolved.`;
    resolvedNoticeId = (await internalSendMessage(tx, events, ctx, realm, bot, { kind: "channel", streamId: plan.origStream!.id, topic: plan.targetTopic }, text, { readByUserIds: readByActor })).id;
  }
  const count = changedIds.length;
  let oldText: string | null = null;
  if (plan.notifyOld) {
    const newLocation = topicLinkSyntax(plan.targetStream!.id, plan.targetStream!.name, plan.targetTopic);
    if (movedAll) oldText = `This topic was moved to ${newLocation} by ${mention}.`;
    else if (count === 1) oldText = `A message was moved from this topic to ${newLocation} by ${mention}.`;
    else oldText = `${count} messages were moved from this topic to ${newLocation} by ${mention}.`;
  }
  let newText: string | null = null;
  if (plan.notifyNew && (plan.isStreamEdited || (plan.isTopicEdited && !plan.topicResolved && !plan.topicUnresolved))) {
    const oldLocation = topicLinkSyntax(plan.origStream!.id, plan.origStream!.name, plan.origTopic);
    const excluded = resolvedNoticeId === null ? changedIds : [...changedIds, resolvedNoticeId];
    const [pre] = await tx.$queryRaw<{ any: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM ${topicMessages(realm.id, plan.targetStream!.recipientId, plan.targetTopic, user)} AND m.id <> ALL(${excluded}::int[])) AS any`;
    if (!pre!.any && movedAll) newText = `This topic was moved here from ${oldLocation} by ${mention}.`;
    else if (count === 1) {
      const target = plan.targetStream!;
      const link = messageLinkUrl(await realmUrl(tx, realm, ctx.config), { id: plan.message.id, kind: "channel", channelId: target.id, channelName: target.name, topic: plan.targetTopic });
      newText = `[A message](${link}) was moved here from ${oldLocation} by ${mention}.`;
    } else newText = `${count} messages were moved here from ${oldLocation} by ${mention}.`;
  }
  if (newText !== null)
    await internalSendMessage(tx, events, ctx, realm, bot, { kind: "channel", streamId: plan.targetStream!.id, topic: plan.targetTopic }, newText, { readByUserIds: readByActor });
  if (oldText !== null)
    await internalSendMessage(tx, events, ctx, realm, bot, { kind: "channel", streamId: plan.origStream!.id, topic: plan.origTopic }, oldText, { readByUserIds: readByActor });
}
