/**
 * Group-setting values: every permission (`can_*_group`) points at a user group — a named
 * group (often a system group such as `role:members`) or an anonymous group of direct members
 * and direct subgroups — as in Zulip's zerver/lib/user_groups.py.
 */
import type { PrismaClient, Tx } from "../db.ts";
import { JsonableError } from "../errors.ts";
import type { Schemas } from "../http/types.ts";

type Db = PrismaClient | Tx;
export type GroupSettingValue = Schemas["GroupSettingValue"];

export const SystemGroups = {
  OWNERS: "role:owners",
  ADMINISTRATORS: "role:administrators",
  MODERATORS: "role:moderators",
  FULL_MEMBERS: "role:fullmembers",
  MEMBERS: "role:members",
  EVERYONE: "role:everyone",
  INTERNET: "role:internet",
  NOBODY: "role:nobody",
} as const;
export type SystemGroupName = (typeof SystemGroups)[keyof typeof SystemGroups];

export async function getSystemGroupIds(db: Db, realmId: number): Promise<Record<SystemGroupName, number>> {
  const rows = await db.namedUserGroup.findMany({ where: { realmId, isSystemGroup: true }, select: { id: true, name: true } });
  return Object.fromEntries(rows.map((r) => [r.name, r.id])) as Record<SystemGroupName, number>;
}

/** Whether the user is a member of the group, directly or through nested subgroups. */
export async function isUserInGroup(db: Db, userId: number, groupId: number): Promise<boolean> {
  const rows = await db.$queryRaw<{ found: boolean }[]>`
    WITH RECURSIVE groups(id) AS (
      SELECT ${groupId}::int
      UNION
      SELECT ggm.subgroup_id FROM group_group_membership ggm JOIN groups g ON ggm.supergroup_id = g.id
    )
    SELECT EXISTS (
      SELECT 1 FROM user_group_membership m JOIN groups g ON m.user_group_id = g.id WHERE m.user_profile_id = ${userId}
    ) AS found`;
  return rows[0]?.found ?? false;
}

/** The API form of a group setting: the group's id if named, else its direct members and subgroups. */
export async function groupSettingValue(db: Db, groupId: number): Promise<GroupSettingValue> {
  // Sequential queries: within a transaction Prisma's nested reads would run concurrently.
  const named = await db.namedUserGroup.findUnique({ where: { id: groupId }, select: { id: true } });
  if (named) return named.id;
  const members = await db.userGroupMembership.findMany({ where: { userGroupId: groupId }, select: { userProfileId: true }, orderBy: { userProfileId: "asc" } });
  const subgroups = await db.groupGroupMembership.findMany({ where: { supergroupId: groupId }, select: { subgroupId: true }, orderBy: { subgroupId: "asc" } });
  return { direct_members: members.map((m) => m.userProfileId), direct_subgroups: subgroups.map((g) => g.subgroupId) };
}

function sameValue(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === "number" || typeof b === "number") return a === b;
  const eq = (x: number[], y: number[]) => x.length === y.length && [...x].sort().every((v, i) => v === [...y].sort()[i]);
  return eq(a.direct_members, b.direct_members) && eq(a.direct_subgroups, b.direct_subgroups);
}

export interface SettingRules {
  allowInternet?: boolean;
  allowEveryone?: boolean;
  allowNobody?: boolean;
  /** Settings that only accept system groups (e.g. realm settings in older feature levels). */
  systemGroupsOnly?: boolean;
}

/**
 * Validates a new value for `setting` and returns the id of the group that holds it, creating
 * an anonymous group for an object value. An anonymous value naming exactly one subgroup and
 * no members collapses to that group, and an empty one to `role:nobody`, as Zulip stores them.
 */
export async function resolveGroupSettingValue(
  tx: Tx,
  realmId: number,
  setting: string,
  value: GroupSettingValue,
  rules: SettingRules = {},
): Promise<number> {
  const system = await getSystemGroupIds(tx, realmId);
  let groupId: number | undefined;
  if (typeof value === "number") groupId = value;
  else if (value.direct_members.length === 0 && value.direct_subgroups.length === 1) groupId = value.direct_subgroups[0];
  else if (value.direct_members.length === 0 && value.direct_subgroups.length === 0) groupId = system[SystemGroups.NOBODY];
  if (groupId !== undefined) {
    const named = await tx.namedUserGroup.findFirst({ where: { id: groupId, realmId } });
    if (!named) throw new JsonableError("Invalid user group");
    if (named.deactivated) throw new JsonableError("User group is deactivated.");
    if (named.isSystemGroup) {
      const refused =
        (named.name === SystemGroups.INTERNET && !rules.allowInternet) ||
        (named.name === SystemGroups.EVERYONE && rules.allowEveryone === false) ||
        (named.name === SystemGroups.NOBODY && rules.allowNobody === false);
      if (refused) throw new JsonableError(`'${setting}' setting cannot be set to '${named.name}' group.`);
    } else if (rules.systemGroupsOnly) throw new JsonableError("Invalid user group");
    return named.id;
  }
  if (rules.systemGroupsOnly) throw new JsonableError("Invalid user group");
  const anonymous = value as Exclude<GroupSettingValue, number>;
  const members = [...new Set(anonymous.direct_members)];
  const subgroups = [...new Set(anonymous.direct_subgroups)];
  const users = await tx.userProfile.findMany({ where: { realmId, id: { in: members } }, select: { id: true } });
  const missingUser = members.find((id) => !users.some((u) => u.id === id));
  if (missingUser !== undefined) throw new JsonableError(`Invalid user ID: ${missingUser}`);
  const groups = await tx.namedUserGroup.findMany({ where: { realmId, id: { in: subgroups } }, select: { id: true, deactivated: true } });
  const missingGroup = subgroups.find((id) => !groups.some((g) => g.id === id));
  if (missingGroup !== undefined) throw new JsonableError(`Invalid user group ID: ${missingGroup}`);
  if (groups.some((g) => g.deactivated)) throw new JsonableError("User group is deactivated.");
  // Separate statements: Prisma runs a nested create's inserts concurrently, which a
  // transaction's single connection can only queue.
  const group = await tx.userGroup.create({ data: { realmId } });
  await tx.userGroupMembership.createMany({ data: members.map((userProfileId) => ({ userGroupId: group.id, userProfileId })) });
  await tx.groupGroupMembership.createMany({ data: subgroups.map((subgroupId) => ({ supergroupId: group.id, subgroupId })) });
  return group.id;
}

/**
 * Applies a group-setting update value `{new, old?}`: with `old`, the change is made only if
 * the current value is still `old` (EXPECTATION_MISMATCH otherwise).
 */
export async function checkGroupSettingUpdate(
  tx: Tx,
  realmId: number,
  setting: string,
  currentGroupId: number,
  update: { new: GroupSettingValue; old?: GroupSettingValue },
  rules?: SettingRules,
): Promise<number> {
  if (update.old !== undefined) {
    const current = await groupSettingValue(tx, currentGroupId);
    if (!sameValue(current, update.old)) throw new JsonableError("'old' value does not match the expected value.", { code: "EXPECTATION_MISMATCH" });
  }
  return resolveGroupSettingValue(tx, realmId, setting, update.new, rules);
}
