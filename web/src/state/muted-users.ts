/**
 * The users I muted (register `muted_users`, event `muted_users`: the whole list each time), as
 * Zulip's web app treats them (web/src/muted_users.ts): their messages collapse in the feed until
 * revealed, their direct-message conversations leave the sidebar, and they do not notify.
 */
import { signal } from "@preact/signals";
import { api, call } from "../api.ts";
import { onEvent, onRegister } from "./events.ts";
import { me } from "./model.ts";
import { setDmFilter } from "./unread.ts";

export const mutedUsers = signal<ReadonlySet<number>>(new Set());
/** Messages of muted users the user chose to see ("Click here to reveal."). */
export const revealed = signal<ReadonlySet<number>>(new Set());

function set(list: unknown) {
  mutedUsers.value = new Set(
    Array.isArray(list) ? list.map((m: { id: number }) => m.id).filter(Number.isInteger) : [],
  );
}

onRegister((state) => set(state.muted_users));
onEvent("muted_users", (e) => set((e as unknown as { muted_users: unknown }).muted_users));

/**
 * Whether a direct-message conversation (its members, me included) is one-on-one with a muted
 * user: Zulip hides it from the sidebar and leaves its unread messages out of the counts (group
 * conversations stay).
 */
export function withMutedUser(memberIds: readonly number[]): boolean {
  const others = memberIds.filter((id) => id !== me.value.id);
  return others.length === 1 && mutedUsers.value.has(others[0]!);
}

setDmFilter((key) => !withMutedUser(key.split(",").map(Number)));

export function isMuted(userId: number): boolean {
  return mutedUsers.value.has(userId);
}

export function reveal(messageId: number) {
  revealed.value = new Set(revealed.value).add(messageId);
}

export async function muteUser(userId: number, mute: boolean) {
  const params = { params: { path: { muted_user_id: userId } } };
  await call(
    mute
      ? api.POST("/users/me/muted_users/{muted_user_id}", params)
      : api.DELETE("/users/me/muted_users/{muted_user_id}", params),
  );
}
