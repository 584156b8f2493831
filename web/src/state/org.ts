/**
 * What the organization settings pages (#organization/...) read: the register's `realm_*`
 * settings (kept current by `realm` `update` / `update_dict` events), my role, and the user
 * groups (`realm_user_groups`, kept current by `user_group` events), whose system groups are the
 * choices of the `can_*_group` permission settings.
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";
import type { User } from "../types.ts";
import { me, users } from "./model.ts";

export interface UserGroup {
  id: number;
  name: string;
  description: string;
  members: number[];
  direct_subgroup_ids: number[];
  is_system_group: boolean;
  deactivated?: boolean;
}
/** A group-setting value: a group's id, or an anonymous group of members and subgroups. */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/** The register's `realm_*` values, by their names without the prefix (`name`, `description`...). */
export const realmSettings = signal<Readonly<Record<string, unknown>>>({});
export const myRole = signal({ isAdmin: false, isOwner: false });
export const userGroups = signal<readonly UserGroup[]>([]);
/** Deactivated users (register `realm_non_active_users`), by id; the active ones are model.users. */
export const inactiveUsers = signal<ReadonlyMap<number, User>>(new Map());

onRegister((state) => {
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state))
    if (key.startsWith("realm_")) settings[key.slice("realm_".length)] = value;
  realmSettings.value = settings;
  myRole.value = { isAdmin: state.is_admin === true, isOwner: state.is_owner === true };
  userGroups.value = (settings.user_groups as UserGroup[] | undefined) ?? [];
  const inactive = (settings.non_active_users as User[] | undefined) ?? [];
  inactiveUsers.value = new Map(inactive.map((u) => [u.user_id, u]));
});

onEvent("realm", (event) => {
  const e = event as { op: string; property?: string; value?: unknown; data?: object };
  if (e.op === "update" && e.property)
    realmSettings.value = { ...realmSettings.value, [e.property]: e.value };
  else if (e.op === "update_dict" && e.data)
    realmSettings.value = { ...realmSettings.value, ...e.data };
});

onEvent("realm_user", (event) => {
  const e = event as { op: string; person?: Partial<User> & { user_id: number } };
  const person = e.person;
  if (e.op !== "update" || !person) return;
  // My own role changed: the pages show or hide their controls.
  if (person.role !== undefined && person.user_id === me.value.id)
    myRole.value = { isAdmin: person.role <= 200, isOwner: person.role === 100 };
  const id = person.user_id;
  const old = inactiveUsers.value.get(id);
  if (old && person.is_active === true) {
    // Reactivated: back among the active users (the core's map updates only those it has).
    const next = new Map(inactiveUsers.value);
    next.delete(id);
    inactiveUsers.value = next;
    users.value = new Map(users.value).set(id, { ...old, ...person });
  } else if (old) {
    inactiveUsers.value = new Map(inactiveUsers.value).set(id, { ...old, ...person });
  }
});

function changeGroup(id: number, change: (g: UserGroup) => UserGroup | undefined) {
  userGroups.value = userGroups.value.flatMap((g) => {
    if (g.id !== id) return [g];
    const next = change(g);
    return next ? [next] : [];
  });
}

onEvent("user_group", (event) => {
  const e = event as {
    op: string;
    group?: UserGroup;
    group_id?: number;
    data?: Partial<UserGroup>;
    user_ids?: number[];
    direct_subgroup_ids?: number[];
  };
  const id = e.group_id ?? -1;
  switch (e.op) {
    case "add":
      if (e.group) userGroups.value = [...userGroups.value, e.group];
      return;
    case "remove":
      return changeGroup(id, () => undefined);
    case "update":
      return changeGroup(id, (g) => ({ ...g, ...e.data }));
    case "add_members":
      return changeGroup(id, (g) => ({
        ...g,
        members: [...new Set([...g.members, ...(e.user_ids ?? [])])],
      }));
    case "remove_members":
      return changeGroup(id, (g) => ({
        ...g,
        members: g.members.filter((m) => !e.user_ids?.includes(m)),
      }));
    case "add_subgroups":
      return changeGroup(id, (g) => ({
        ...g,
        direct_subgroup_ids: [
          ...new Set([...g.direct_subgroup_ids, ...(e.direct_subgroup_ids ?? [])]),
        ],
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

/** The system groups, in Zulip's order (broadest last but for the internet and nobody). */
export const SYSTEM_GROUPS: readonly string[] = [
  "role:owners",
  "role:administrators",
  "role:moderators",
  "role:fullmembers",
  "role:members",
  "role:everyone",
  "role:internet",
  "role:nobody",
];
