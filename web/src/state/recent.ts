/**
 * What Inbox and Recent conversations read besides the unread counts (state/unread.ts):
 *
 * - the recent conversations, Zulip's recent_view_data: every channel topic and direct-message
 *   conversation seen, with its newest message, last sender, participants and whether I took
 *   part; from the register's `recent_private_conversations`, ONE bounded fetch of the newest
 *   messages (once per registration, when a view first asks: `loadRecent()`), then live
 *   `message` events. Switching views refetches nothing.
 * - which topics and channels are muted (Zulip leaves them out of Inbox and Recent
 *   conversations): the register's `user_topics` and the subscriptions' `is_muted`, behind
 *   `isMutedTopic`/`isMutedChannel` so that a shared user-topics state can replace them.
 */
import { batch, signal } from "@preact/signals";
import { api, call } from "../api.ts";
import { dmMembers, sortedIds } from "../narrow.ts";
import type { Msg, RecentConversation } from "../types.ts";
import { onEvent, onRegister } from "./events.ts";
import { dmKey, me, subscriptions } from "./model.ts";

/** How many of the newest messages the one fetch reads (Zulip's web app reads far more). */
export const RECENT_FETCH = 400;
/** Participants kept per conversation (the avatars shown). */
const PARTICIPANTS = 6;

export interface Conversation {
  /** `s:<stream id>:<lower-cased topic>` or `d:<member ids>` (me included). */
  key: string;
  kind: "stream" | "dm";
  streamId: number;
  topic: string;
  /** DM members, me included, sorted. */
  userIds: number[];
  maxId: number;
  /** The newest message's sender and time, when a message of it was seen. */
  lastSender?: number;
  lastTime?: number;
  /** Senders seen, most recent first. */
  senders: number[];
  participated: boolean;
}

export const conversations = signal<ReadonlyMap<string, Conversation>>(new Map());
export const recentStatus = signal<"idle" | "loading" | "done" | "error">("idle");
/** Muted topics: `<stream id>:<lower-cased topic>`. */
const mutedTopics = signal<ReadonlySet<string>>(new Set());
/** Followed / unmuted topics (policy 2, 3), shown even in a muted channel. */
const unmutedTopics = signal<ReadonlySet<string>>(new Set());

let generation = 0;

export function topicKey(streamId: number, topic: string): string {
  return `s:${streamId}:${topic.toLowerCase()}`;
}

export function isMutedChannel(streamId: number): boolean {
  return subscriptions.value.get(streamId)?.is_muted === true;
}

/** Whether Zulip hides this topic from Inbox and Recent conversations. */
export function isMutedTopic(streamId: number, topic: string): boolean {
  const k = `${streamId}:${topic.toLowerCase()}`;
  if (mutedTopics.value.has(k)) return true;
  if (unmutedTopics.value.has(k)) return false;
  return isMutedChannel(streamId);
}

interface UserTopic {
  stream_id: number;
  topic_name: string;
  visibility_policy: number;
}

function setUserTopics(list: readonly UserTopic[]) {
  const muted = new Set<string>();
  const unmuted = new Set<string>();
  for (const u of list) {
    const k = `${u.stream_id}:${u.topic_name.toLowerCase()}`;
    if (u.visibility_policy === 1) muted.add(k);
    else if (u.visibility_policy === 2 || u.visibility_policy === 3) unmuted.add(k);
  }
  mutedTopics.value = muted;
  unmutedTopics.value = unmuted;
}

function noteInto(next: Map<string, Conversation>, m: Msg, myId: number) {
  const isStream = m.type === "stream";
  const members = isStream ? [] : dmMembers(m);
  const key = isStream ? topicKey(m.stream_id ?? 0, m.subject) : `d:${dmKey(members)}`;
  const old = next.get(key);
  const newer = !old || m.id >= old.maxId;
  const senders = old ? [...old.senders] : [];
  if (newer) {
    const i = senders.indexOf(m.sender_id);
    if (i >= 0) senders.splice(i, 1);
    senders.unshift(m.sender_id);
  } else if (!senders.includes(m.sender_id)) senders.push(m.sender_id);
  next.set(key, {
    key,
    kind: isStream ? "stream" : "dm",
    streamId: isStream ? (m.stream_id ?? 0) : 0,
    topic: isStream ? (newer ? m.subject : (old?.topic ?? m.subject)) : "",
    userIds: members,
    maxId: newer ? m.id : old.maxId,
    lastSender: newer ? m.sender_id : old.lastSender,
    lastTime: newer ? m.timestamp : old.lastTime,
    senders: senders.slice(0, PARTICIPANTS),
    participated: (old?.participated ?? false) || m.sender_id === myId,
  });
}

/** The one bounded fetch of recent history, once per registration (later calls do nothing). */
export async function loadRecent(): Promise<void> {
  if (recentStatus.value === "loading" || recentStatus.value === "done") return;
  const mine = generation;
  recentStatus.value = "loading";
  try {
    const data = await call(
      api.GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: RECENT_FETCH,
            num_after: 0,
            narrow: [],
            apply_markdown: true,
            client_gravatar: false,
            allow_empty_topic_name: true,
          },
        },
      }),
    );
    if (mine !== generation) return;
    const next = new Map(conversations.value);
    const myId = me.value.id;
    for (const m of data.messages as Msg[]) noteInto(next, m, myId);
    batch(() => {
      conversations.value = next;
      recentStatus.value = "done";
    });
  } catch {
    if (mine === generation) recentStatus.value = "error";
  }
}

onRegister((state) => {
  generation++;
  const s = state as {
    user_id?: number;
    recent_private_conversations?: RecentConversation[];
    user_topics?: UserTopic[];
  };
  const myId = s.user_id ?? me.value.id;
  const next = new Map<string, Conversation>();
  for (const c of s.recent_private_conversations ?? []) {
    const members = sortedIds([...c.user_ids, myId]);
    const key = `d:${dmKey(members)}`;
    next.set(key, {
      key,
      kind: "dm",
      streamId: 0,
      topic: "",
      userIds: members,
      maxId: c.max_message_id,
      senders: [],
      participated: false,
    });
  }
  conversations.value = next;
  recentStatus.value = "idle";
  setUserTopics(s.user_topics ?? []);
});

onEvent("message", (event) => {
  if (event.type !== "message") return;
  const next = new Map(conversations.value);
  noteInto(next, event.message as Msg, me.value.id);
  conversations.value = next;
});

onEvent("user_topic", (event) => {
  const e = event as unknown as UserTopic;
  const k = `${e.stream_id}:${e.topic_name.toLowerCase()}`;
  const muted = new Set(mutedTopics.value);
  const unmuted = new Set(unmutedTopics.value);
  muted.delete(k);
  unmuted.delete(k);
  if (e.visibility_policy === 1) muted.add(k);
  else if (e.visibility_policy === 2 || e.visibility_policy === 3) unmuted.add(k);
  mutedTopics.value = muted;
  unmutedTopics.value = unmuted;
});
