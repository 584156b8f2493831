/**
 * One transaction per mutation; events are published only after it commits (Zulip's
 * send_event_on_commit). Only the outermost action calls this; helpers take `tx`.
 */
import type { Tx } from "../db.ts";
import type { AppDeps } from "../context.ts";
import { PendingEvents } from "../events.ts";

export async function inTransaction<T>(deps: Pick<AppDeps, "db" | "events">, realmId: number, work: (tx: Tx, events: PendingEvents) => Promise<T>): Promise<T> {
  const events = new PendingEvents();
  const result = await deps.db.$transaction((tx) => work(tx, events), { timeout: 30_000, maxWait: 30_000 });
  events.publishTo(deps.events, realmId);
  return result;
}
