/**
 * What the organization settings pages (#organization/...) read: the register's `realm_*`
 * settings (kept current by `realm` `update` / `update_dict` events), my role, the deactivated
 * users, and the order of the system groups (state/groups.ts), the choices of the `can_*_group`
 * permission settings.
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";
import type { User } from "../types.ts";
import { me, users } from "./model.ts";

export type { GroupSettingValue, UserGroup } from "./groups.ts";

/** The register's `realm_*` values, by their names without the prefix (`name`, `description`...). */
export const realmSettings = signal<Readonly<Record<string, unknown>>>({});
export const myRole = signal({ isAdmin: false, isOwner: false });
/** Deactivated users (register `realm_non_active_users`), by id; the active ones are model.users. */
export const inactiveUsers = signal<ReadonlyMap<number, User>>(new Map());

onRegister((state) => {
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state))
    if (key.startsWith("realm_")) settings[key.slice("realm_".length)] = value;
  realmSettings.value = settings;
  myRole.value = { isAdmin: state.is_admin === true, isOwner: state.is_owner === true };
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
