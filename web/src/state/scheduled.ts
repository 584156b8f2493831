/**
 * Scheduled messages (Zulip's web/src/scheduled_messages.ts): the register's
 * `scheduled_messages`, kept current by `scheduled_messages` events (add, update, remove);
 * scheduling, rescheduling (an edit reopened in the compose box is PATCHed on send) and deleting.
 */
import { signal } from "@preact/signals";
import { api, call } from "../api.ts";
import type { components } from "../../../client/src/index.ts";
import { onEvent, onRegister } from "./events.ts";
import type { Conversation } from "./typing.ts";

export type ScheduledMessage = components["schemas"]["ScheduledMessage"];

export const scheduled = signal<ReadonlyMap<number, ScheduledMessage>>(new Map());
/** The scheduled message reopened in the compose box: sending it edits it. */
export const editingScheduled = signal<ScheduledMessage | undefined>(undefined);

onRegister((state) => {
  const list = (state.scheduled_messages as ScheduledMessage[] | undefined) ?? [];
  scheduled.value = new Map(list.map((m) => [m.scheduled_message_id, m]));
});

onEvent("scheduled_messages", (event) => {
  const e = event as unknown as {
    op: "add" | "update" | "remove";
    scheduled_messages?: ScheduledMessage[];
    scheduled_message?: ScheduledMessage;
    scheduled_message_id?: number;
  };
  const next = new Map(scheduled.value);
  if (e.op === "add")
    for (const m of e.scheduled_messages ?? []) next.set(m.scheduled_message_id, m);
  else if (e.op === "update" && e.scheduled_message)
    next.set(e.scheduled_message.scheduled_message_id, e.scheduled_message);
  else if (e.op === "remove" && e.scheduled_message_id !== undefined) {
    next.delete(e.scheduled_message_id);
    if (editingScheduled.value?.scheduled_message_id === e.scheduled_message_id)
      editingScheduled.value = undefined;
  }
  scheduled.value = next;
});

function recipients(target: Conversation) {
  return target.kind === "stream"
    ? { type: "stream" as const, to: target.streamId, topic: target.topic }
    : { type: "direct" as const, to: target.userIds };
}

/** Schedules `content` for `target` at `at` (UNIX seconds); resolves with its id. */
export async function scheduleMessage(target: Conversation, content: string, at: number) {
  const r = await call(
    api.POST("/scheduled_messages", {
      body: { ...recipients(target), content, scheduled_delivery_timestamp: Math.floor(at) },
    }),
  );
  return r.scheduled_message_id;
}

export async function editScheduled(
  id: number,
  target: Conversation,
  content: string,
  at?: number,
) {
  await call(
    api.PATCH("/scheduled_messages/{scheduled_message_id}", {
      params: { path: { scheduled_message_id: id } },
      body: {
        ...recipients(target),
        content,
        ...(at !== undefined ? { scheduled_delivery_timestamp: Math.floor(at) } : {}),
      },
    }),
  );
}

export async function deleteScheduled(id: number) {
  await call(
    api.DELETE("/scheduled_messages/{scheduled_message_id}", {
      params: { path: { scheduled_message_id: id } },
    }),
  );
}

/** One of Zulip's preset times to schedule a message for (UNIX seconds). */
export interface Preset {
  label: "tomorrow" | "monday";
  at: number;
}

/** Zulip's presets: tomorrow at 9 am, and next Monday at 9 am. */
export function presets(now = new Date()): Preset[] {
  const tomorrow = new Date(now);
  tomorrow.setDate(now.getDate() + 1);
  tomorrow.setHours(9, 0, 0, 0);
  const monday = new Date(now);
  monday.setDate(now.getDate() + ((8 - now.getDay()) % 7 || 7));
  monday.setHours(9, 0, 0, 0);
  return [
    { label: "tomorrow", at: tomorrow.getTime() / 1000 },
    { label: "monday", at: monday.getTime() / 1000 },
  ];
}
