/**
 * Unread messages, as Zulip's web app keeps them (web/src/unread.ts): every unread message id
 * with its conversation, filled from register's `unread_msgs` and kept by message and flag
 * events. The counts every view shows (channels, topics, direct messages, mentions, the total in
 * the title) are one computed value, so they all change at once.
 */
import { computed, signal } from "@preact/signals";
import type { Msg, UnreadMsgs } from "../types.ts";
import { dmMembers, sortedIds } from "../narrow.ts";
import { dmKey } from "./model.ts";

type Conversation =
  { kind: "stream"; streamId: number; topic: string } | { kind: "dm"; key: string };

const unread = new Map<number, Conversation>();
const mentions = new Set<number>();
const version = signal(0);

/**
 * Whether a topic's unread messages count in the total (All messages, Inbox, the title): set by
 * state/user-topics.ts (muted topics and channels are left out). It may read signals: the counts
 * follow them.
 */
let countedInTotal: (streamId: number, topic: string) => boolean = () => true;
export function setTotalFilter(filter: (streamId: number, topic: string) => boolean) {
  countedInTotal = filter;
  changed();
}

/**
 * Whether a direct-message conversation (its key: the members' sorted ids) counts at all: set by
 * state/muted-users.ts (Zulip leaves out one-on-one conversations with a muted user). It may read
 * signals: the counts follow them.
 */
let dmCounted: (key: string) => boolean = () => true;
export function setDmFilter(filter: (key: string) => boolean) {
  dmCounted = filter;
  changed();
}

function changed() {
  version.value++;
}

export function resetUnread(data: UnreadMsgs | undefined, myId: number) {
  unread.clear();
  mentions.clear();
  // One conversation object for all the ids of a conversation: counts() tallies per object.
  for (const s of data?.streams ?? []) {
    const c: Conversation = { kind: "stream", streamId: s.stream_id, topic: s.topic };
    for (const id of s.unread_message_ids) unread.set(id, c);
  }
  for (const p of data?.pms ?? []) {
    const c: Conversation = { kind: "dm", key: dmKey(sortedIds([p.other_user_id, myId])) };
    for (const id of p.unread_message_ids) unread.set(id, c);
  }
  for (const h of data?.huddles ?? []) {
    const c: Conversation = { kind: "dm", key: dmKey(h.user_ids_string.split(",").map(Number)) };
    for (const id of h.unread_message_ids) unread.set(id, c);
  }
  for (const id of data?.mentions ?? []) mentions.add(id);
  changed();
}

function conversationOf(m: Msg): Conversation {
  return m.type === "stream"
    ? { kind: "stream", streamId: m.stream_id ?? 0, topic: m.subject }
    : { kind: "dm", key: dmKey(dmMembers(m)) };
}

/** A message arrived or was fetched with its flags. */
export function noteMessage(m: Msg) {
  if (m.flags.includes("read")) return;
  unread.set(m.id, conversationOf(m));
  if (m.flags.some((f) => f === "mentioned" || f.endsWith("wildcard_mentioned")))
    mentions.add(m.id);
  changed();
}

/** Messages moved (or renamed topics): their unread entries follow them. */
export function moveUnread(messages: Msg[]) {
  let any = false;
  for (const m of messages)
    if (unread.has(m.id)) {
      unread.set(m.id, conversationOf(m));
      any = true;
    }
  if (any) changed();
}

export function markRead(ids: Iterable<number>) {
  let any = false;
  for (const id of ids) {
    any = unread.delete(id) || any;
    mentions.delete(id);
  }
  if (any) changed();
}

export function markUnread(messages: Msg[]) {
  for (const m of messages) unread.set(m.id, conversationOf(m));
  if (messages.length) changed();
}

export function markAllRead() {
  unread.clear();
  mentions.clear();
  changed();
}

export function isUnread(id: number): boolean {
  // Read through the signal so that a view asking this renders again when it changes.
  void version.value;
  return unread.has(id);
}

export interface TopicCount {
  topic: string;
  count: number;
  maxId: number;
}

export interface UnreadCounts {
  total: number;
  mentions: number;
  byStream: Map<number, number>;
  /** Per channel: its topics with unread messages, by lower-cased name. */
  byTopic: Map<number, Map<string, TopicCount>>;
  byDm: Map<string, number>;
  dmTotal: number;
}

export const counts = computed<UnreadCounts>(() => {
  void version.value;
  // First per conversation object (resetUnread shares one among a conversation's ids: 50,000
  // ids are a few thousand objects), in the order of their first id; then per conversation.
  const tally = new Map<Conversation, { count: number; maxId: number }>();
  for (const [id, c] of unread) {
    const t = tally.get(c);
    if (t) {
      t.count++;
      if (id > t.maxId) t.maxId = id;
    } else tally.set(c, { count: 1, maxId: id });
  }
  const byStream = new Map<number, number>();
  const byTopic = new Map<number, Map<string, TopicCount>>();
  const byDm = new Map<string, number>();
  let dmTotal = 0;
  let total = 0;
  const counted = new Map<string, boolean>();
  for (const [c, { count, maxId }] of tally) {
    if (c.kind === "stream") {
      const key = c.topic.toLowerCase();
      const ck = `${c.streamId}:${key}`;
      let inTotal = counted.get(ck);
      if (inTotal === undefined) counted.set(ck, (inTotal = countedInTotal(c.streamId, c.topic)));
      if (inTotal) total += count;
      byStream.set(c.streamId, (byStream.get(c.streamId) ?? 0) + count);
      let topics = byTopic.get(c.streamId);
      if (!topics) byTopic.set(c.streamId, (topics = new Map<string, TopicCount>()));
      const t = topics.get(key);
      if (t) {
        t.count += count;
        t.maxId = Math.max(t.maxId, maxId);
      } else topics.set(key, { topic: c.topic, count, maxId });
    } else {
      let inTotal = counted.get(c.key);
      if (inTotal === undefined) counted.set(c.key, (inTotal = dmCounted(c.key)));
      if (!inTotal) continue;
      byDm.set(c.key, (byDm.get(c.key) ?? 0) + count);
      dmTotal += count;
      total += count;
    }
  }
  return { total, mentions: mentions.size, byStream, byTopic, byDm, dmTotal };
});

/** The unread conversations in message order: what `n` (next unread topic) walks through. */
export function unreadTopicsInOrder(): { streamId: number; topic: string; firstId: number }[] {
  void version.value;
  const first = new Map<string, { streamId: number; topic: string; firstId: number }>();
  for (const [id, c] of unread) {
    if (c.kind !== "stream") continue;
    const key = `${c.streamId}:${c.topic.toLowerCase()}`;
    const old = first.get(key);
    if (!old || id < old.firstId)
      first.set(key, { streamId: c.streamId, topic: c.topic, firstId: id });
  }
  return [...first.values()].sort((a, b) => a.firstId - b.firstId);
}
