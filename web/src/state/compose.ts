/**
 * The compose box's state and sending, with Zulip's local echo (web/src/echo.ts): a message
 * shows at once as "sending", is sent with this queue's id and a local id, and is replaced by the
 * real one when its `message` event comes back with that local id. A send that fails stays, with
 * Retry; one whose event is late (a queue being replaced) is fetched by the id the send answered.
 */
import { signal } from "@preact/signals";
import { api, call, errorText } from "../api.ts";
import type { Msg } from "../types.ts";
import { fetchOne, allLists } from "./messages.ts";
import { stopTyping, type Conversation } from "./typing.ts";

export type Target = Conversation;

export interface ComposeState {
  target: Target | undefined;
  /** Which field to focus, and a counter so that asking again focuses it again. */
  focus: "content" | "topic" | "to" | undefined;
  focusTick: number;
}
export const compose = signal<ComposeState>({ target: undefined, focus: undefined, focusTick: 0 });
export const draft = signal("");

export function openCompose(target: Target | undefined, focus: ComposeState["focus"] = "content") {
  compose.value = { target, focus, focusTick: compose.value.focusTick + 1 };
}

export interface Pending {
  localId: string;
  target: Target;
  content: string;
  state: "sending" | "failed" | "sent";
  error?: string;
  id?: number;
  at: number;
}
export const pending = signal<readonly Pending[]>([]);

let counter = 0;
let getQueueId: () => string | undefined = () => undefined;
export function setQueueIdSource(f: () => string | undefined) {
  getQueueId = f;
}

function update(localId: string, change: Partial<Pending> | undefined) {
  pending.value = change
    ? pending.value.map((p) => (p.localId === localId ? { ...p, ...change } : p))
    : pending.value.filter((p) => p.localId !== localId);
}

async function transmit(p: Pending) {
  const queueId = getQueueId();
  const common = {
    content: p.content,
    local_id: p.localId,
    ...(queueId ? { queue_id: queueId } : {}),
  };
  const body =
    p.target.kind === "stream"
      ? { type: "stream" as const, to: p.target.streamId, topic: p.target.topic, ...common }
      : { type: "direct" as const, to: p.target.userIds, ...common };
  try {
    const { id } = await call(api.POST("/messages", { body }));
    if (!pending.value.some((x) => x.localId === p.localId)) return; // the event came first
    update(p.localId, { state: "sent", id });
    // The event normally follows at once; if it does not (the queue is being replaced), fetch it.
    setTimeout(() => {
      if (!pending.value.some((x) => x.localId === p.localId)) return;
      void fetchOne(id).then((m) => {
        if (m) confirmSent(m, p.localId);
      });
    }, 4000);
  } catch (err) {
    update(p.localId, { state: "failed", error: errorText(err) });
  }
}

export function sendMessage(target: Target, content: string) {
  stopTyping();
  counter += 1;
  // Zulip's local ids are decimal strings; unique within this page's queue is what matters.
  const p: Pending = {
    localId: `${Date.now()}.${counter}`,
    target,
    content,
    state: "sending",
    at: Date.now(),
  };
  pending.value = [...pending.value, p];
  void transmit(p);
}

export function retrySend(localId: string) {
  const p = pending.value.find((x) => x.localId === localId);
  if (!p) return;
  update(localId, { state: "sending", error: undefined });
  void transmit({ ...p, state: "sending" });
}

export function discardSend(localId: string) {
  update(localId, undefined);
}

/** The real message arrived (by event or fetch): its echo goes. */
export function confirmSent(m: Msg, localId: string | undefined) {
  const before = pending.value.length;
  pending.value = pending.value.filter((p) => p.localId !== localId && p.id !== m.id);
  if (pending.value.length !== before) for (const list of allLists()) list.consider(m);
}
