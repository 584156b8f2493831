/**
 * Which user group a notification names when a user is mentioned through a group rather than by
 * name: Zulip's get_user_group_mentions_data (zerver/lib/notification_data.py), computed with the
 * send, and get_mentioned_user_group, over the messages of one email or push.
 *
 * A user mentioned by name is mentioned personally whatever groups are mentioned too. Otherwise,
 * of the mentioned groups the user belongs to (directly or through subgroups), the one with the
 * fewest members is named: the most specific reason. Ties go to the lower group id (Zulip's order
 * is that of a set, so any is right; ours is stable).
 */
import type { Db } from "../../db/index.ts";
import { Trigger } from "./missed-messages.ts";

/**
 * For a message mentioning `groupIds` (not silently) and `userIds` by name: each member of a
 * mentioned group not mentioned by name, and the group to name to them. One statement.
 */
export async function mentionedGroupByUser(
  db: Db,
  realmId: number,
  groupIds: ReadonlySet<number>,
  personallyMentioned: ReadonlySet<number>,
): Promise<Map<number, number>> {
  const byUser = new Map<number, number>();
  if (groupIds.size === 0) return byUser;
  // Each mentioned group's members, recursively, with its member count.
  const rows = await db.$queryRaw<{ groupId: number; size: number; members: number[] }[]>`
    WITH RECURSIVE g(root, id) AS (
      SELECT id, id FROM user_group WHERE id = ANY (${[...groupIds]}::int[]) AND realm_id = ${realmId}::int
      UNION
      SELECT g.root, ggm.subgroup_id FROM group_group_membership ggm JOIN g ON ggm.supergroup_id = g.id),
    m AS (
      SELECT DISTINCT g.root, ugm.user_profile_id AS u FROM g
      JOIN user_group_membership ugm ON ugm.user_group_id = g.id
      JOIN user_profile up ON up.id = ugm.user_profile_id AND up.is_active)
    SELECT root AS "groupId", count(*)::int AS size, array_agg(u) AS members FROM m GROUP BY root
    ORDER BY size, root`;
  // Smallest first: the first group a member is met in is theirs.
  for (const row of rows)
    for (const member of row.members.map(Number))
      if (!personallyMentioned.has(member) && !byUser.has(member))
        byUser.set(member, Number(row.groupId));
  return byUser;
}

export interface MentionedGroup {
  id: number;
  name: string;
  /** Its members, directly or through subgroups. */
  size: number;
}

/**
 * get_mentioned_user_group: of messages notified by their triggers and the group recorded for
 * each (null: none), the group to name, or null when any message mentions the user personally
 * (a "mentioned" trigger without a group) or none names one. The smallest group wins.
 */
export function groupToName(
  notified: { trigger: string | null; mentionedUserGroupId: number | null }[],
  groups: ReadonlyMap<number, MentionedGroup>,
): MentionedGroup | null {
  if (notified.some((m) => m.trigger === Trigger.MENTION && m.mentionedUserGroupId === null))
    return null;
  let best: MentionedGroup | null = null;
  for (const m of notified) {
    const group = m.mentionedUserGroupId === null ? undefined : groups.get(m.mentionedUserGroupId);
    if (group && (!best || group.size < best.size)) best = group;
  }
  return best;
}

/** The groups' names and sizes (members directly or through subgroups), for groupToName. */
export async function mentionedGroups(
  db: Db,
  groupIds: number[],
): Promise<Map<number, MentionedGroup>> {
  if (groupIds.length === 0) return new Map();
  const rows = await db.$queryRaw<MentionedGroup[]>`
    WITH RECURSIVE g(root, id) AS (
      SELECT id, id FROM named_user_group WHERE id = ANY (${groupIds}::int[])
      UNION
      SELECT g.root, ggm.subgroup_id FROM group_group_membership ggm JOIN g ON ggm.supergroup_id = g.id)
    SELECT n.id, n.name, (
      SELECT count(DISTINCT ugm.user_profile_id)::int FROM g
      JOIN user_group_membership ugm ON ugm.user_group_id = g.id
      JOIN user_profile up ON up.id = ugm.user_profile_id AND up.is_active
      WHERE g.root = n.id) AS size
    FROM named_user_group n WHERE n.id = ANY (${groupIds}::int[])`;
  return new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id) }]));
}
