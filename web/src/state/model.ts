/**
 * What the app knows besides messages: who I am, the organization, its users and their presence,
 * my channels, my settings and recent direct-message conversations, each a signal that the
 * views read and the event loop replaces (never mutates in place), so that only what changed
 * renders again. Filled from POST /register, then kept current by events (state/events.ts).
 */
import { signal } from "@preact/signals";
import type { Names } from "../narrow.ts";
import { sortedIds } from "../narrow.ts";
import type {
  PresenceTimes,
  RecentConversation,
  RegisterState,
  Subscription,
  User,
} from "../types.ts";

export interface Me {
  id: number;
  email: string;
  fullName: string;
  /** Zulip's role: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest. */
  role: number;
  /** An owner or administrator: kept current by `realm_user` `update` events with `role`. */
  isAdmin: boolean;
}
export interface RealmInfo {
  name: string;
  emptyTopicName: string;
  allowEditing: boolean;
  /** Seconds after sending that content may still be edited (null: always). */
  editLimitSeconds: number | null;
  maxMessageLength: number;
  maxTopicLength: number;
  typingStartedWaitMs: number;
  typingStoppedWaitMs: number;
  typingExpiryMs: number;
}

export const me = signal<Me>({ id: 0, email: "", fullName: "", role: 400, isAdmin: false });
export const realm = signal<RealmInfo>({
  name: "",
  emptyTopicName: "general chat",
  allowEditing: true,
  editLimitSeconds: null,
  maxMessageLength: 10000,
  maxTopicLength: 60,
  typingStartedWaitMs: 10000,
  typingStoppedWaitMs: 5000,
  typingExpiryMs: 15000,
});
export const users = signal<ReadonlyMap<number, User>>(new Map());
export const presence = signal<ReadonlyMap<number, PresenceTimes>>(new Map());
/** Seconds between the server's clock and ours (presence is judged on the server's). */
export const serverClockSkew = signal(0);
export const subscriptions = signal<ReadonlyMap<number, Subscription>>(new Map());
export const twentyFourHour = signal(false);
/** Custom emoji id → image URL. */
export const realmEmoji = signal<ReadonlyMap<string, string>>(new Map());
/** Direct-message conversations by their members (me included), newest first when sorted by maxId. */
export const recentDms = signal<ReadonlyMap<string, { userIds: number[]; maxId: number }>>(
  new Map(),
);

export const names: Names = {
  channelName: (id) => subscriptions.value.get(id)?.name,
  userName: (id) => users.value.get(id)?.full_name,
  get myId() {
    return me.value.id;
  },
};

export function dmKey(memberIds: readonly number[]): string {
  return sortedIds(memberIds).join(",");
}

/** The register state's open sections, read by the names Zulip documents them with. */
function section<T>(state: RegisterState, name: string): T | undefined {
  return (state as Record<string, unknown>)[name] as T | undefined;
}

export function applyRegister(state: RegisterState) {
  const myId = section<number>(state, "user_id") ?? 0;
  const list = state.realm_users ?? [];
  const byId = new Map<number, User>();
  for (const u of list) byId.set(u.user_id, u);
  for (const b of section<User[]>(state, "cross_realm_bots") ?? []) byId.set(b.user_id, b);
  users.value = byId;
  const mine = byId.get(myId);
  me.value = {
    id: myId,
    email: section<string>(state, "email") ?? mine?.email ?? "",
    fullName: section<string>(state, "full_name") ?? mine?.full_name ?? "",
    role: mine?.role ?? (section<boolean>(state, "is_admin") ? 200 : 400),
    isAdmin: section<boolean>(state, "is_admin") ?? false,
  };
  realm.value = {
    name: section<string>(state, "realm_name") ?? "",
    emptyTopicName: state.realm_empty_topic_display_name,
    allowEditing: state.realm_allow_message_editing ?? true,
    editLimitSeconds: state.realm_message_content_edit_limit_seconds ?? null,
    maxMessageLength: state.max_message_length,
    maxTopicLength: state.max_topic_length,
    typingStartedWaitMs: state.server_typing_started_wait_period_milliseconds,
    typingStoppedWaitMs: state.server_typing_stopped_wait_period_milliseconds,
    typingExpiryMs: state.server_typing_started_expiry_period_milliseconds,
  };
  const subs = new Map<number, Subscription>();
  for (const s of state.subscriptions ?? []) subs.set(s.stream_id, s);
  subscriptions.value = subs;
  const settings = section<Record<string, unknown>>(state, "user_settings");
  twentyFourHour.value = settings?.twenty_four_hour_time === true;
  setPresences(
    section<Record<string, PresenceTimes>>(state, "presences") ?? {},
    section<number>(state, "server_timestamp"),
  );
  setRealmEmoji(section<Record<string, { source_url: string }>>(state, "realm_emoji") ?? {});
  const recent = new Map<string, { userIds: number[]; maxId: number }>();
  for (const c of section<RecentConversation[]>(state, "recent_private_conversations") ?? []) {
    const members = sortedIds([...c.user_ids, myId]);
    recent.set(dmKey(members), { userIds: members, maxId: c.max_message_id });
  }
  recentDms.value = recent;
}

export function setRealmEmoji(emoji: Record<string, { source_url: string }>) {
  realmEmoji.value = new Map(Object.entries(emoji).map(([id, e]) => [id, e.source_url]));
}

export function setPresences(
  entries: Record<string, PresenceTimes>,
  serverTimestamp?: number,
  replace = true,
) {
  const next = new Map(replace ? [] : presence.value);
  for (const [id, p] of Object.entries(entries)) next.set(Number(id), p);
  presence.value = next;
  if (serverTimestamp) serverClockSkew.value = serverTimestamp - Date.now() / 1000;
}

/** Zulip's OFFLINE_THRESHOLD_SECS: a presence older than this is offline. */
const OFFLINE_THRESHOLD_SECS = 140;

export type PresenceStatus = "active" | "idle" | "offline";

export function presenceStatus(
  userId: number,
  now = Date.now() / 1000 + serverClockSkew.value,
): PresenceStatus {
  const p = presence.value.get(userId);
  if (!p) return "offline";
  if (now - p.active_timestamp < OFFLINE_THRESHOLD_SECS) return "active";
  if (now - p.idle_timestamp < OFFLINE_THRESHOLD_SECS) return "idle";
  return "offline";
}

export function noteDm(memberIds: number[], messageId: number) {
  const key = dmKey(memberIds);
  const old = recentDms.value.get(key);
  if (old && old.maxId >= messageId) return;
  const next = new Map(recentDms.value);
  next.set(key, { userIds: sortedIds(memberIds), maxId: messageId });
  recentDms.value = next;
}

/**
 * A `realm_user` `update` about me: a new role (an administrator demoted or promoted by another)
 * or name changes the app at once, as Zulip's web app does (the admin links appear or go).
 */
export function updateMe(person: Partial<User> & { user_id: number }) {
  if (person.user_id !== me.value.id) return;
  const next = { ...me.value };
  if (typeof person.role === "number") {
    next.role = person.role;
    next.isAdmin = person.role <= 200;
  }
  if (typeof person.full_name === "string") next.fullName = person.full_name;
  me.value = next;
}

export function replaceUser(userId: number, change: (u: User) => User | undefined) {
  const old = users.value.get(userId);
  if (!old) return;
  const next = new Map(users.value);
  const changed = change(old);
  if (changed) next.set(userId, changed);
  else next.delete(userId);
  users.value = next;
}

export function replaceSubscription(
  streamId: number,
  change: (s: Subscription) => Subscription | undefined,
) {
  const old = subscriptions.value.get(streamId);
  if (!old) return;
  const next = new Map(subscriptions.value);
  const changed = change(old);
  if (changed) next.set(streamId, changed);
  else next.delete(streamId);
  subscriptions.value = next;
}

export function displayTopic(topic: string): string {
  return topic === "" ? realm.value.emptyTopicName : topic;
}
