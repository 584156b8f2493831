/**
 * The organization's user groups, kept once for the whole app: the register's `realm_user_groups`
 * (system groups included), kept current by the `user_group` events (add, update, add_members,
 * remove_members, add_subgroups, remove_subgroups, remove). The permissions (group settings), the
 * compose typeahead (`@` groups) and the organization pages read them from here.
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";

export interface UserGroup {
  id: number;
  name: string;
  description: string;
  members: readonly number[];
  direct_subgroup_ids: readonly number[];
  is_system_group: boolean;
  deactivated?: boolean;
}
/** A group-setting value: a group's id, or an anonymous group of members and subgroups. */
export type GroupSettingValue =
  number | { direct_members: readonly number[]; direct_subgroups: readonly number[] };

/** The groups by id, in the register's order (then creation order). Replaced, never mutated. */
export const userGroups = signal<ReadonlyMap<number, UserGroup>>(new Map());

/** The groups as a list (a fresh array: callers may sort it). */
export function groupList(): UserGroup[] {
  return [...userGroups.value.values()];
}

onRegister((state) => {
  const groups = (state.realm_user_groups ?? []) as UserGroup[];
  userGroups.value = new Map(groups.map((g) => [g.id, g]));
});

const union = (a: readonly number[], b: readonly number[] = []) => [...new Set([...a, ...b])];
const without = (a: readonly number[], b: readonly number[] = []) =>
  a.filter((x) => !b.includes(x));

onEvent("user_group", (event) => {
  const e = event as {
    op: string;
    group?: UserGroup;
    group_id?: number;
    data?: Partial<UserGroup>;
    user_ids?: number[];
    direct_subgroup_ids?: number[];
  };
  const id = e.group_id ?? e.group?.id;
  if (id === undefined) return;
  const next = new Map(userGroups.value);
  const g = next.get(id);
  if (e.op === "add" && e.group) next.set(id, e.group);
  else if (e.op === "remove") next.delete(id);
  else if (!g) return;
  else if (e.op === "update") next.set(id, { ...g, ...e.data });
  else if (e.op === "add_members") next.set(id, { ...g, members: union(g.members, e.user_ids) });
  else if (e.op === "remove_members")
    next.set(id, { ...g, members: without(g.members, e.user_ids) });
  else if (e.op === "add_subgroups")
    next.set(id, {
      ...g,
      direct_subgroup_ids: union(g.direct_subgroup_ids, e.direct_subgroup_ids),
    });
  else if (e.op === "remove_subgroups")
    next.set(id, {
      ...g,
      direct_subgroup_ids: without(g.direct_subgroup_ids, e.direct_subgroup_ids),
    });
  else return;
  userGroups.value = next;
});

/** A group's direct members (none for an unknown group). */
export function groupMembers(groupId: number): readonly number[] {
  return userGroups.value.get(groupId)?.members ?? [];
}

/** Whether the user is a member of the group, directly or through nested subgroups. */
export function inGroup(groupId: number, userId: number, seen = new Set<number>()): boolean {
  if (seen.has(groupId)) return false;
  seen.add(groupId);
  const g = userGroups.value.get(groupId);
  if (!g) return false;
  return g.members.includes(userId) || g.direct_subgroup_ids.some((s) => inGroup(s, userId, seen));
}

/** Whether `userId` holds a group-setting value (a group id, or direct members and subgroups). */
export function userInGroupSetting(
  value: GroupSettingValue | undefined | null,
  userId: number,
): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "number") return inGroup(value, userId);
  if (value.direct_members.includes(userId)) return true;
  const seen = new Set<number>();
  return value.direct_subgroups.some((g) => inGroup(g, userId, seen));
}
