import { BadEventQueueIdError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { fetchInitialState } from "../lib/register-state.ts";

/** POST /register (zerver/views/events_register.py): a new event queue and the state it starts from. */
export const registerQueue: Handler<"register-queue"> = async ({ body }, ctx) => {
  const eventTypes = body.event_types ?? null;
  const fetchTypes = body.fetch_event_types ?? eventTypes;
  const clientGravatar = body.client_gravatar ?? true;
  // The queue exists before the state is read, so no event in between is lost.
  const queue = ctx.events.register({
    userId: ctx.user.id,
    realmId: ctx.realm.id,
    eventTypes,
    allPublicStreams: body.all_public_streams ?? false,
    clientCapabilities: (body.client_capabilities ?? {}) as Record<string, boolean>,
    applyMarkdown: body.apply_markdown ?? false,
    clientGravatar,
  });
  const state = await fetchInitialState(ctx, fetchTypes, clientGravatar, body.include_subscribers ?? false);
  return { queue_id: queue.id, last_event_id: queue.lastEventId, ...state } as any;
};

/** GET /events: long-polls the queue; `dont_block` answers at once. */
export const getEvents: Handler<"get-events"> = async ({ query }, ctx) => {
  const queue = ctx.events.get(query.queue_id, ctx.user.id);
  if (!queue) throw new BadEventQueueIdError(query.queue_id);
  const events = await ctx.events.fetch(queue, query.last_event_id ?? -1, query.dont_block ?? false);
  return { events, queue_id: queue.id };
};

/** DELETE /events: deletes the queue. */
export const deleteQueue: Handler<"delete-queue"> = async ({ body }, ctx) => {
  if (!ctx.events.get(body.queue_id, ctx.user.id)) throw new BadEventQueueIdError(body.queue_id);
  ctx.events.delete(body.queue_id);
  return {};
};
