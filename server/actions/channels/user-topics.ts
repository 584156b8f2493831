/**
 * A user's visibility policy for a topic (zerver/actions/user_topics.py
 * bulk_do_set_user_topic_visibility_policies): one row per (user, channel, topic) matched
 * case-insensitively, keeping the spelling first used; a `user_topic` event, and the legacy
 * `muted_topics` list when muting changes.
 */
import type { RequestContext } from "../../context.ts";
import type { RawTx, Tx } from "../../db/index.ts";
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
export async function mutedTopics(tx: Pick<Tx, "$queryRaw"> | RawTx, userId: number) {
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

/** A visibility change the server makes on a user's behalf (automatic follow and unmute). */
export interface AutomaticChange {
  userId: number;
  policy: number;
  /**
   * A mention (automatically_follow_topics_where_mentioned): only for active humans with that
   * setting on, and never over a topic they muted or follow. Otherwise the change was decided
   * against the user's current policy already.
   */
  mention: boolean;
}

/**
 * Applies automatic visibility changes for one topic in the caller's transaction, set-based: one
 * statement for any number of users, then Zulip's `user_topic` events (and the legacy
 * `muted_topics` list for a user whose topic was muted). Returns the users whose policy changed,
 * with the new policy.
 */
export async function autoSetTopicVisibility(
  { tx, events }: UnitOfWork<RawTx>,
  realmId: number,
  target: TopicTarget,
  changes: AutomaticChange[],
  now: Date,
): Promise<Map<number, number>> {
  const changed = new Map<number, number>();
  if (changes.length === 0) return changed;
  const lower = target.topic.toLowerCase();
  const rows = await tx.$queryRaw<
    { user_profile_id: number; topic_name: string; visibility_policy: number; old: number | null }[]
  >`
    WITH t AS (
      SELECT * FROM unnest(${changes.map((c) => c.userId)}::int[], ${changes.map((c) => c.policy)}::int[],
                           ${changes.map((c) => c.mention)}::bool[]) AS t(u, p, mention)),
    old AS (
      SELECT user_profile_id, topic_name, visibility_policy FROM user_topic
      WHERE stream_id = ${target.streamId} AND topic_name_lower = ${lower}
        AND user_profile_id = ANY(${changes.map((c) => c.userId)}::int[])),
    ins AS (
      INSERT INTO user_topic (realm_id, user_profile_id, stream_id, recipient_id, topic_name, topic_name_lower, visibility_policy, last_updated)
      SELECT ${realmId}, t.u, ${target.streamId}, ${target.recipientId}, ${target.topic}, ${lower}, t.p, ${now}
      FROM t JOIN user_profile up ON up.id = t.u
      LEFT JOIN old ON old.user_profile_id = t.u
      WHERE (NOT t.mention OR (up.automatically_follow_topics_where_mentioned AND NOT up.is_bot AND up.is_active))
        AND (old.visibility_policy IS NULL OR NOT t.mention
             OR old.visibility_policy NOT IN (${TopicVisibility.MUTED}, ${TopicVisibility.FOLLOWED}))
      ON CONFLICT (user_profile_id, stream_id, topic_name_lower)
        DO UPDATE SET visibility_policy = EXCLUDED.visibility_policy, last_updated = EXCLUDED.last_updated
      RETURNING user_profile_id, topic_name, visibility_policy)
    SELECT ins.user_profile_id, ins.topic_name, ins.visibility_policy, old.visibility_policy AS old
    FROM ins LEFT JOIN old USING (user_profile_id)`;
  for (const row of rows) {
    const userId = Number(row.user_profile_id);
    changed.set(userId, Number(row.visibility_policy));
    events.add(
      {
        type: "user_topic",
        stream_id: target.streamId,
        topic_name: row.topic_name,
        last_updated: unixSeconds(now),
        visibility_policy: Number(row.visibility_policy),
      },
      [userId],
    );
    if (row.old !== null && Number(row.old) === TopicVisibility.MUTED)
      events.add({ type: "muted_topics", muted_topics: await mutedTopics(tx, userId) }, [userId]);
  }
  return changed;
}
