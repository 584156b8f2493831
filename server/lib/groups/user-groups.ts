/**
 * Group-setting values: every permission (`can_*_group`) points at a user group — a named
 * group (often a system group such as `role:members`) or an anonymous group of direct members
 * and direct subgroups — as in Zulip's zerver/lib/user_groups.py. Which settings exist and the
 * rules their values obey are in lib/groups/group-settings.ts.
 */
import { Prisma, type Db, type NamedUserGroup, type Tx } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { PendingEvents } from "../../events/index.ts";
import type { Schemas } from "../schemas.ts";
import {
  SystemGroups,
  USER_GROUP_SETTINGS,
  type GroupSetting,
  type SystemGroupName,
} from "./group-settings.ts";
import * as permissions from "./permissions.ts";
import { isStorableId } from "../ids.ts";
import { refuseNul } from "../text.ts";
import { unixSeconds } from "../time.ts";

export { SystemGroups, type SystemGroupName } from "./group-settings.ts";

export type GroupSettingValue = Schemas["GroupSettingValue"];
type AnonymousValue = Exclude<GroupSettingValue, number>;

export async function getSystemGroupIds(
  db: Db,
  realmId: number,
): Promise<Record<SystemGroupName, number>> {
  const rows = await db.namedUserGroup.findMany({
    where: { realmId, isSystemGroup: true },
    select: { id: true, name: true },
  });
  return Object.fromEntries(rows.map((r) => [r.name, r.id])) as Record<SystemGroupName, number>;
}

/**
 * Whether the user is a member of the group, directly or through nested subgroups. Kept for
 * callers that hold only a user id; lib/groups/permissions.ts is the engine (and caches memberships).
 */
export async function isUserInGroup(db: Db, userId: number, groupId: number): Promise<boolean> {
  return (await permissions.userGroupIds(db, { id: userId })).has(groupId);
}

/**
 * The API form of several group-setting values in one statement: a named group's id, or an
 * anonymous group's active direct members and direct subgroups (get_group_setting_value_for_api).
 */
export async function groupSettingValues(
  db: Db,
  groupIds: number[],
): Promise<Map<number, GroupSettingValue>> {
  return (await groupSettingValuesAndNames(db, groupIds)).values;
}

/**
 * The active direct members of user group `g`, and its direct subgroups, ordered. Each member's
 * activity is looked up by its id: a join let the planner hash the whole user_profile table once
 * per group (96 groups × 1,000 users took 27 ms in POST /register).
 */
const ACTIVE_MEMBERS = Prisma.sql`ARRAY(SELECT m.user_profile_id FROM user_group_membership m
  WHERE m.user_group_id = g.id AND (SELECT u.is_active FROM user_profile u WHERE u.id = m.user_profile_id)
  ORDER BY m.user_profile_id)`;
const SUBGROUPS = Prisma.sql`ARRAY(SELECT s.subgroup_id FROM group_group_membership s WHERE s.supergroup_id = g.id ORDER BY s.subgroup_id)`;

/** groupSettingValues, and the names of the system groups among them (legacy fields derive from them). */
export async function groupSettingValuesAndNames(
  db: Db,
  groupIds: number[],
): Promise<{ values: Map<number, GroupSettingValue>; systemNames: Map<number, string> }> {
  const ids = [...new Set(groupIds)];
  if (ids.length === 0) return { values: new Map(), systemNames: new Map() };
  // A named group's value is its id: only anonymous values list their members and subgroups (a
  // system group such as role:members has every user, and listing them for nothing cost 20 ms a
  // call at 1,000 users).
  const rows = await db.$queryRaw<
    {
      id: number;
      named: boolean;
      system_name: string | null;
      members: number[] | null;
      subgroups: number[] | null;
    }[]
  >`
    SELECT g.id, n.id IS NOT NULL AS named, CASE WHEN n.is_system_group THEN n.name END AS system_name,
      CASE WHEN n.id IS NULL THEN ${ACTIVE_MEMBERS} END AS members,
      CASE WHEN n.id IS NULL THEN ${SUBGROUPS} END AS subgroups
    FROM user_group g LEFT JOIN named_user_group n ON n.id = g.id
    WHERE g.id = ANY(${ids}::int[])`;
  return {
    values: new Map(
      rows.map(
        (r) =>
          [
            Number(r.id),
            r.named
              ? Number(r.id)
              : {
                  direct_members: (r.members ?? []).map(Number),
                  direct_subgroups: (r.subgroups ?? []).map(Number),
                },
          ] as const,
      ),
    ),
    systemNames: new Map(
      rows.filter((r) => r.system_name !== null).map((r) => [Number(r.id), r.system_name!]),
    ),
  };
}

/** The API form of one group-setting value. */
export async function groupSettingValue(db: Db, groupId: number): Promise<GroupSettingValue> {
  const value = (await groupSettingValues(db, [groupId])).get(groupId);
  if (value === undefined) throw new Error(`No user group ${groupId}`);
  return value;
}

/**
 * Zulip's parse_group_setting_value: an anonymous value of exactly one subgroup and no members
 * is that group, and an empty one is `role:nobody`, as Zulip stores them.
 */
export function parseGroupSettingValue(
  value: GroupSettingValue,
  nobodyGroupId: number,
): GroupSettingValue {
  if (typeof value === "number") return value;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1)
    return value.direct_subgroups[0]!;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 0)
    return nobodyGroupId;
  return value;
}

/** Zulip's are_both_group_setting_values_equal: anonymous values compare as sets. */
export function sameGroupSettingValue(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === "number" || typeof b === "number") return a === b;
  const sameSet = (x: number[], y: number[]) => {
    const sx = new Set(x);
    const sy = new Set(y);
    return sx.size === sy.size && [...sx].every((v) => sy.has(v));
  };
  return (
    sameSet(a.direct_members, b.direct_members) && sameSet(a.direct_subgroups, b.direct_subgroups)
  );
}

/** SystemGroupRequiredError: a user-defined or anonymous group for a system-groups-only setting. */
export class SystemGroupRequiredError extends JsonableError {
  constructor(setting: string) {
    super(`'${setting}' must be a system user group.`, { code: "SYSTEM_GROUP_REQUIRED" });
  }
}

/** A named group for a setting (access_user_group_for_setting and check_setting_configuration_for_system_groups). */
async function checkNamedGroupForSetting(
  tx: Tx,
  realmId: number,
  setting: GroupSetting,
  groupId: number,
  asSubgroup = false,
): Promise<number> {
  const group = await tx.namedUserGroup.findFirst({
    where: { id: groupId, realmId },
    select: { id: true, name: true, isSystemGroup: true, deactivated: true },
  });
  // A value that named the group as a subgroup ({direct_members: [], direct_subgroups: [id]}, which
  // stands for the group itself) gets the subgroup check's text, as Zulip answers it.
  if (!group && asSubgroup) throw new JsonableError(`Invalid user group ID: ${groupId}`);
  if (!group) throw new JsonableError("Invalid user group");
  if (group.deactivated) throw new JsonableError("User group is deactivated.");
  if (setting.requireSystemGroup && !group.isSystemGroup)
    throw new SystemGroupRequiredError(setting.name);
  const refused =
    (group.name === SystemGroups.INTERNET && !setting.allowInternetGroup) ||
    (group.name === SystemGroups.NOBODY && !setting.allowNobodyGroup) ||
    (group.name === SystemGroups.EVERYONE && !setting.allowEveryoneGroup) ||
    (group.isSystemGroup &&
      setting.allowedSystemGroups.length > 0 &&
      !setting.allowedSystemGroups.includes(group.name as SystemGroupName));
  if (refused)
    throw new JsonableError(`'${setting.name}' setting cannot be set to '${group.name}' group.`);
  return group.id;
}

/**
 * Stores an anonymous value (update_or_create_user_group_for_setting): the current anonymous group
 * is updated in place — its direct members and subgroups replaced — and a new group is created
 * only when the setting held a named group. Members must be active users of the organization,
 * subgroups its active named groups.
 */
async function storeAnonymousValue(
  tx: Tx,
  realmId: number,
  value: AnonymousValue,
  currentAnonymousId: number | null,
): Promise<number> {
  const members = [...new Set(value.direct_members)];
  const subgroups = [...new Set(value.direct_subgroups)];
  const users = await tx.userProfile.findMany({
    where: { realmId, isActive: true, id: { in: members } },
    select: { id: true },
  });
  const found = new Set(users.map((u) => u.id));
  const missingUser = members.find((id) => !found.has(id));
  if (missingUser !== undefined) throw new JsonableError(`Invalid user ID: ${missingUser}`);
  const groups = await tx.namedUserGroup.findMany({
    where: { realmId, id: { in: subgroups } },
    select: { id: true, deactivated: true },
  });
  const missingGroup = subgroups.find((id) => !groups.some((g) => g.id === id));
  if (missingGroup !== undefined) throw new JsonableError(`Invalid user group ID: ${missingGroup}`);
  if (groups.some((g) => g.deactivated)) throw new JsonableError("User group is deactivated.");

  // Separate statements: Prisma runs a nested write's inserts concurrently, which a transaction's
  // single connection can only queue.
  const groupId =
    currentAnonymousId ??
    (await tx.userGroup.create({ data: { realmId }, select: { id: true } })).id;
  if (currentAnonymousId !== null) {
    await tx.userGroupMembership.deleteMany({
      where: { userGroupId: groupId, userProfileId: { notIn: members } },
    });
    await tx.groupGroupMembership.deleteMany({
      where: { supergroupId: groupId, subgroupId: { notIn: subgroups } },
    });
  }
  await tx.userGroupMembership.createMany({
    data: members.map((userProfileId) => ({ userGroupId: groupId, userProfileId })),
    skipDuplicates: true,
  });
  await tx.groupGroupMembership.createMany({
    data: subgroups.map((subgroupId) => ({ supergroupId: groupId, subgroupId })),
    skipDuplicates: true,
  });
  return groupId;
}

export interface GroupSettingChange {
  /** The group now holding the setting (the same anonymous group when it was updated in place). */
  groupId: number;
  /** The new value in API form, for the response and the event. */
  value: GroupSettingValue;
  /**
   * An anonymous group the setting no longer uses: delete it (deleteAnonymousGroups) once the
   * holder's row points at `groupId`, as the row's foreign key still references it until then.
   */
  replacedGroupId: number | null;
}

/**
 * Applies a group-setting update `{new, old?}` to a setting currently held by `currentGroupId`
 * (zerver/views/realm.py update_realm and validate_group_setting_value_change): with `old`, only
 * if the current value is still `old` (EXPECTATION_MISMATCH otherwise); a value equal to the
 * current one changes nothing (null). Writes anonymous groups, so it names `groups:<realm id>`.
 */
export async function checkGroupSettingUpdate(
  tx: Tx,
  events: Pick<PendingEvents, "invalidate">,
  realmId: number,
  setting: GroupSetting,
  currentGroupId: number,
  update: { new: GroupSettingValue; old?: GroupSettingValue },
): Promise<GroupSettingChange | null> {
  const nobody = (
    await tx.namedUserGroup.findFirstOrThrow({
      where: { realmId, isSystemGroup: true, name: SystemGroups.NOBODY },
      select: { id: true },
    })
  ).id;
  const current = await groupSettingValue(tx, currentGroupId);
  if (
    update.old !== undefined &&
    !sameGroupSettingValue(parseGroupSettingValue(update.old, nobody), current)
  )
    throw new JsonableError("'old' value does not match the expected value.", {
      code: "EXPECTATION_MISMATCH",
    });
  const wanted = parseGroupSettingValue(update.new, nobody);
  if (sameGroupSettingValue(wanted, current)) return null;
  const currentAnonymousId = typeof current === "number" ? null : currentGroupId;
  events.invalidate(`groups:${realmId}`);
  if (typeof wanted === "number") {
    const asSubgroup = typeof update.new !== "number";
    const groupId = await checkNamedGroupForSetting(tx, realmId, setting, wanted, asSubgroup);
    return { groupId, value: groupId, replacedGroupId: currentAnonymousId };
  }
  if (!setting.allowAnonymousGroup) throw new SystemGroupRequiredError(setting.name);
  const groupId = await storeAnonymousValue(tx, realmId, wanted, currentAnonymousId);
  return { groupId, value: await groupSettingValue(tx, groupId), replacedGroupId: null };
}

/**
 * The group a new channel's or group's setting gets from its API value (creation, where there is
 * no current value to compare): a named group checked against the setting's rules, or a new
 * anonymous group (which names `groups:<realm id>`).
 */
export async function groupForNewSetting(
  tx: Tx,
  events: Pick<PendingEvents, "invalidate">,
  realmId: number,
  setting: GroupSetting,
  value: GroupSettingValue,
): Promise<number> {
  const nobody = (
    await tx.namedUserGroup.findFirstOrThrow({
      where: { realmId, isSystemGroup: true, name: SystemGroups.NOBODY },
      select: { id: true },
    })
  ).id;
  const wanted = parseGroupSettingValue(value, nobody);
  if (typeof wanted === "number")
    return checkNamedGroupForSetting(tx, realmId, setting, wanted, typeof value !== "number");
  if (!setting.allowAnonymousGroup) throw new SystemGroupRequiredError(setting.name);
  events.invalidate(`groups:${realmId}`);
  return storeAnonymousValue(tx, realmId, wanted, null);
}

/**
 * Deletes anonymous groups no setting uses any more (their memberships go with them). Named
 * groups are never deleted here: a caller's mistake must not remove one.
 */
export async function deleteAnonymousGroups(tx: Tx, groupIds: number[]) {
  if (groupIds.length === 0) return;
  await tx.userGroup.deleteMany({ where: { id: { in: groupIds }, named: { is: null } } });
}

/**
 * A new anonymous group of one member (Zulip's "channel_creator" and "group_creator" defaults).
 * Creates membership, so the caller's transaction must name `groups:<realm id>`.
 */
export async function createCreatorGroup(
  tx: Tx,
  realmId: number,
  creatorId: number,
): Promise<number> {
  const group = await tx.userGroup.create({ data: { realmId }, select: { id: true } });
  await tx.userGroupMembership.create({
    data: { userGroupId: group.id, userProfileId: creatorId },
    select: { id: true },
  });
  return group.id;
}

/** NamedUserGroup.MAX_NAME_LENGTH and INVALID_NAME_PREFIXES. */
export const MAX_USER_GROUP_NAME_LENGTH = 100;
const INVALID_NAME_PREFIXES = ["@", "role:", "user:", "stream:", "channel:"];

/** check_user_group_name: not blank, at most 100 characters, no reserved prefix (the name is kept as sent). */
export function checkUserGroupName(name: string): string {
  if (name.trim() === "") throw new JsonableError("User group name can't be empty!");
  if ([...name].length > MAX_USER_GROUP_NAME_LENGTH)
    throw new JsonableError(
      `User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`,
    );
  const prefix = INVALID_NAME_PREFIXES.find((p) => name.startsWith(p));
  if (prefix) throw new JsonableError(`User group name cannot start with '${prefix}'.`);
  return refuseNul(name, "user group name");
}

/**
 * The API form of the organization's named groups (user_groups_in_realm_serialized): direct
 * active members, direct subgroups and every setting's value, in three statements.
 */
export async function userGroupDicts(
  db: Db,
  realmId: number,
  options: { includeDeactivated: boolean; ids?: number[] },
) {
  const groups = await db.namedUserGroup.findMany({
    where: {
      realmId,
      ...(options.includeDeactivated ? {} : { deactivated: false }),
      ...(options.ids ? { id: { in: options.ids } } : {}),
    },
    orderBy: { id: "asc" },
  });
  const ids = groups.map((g) => g.id);
  const members = await db.$queryRaw<{ id: number; members: number[]; subgroups: number[] }[]>`
    SELECT g.id,
      ${ACTIVE_MEMBERS} AS members,
      ${SUBGROUPS} AS subgroups
    FROM user_group g WHERE g.id = ANY(${ids}::int[])`;
  const byId = new Map(members.map((m) => [Number(m.id), m]));
  const settings = Object.values(USER_GROUP_SETTINGS);
  const values = await groupSettingValues(
    db,
    groups.flatMap((g) => settings.map((s) => g[s.field as keyof typeof g] as number)),
  );
  return groups.map((g) => {
    const dict: Record<string, unknown> = {
      id: g.id,
      name: g.name,
      description: g.description,
      members: (byId.get(g.id)?.members ?? []).map(Number),
      direct_subgroup_ids: (byId.get(g.id)?.subgroups ?? []).map(Number),
      is_system_group: g.isSystemGroup,
      deactivated: g.deactivated,
      creator_id: g.creatorId,
      date_created: g.isSystemGroup ? null : unixSeconds(g.dateCreated),
    };
    for (const s of settings) dict[s.name] = values.get(g[s.field as keyof typeof g] as number);
    return dict as Schemas["UserGroup"];
  });
}

/** get_user_group_by_id_in_realm: a named group of the organization, else "Invalid user group". */
export async function findUserGroup(
  db: Db,
  realmId: number,
  groupId: number,
  options: { allowDeactivated: boolean },
): Promise<NamedUserGroup> {
  const group = isStorableId(groupId)
    ? await db.namedUserGroup.findFirst({ where: { id: groupId, realmId } })
    : null;
  if (!group) throw new JsonableError("Invalid user group");
  if (group.deactivated && !options.allowDeactivated)
    throw new JsonableError("User group is deactivated.");
  return group;
}

/** The active members of a group: its direct members, or everyone in it through every subgroup (one recursive statement). */
export async function userGroupMemberIds(
  db: Db,
  realmId: number,
  groupId: number,
  directOnly: boolean,
): Promise<number[]> {
  if (directOnly) {
    const rows = await db.userGroupMembership.findMany({
      where: { userGroupId: groupId, userProfile: { isActive: true } },
      select: { userProfileId: true },
      orderBy: { userProfileId: "asc" },
    });
    return rows.map((r) => r.userProfileId);
  }
  return [...(await permissions.groupMembers(db, realmId, [groupId]))].sort((a, b) => a - b);
}

/** A group's subgroups: its direct ones, or every group below it (one recursive statement). */
export async function userGroupSubgroupIds(
  db: Db,
  groupId: number,
  directOnly: boolean,
): Promise<number[]> {
  const rows = directOnly
    ? await db.$queryRaw<
        { id: number }[]
      >`SELECT subgroup_id AS id FROM group_group_membership WHERE supergroup_id = ${groupId} ORDER BY subgroup_id`
    : await db.$queryRaw<{ id: number }[]>`
        WITH RECURSIVE down(id) AS (SELECT subgroup_id FROM group_group_membership WHERE supergroup_id = ${groupId}
          UNION SELECT g.subgroup_id FROM group_group_membership g JOIN down ON g.supergroup_id = down.id)
        SELECT id FROM down ORDER BY id`;
  return rows.map((r) => Number(r.id));
}
