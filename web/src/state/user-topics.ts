/**
 * My topics' visibility policies (register `user_topics`, events `user_topic`), as Zulip's web app
 * keeps them (web/src/user_topics.ts): 1 muted, 2 unmuted, 3 followed, 0 (absent) inherits the
 * channel's. A muted topic, and every topic of a muted channel unless unmuted or followed, is left
 * out of All messages and of its unread counts; it still shows in its own view.
 */
import { signal } from "@preact/signals";
import { api, call } from "../api.ts";
import type { Msg } from "../types.ts";
import { onEvent, onRegister } from "./events.ts";
import { subscriptions } from "./model.ts";
import { setTotalFilter } from "./unread.ts";

export const INHERIT = 0;
export const MUTED = 1;
export const UNMUTED = 2;
export const FOLLOWED = 3;
export type Policy = 0 | 1 | 2 | 3;

interface UserTopic {
  stream_id: number;
  topic_name: string;
  visibility_policy: number;
}

/** `${streamId}:${topic lower-cased}` → its policy (absent: inherit). */
export const userTopics = signal<ReadonlyMap<string, Policy>>(new Map());

const keyOf = (streamId: number, topic: string) => `${streamId}:${topic.toLowerCase()}`;

function set(list: readonly UserTopic[], replace: boolean) {
  const next = new Map(replace ? [] : userTopics.value);
  for (const u of list) {
    const k = keyOf(u.stream_id, u.topic_name);
    if (u.visibility_policy === INHERIT) next.delete(k);
    else next.set(k, u.visibility_policy as Policy);
  }
  userTopics.value = next;
}

onRegister((state) => set((state.user_topics as UserTopic[] | undefined) ?? [], true));
onEvent("user_topic", (e) => set([e as unknown as UserTopic], false));

export function topicPolicy(streamId: number, topic: string): Policy {
  return userTopics.value.get(keyOf(streamId, topic)) ?? INHERIT;
}

export function channelMuted(streamId: number): boolean {
  return subscriptions.value.get(streamId)?.is_muted === true;
}

/** Per map of policies: the channels where a topic is muted (the others need no lookup). */
const mutedIn = new WeakMap<ReadonlyMap<string, Policy>, Set<number>>();
function channelsWithMutedTopics(policies: ReadonlyMap<string, Policy>): Set<number> {
  let set = mutedIn.get(policies);
  if (!set) {
    set = new Set();
    for (const [k, p] of policies) if (p === MUTED) set.add(Number(k.slice(0, k.indexOf(":"))));
    mutedIn.set(policies, set);
  }
  return set;
}

/** Whether the topic is shown (and counted) in All messages and the Inbox. */
export function isTopicVisibleInHome(streamId: number, topic: string): boolean {
  // The common case first, without building the topic's key: the unread counts ask this for
  // every unread topic (thousands) each time they change.
  if (!channelMuted(streamId) && !channelsWithMutedTopics(userTopics.value).has(streamId))
    return true;
  const p = topicPolicy(streamId, topic);
  if (p === MUTED) return false;
  if (channelMuted(streamId)) return p === UNMUTED || p === FOLLOWED;
  return true;
}

/** Whether the topic is muted, in effect (itself, or its channel without an exception). */
export function isTopicMuted(streamId: number, topic: string): boolean {
  return !isTopicVisibleInHome(streamId, topic);
}

export function isFollowed(streamId: number, topic: string): boolean {
  return topicPolicy(streamId, topic) === FOLLOWED;
}

/** A message of a channel shown in All messages (DMs always are). */
export function visibleInHome(m: Msg): boolean {
  return (
    m.type !== "stream" || m.stream_id === undefined || isTopicVisibleInHome(m.stream_id, m.subject)
  );
}

export async function setTopicPolicy(streamId: number, topic: string, policy: Policy) {
  await call(
    api.POST("/user_topics", {
      body: { stream_id: streamId, topic, visibility_policy: policy },
    }),
  );
}

/** Shift+M's toggle (Zulip's `M`): a muted topic unmuted, another muted. */
export function toggleTopicMute(streamId: number, topic: string) {
  if (isTopicMuted(streamId, topic))
    return setTopicPolicy(streamId, topic, channelMuted(streamId) ? UNMUTED : INHERIT);
  return setTopicPolicy(streamId, topic, MUTED);
}

// The unread total leaves out what All messages leaves out.
setTotalFilter(isTopicVisibleInHome);
