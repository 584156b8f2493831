/**
 * The user's own settings (the register's `user_settings`), kept current by `user_settings`
 * events, so that a change made in another tab (or by the API) shows here too. Along with them:
 * the alert words, the muted users and the custom profile fields the register carries.
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";
import { me } from "./model.ts";

export type UserSettings = Readonly<Record<string, unknown>>;
export interface MutedUser {
  id: number;
  timestamp: number;
}
export interface ProfileField {
  id: number;
  type: number;
  name: string;
  hint: string;
  field_data: string;
  order: number;
  required?: boolean;
}

export const userSettings = signal<UserSettings>({});
export const alertWords = signal<readonly string[]>([]);
export const mutedUsers = signal<readonly MutedUser[]>([]);
export const profileFields = signal<readonly ProfileField[]>([]);
/** Realm settings the settings pages need (avatar changes, name changes, upload size...). */
export const realmSettings = signal<Readonly<Record<string, unknown>>>({});

const REALM_KEYS = [
  "realm_avatar_changes_disabled",
  "realm_name_changes_disabled",
  "realm_email_changes_disabled",
  "max_avatar_file_size_mib",
  "realm_uri",
  "realm_url",
  "realm_default_language",
  "realm_email_address_visibility",
  "available_notification_sounds",
];

export function setting<T>(name: string, fallback: T): T {
  const v = userSettings.value[name];
  return v === undefined || v === null ? fallback : (v as T);
}

onRegister((state) => {
  userSettings.value = { ...((state.user_settings as UserSettings | undefined) ?? {}) };
  alertWords.value = (state.alert_words as string[] | undefined) ?? [];
  mutedUsers.value = (state.muted_users as MutedUser[] | undefined) ?? [];
  profileFields.value = (state.custom_profile_fields as ProfileField[] | undefined) ?? [];
  const realm: Record<string, unknown> = {};
  for (const k of REALM_KEYS) if (k in state) realm[k] = state[k];
  realmSettings.value = realm;
});

onEvent("user_settings", (e) => {
  const event = e as { op?: string; property?: string; value?: unknown };
  if (event.op === "update" && event.property)
    userSettings.value = { ...userSettings.value, [event.property]: event.value };
});

onEvent("alert_words", (e) => {
  alertWords.value = (e as { alert_words?: string[] }).alert_words ?? [];
});

onEvent("muted_users", (e) => {
  mutedUsers.value = (e as { muted_users?: MutedUser[] }).muted_users ?? [];
});

onEvent("custom_profile_fields", (e) => {
  profileFields.value = (e as { fields?: ProfileField[] }).fields ?? [];
});

onEvent("realm", (e) => {
  const event = e as {
    op?: string;
    property?: string;
    value?: unknown;
    data?: Record<string, unknown>;
  };
  if (event.op === "update" && event.property)
    realmSettings.value = { ...realmSettings.value, [`realm_${event.property}`]: event.value };
  else if (event.op === "update_dict" && event.data) {
    const next = { ...realmSettings.value };
    for (const [k, v] of Object.entries(event.data)) next[`realm_${k}`] = v;
    realmSettings.value = next;
  }
});

// The top bar shows the user's own name: a rename (here or elsewhere) shows there at once.
onEvent("realm_user", (e) => {
  const event = e as { op?: string; person?: { user_id?: number; full_name?: string } };
  const p = event.person;
  if (event.op === "update" && p?.user_id === me.value.id && typeof p.full_name === "string")
    me.value = { ...me.value, fullName: p.full_name };
});
