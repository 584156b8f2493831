/**
 * Permissions as the server decides them: a group setting (a group id, or an anonymous group of
 * direct members and subgroups) holds a user when they are in it, directly or through subgroups,
 * per the register's `realm_user_groups` (kept current by `user_group` events).
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";

export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };
interface Group {
  id: number;
  members: number[];
  direct_subgroup_ids: number[];
}

export const userGroups = signal<ReadonlyMap<number, Group>>(new Map());

function inGroup(groupId: number, userId: number, seen: Set<number>): boolean {
  if (seen.has(groupId)) return false;
  seen.add(groupId);
  const g = userGroups.value.get(groupId);
  if (!g) return false;
  if (g.members.includes(userId)) return true;
  return g.direct_subgroup_ids.some((id) => inGroup(id, userId, seen));
}

export function userInGroupSetting(value: GroupSettingValue | undefined, userId: number): boolean {
  if (value === undefined) return false;
  const seen = new Set<number>();
  if (typeof value === "number") return inGroup(value, userId, seen);
  return (
    value.direct_members.includes(userId) ||
    value.direct_subgroups.some((id) => inGroup(id, userId, seen))
  );
}

onRegister((state) => {
  const list = (state as { realm_user_groups?: Group[] }).realm_user_groups ?? [];
  userGroups.value = new Map(
    list.map((g) => [
      g.id,
      { id: g.id, members: g.members, direct_subgroup_ids: g.direct_subgroup_ids ?? [] },
    ]),
  );
});

function changeGroup(id: number, change: (g: Group) => Group) {
  const g = userGroups.value.get(id);
  if (!g) return;
  userGroups.value = new Map(userGroups.value).set(id, change(g));
}

onEvent("user_group", (event) => {
  const e = event as {
    op: string;
    group?: Group;
    group_id?: number;
    user_ids?: number[];
    direct_subgroup_ids?: number[];
  };
  const id = e.group_id ?? -1;
  switch (e.op) {
    case "add":
      if (e.group)
        userGroups.value = new Map(userGroups.value).set(e.group.id, {
          id: e.group.id,
          members: e.group.members,
          direct_subgroup_ids: e.group.direct_subgroup_ids ?? [],
        });
      return;
    case "remove": {
      const next = new Map(userGroups.value);
      next.delete(id);
      userGroups.value = next;
      return;
    }
    case "add_members":
      return changeGroup(id, (g) => ({ ...g, members: [...g.members, ...(e.user_ids ?? [])] }));
    case "remove_members":
      return changeGroup(id, (g) => ({
        ...g,
        members: g.members.filter((u) => !e.user_ids?.includes(u)),
      }));
    case "add_subgroups":
      return changeGroup(id, (g) => ({
        ...g,
        direct_subgroup_ids: [...g.direct_subgroup_ids, ...(e.direct_subgroup_ids ?? [])],
      }));
    case "remove_subgroups":
      return changeGroup(id, (g) => ({
        ...g,
        direct_subgroup_ids: g.direct_subgroup_ids.filter(
          (s) => !e.direct_subgroup_ids?.includes(s),
        ),
      }));
  }
});
