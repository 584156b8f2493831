/**
 * A user's visibility policy for a topic (zerver/actions/user_topics.py
 * bulk_do_set_user_topic_visibility_policies): one row per (user, channel, topic) matched
 * case-insensitively, keeping the spelling first used; a `user_topic` event, and the legacy
 * `muted_topics` list when muting changes.
 */
import type { RequestContext } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { unixSeconds } from "../../lib/time.ts";
import { TopicVisibility } from "../../lib/messages/topics.ts";
import { inTransaction } from "../transaction.ts";

export interface TopicTarget {
  streamId: number;
  recipientId: number;
  topic: string;
}

/** The legacy `muted_topics` list: [channel name, topic, last updated] for each muted topic. */
export async function mutedTopics(tx: Tx, userId: number) {
  const rows = await tx.$queryRaw<{ name: string; topic_name: string; last_updated: Date }[]>`
    SELECT s.name, t.topic_name, t.last_updated FROM user_topic t JOIN stream s ON s.id = t.stream_id
    WHERE t.user_profile_id = ${userId} AND t.visibility_policy = ${TopicVisibility.MUTED} ORDER BY t.id`;
  return rows.map((r) => [r.name, r.topic_name, unixSeconds(r.last_updated)]);
}

/** Sets the policy in the caller's transaction; returns whether anything changed. */
async function setTopicVisibility(
  { tx, events }: UnitOfWork,
  ctx: Pick<RequestContext, "realm" | "user" | "now">,
  target: TopicTarget,
  policy: number,
): Promise<boolean> {
  const userId = ctx.user.id;
  const existing = await tx.userTopic.findFirst({
    where: {
      userProfileId: userId,
      streamId: target.streamId,
      topicNameLower: target.topic.toLowerCase(),
    },
  });
  if ((existing?.visibilityPolicy ?? TopicVisibility.INHERIT) === policy) return false;
  const now = ctx.now();
  const topicName = existing?.topicName ?? target.topic;
  if (policy === TopicVisibility.INHERIT)
    await tx.userTopic.delete({ where: { id: existing!.id } });
  else if (existing)
    await tx.userTopic.update({
      where: { id: existing.id },
      data: { visibilityPolicy: policy, lastUpdated: now },
    });
  else {
    await tx.userTopic.create({
      data: {
        realmId: ctx.realm.id,
        userProfileId: userId,
        streamId: target.streamId,
        recipientId: target.recipientId,
        topicName,
        topicNameLower: topicName.toLowerCase(),
        visibilityPolicy: policy,
        lastUpdated: now,
      },
    });
  }
  events.add(
    {
      type: "user_topic",
      stream_id: target.streamId,
      topic_name: topicName,
      last_updated: unixSeconds(now),
      visibility_policy: policy,
    },
    [userId],
  );
  if (policy === TopicVisibility.MUTED || existing?.visibilityPolicy === TopicVisibility.MUTED)
    events.add({ type: "muted_topics", muted_topics: await mutedTopics(tx, userId) }, [userId]);
  return true;
}

/** One policy change as its own request. */
export function doSetTopicVisibility(ctx: RequestContext, target: TopicTarget, policy: number) {
  return inTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    setTopicVisibility({ tx, events }, ctx, target, policy),
  );
}
