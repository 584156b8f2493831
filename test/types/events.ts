/**
 * Type-level test, checked by `npm run typecheck` (strict): a consumer of the client narrows
 * events by `type` and `op` with no cast, and the un-narrowed union does not let anything through.
 * Never run; a regression (events typed loosely again) fails the type-check.
 */
import type { ZulipEvent, ZulipEventOf } from "../../client/src/events.ts";

export function describeEvent(event: ZulipEvent): string {
  // @ts-expect-error -- `message` exists only once `type` says "message".
  void event.message;
  if (event.type === "message") {
    const id: number = event.message.id;
    const content: string = event.message.content;
    const flags: string[] = event.flags;
    return `${id} ${content} ${flags.join()}`;
  }
  if (event.type === "typing") {
    const sender: number = event.sender.user_id;
    const to = event.recipients?.map((r) => r.email) ?? [event.stream_id, event.topic];
    return `${event.op} ${sender} ${to.join()}`;
  }
  if (event.type === "subscription") {
    if (event.op === "add") return event.subscriptions.map((s) => s.name).join();
    if (event.op === "peer_add") return event.user_ids.join();
    // @ts-expect-error -- `subscriptions` of a peer_remove does not exist.
    if (event.op === "peer_remove") return event.subscriptions;
  }
  if (event.type === "realm_user" && event.op === "update" && "full_name" in event.person)
    return event.person.full_name;
  if (event.type === "drafts" && event.op === "update") return event.draft.content;
  if (event.type === "presence") return Object.keys(event.presences ?? {}).join();
  return event.type;
}

export const subscriptionsAdded = (e: ZulipEventOf<"subscription", "add">) =>
  e.subscriptions.map((s) => s.stream_id);
export const anyTyping = (e: ZulipEventOf<"typing">): "start" | "stop" => e.op;
