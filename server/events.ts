/**
 * Per-client event queues (Zulip's Tornado queues), held in this process. Actions queue events
 * while their transaction runs and publish them only after it commits (Zulip's
 * send_event_on_commit), so a client never hears of a change that was rolled back.
 */
import { randomUUID } from "node:crypto";

export interface ZulipEvent {
  type: string;
  [key: string]: unknown;
}

export interface QueueOptions {
  userId: number;
  realmId: number;
  eventTypes: string[] | null;
  allPublicStreams: boolean;
  clientCapabilities: Record<string, boolean>;
  applyMarkdown: boolean;
  clientGravatar: boolean;
}

export type EventAdapter = (event: ZulipEvent, queue: QueueOptions) => ZulipEvent;

interface Waiter {
  resolve: (events: (ZulipEvent & { id: number })[]) => void;
  timer: NodeJS.Timeout;
}

export class EventQueue {
  readonly id = randomUUID();
  private events: (ZulipEvent & { id: number })[] = [];
  private nextId = 0;
  lastTouched = Date.now();
  waiter: Waiter | undefined;
  constructor(readonly options: QueueOptions) {}

  get lastEventId() {
    return this.nextId - 1;
  }

  wants(event: ZulipEvent) {
    const types = this.options.eventTypes;
    return types === null || types.includes(event.type) || event.type === "heartbeat";
  }

  push(event: ZulipEvent) {
    this.events.push({ ...event, id: this.nextId++ });
    if (this.waiter) {
      const { resolve, timer } = this.waiter;
      this.waiter = undefined;
      clearTimeout(timer);
      resolve(this.events);
    }
  }

  /** Drops events the client has acknowledged by asking for later ones. */
  prune(lastEventId: number) {
    this.events = this.events.filter((e) => e.id > lastEventId);
  }

  pending() {
    return this.events;
  }
}

export interface EventBusOptions {
  /** How long GET /events waits before answering with a heartbeat (Zulip: about 50 s). */
  heartbeatMs?: number;
  /** A queue nobody polled for this long is deleted (Zulip's IDLE_EVENT_QUEUE_TIMEOUT_SECS: 10 minutes). */
  idleQueueMs?: number;
  /** Queues one user may hold; registering one more deletes their least recently polled queue. */
  maxQueuesPerUser?: number;
  /** Unacknowledged events one queue may hold; a queue that overflows is deleted. */
  maxEventsPerQueue?: number;
}

/**
 * Bounds on what queues hold, so that abandoned or slow clients cannot grow the server without
 * limit. A queue that is deleted for either reason behaves as one that timed out: its next poll
 * gets BAD_EVENT_QUEUE_ID, and the client registers again and reloads its state, which is how
 * every Zulip client already recovers.
 */
export const DEFAULT_MAX_QUEUES_PER_USER = 50;
export const DEFAULT_MAX_EVENTS_PER_QUEUE = 1000;

export class EventBus {
  private queues = new Map<string, EventQueue>();
  private readonly heartbeatMs: number;
  private readonly idleQueueMs: number;
  private readonly maxQueuesPerUser: number;
  private readonly maxEventsPerQueue: number;
  private gcTimer: NodeJS.Timeout;

  constructor(options: EventBusOptions = {}) {
    this.heartbeatMs = options.heartbeatMs ?? 50_000;
    this.idleQueueMs = options.idleQueueMs ?? 10 * 60_000;
    this.maxQueuesPerUser = options.maxQueuesPerUser ?? DEFAULT_MAX_QUEUES_PER_USER;
    this.maxEventsPerQueue = options.maxEventsPerQueue ?? DEFAULT_MAX_EVENTS_PER_QUEUE;
    this.gcTimer = setInterval(() => this.collectIdle(), Math.min(60_000, this.idleQueueMs));
    this.gcTimer.unref();
  }

  register(options: QueueOptions): EventQueue {
    const own = [...this.queues.values()].filter((q) => q.options.userId === options.userId);
    if (own.length >= this.maxQueuesPerUser) {
      own.sort((a, b) => a.lastTouched - b.lastTouched);
      for (const stale of own.slice(0, own.length - this.maxQueuesPerUser + 1)) this.delete(stale.id);
    }
    const queue = new EventQueue(options);
    this.queues.set(queue.id, queue);
    return queue;
  }

  get(queueId: string, userId: number): EventQueue | undefined {
    const queue = this.queues.get(queueId);
    return queue && queue.options.userId === userId ? queue : undefined;
  }

  delete(queueId: string) {
    const queue = this.queues.get(queueId);
    if (queue?.waiter) {
      clearTimeout(queue.waiter.timer);
      queue.waiter.resolve([]);
    }
    this.queues.delete(queueId);
  }

  /** Waits for events after `lastEventId`, or returns at once when `dontBlock`. */
  async fetch(queue: EventQueue, lastEventId: number, dontBlock: boolean): Promise<(ZulipEvent & { id: number })[]> {
    queue.lastTouched = Date.now();
    queue.prune(lastEventId);
    if (queue.pending().length > 0 || dontBlock) return [...queue.pending()];
    if (queue.waiter) {
      // A newer poll replaces an older one, as Zulip's single-handler queues do.
      clearTimeout(queue.waiter.timer);
      queue.waiter.resolve([]);
    }
    return new Promise((resolve) => {
      // push() answers the waiting poll and clears the waiter.
      const timer = setTimeout(() => queue.push({ type: "heartbeat" }), this.heartbeatMs);
      timer.unref();
      queue.waiter = { resolve: (events) => resolve([...events]), timer };
    });
  }

  /**
   * Delivers an event to every queue of the given users (in the event's realm). `adapt`
   * tailors it to a queue's options (e.g. raw Markdown for apply_markdown=false queues).
   */
  publish(realmId: number, event: ZulipEvent, userIds: Iterable<number>, adapt?: EventAdapter) {
    const users = new Set(userIds);
    for (const queue of [...this.queues.values()])
      if (queue.options.realmId === realmId && users.has(queue.options.userId) && queue.wants(event)) {
        queue.push(adapt ? adapt(event, queue.options) : event);
        if (queue.pending().length > this.maxEventsPerQueue) this.delete(queue.id);
      }
  }

  /** Drops a user's queues (deactivation, API key change). */
  dropUserQueues(userId: number) {
    for (const queue of [...this.queues.values()]) if (queue.options.userId === userId) this.delete(queue.id);
  }

  private collectIdle() {
    const limit = Date.now() - this.idleQueueMs;
    for (const queue of [...this.queues.values()]) if (!queue.waiter && queue.lastTouched < limit) this.delete(queue.id);
  }

  close() {
    clearInterval(this.gcTimer);
    for (const id of [...this.queues.keys()]) this.delete(id);
  }
}

/** Events collected by an action during its transaction, published after commit. */
export class PendingEvents {
  private items: { event: ZulipEvent; userIds: number[]; adapt?: EventAdapter }[] = [];
  add(event: ZulipEvent, userIds: Iterable<number>, adapt?: EventAdapter) {
    this.items.push({ event, userIds: [...userIds], adapt });
  }
  publishTo(bus: EventBus, realmId: number) {
    for (const { event, userIds, adapt } of this.items) bus.publish(realmId, event, userIds, adapt);
    this.items = [];
  }
}
