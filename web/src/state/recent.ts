/**
 * What Inbox and Recent conversations read besides the unread counts (state/unread.ts):
 *
 * - the recent conversations, Zulip's recent_view_data: every channel topic and direct-message
 *   conversation seen, with its newest message, last sender, participants and whether I took
 *   part; from the register's `recent_private_conversations`, ONE bounded fetch of the newest
 *   messages (once per registration, when a view first asks: `loadRecent()`), then live
 *   `message` events. Switching views refetches nothing.
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
