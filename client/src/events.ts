/**
 * Zulip's real-time loop, as its own clients run it (python-zulip-api's call_on_each_event):
 * `POST /register` for the initial state and a queue, then `GET /events` long-polls from the
 * last event seen. A queue the server deleted (`BAD_EVENT_QUEUE_ID`: not polled for ~10 minutes,
 * overflowed, server restarted without it) is registered again, and `onRegister` receives the
 * new state so the caller can rebuild what it derived from the old one. Network errors, 5xx
 * answers and answers that are not Zulip's back off exponentially (with jitter); 429 waits for
 * its `Retry-After`; any other 4xx (bad credentials, bad parameters) is thrown, since retrying
 * cannot help.
 *
 *   for await (const event of eventQueue(zulip, { register: { event_types: ["message"] } }))
 *     if (event.type === "message") console.log(event.message.content);
 *
 * Events are the spec's `Event` union, one member per `type` (and `op`): checking `type` (then
 * `op`) narrows an event to its own fields, with no cast.
 */
import type { Client } from "openapi-fetch";
import { unwrap, ZulipApiError } from "./errors.js";
import type { components, operations, paths } from "./openapi.js";

type RegisterOperation = operations["register-queue"];
export type RegisterParams = NonNullable<
  RegisterOperation["requestBody"]
>["content"]["application/x-www-form-urlencoded"];
export type RegisterState = RegisterOperation["responses"][200]["content"]["application/json"];
/** An event of a queue: a union discriminated by `type` (and `op`). */
export type ZulipEvent = components["schemas"]["Event"];
/** The events of one `type` (and, optionally, one `op`): `ZulipEventOf<"subscription", "add">`. */
export type ZulipEventOf<
  T extends ZulipEvent["type"],
  Op extends string | undefined = undefined,
> = Extract<ZulipEvent, Op extends string ? { type: T; op: Op } : { type: T }>;

export interface EventQueueOptions {
  /** The `POST /register` parameters (event_types, narrow, client_capabilities, …). */
  register?: RegisterParams;
  /**
   * A first registration already under way (`unwrap(client.POST("/register", …))`, with these
   * `register` parameters): taken as the loop's first, so that a caller can send it before it has
   * finished loading. Its failure is handled as the loop's own would be; later registrations (a
   * lost queue) are the loop's.
   */
  pending?: Promise<RegisterState>;
  /** Called with the state of each registration, the first and every one after a lost queue. */
  onRegister?: (state: RegisterState) => void | Promise<void>;
  /** Stops the loop (the generator returns; a poll in progress is aborted). */
  signal?: AbortSignal;
  /** Also yield `heartbeat` events (default: skipped). */
  heartbeats?: boolean;
  /** Backoff after a failure: first wait and longest wait, in ms (default 1000 and 30000). */
  retry?: { initialMs?: number; maxMs?: number };
  /** Called before each backoff wait, with what failed. */
  onRetry?: (error: unknown, waitMs: number) => void;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Yields the events of a queue, oldest first, forever (until `signal` aborts or the consumer stops). */
export async function* eventQueue(
  client: Client<paths>,
  options: EventQueueOptions = {},
): AsyncGenerator<ZulipEvent, void, undefined> {
  const { signal } = options;
  const initialMs = options.retry?.initialMs ?? 1000;
  const maxMs = options.retry?.maxMs ?? 30_000;
  let queue: { id: string; lastEventId: number } | undefined;
  let failures = 0;
  let pending = options.pending;
  while (!signal?.aborted) {
    try {
      if (!queue) {
        const request =
          pending ?? unwrap(client.POST("/register", { body: options.register ?? {}, signal }));
        pending = undefined;
        const state = await request;
        if (state.queue_id === null)
          throw new Error(
            "POST /register returned no queue (was the request made without authentication?)",
          );
        queue = { id: state.queue_id, lastEventId: state.last_event_id };
        failures = 0;
        await options.onRegister?.(state);
      }
      const { events } = await unwrap(
        client.GET("/events", {
          params: { query: { queue_id: queue.id, last_event_id: queue.lastEventId } },
          signal,
        }),
      );
      failures = 0;
      for (const event of events) {
        queue.lastEventId = Math.max(queue.lastEventId, event.id);
        if (event.type !== "heartbeat" || options.heartbeats) yield event;
      }
    } catch (err) {
      if (signal?.aborted) return;
      let waitMs: number;
      if (err instanceof ZulipApiError && err.code === "BAD_EVENT_QUEUE_ID") {
        queue = undefined;
        continue;
      } else if (err instanceof ZulipApiError && err.status === 429) {
        const after = Number(err.body["retry-after"]);
        waitMs = Number.isFinite(after) && after > 0 ? after * 1000 : initialMs;
      } else if (err instanceof ZulipApiError && err.status < 500) {
        throw err;
      } else {
        failures += 1;
        const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 20));
        waitMs = ceiling / 2 + Math.random() * (ceiling / 2);
      }
      options.onRetry?.(err, waitMs);
      await sleep(waitMs, signal);
    }
  }
}
