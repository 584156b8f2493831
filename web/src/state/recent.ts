/**
 * What Inbox and Recent conversations read besides the unread counts (state/unread.ts):
 *
 * - the recent conversations, Zulip's recent_view_data: every channel topic and direct-message
 *   conversation seen, with its newest message, last sender, participants and whether I took
 *   part; from the register's `recent_private_conversations`, ONE bounded fetch of the newest
 *   messages (once per registration, when a view first asks: `loadRecent()`), then live
 *   `message` events; `update_message` events that move messages (a new topic or channel) and
 *   `delete_message` events recount the conversations they touch from the messages seen, as
 *   Zulip's recent_view does: a row whose messages all left disappears, the row they joined
 *   takes its newest message and sender. Switching views refetches nothing.
 * - which topics and channels are muted (Zulip leaves them out of Inbox and Recent
 *   conversations): state/user-topics.ts's one rule, re-exported here under the names the views
 *   use.
 */
import { batch, signal } from "@preact/signals";
import { api, call } from "../api.ts";
import { dmMembers, sortedIds } from "../narrow.ts";
import type { Msg, RecentConversation } from "../types.ts";
import { onEvent, onRegister } from "./events.ts";
import { dmKey, me } from "./model.ts";
import { channelMuted, isTopicMuted } from "./user-topics.ts";

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

let generation = 0;

/**
 * Every message seen here (the fetch and the events): its conversation, sender and time, and
 * each conversation's ids, so that a move or a deletion can recount the rows it touches. A few
 * numbers a message, not the message.
 */
interface Seen {
  key: string;
  streamId: number;
  topic: string;
  sender: number;
  time: number;
}
const seen = new Map<number, Seen>();
const idsByKey = new Map<string, Set<number>>();

function see(id: number, s: Seen) {
  const old = seen.get(id);
  if (old && old.key !== s.key) idsByKey.get(old.key)?.delete(id);
  seen.set(id, s);
  let ids = idsByKey.get(s.key);
  if (!ids) idsByKey.set(s.key, (ids = new Set()));
  ids.add(id);
}

function unsee(id: number): string | undefined {
  const old = seen.get(id);
  if (!old) return undefined;
  seen.delete(id);
  const ids = idsByKey.get(old.key);
  ids?.delete(id);
  if (ids && !ids.size) idsByKey.delete(old.key);
  return old.key;
}

/**
 * A conversation counted again from its messages seen: the newest one's id, sender, time and
 * topic; the senders, most recent first. With none left, a channel topic leaves the list, and
 * so does a direct-message conversation whose newest message went (`removed`).
 */
function recount(
  next: Map<string, Conversation>,
  key: string,
  myId: number,
  removed?: Set<number>,
) {
  const old = next.get(key);
  const ids = [...(idsByKey.get(key) ?? [])].sort((a, b) => b - a);
  const newest = ids[0] === undefined ? undefined : seen.get(ids[0]);
  if (!newest) {
    if (old && (old.kind === "stream" || removed?.has(old.maxId))) next.delete(key);
    return;
  }
  const senders: number[] = [];
  let participated = false;
  for (const id of ids) {
    const s = seen.get(id)!;
    if (s.sender === myId) participated = true;
    if (senders.length < PARTICIPANTS && !senders.includes(s.sender)) senders.push(s.sender);
  }
  const isStream = key.startsWith("s:");
  next.set(key, {
    key,
    kind: isStream ? "stream" : "dm",
    streamId: isStream ? newest.streamId : 0,
    topic: isStream ? newest.topic : "",
    userIds: old?.userIds ?? [],
    maxId: ids[0]!,
    lastSender: newest.sender,
    lastTime: newest.time,
    senders,
    participated,
  });
}

export function topicKey(streamId: number, topic: string): string {
  return `s:${streamId}:${topic.toLowerCase()}`;
}

export const isMutedChannel = channelMuted;
/** Whether Zulip hides this topic from Inbox and Recent conversations. */
export const isMutedTopic = isTopicMuted;

function noteInto(next: Map<string, Conversation>, m: Msg, myId: number) {
  const isStream = m.type === "stream";
  const members = isStream ? [] : dmMembers(m);
  const key = isStream ? topicKey(m.stream_id ?? 0, m.subject) : `d:${dmKey(members)}`;
  see(m.id, {
    key,
    streamId: m.stream_id ?? 0,
    topic: m.subject,
    sender: m.sender_id,
    time: m.timestamp,
  });
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
  seen.clear();
  idsByKey.clear();
  const s = state as {
    user_id?: number;
    recent_private_conversations?: RecentConversation[];
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
});

onEvent("message", (event) => {
  if (event.type !== "message") return;
  const next = new Map(conversations.value);
  noteInto(next, event.message as Msg, me.value.id);
  conversations.value = next;
});

/** Messages moved to another topic or channel: their conversations are counted again. */
onEvent("update_message", (event) => {
  if (event.type !== "update_message") return;
  const newTopic = event.subject;
  const newStream = event.new_stream_id;
  if (newTopic === undefined && newStream === undefined) return;
  const touched = new Set<string>();
  for (const id of event.message_ids) {
    const s = seen.get(id);
    if (!s || !s.key.startsWith("s:")) continue;
    const streamId = newStream ?? s.streamId;
    const topic = newTopic ?? s.topic;
    const key = topicKey(streamId, topic);
    touched.add(s.key).add(key);
    see(id, { ...s, key, streamId, topic });
  }
  if (!touched.size) return;
  const next = new Map(conversations.value);
  for (const key of touched) recount(next, key, me.value.id);
  conversations.value = next;
});

/** Messages deleted: their conversations are counted again (and leave when none is left). */
onEvent("delete_message", (event) => {
  if (event.type !== "delete_message") return;
  const ids = new Set(
    event.message_ids ?? (event.message_id !== undefined ? [event.message_id] : []),
  );
  const touched = new Set<string>();
  for (const id of ids) {
    const key = unsee(id);
    if (key) touched.add(key);
  }
  if (!touched.size) return;
  const next = new Map(conversations.value);
  for (const key of touched) recount(next, key, me.value.id, ids);
  conversations.value = next;
});
