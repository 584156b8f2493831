/**
 * Typed builders for tests: the common steps (send a message, create a channel, open an event
 * queue, act as a user) typed by the spec's generated types, so that a test needs no cast.
 *
 *   const hamlet = asUser(server, "hamlet");
 *   const queue = await openQueue(asUser(server, "othello"), { event_types: ["message"] });
 *   const { id } = await sendToChannel(hamlet, { to: "Verona", topic: "t", content: "x" });
 *   const [event] = ofType(await queue.nextEvents(), "message");
 *   expect(event?.message.id).toBe(id);
 *
 * Each builder returns the success body and throws a `RefusedError` (a ZulipApiError: `status`,
 * `code`, `body.msg`) when the server refuses; a test about the refusal itself asserts it with
 * `expectError` on the plain client call instead.
 */
import {
  ZulipApiError,
  type JsonErrorBody,
  type RegisterParams,
  type RegisterState,
  type ZulipClient,
  type ZulipEvent,
  type ZulipEventOf,
  type paths,
} from "../../client/src/index.ts";
import type { TestServer } from "./server.ts";

type Method = "get" | "post" | "patch" | "put" | "delete";
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M & keyof paths[P]]>;

/** The form parameters of an operation, as the generated types model them: `Body<"/messages", "post">`. */
export type Body<P extends keyof paths, M extends Method> =
  Operation<P, M> extends {
    requestBody?: { content: { "application/x-www-form-urlencoded": infer B } };
  }
    ? B
    : never;

/** The query parameters of an operation: `Query<"/messages", "get">`. */
export type Query<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** One term of a narrow (`{ operator, operand, negated? }` or the legacy `[operator, operand]`). */
export type NarrowTerm = NonNullable<Query<"/messages", "get">["narrow"]>[number];

export type { RegisterParams, ZulipEvent, ZulipEventOf };

/**
 * A value deliberately outside the spec's types, for a test of the server's own validation
 * (a missing parameter, a wrong type, a value the spec does not list). It is the one sanctioned
 * cast: `body: untyped({ op: "add" })` says the request is ill-typed on purpose.
 */
export function untyped(value: unknown): never {
  return value as never;
}

/** A request the server refused: the Zulip error (status, code, msg), named in the message. */
export class RefusedError extends ZulipApiError {
  constructor(status: number, body: JsonErrorBody, url: string) {
    super(status, body);
    this.name = "RefusedError";
    this.message = `${new URL(url).pathname}: ${status} ${body.msg}`;
  }
}

/** The success body of a typed-client request; throws RefusedError for an error envelope. */
export async function ok<T>(
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await request;
  if (error !== undefined || data === undefined)
    throw new RefusedError(response.status, error as JsonErrorBody, response.url);
  return data;
}

/** A client for a user of the development organization, by short name ("hamlet", "iago", …). */
export function asUser(server: TestServer, shortName: string): ZulipClient {
  if (!server.creds.users[shortName])
    throw new Error(
      `No user '${shortName}' in the development organization (users: ${Object.keys(server.creds.users).join(", ")})`,
    );
  return server.as(shortName);
}

type SendBody = Body<"/messages", "post">;

/** `POST /messages` to a channel (by id or name) and topic; returns `{ id }`. */
export function sendToChannel(
  client: ZulipClient,
  message: Omit<SendBody, "type" | "to" | "topic"> & {
    to: number | string;
    topic: string;
    /** "channel" (default) or its older name "stream". */
    type?: "channel" | "stream";
  },
) {
  return ok(client.POST("/messages", { body: { type: "channel", ...message } }));
}

/** `POST /messages`, a direct message to users (by ids or by emails); returns `{ id }`. */
export function sendDirect(
  client: ZulipClient,
  message: Omit<SendBody, "type" | "to" | "topic" | "subject"> & {
    to: number[] | string[];
    /** "direct" (default) or its deprecated name "private". */
    type?: "direct" | "private";
  },
) {
  return ok(client.POST("/messages", { body: { type: "direct", ...message } }));
}

type CreateChannelBody = Body<"/channels/create", "post">;

/** `POST /channels/create` (with no subscribers unless given); returns `{ id }`. */
export function createChannel(
  client: ZulipClient,
  channel: Omit<CreateChannelBody, "subscribers"> & { subscribers?: number[] },
) {
  return ok(client.POST("/channels/create", { body: { subscribers: [], ...channel } }));
}

export interface EventQueue {
  /** The queue's id, and the state `POST /register` returned with it. */
  id: string;
  state: RegisterState;
  /**
   * The events after the last ones this returned (acknowledging those, as a client's next poll
   * does), at once; with `{ block: true }` it waits for at least one (or a heartbeat).
   */
  nextEvents(options?: { block?: boolean }): Promise<ZulipEvent[]>;
  /** Every event the queue still holds (`last_event_id=-1`), acknowledging none. */
  allEvents(): Promise<ZulipEvent[]>;
}

/** `POST /register` for a queue, read with `nextEvents()` / `allEvents()`. */
export async function openQueue(
  client: ZulipClient,
  params: RegisterParams = {},
): Promise<EventQueue> {
  const state = await ok(client.POST("/register", { body: params }));
  if (state.queue_id === null) throw new Error("POST /register returned no queue");
  const id = state.queue_id;
  let lastEventId = state.last_event_id;
  const poll = async (last_event_id: number, dont_block: boolean) =>
    (
      await ok(
        client.GET("/events", { params: { query: { queue_id: id, last_event_id, dont_block } } }),
      )
    ).events;
  return {
    id,
    state,
    async nextEvents({ block = false } = {}) {
      const events = await poll(lastEventId, !block);
      for (const event of events) lastEventId = Math.max(lastEventId, event.id);
      return events;
    },
    allEvents: () => poll(-1, true),
  };
}

/**
 * The events of one `type` (and `op`), narrowed to their own fields:
 * `ofType(events, "subscription", "add")[0]?.subscriptions`.
 */
export function ofType<T extends ZulipEvent["type"], Op extends string | undefined = undefined>(
  events: readonly ZulipEvent[],
  type: T,
  op?: Op,
): ZulipEventOf<T, Op>[] {
  return events.filter(
    (event): event is ZulipEventOf<T, Op> =>
      event.type === type && (op === undefined || ("op" in event && event.op === op)),
  );
}
