/**
 * Counting the SQL statements a request runs, at the driver-adapter boundary where Prisma hands
 * each statement to the database: every query, and BEGIN and COMMIT/ROLLBACK of a transaction.
 * A request runs inside `countStatements`, so the count is its own even when requests overlap;
 * statement budgets are asserted on it by tests (a count, never a timing).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type {
  SqlDriverAdapter,
  SqlDriverAdapterFactory,
  Transaction,
} from "@prisma/driver-adapter-utils";

export interface StatementCounter {
  statements: number;
}

const scope = new AsyncLocalStorage<StatementCounter>();

/** Runs `fn` with its own statement counter (read it after `fn` settles). */
export function countStatements<T>(counter: StatementCounter, fn: () => T): T {
  return scope.run(counter, fn);
}

/** Runs `fn` outside any request's count (background work started from within a request). */
export function uncounted<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** The counter of the request running now, if any (for work done on behalf of several requests at once). */
export function currentCounter(): StatementCounter | undefined {
  return scope.getStore();
}

function count() {
  const counter = scope.getStore();
  if (counter) counter.statements++;
}

const COUNTED = new Set(["queryRaw", "executeRaw", "executeScript"]);

function wrapTransaction(tx: Transaction): Transaction {
  return new Proxy(tx, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      // Some adapters (PGlite's) end a transaction in commit()/rollback() itself ("phantom"
      // queries); others (pg) send COMMIT/ROLLBACK as a statement, counted above, and commit() only
      // releases the connection.
      const ends = (prop === "commit" || prop === "rollback") && target.options.usePhantomQuery;
      if (COUNTED.has(prop as string) || ends)
        return (...args: unknown[]) => {
          count();
          return method.apply(target, args);
        };
      return method.bind(target);
    },
  });
}

function wrapAdapter(adapter: SqlDriverAdapter): SqlDriverAdapter {
  return new Proxy(adapter, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (COUNTED.has(prop as string))
        return (...args: unknown[]) => {
          count();
          return method.apply(target, args);
        };
      if (prop === "startTransaction")
        return async (...args: unknown[]) => {
          count(); // BEGIN
          return wrapTransaction((await method.apply(target, args)) as Transaction);
        };
      return method.bind(target);
    },
  });
}

/** The adapter factory whose connections count their statements. */
export function countingAdapter<F extends SqlDriverAdapterFactory>(factory: F): F {
  return new Proxy(factory, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (prop === "connect")
        return async () => wrapAdapter(await (value as F["connect"]).call(target));
      return typeof value === "function"
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
