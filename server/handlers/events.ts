import { BadEventQueueIdError, JsonableError } from "../errors.ts";
import type { Handler, Schemas } from "../http/types.ts";
import { fetchInitialState } from "../lib/register/register-state.ts";
import { eventQueueNarrow } from "../lib/narrow/event-narrow.ts";
import { isGuest } from "../lib/users/users.ts";

/** Zulip's MOBILE_EVENT_QUEUE_TIMEOUT_SECS and MAX_QUEUE_TIMEOUT_SECS (zerver/tornado/event_queue.py). */
const MOBILE_QUEUE_TIMEOUT_SECS = 12 * 60 * 60;
const MAX_QUEUE_TIMEOUT_SECS = 7 * 24 * 60 * 60;

/** POST /register (zerver/views/events_register.py): a new event queue and the state it starts from. */
export const registerQueue: Handler<"register-queue"> = async ({ body }, ctx) => {
  const { user } = ctx;
  // can_access_public_streams: guests may not follow every public channel.
  if (body.all_public_streams && isGuest(user))
    throw new JsonableError("User not authorized for this query");
  // A bot's defaults (_default_all_public_streams, _default_narrow).
  const allPublicStreams = body.all_public_streams ?? (user.isBot && user.defaultAllStreams);
  const narrow = await eventQueueNarrow(ctx, body.narrow ?? []);
  const eventTypes = body.event_types ?? null;
  const fetchTypes = body.fetch_event_types ?? eventTypes;
  const clientGravatar = body.client_gravatar ?? true;
  // A longer-lived queue on request (a phone polls rarely), capped as Zulip caps it.
  const requested = body.idle_queue_timeout;
  const idleTimeoutSecs =
    requested === undefined
      ? undefined
      : Math.min(
          requested === "mobile" ? MOBILE_QUEUE_TIMEOUT_SECS : requested,
          MAX_QUEUE_TIMEOUT_SECS,
        );
  // The queue exists before the state is read, so no event in between is lost.
  const queueId = await ctx.events.register({
    userId: user.id,
    realmId: ctx.realm.id,
    eventTypes,
    narrow,
    idleTimeoutSecs,
    options: {
      allPublicStreams,
      clientCapabilities: body.client_capabilities ?? {},
      applyMarkdown: body.apply_markdown ?? false,
      clientGravatar,
      slimPresence: body.slim_presence ?? false,
    },
  });
  const state = await fetchInitialState(
    ctx,
    fetchTypes,
    clientGravatar,
    body.include_subscribers ?? false,
    body.client_capabilities ?? {},
    {
      slim:
        (body.slim_presence ?? false) ||
        (body.client_capabilities?.simplified_presence_events ?? false),
    },
  );
  return {
    queue_id: queueId,
    last_event_id: -1,
    idle_queue_timeout_secs: idleTimeoutSecs ?? ctx.events.defaultIdleQueueSecs,
    ...state,
  };
};

/** GET /events: long-polls the queue; `dont_block` answers at once. */
export const getEvents: Handler<"get-events"> = async ({ query }, ctx) => {
  const events = await ctx.events.fetch(
    query.queue_id,
    ctx.user.id,
    query.last_event_id ?? -1,
    query.dont_block ?? false,
  );
  if (!events) throw new BadEventQueueIdError(query.queue_id);
  // The log holds events as plain JSON; each has the shape of one of the spec's Event schemas,
  // which response validation checks (VALIDATE_RESPONSES) and the tests check again.
  return { events: events as Schemas["Event"][], queue_id: query.queue_id };
};

/** DELETE /events: deletes the queue. */
export const deleteQueue: Handler<"delete-queue"> = async ({ body }, ctx) => {
  if (!(await ctx.events.delete(body.queue_id, ctx.user.id)))
    throw new BadEventQueueIdError(body.queue_id);
  return {};
};
