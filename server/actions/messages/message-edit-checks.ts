/**
 * The checks of a message edit (zerver/actions/message_edit.py check_update_message,
 * validate_message_edit_payload, validate_user_can_edit_message), in Zulip's order: access to the
 * message, the content and topic rules, the move permissions and time limits. They read only, over
 * the cached request path (permissions, channels, rendering), and yield the plan that
 * message-edit.ts applies.
 */
import { createHash } from "node:crypto";
import { Prisma, type Message } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import { renderMarkdown } from "../../lib/markdown/index.ts";
import type { RenderResult } from "../../lib/markdown/types.ts";
import { accessMessage } from "../../lib/messages/messages.ts";
import { alertedUserIds } from "../../lib/users/alert-words.ts";
import { can, canInChannel } from "../../lib/groups/permissions.ts";
import { accessChannel, findChannel, type ChannelRow } from "../../lib/channels/channels.ts";
import { accessSql, canAdministerChannel, type Reader } from "../../lib/access/channels.ts";
import {
  EMPTY_TOPIC_FALLBACK_NAME,
  namesEmptyTopic,
  normalizeContent,
  normalizeTopic,
  RESOLVED_TOPIC_PREFIX,
} from "../../lib/messages/topics.ts";
import { isModeratorOrAbove } from "../../lib/users/users.ts";
import {
  checkCanCreateTopic,
  checkMentions,
  checkTopicPolicy,
  checkWildcardMention,
  markdownContext,
} from "./messages.ts";
import { notificationBot, type InternalSender } from "./internal-send.ts";

/** Zulip lets a request through up to 20 s past each time limit (network delays, client rounding). */
const EDIT_LIMIT_BUFFER_SECONDS = 20;

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
export interface EditPlan {
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
  /** Users whose alert words the new content holds (has_alert_word follows it, as mentions do). */
  alertedUserIds: ReadonlySet<number>;
  /** Topic participants, when the new content has a topic wildcard mention. */
  topicParticipantIds: Set<number>;
  notifyOld: boolean;
  notifyNew: boolean;
  bot: InternalSender | null;
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const secondsSince = (ctx: RequestContext, d: Date) => (ctx.now().getTime() - d.getTime()) / 1000;

/**
 * validate_user_can_edit_message: editing must be on, the caller the sender, and the content
 * time limit (plus `bufferSeconds`) not passed.
 */
export function checkContentEditable(
  ctx: RequestContext,
  message: { senderId: number; dateSent: Date },
  bufferSeconds: number,
) {
  if (!ctx.realm.allowMessageEditing)
    throw new JsonableError("Your organization has turned off message editing");
  if (message.senderId !== ctx.user.id)
    throw new JsonableError("You don't have permission to edit this message");
  const limit = ctx.realm.messageContentEditLimitSeconds;
  if (limit !== null && secondsSince(ctx, message.dateSent) > limit + bufferSeconds)
    throw new JsonableError("The time limit for editing this message has passed");
}

/** Every check of check_update_message, in its order; reads only. */
export async function checkEdit(ctx: RequestContext, input: MessageEditInput): Promise<EditPlan> {
  const { realm, user } = ctx;
  const { message, related } = await accessMessage(ctx.db, user, input.messageId, realm, {
    change: true,
  });

  if (input.content !== undefined) checkContentEditable(ctx, message, EDIT_LIMIT_BUFFER_SECONDS);

  let topic: string | undefined;
  if (input.topic !== undefined) {
    // The names that stand for the empty topic ("general chat", "(no topic)", the organization's
    // display name) are the empty topic; the current topic is no change.
    topic = input.topic.trim();
    if (namesEmptyTopic(topic, realm)) topic = "";
    if (topic === message.subject) topic = undefined;
  }

  // validate_message_edit_payload
  if (topic === undefined && input.content === undefined && input.streamId === undefined)
    throw new JsonableError("Nothing to change");
  if (!message.isChannelMessage) {
    if (input.streamId !== undefined)
      throw new JsonableError("Direct messages cannot be moved to channels.");
    if (topic !== undefined) throw new JsonableError("Direct messages cannot have topics.");
  }
  if (input.propagateMode !== "change_one" && topic === undefined && input.streamId === undefined)
    throw new JsonableError("Invalid propagate_mode without topic edit");
  if (
    topic !== undefined &&
    [RESOLVED_TOPIC_PREFIX.trim(), `${RESOLVED_TOPIC_PREFIX}${EMPTY_TOPIC_FALLBACK_NAME}`].includes(
      topic,
    )
  )
    throw new JsonableError("General chat cannot be marked as resolved");
  // check_stream_topic (printable characters) and truncation to the topic length.
  if (topic !== undefined) topic = normalizeTopic(topic, realm);
  if (input.streamId !== undefined && input.content !== undefined)
    throw new JsonableError("Cannot change message content while changing channel");
  if (input.content !== undefined && related.submessages.some((s) => s.msgType === "widget"))
    throw new JsonableError("Widgets cannot be edited.");
  if (input.prevContentSha256 !== undefined && input.prevContentSha256 !== sha256(message.content))
    throw new JsonableError("'prev_content_sha256' value does not match the expected value.", {
      code: "EXPECTATION_MISMATCH",
    });

  // build_message_edit_request
  const isContentEdited = input.content !== undefined;
  const content = isContentEdited
    ? normalizeContent(input.content!.trimEnd() === "" ? "(deleted)" : input.content!)
    : message.content;
  const origTopic = message.subject;
  const targetTopic = topic ?? origTopic;
  const isTopicEdited = topic !== undefined;
  const topicResolved =
    isTopicEdited &&
    targetTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    !origTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    (input.topic ?? "").trim().slice(RESOLVED_TOPIC_PREFIX.length) === origTopic;
  const topicUnresolved =
    isTopicEdited &&
    origTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    !targetTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
    origTopic.replace(/^[✔ ]+/u, "") === targetTopic;

  let origStream: ChannelRow | null = null;
  let targetStream: ChannelRow | null = null;
  const isStreamEdited = input.streamId !== undefined;
  if (message.isChannelMessage) {
    const recipient = related.recipients.find((r) => r.id === message.recipientId)!;
    origStream = await findChannel(ctx.db, realm.id, { id: recipient.typeId });
    if (!origStream) throw new JsonableError("Invalid message(s)");
    targetStream = origStream;
    // access_stream_by_id_for_message: an active channel whose content the caller may access.
    if (isStreamEdited)
      targetStream = await accessChannel(ctx.db, ctx.user, { id: input.streamId! });
    checkTopicPolicy(realm, targetStream, targetTopic, isTopicEdited || isStreamEdited);
  }

  if (isTopicEdited) {
    if (topicResolved || topicUnresolved) {
      if (!(await canResolveTopics(ctx, origStream!, targetStream!)))
        throw new JsonableError("You don't have permission to resolve topics in this channel.");
    } else {
      if (!(await canEditTopic(ctx, origStream!, targetStream!)))
        throw new JsonableError("You don't have permission to edit this message");
      const limit = realm.moveMessagesWithinStreamLimitSeconds;
      if (
        limit !== null &&
        !isModeratorOrAbove(user) &&
        secondsSince(ctx, message.dateSent) > limit + EDIT_LIMIT_BUFFER_SECONDS
      )
        throw new JsonableError("The time limit for editing this message's topic has passed.");
    }
  }

  let rendered: RenderResult | null = null;
  let mentionedUserIds = new Set<number>();
  let alerted: ReadonlySet<number> = new Set();
  let topicParticipantIds = new Set<number>();
  if (isContentEdited) {
    const markdown = await markdownContext(ctx, content);
    rendered = renderMarkdown(content, markdown);
    // Only the sender edits content, so the caller's permissions are the sender's.
    if (origStream && rendered.wildcardMention === "channel")
      await checkWildcardMention(ctx, "channel", origStream.subscriberIds.length);
    if (origStream && rendered.wildcardMention === "topic") {
      topicParticipantIds = await topicParticipants(ctx, message.recipientId, origTopic);
      await checkWildcardMention(ctx, "topic", topicParticipantIds.size);
    }
    mentionedUserIds = await checkMentions(ctx, markdown, rendered);
    alerted = await alertedUserIds(ctx.db, realm.id, content);
  }

  const isMessageMoved = isTopicEdited || isStreamEdited;
  if (origStream && isStreamEdited) {
    if (!(await canMoveMessagesOutOfChannel(ctx, origStream)))
      throw new JsonableError("You don't have permission to move this message");
    if (!(await canInChannel(ctx.db, user, targetStream!, "can_send_message_group")))
      throw new JsonableError("You do not have permission to post in this channel.");
    const limit = realm.moveMessagesBetweenStreamsLimitSeconds;
    if (
      limit !== null &&
      !isModeratorOrAbove(user) &&
      secondsSince(ctx, message.dateSent) > limit + EDIT_LIMIT_BUFFER_SECONDS
    )
      throw new JsonableError("The time limit for editing this message's channel has passed");
  }
  if (targetStream && isMessageMoved && !topicResolved && !topicUnresolved)
    await checkCanCreateTopic(ctx, targetStream, targetTopic);
  if (
    origStream &&
    input.propagateMode === "change_all" &&
    isMessageMoved &&
    !isModeratorOrAbove(user) &&
    !topicResolved &&
    !topicUnresolved
  )
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
    alertedUserIds: alerted,
    topicParticipantIds,
    // The notification bot sends notices after moves; found (or created) before the transaction.
    bot:
      isMessageMoved &&
      (input.sendNotificationToOldThread ||
        input.sendNotificationToNewThread ||
        topicResolved ||
        topicUnresolved)
        ? await notificationBot(ctx, realm)
        : null,
    notifyOld: input.sendNotificationToOldThread,
    notifyNew: input.sendNotificationToNewThread,
  };
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
  return (
    orig.id !== target.id && canInChannel(ctx.db, ctx.user, target, "can_resolve_topics_group")
  );
}

/** can_move_messages_out_of_channel: administering the channel, the organization's permission, or the channel's can_move_messages_out_of_channel_group. */
async function canMoveMessagesOutOfChannel(ctx: RequestContext, stream: ChannelRow) {
  if (await canAdministerChannel(ctx.db, ctx.user, stream)) return true;
  if (await can(ctx.db, ctx.user, ctx.realm, "can_move_messages_between_channels_group"))
    return true;
  return canInChannel(ctx.db, ctx.user, stream, "can_move_messages_out_of_channel_group");
}

/** Users who sent or reacted to a message in the topic (participants_for_topic). */
async function topicParticipants(
  ctx: RequestContext,
  recipientId: number,
  topic: string,
): Promise<Set<number>> {
  const rows = await ctx.db.$queryRaw<{ id: number }[]>`
    WITH t AS (SELECT id, sender_id FROM message WHERE realm_id = ${ctx.realm.id} AND recipient_id = ${recipientId} AND lower(subject) = lower(${topic}) AND is_channel_message)
    SELECT sender_id AS id FROM t UNION SELECT r.user_profile_id FROM reaction r WHERE r.message_id IN (SELECT id FROM t)`;
  return new Set(rows.map((r) => r.id));
}

/**
 * The messages of a topic that `reader` may read, as SQL (`message m` and its channel `s`; Zulip's
 * bulk_access_stream_messages_query): what a move takes, and what it leaves.
 */
export function topicMessages(realmId: number, recipientId: number, topic: string, reader: Reader) {
  const received = Prisma.sql`EXISTS (SELECT 1 FROM user_message um WHERE um.user_profile_id = ${reader.id} AND um.message_id = m.id)`;
  return Prisma.sql`message m JOIN stream s ON s.recipient_id = m.recipient_id
    WHERE m.realm_id = ${realmId} AND m.recipient_id = ${recipientId} AND lower(m.subject) = lower(${topic}) AND m.is_channel_message
      AND ${accessSql("CHANNEL_MESSAGE", reader, "s", received)}`;
}

/**
 * check_time_limit_for_change_all_propagate_mode: the stricter applicable move limit, over the
 * messages of the topic the caller can see; MOVE_MESSAGES_TIME_LIMIT_EXCEEDED when some are older.
 */
async function checkChangeAllTimeLimit(
  ctx: RequestContext,
  message: Message,
  topic: string,
  topicEdited: boolean,
  streamEdited: boolean,
) {
  const limits: number[] = [];
  if (topicEdited && ctx.realm.moveMessagesWithinStreamLimitSeconds !== null)
    limits.push(ctx.realm.moveMessagesWithinStreamLimitSeconds + EDIT_LIMIT_BUFFER_SECONDS);
  if (streamEdited && ctx.realm.moveMessagesBetweenStreamsLimitSeconds !== null)
    limits.push(ctx.realm.moveMessagesBetweenStreamsLimitSeconds + EDIT_LIMIT_BUFFER_SECONDS);
  if (limits.length === 0) return;
  const oldest = new Date(ctx.now().getTime() - Math.min(...limits) * 1000);
  const [row] = await ctx.db.$queryRaw<
    { total: number; allowed: number; first_allowed: number | null }[]
  >`
    SELECT count(*)::int AS total, count(*) FILTER (WHERE m.date_sent > ${oldest})::int AS allowed,
           min(m.id) FILTER (WHERE m.date_sent > ${oldest}) AS first_allowed
    FROM ${topicMessages(ctx.realm.id, message.recipientId, topic, ctx.user)}`;
  if (!row || row.total === row.allowed) return;
  throw new JsonableError(
    `You only have permission to move the ${row.allowed}/${row.total} most recent messages in this topic.`,
    {
      code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
      data: {
        first_message_id_allowed_to_move: row.first_allowed,
        total_messages_allowed_to_move: row.allowed,
        total_messages_in_topic: row.total,
      },
    },
  );
}
