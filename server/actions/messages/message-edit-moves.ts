/**
 * What follows a move besides the messages themselves (zerver/actions/message_edit.py
 * do_update_message): topic preferences that follow a whole topic, and the notification bot's
 * notices in the old and new threads.
 */
import type { RequestContext } from "../../context.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { unixSeconds } from "../../lib/time.ts";
import { TopicVisibility } from "../../lib/messages/topics.ts";
import { realmUrl } from "../../lib/realm/realm.ts";
import {
  messageLinkUrl,
  silentMentionSyntax,
  topicLinkSyntax,
} from "../../lib/messages/message-links.ts";
import { topicMessages, type EditPlan } from "./message-edit-checks.ts";
import { internalSendMessage } from "./internal-send.ts";

/**
 * Topic preferences follow a whole-topic move (do_update_message's user_topic migration): each
 * user's policy on the old topic moves to the new one, merged with their policy there when the
 * new topic already had messages (the more visible wins); users losing access to the messages
 * just lose the old topic's row. Two statements for any number of users.
 */
export async function moveTopicPreferences(
  { tx, events }: UnitOfWork,
  plan: EditPlan,
  changedIds: number[],
  losingAccess: Set<number>,
  now: Date,
) {
  const orig = plan.origStream!;
  const target = plan.targetStream!;
  // A change of case only keeps the same rows (topics match case-insensitively).
  if (orig.id === target.id && plan.origTopic.toLowerCase() === plan.targetTopic.toLowerCase())
    return;
  const rows = await tx.$queryRaw<
    {
      user_profile_id: number;
      visibility_policy: number;
      is_orig: boolean;
      target_had_messages: boolean;
    }[]
  >`
    SELECT user_profile_id, visibility_policy, (stream_id = ${orig.id} AND topic_name_lower = lower(${plan.origTopic})) AS is_orig,
           EXISTS (SELECT 1 FROM message m WHERE m.realm_id = ${plan.message.realmId} AND m.recipient_id = ${target.recipientId}
                   AND lower(m.subject) = lower(${plan.targetTopic}) AND m.is_channel_message AND m.id <> ALL(${changedIds}::int[])) AS target_had_messages
    FROM user_topic
    WHERE (stream_id = ${orig.id} AND topic_name_lower = lower(${plan.origTopic})) OR (stream_id = ${target.id} AND topic_name_lower = lower(${plan.targetTopic}))`;
  if (rows.length === 0) return;
  const origPolicy = new Map(
    rows.filter((r) => r.is_orig).map((r) => [r.user_profile_id, r.visibility_policy]),
  );
  const targetPolicy = new Map(
    rows.filter((r) => !r.is_orig).map((r) => [r.user_profile_id, r.visibility_policy]),
  );
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
    events.add(
      {
        type: "user_topic",
        stream_id: orig.id,
        topic_name: plan.origTopic,
        last_updated,
        visibility_policy: TopicVisibility.INHERIT,
      },
      [userId],
    );
  for (const [userId, policy] of setTarget)
    events.add(
      {
        type: "user_topic",
        stream_id: target.id,
        topic_name: plan.targetTopic,
        last_updated,
        visibility_policy: policy,
      },
      [userId],
    );
}

/** get_visibility_policy_after_merge: the more visible policy of the two topics wins. */
function mergedVisibility(a: number, b: number): number {
  const both = new Set([a, b]);
  for (const policy of [TopicVisibility.FOLLOWED, TopicVisibility.UNMUTED, TopicVisibility.INHERIT])
    if (both.has(policy)) return policy;
  return TopicVisibility.MUTED;
}

/** The notification bot's notices: resolved/unresolved, and the move breadcrumbs (send_message_moved_breadcrumbs). */
export async function sendMoveNotices(
  { tx, events }: UnitOfWork,
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
  if (
    plan.isTopicEdited &&
    !plan.isContentEdited &&
    !plan.isStreamEdited &&
    (plan.topicResolved || plan.topicUnresolved)
  ) {
    const text = plan.topicResolved
      ? `${mention} has marked this topic as resolved.`
      : `${mention} has marked this topic as unresolved.`;
    resolvedNoticeId = (
      await internalSendMessage(
        { tx, events },
        {
          deps: ctx,
          realm,
          sender: bot,
          target: { kind: "channel", streamId: plan.origStream!.id, topic: plan.targetTopic },
          content: text,
          readByUserIds: readByActor,
        },
      )
    ).id;
  }
  const count = changedIds.length;
  let oldText: string | null = null;
  if (plan.notifyOld) {
    const newLocation = topicLinkSyntax(
      plan.targetStream!.id,
      plan.targetStream!.name,
      plan.targetTopic,
    );
    if (movedAll) oldText = `This topic was moved to ${newLocation} by ${mention}.`;
    else if (count === 1)
      oldText = `A message was moved from this topic to ${newLocation} by ${mention}.`;
    else oldText = `${count} messages were moved from this topic to ${newLocation} by ${mention}.`;
  }
  let newText: string | null = null;
  if (
    plan.notifyNew &&
    (plan.isStreamEdited || (plan.isTopicEdited && !plan.topicResolved && !plan.topicUnresolved))
  ) {
    const oldLocation = topicLinkSyntax(plan.origStream!.id, plan.origStream!.name, plan.origTopic);
    const excluded = resolvedNoticeId === null ? changedIds : [...changedIds, resolvedNoticeId];
    const [pre] = await tx.$queryRaw<{ any: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM ${topicMessages(realm.id, plan.targetStream!.recipientId, plan.targetTopic, user)} AND m.id <> ALL(${excluded}::int[])) AS any`;
    if (!pre!.any && movedAll)
      newText = `This topic was moved here from ${oldLocation} by ${mention}.`;
    else if (count === 1) {
      const target = plan.targetStream!;
      const link = messageLinkUrl(await realmUrl(tx, realm, ctx.config), {
        id: plan.message.id,
        kind: "channel",
        channelId: target.id,
        channelName: target.name,
        topic: plan.targetTopic,
      });
      newText = `[A message](${link}) was moved here from ${oldLocation} by ${mention}.`;
    } else newText = `${count} messages were moved here from ${oldLocation} by ${mention}.`;
  }
  if (newText !== null)
    await internalSendMessage(
      { tx, events },
      {
        deps: ctx,
        realm,
        sender: bot,
        target: { kind: "channel", streamId: plan.targetStream!.id, topic: plan.targetTopic },
        content: newText,
        readByUserIds: readByActor,
      },
    );
  if (oldText !== null)
    await internalSendMessage(
      { tx, events },
      {
        deps: ctx,
        realm,
        sender: bot,
        target: { kind: "channel", streamId: plan.origStream!.id, topic: plan.origTopic },
        content: oldText,
        readByUserIds: readByActor,
      },
    );
}
