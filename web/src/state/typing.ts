/**
 * Typing notifications, both ways (Zulip's typing.ts and typing_events.ts): who is typing where,
 * each entry ending when its `stop` arrives or its expiry passes without a renewed `start`; and
 * ours, sent while the compose box is being typed in: `start` again every
 * typingStartedWaitMs, `stop` after typingStoppedWaitMs without input, or at once on send.
 */
import { signal } from "@preact/signals";
import { api } from "../api.ts";
import type { ZulipEventOf } from "../types.ts";
import { dmKey, me, realm } from "./model.ts";

export type Conversation =
  { kind: "stream"; streamId: number; topic: string } | { kind: "dm"; userIds: number[] };

export function conversationKey(c: Conversation): string {
  return c.kind === "stream"
    ? `s:${c.streamId}:${c.topic.toLowerCase()}`
    : `d:${dmKey([...c.userIds, me.value.id])}`;
}

interface Typist {
  senderId: number;
  conversation: string;
  expires: number;
}
export const typists = signal<ReadonlyMap<string, Typist>>(new Map());
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

function purge() {
  const now = Date.now();
  const kept = [...typists.value].filter(([, t]) => t.expires > now);
  if (kept.length !== typists.value.size) typists.value = new Map(kept);
  clearTimeout(expiryTimer);
  const next = Math.min(...kept.map(([, t]) => t.expires));
  if (Number.isFinite(next)) expiryTimer = setTimeout(purge, next - now + 10);
}

export function typingEvent(event: ZulipEventOf<"typing">) {
  const senderId = event.sender.user_id;
  if (senderId === me.value.id) return;
  const conversation =
    event.message_type === "stream"
      ? `s:${event.stream_id}:${(event.topic ?? "").toLowerCase()}`
      : `d:${dmKey((event.recipients ?? []).map((r) => r.user_id))}`;
  const key = `${senderId}|${conversation}`;
  const next = new Map(typists.value);
  if (event.op === "start")
    next.set(key, { senderId, conversation, expires: Date.now() + realm.value.typingExpiryMs });
  else next.delete(key);
  typists.value = next;
  purge();
}

/** The users typing in conversations for which `wanted` holds. */
export function typingIn(wanted: (conversation: string) => boolean): number[] {
  return [
    ...new Set(
      [...typists.value.values()].filter((t) => wanted(t.conversation)).map((t) => t.senderId),
    ),
  ];
}

let current: { key: string; to: Conversation; sentAt: number } | undefined;
let idleTimer: ReturnType<typeof setTimeout> | undefined;

function send(op: "start" | "stop", to: Conversation) {
  const body =
    to.kind === "stream"
      ? { op, type: "stream" as const, stream_id: to.streamId, topic: to.topic }
      : { op, type: "direct" as const, to: to.userIds };
  // Best effort, as Zulip's: a lost notification only means no "is typing…" for a moment.
  void api.POST("/typing", { body }).catch(() => {});
}

/** The compose box changed while addressed to `to`. */
export function noteTyping(to: Conversation | undefined, empty: boolean) {
  if (!to || empty) return stopTyping();
  const key = conversationKey(to);
  if (current && current.key !== key) stopTyping();
  const now = Date.now();
  if (!current || now - current.sentAt >= realm.value.typingStartedWaitMs) {
    current = { key, to, sentAt: now };
    send("start", to);
  }
  clearTimeout(idleTimer);
  idleTimer = setTimeout(stopTyping, realm.value.typingStoppedWaitMs);
}

export function stopTyping() {
  clearTimeout(idleTimer);
  if (current) send("stop", current.to);
  current = undefined;
}
