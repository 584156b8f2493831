/**
 * Everyone's status (register `user_status`, events `user_status`: only the fields that changed,
 * `""` for a removed one), and mine set through POST /users/me/status, with Zulip's presets.
 * Also the organization's custom profile fields (register `custom_profile_fields`, the users'
 * `profile_data`), which the user card shows.
 */
import { signal } from "@preact/signals";
import { api, call } from "../api.ts";
import { onEvent, onRegister } from "./events.ts";
import { replaceUser } from "./model.ts";

export interface Status {
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";
  away?: boolean;
}

export const statuses = signal<ReadonlyMap<number, Status>>(new Map());
/** My `presence_enabled` setting (off: others see me as offline, Zulip's "invisible mode"). */
export const presenceEnabled = signal(true);

onRegister((state) => {
  const all = (state.user_status as Record<string, Status> | undefined) ?? {};
  statuses.value = new Map(Object.entries(all).map(([id, s]) => [Number(id), s]));
  const settings = state.user_settings as Record<string, unknown> | undefined;
  presenceEnabled.value = settings?.presence_enabled !== false;
  profileFields.value = ((state.custom_profile_fields as ProfileField[] | undefined) ?? [])
    .slice()
    .sort((a, b) => a.order - b.order);
});

onEvent("user_status", (e) => {
  const { user_id, ...change } = e as unknown as Status & { user_id: number; id: number };
  const old = statuses.value.get(user_id) ?? {};
  const next: Status = { ...old };
  if (change.status_text !== undefined) next.status_text = change.status_text;
  if (change.emoji_name !== undefined) {
    next.emoji_name = change.emoji_name;
    next.emoji_code = change.emoji_code;
    next.reaction_type = change.reaction_type;
  }
  if (change.away !== undefined) next.away = change.away;
  statuses.value = new Map(statuses.value).set(user_id, next);
});

onEvent("user_settings", (e) => {
  const ev = e as unknown as { op: string; property?: string; value?: unknown };
  if (ev.op === "update" && ev.property === "presence_enabled")
    presenceEnabled.value = ev.value !== false;
});

export function statusOf(userId: number): Status | undefined {
  const s = statuses.value.get(userId);
  return s && (s.status_text || s.emoji_name) ? s : undefined;
}

/** Zulip's default statuses (web/src/user_status_ui.ts). */
export const PRESETS: readonly { text: string; emoji_name: string; emoji_code: string }[] = [
  { text: "In a meeting", emoji_name: "calendar", emoji_code: "1f4c6" },
  { text: "Commuting", emoji_name: "bus", emoji_code: "1f68c" },
  { text: "Out sick", emoji_name: "sick", emoji_code: "1f912" },
  { text: "Vacationing", emoji_name: "palm_tree", emoji_code: "1f334" },
  { text: "Working remotely", emoji_name: "house", emoji_code: "1f3e0" },
];

export async function setMyStatus(s: {
  status_text: string;
  emoji_name: string;
  emoji_code?: string;
  reaction_type?: Status["reaction_type"];
}) {
  await call(api.POST("/users/me/status", { body: s }));
}

export async function setAway(away: boolean) {
  await call(api.POST("/users/me/status", { body: { away } }));
}

export interface ProfileField {
  id: number;
  name: string;
  type: number;
  order: number;
  hint?: string;
  field_data?: string;
}
export const profileFields = signal<readonly ProfileField[]>([]);

onEvent("custom_profile_fields", (e) => {
  profileFields.value = ((e as unknown as { fields: ProfileField[] }).fields ?? [])
    .slice()
    .sort((a, b) => a.order - b.order);
});

onEvent("realm_user", (e) => {
  const ev = e as unknown as {
    op: string;
    person: {
      user_id: number;
      custom_profile_field?: { id: number; value: string | null; rendered_value?: string };
    };
  };
  const f = ev.op === "update" ? ev.person.custom_profile_field : undefined;
  if (!f) return;
  replaceUser(ev.person.user_id, (u) => {
    const data = { ...(u.profile_data ?? {}) } as Record<string, unknown>;
    if (f.value === null) delete data[String(f.id)];
    else data[String(f.id)] = { value: f.value, rendered_value: f.rendered_value };
    const { custom_profile_field: _, ...rest } = u as typeof u & { custom_profile_field?: unknown };
    return { ...rest, profile_data: data as typeof u.profile_data };
  });
});
