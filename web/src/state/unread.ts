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

/**
 * A conversation. A topic's `lower` (its name lower-cased: topics are case-insensitive) and `key`
 * ("<channel id>:<lower>") are made once, when it is interned, not at every count.
 */
type Conversation =
  | { kind: "stream"; streamId: number; topic: string; lower: string; key: string }
  | { kind: "dm"; key: string };

const unread = new Map<number, Conversation>();
/**
 * One Conversation object per conversation (a topic as written, a DM key), shared by its unread
 * messages: the counts add up messages by object, then do the per-conversation work (keys,
 * lower-casing, the mute filters) once per conversation rather than once per message.
 */
const interned = new Map<string, Conversation>();
function streamConversation(streamId: number, topic: string): Conversation {
  const k = `s${streamId}:${topic}`;
  let c = interned.get(k);
  if (!c) {
    const lower = topic.toLowerCase();
    c = { kind: "stream", streamId, topic, lower, key: `${streamId}:${lower}` };
    interned.set(k, c);
  }
  return c;
}
function dmConversation(key: string): Conversation {
  const k = `d${key}`;
  let c = interned.get(k);
  if (!c) interned.set(k, (c = { kind: "dm", key }));
  return c;
}

/**
 * Per conversation: its unread messages and the newest of them, kept as they come and go, so
 * that the counts go over conversations (thousands) rather than every unread message (~100,000
 * at scale) each time one is read. `stale`: the newest was read; the next newest is found among
 * the conversation's own ids when the counts are next computed.
 */
interface Tally {
  ids: Set<number>;
  maxId: number;
  stale: boolean;
}
const tallies = new Map<Conversation, Tally>();

/** Every change of `unread` goes through put, drop and clearUnread, which keep the tallies. */
function put(id: number, c: Conversation) {
  const old = unread.get(id);
  if (old === c) return;
  if (old) untally(id, old);
  unread.set(id, c);
  const t = tallies.get(c);
  if (!t) tallies.set(c, { ids: new Set([id]), maxId: id, stale: false });
  else {
    t.ids.add(id);
    if (id > t.maxId) t.maxId = id;
  }
}

function drop(id: number): boolean {
  const c = unread.get(id);
  if (!c) return false;
  unread.delete(id);
  untally(id, c);
  return true;
}

function untally(id: number, c: Conversation) {
  const t = tallies.get(c);
  if (!t) return;
  t.ids.delete(id);
  if (t.ids.size === 0) tallies.delete(c);
  else if (id === t.maxId) t.stale = true;
}

function clearUnread() {
  unread.clear();
  tallies.clear();
}
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
  clearUnread();
  mentions.clear();
  for (const s of data?.streams ?? [])
    for (const id of s.unread_message_ids) put(id, streamConversation(s.stream_id, s.topic));
  for (const p of data?.pms ?? []) {
    const key = dmKey(sortedIds([p.other_user_id, myId]));
    for (const id of p.unread_message_ids) put(id, dmConversation(key));
  }
  for (const h of data?.huddles ?? []) {
    const key = dmKey(h.user_ids_string.split(",").map(Number));
    for (const id of h.unread_message_ids) put(id, dmConversation(key));
  }
  for (const id of data?.mentions ?? []) mentions.add(id);
  changed();
}

function conversationOf(m: Msg): Conversation {
  return m.type === "stream"
    ? streamConversation(m.stream_id ?? 0, m.subject)
    : dmConversation(dmKey(dmMembers(m)));
}

/** A message arrived or was fetched with its flags. */
export function noteMessage(m: Msg) {
  if (m.flags.includes("read")) return;
  const c = conversationOf(m);
  const mentioned = m.flags.some((f) => f === "mentioned" || f.endsWith("wildcard_mentioned"));
  // A fetched message already known unread (from register) changes nothing: no new counts, which
  // go over every unread message (~100,000 at scale), at each of a feed's 150.
  if (sameConversation(unread.get(m.id), c) && (!mentioned || mentions.has(m.id))) return;
  put(m.id, c);
  if (mentioned) mentions.add(m.id);
  changed();
}

function sameConversation(a: Conversation | undefined, b: Conversation): boolean {
  return a === b; // interned
}

/** Messages moved (or renamed topics): their unread entries follow them. */
export function moveUnread(messages: Msg[]) {
  let any = false;
  for (const m of messages)
    if (unread.has(m.id)) {
      put(m.id, conversationOf(m));
      any = true;
    }
  if (any) changed();
}

export function markRead(ids: Iterable<number>) {
  let any = false;
  for (const id of ids) {
    any = drop(id) || any;
    mentions.delete(id);
  }
  if (any) changed();
}

export function markUnread(messages: Msg[]) {
  for (const m of messages) put(m.id, conversationOf(m));
  if (messages.length) changed();
}

export function markAllRead() {
  clearUnread();
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
  const byStream = new Map<number, number>();
  const byTopic = new Map<number, Map<string, TopicCount>>();
  const byDm = new Map<string, number>();
  let dmTotal = 0;
  let total = 0;
  const counted = new Map<string, boolean>();
  for (const [c, t] of tallies) {
    if (t.stale) {
      // Its newest unread message was read: the next newest, among its own.
      t.maxId = 0;
      for (const id of t.ids) if (id > t.maxId) t.maxId = id;
      t.stale = false;
    }
    const count = t.ids.size;
    const maxId = t.maxId;
    if (c.kind === "stream") {
      const key = c.lower;
      let inTotal = counted.get(c.key);
      if (inTotal === undefined)
        counted.set(c.key, (inTotal = countedInTotal(c.streamId, c.topic)));
      if (inTotal) total += count;
      byStream.set(c.streamId, (byStream.get(c.streamId) ?? 0) + count);
      let topics = byTopic.get(c.streamId);
      if (!topics) byTopic.set(c.streamId, (topics = new Map<string, TopicCount>()));
      const tc = topics.get(key);
      if (tc) {
        tc.count += count;
        tc.maxId = Math.max(tc.maxId, maxId);
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
    const key = c.key;
    const old = first.get(key);
    if (!old || id < old.firstId)
      first.set(key, { streamId: c.streamId, topic: c.topic, firstId: id });
  }
  return [...first.values()].sort((a, b) => a.firstId - b.firstId);
}
