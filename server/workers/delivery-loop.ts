/**
 * The timer both background deliveries share (scheduled messages, the email outbox): one round
 * at start, then a round at the next due time, woken earlier when this process queues something
 * due sooner (`wakeAt`), and at least every `intervalMs` for what other processes queued.
 * Rounds run one at a time in a process; `stop()` waits for the one in progress.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { AppDeps } from "../context.ts";

/** Shortest wait between rounds while due rows remain (being sent by another process, or erring). */
const MIN_WAIT_MS = 100;

export interface DeliveryLoopOptions {
  /** Longest time between two looks at the table. */
  intervalMs: number;
  /** Names this process in the rows it sends (`claimed_by`). */
  processId?: string;
}

/** The loops started in this process, by their class: what a change committed here wakes. */
const running = new Map<abstract new (...args: never[]) => unknown, Set<DeliveryLoop<unknown>>>();

export abstract class DeliveryLoop<Report> {
  /**
   * Something this process committed is due at `at` (now, by default): the running loops of
   * this class look then rather than at their next poll. Other processes' loops find it by
   * their poll.
   */
  static wakeRunning(this: abstract new (...args: never[]) => unknown, at = new Date(0)) {
    for (const loop of running.get(this) ?? []) loop.wakeAt(at);
  }

  readonly processId: string;
  protected stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (ms since the epoch, by the real clock). */
  private timerAt = Infinity;
  private ticking: Promise<void> = Promise.resolve();
  /** Rounds run one at a time in a process (the timer's and a test's). */
  private round: Promise<unknown> = Promise.resolve();

  constructor(
    protected readonly deps: Pick<AppDeps, "log" | "now">,
    private readonly loop: DeliveryLoopOptions & { name: string },
  ) {
    this.processId =
      loop.processId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  }

  /** One round: sends what is due by the clock now. */
  protected abstract deliverAll(): Promise<Report>;
  /** When the next round has something to do, if ever. */
  protected abstract nextDueAt(): Promise<Date | null>;

  /** Starts the timer (again, after a stop): a round now, then at each next due time. */
  start(): this {
    const kind = this.constructor as abstract new (...args: never[]) => unknown;
    running.set(kind, (running.get(kind) ?? new Set()).add(this));
    this.stopped = false;
    this.arm(0);
    return this;
  }

  /** Stops the timer and waits for a round in progress. */
  async stop(): Promise<void> {
    running.get(this.constructor as abstract new (...args: never[]) => unknown)?.delete(this);
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all([this.ticking, this.round.catch(() => {})]);
  }

  /** Runs a round after the one in progress; what it did. */
  deliverDue(): Promise<Report> {
    const run = this.round.catch(() => {}).then(() => this.deliverAll());
    this.round = run;
    return run;
  }

  /** Looks at `at` (by this loop's clock) unless the timer already fires by then. */
  wakeAt(at: Date) {
    const delayMs = Math.max(0, at.getTime() - this.deps.now().getTime());
    if (Date.now() + delayMs < this.timerAt) this.arm(delayMs);
  }

  private arm(delayMs: number) {
    clearTimeout(this.timer);
    this.timerAt = Infinity;
    if (this.stopped) return;
    this.timerAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timerAt = Infinity;
      this.ticking = this.tick();
    }, delayMs);
    this.timer.unref();
  }

  private async tick() {
    let wait = this.loop.intervalMs;
    try {
      await this.deliverDue();
      if (this.stopped) return;
      const next = await this.nextDueAt();
      if (next)
        wait = Math.min(
          this.loop.intervalMs,
          Math.max(MIN_WAIT_MS, next.getTime() - this.deps.now().getTime()),
        );
    } catch (err) {
      this.deps.log.error({ err }, `${this.loop.name} failed; retrying`);
    }
    // Something queued here during this round may have armed an earlier wake-up already.
    if (Date.now() + wait < this.timerAt) this.arm(wait);
  }
}
