/**
 * One transaction per mutation, and its events written to the event log in that transaction
 * (so an event exists exactly when its change committed). After commit, this process drops the
 * cache entries the change made stale and wakes its long-polls; other processes do the same
 * when PostgreSQL NOTIFYs them. Only the outermost action calls this; the helpers it calls take
 * its unit of work (`{ tx, events }`: the transaction and the events it will log), or `tx` alone
 * when they only read or write rows.
 */
import type { RawTx } from "../db/index.ts";
import { rawTransaction } from "../db/direct-raw.ts";
import type { AppDeps } from "../context.ts";
import { PendingEvents, type UnitOfWork } from "../events/index.ts";
import { appendEvents, type Appended } from "../events/log.ts";

type Deps = Pick<AppDeps, "db" | "events">;

export function inTransaction<T>(
  deps: Deps,
  realmId: number,
  work: (unit: UnitOfWork) => Promise<T>,
): Promise<T> {
  return runLogged(
    deps,
    realmId,
    (body) => deps.db.$transaction(body, { timeout: 30_000, maxWait: 30_000 }),
    work,
  );
}

/**
 * inTransaction for work that runs raw statements only (its helpers take `RawTx`): the same
 * transaction, events and invalidation, without Prisma's interactive-transaction machinery
 * (db/direct-raw.ts rawTransaction). Sending a channel message takes it.
 */
export function inRawTransaction<T>(
  deps: Deps,
  realmId: number,
  work: (unit: UnitOfWork<RawTx>) => Promise<T>,
): Promise<T> {
  return runLogged(deps, realmId, (body) => rawTransaction(deps.db, body), work);
}

/** The work, then its events appended to the log in its transaction; after commit, the wake-up. */
async function runLogged<X extends RawTx, T>(
  deps: Deps,
  realmId: number,
  open: (body: (tx: X) => Promise<T>) => Promise<T>,
  work: (unit: UnitOfWork<X>) => Promise<T>,
): Promise<T> {
  let keys: string[] = [];
  let appended: Appended | null = null;
  let transaction: X | undefined;
  const result = await open(async (tx) => {
    transaction = tx;
    const pending = new PendingEvents();
    const value = await work({ tx, events: pending });
    keys = [...new Set([...pending.keys, ...staleKeys(realmId, pending)])];
    appended = await appendEvents(tx, realmId, pending.events, keys);
    return value;
  });
  deps.events.afterCommit(appended, keys);
  for (const hook of commitHooks.get(transaction!) ?? []) hook();
  return result;
}

const commitHooks = new WeakMap<object, (() => void)[]>();

/**
 * Runs `hook` once the transaction `tx` commits (never if it rolls back): for work that must
 * see the transaction's rows, e.g. waking the email delivery loop for mail it queued. Helpers
 * that get only `tx` can use it.
 */
export function afterCommit(tx: RawTx, hook: () => void) {
  const hooks = commitHooks.get(tx);
  if (hooks) hooks.push(hook);
  else commitHooks.set(tx, [hook]);
}

/**
 * Cache keys implied by the events themselves, so that a change announced to clients can never
 * leave a stale cached row behind: an organization event makes the organization stale, a user
 * event that user (lib/auth/identity.ts).
 */
function staleKeys(realmId: number, pending: PendingEvents): string[] {
  const keys: string[] = [];
  for (const { event } of pending.events) {
    if (event.type === "realm") keys.push(`realm:${realmId}`);
    if (
      event.type === "realm_user" &&
      (event.person as { user_id?: number } | undefined)?.user_id !== undefined
    )
      keys.push(`user:${(event.person as { user_id: number }).user_id}`);
  }
  return keys;
}

/**
 * Events of no change (typing notifications): there is nothing to commit with them, so they are
 * appended to the log in one statement of its own (autocommit, so no BEGIN/COMMIT; its NOTIFY
 * goes out as it commits), then announced in this process as a commit is. They still go through
 * the log rather than NOTIFY alone: queues live in the database and any process answers any
 * queue, so an event must be stored for a client that is between two polls, or polling another
 * process, to get it.
 */
export async function logEvents(
  deps: Deps,
  realmId: number,
  events: PendingEvents["events"],
): Promise<void> {
  const appended = await appendEvents(deps.db, realmId, events, []);
  deps.events.afterCommit(appended, []);
}
