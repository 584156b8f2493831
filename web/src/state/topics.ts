/**
 * The topics of a channel, most recent first, as the left sidebar lists them under the channel
 * being viewed: fetched once per channel (GET /json/users/me/{stream_id}/topics), then kept by
 * the messages that arrive and move.
 */
import { signal } from "@preact/signals";
import { api, call } from "../api.ts";

export interface Topic {
  name: string;
  maxId: number;
}

/** Channel id → its topics by lower-cased name; only channels fetched at least once. */
export const topics = signal<ReadonlyMap<number, ReadonlyMap<string, Topic>>>(new Map());
const fetching = new Set<number>();

export async function loadTopics(streamId: number) {
  if (topics.value.has(streamId) || fetching.has(streamId)) return;
  fetching.add(streamId);
  try {
    const res = await call(
      api.GET("/users/me/{stream_id}/topics", {
        params: { path: { stream_id: streamId }, query: { allow_empty_topic_name: true } },
      }),
    );
    const known = new Map(topics.value.get(streamId) ?? []);
    for (const t of res.topics) {
      const key = t.name.toLowerCase();
      const old = known.get(key);
      if (!old || old.maxId < t.max_id) known.set(key, { name: t.name, maxId: t.max_id });
    }
    topics.value = new Map(topics.value).set(streamId, known);
  } finally {
    fetching.delete(streamId);
  }
}

/** A message in a topic (new, or moved there). */
export function noteTopic(streamId: number, name: string, messageId: number) {
  const forStream = topics.value.get(streamId);
  if (!forStream) return;
  const key = name.toLowerCase();
  const old = forStream.get(key);
  if (old && old.maxId >= messageId) return;
  const next = new Map(forStream).set(key, { name, maxId: messageId });
  topics.value = new Map(topics.value).set(streamId, next);
}

export function resetTopics() {
  topics.value = new Map();
}

export function sortedTopics(streamId: number): Topic[] {
  return [...(topics.value.get(streamId)?.values() ?? [])].sort((a, b) => b.maxId - a.maxId);
}
