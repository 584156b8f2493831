/**
 * `$queryRaw` on the root client, handed to the driver adapter directly. Prisma's client runs a
 * raw query through its query engine (request building, its interpreter, parameter and result
 * serialization): about four times the CPU of the driver's own work for one statement, and most
 * of the hot paths' statements are raw. Here the statement goes to the same driver adapter
 * Prisma uses (so it is prepared by name and counted as every statement is), and the result is
 * converted exactly as Prisma converts a raw result (the same column types → the same values:
 * int8 → bigint, numeric → Decimal, timestamps → Date, json parsed, …).
 *
 * Inside `$transaction(async (tx) => …)` the same holds for `tx.$queryRaw`: it runs on the
 * transaction Prisma opened (its driver-adapter transaction, captured when Prisma starts it), so
 * it is part of that transaction as Prisma's own statements are; model operations stay Prisma's.
 * `rawTransaction` opens a transaction of raw statements without Prisma at all.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  ColumnTypeEnum,
  type ArgType,
  type ColumnType,
  type SqlDriverAdapter,
  type SqlDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
} from "@prisma/driver-adapter-utils";
import { Prisma } from "../../generated/prisma/client.ts";

function argOf(value: unknown): { arg: unknown; type: ArgType } {
  if (Array.isArray(value)) {
    const items = value.map((v) => argOf(v));
    return {
      arg: items.map((i) => i.arg),
      type: {
        ...(items.find((i) => i.arg !== null)?.type ?? { scalarType: "unknown" }),
        arity: "list",
      },
    };
  }
  if (value === null || value === undefined)
    return { arg: null, type: { scalarType: "unknown", arity: "scalar" } };
  if (value instanceof Date)
    return { arg: value, type: { scalarType: "datetime", arity: "scalar" } };
  if (typeof value === "bigint")
    return { arg: value.toString(), type: { scalarType: "bigint", arity: "scalar" } };
  if (Prisma.Decimal.isDecimal(value))
    return { arg: value.toString(), type: { scalarType: "decimal", arity: "scalar" } };
  if (typeof value === "number")
    return {
      arg: value,
      type: { scalarType: Number.isInteger(value) ? "int" : "float", arity: "scalar" },
    };
  if (typeof value === "boolean")
    return { arg: value, type: { scalarType: "boolean", arity: "scalar" } };
  if (typeof value === "string")
    return { arg: value, type: { scalarType: "string", arity: "scalar" } };
  if (ArrayBuffer.isView(value))
    return { arg: value, type: { scalarType: "bytes", arity: "scalar" } };
  // Any other object is sent as JSON, as Prisma sends it.
  return { arg: JSON.stringify(value), type: { scalarType: "json", arity: "scalar" } };
}

/** One value of a column, as Prisma's raw results give it. */
function valueOf(value: unknown, type: ColumnType): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case ColumnTypeEnum.Int32:
      return Math.trunc(Number(value));
    case ColumnTypeEnum.Int64:
      return BigInt(typeof value === "number" ? Math.trunc(value) : (value as string));
    case ColumnTypeEnum.Numeric:
      return new Prisma.Decimal(value as string);
    case ColumnTypeEnum.Boolean:
      return typeof value === "boolean" ? value : value === "true" || value === "1" || value === 1;
    case ColumnTypeEnum.Json:
      return typeof value === "string" ? JSON.parse(value) : value;
    case ColumnTypeEnum.DateTime:
    case ColumnTypeEnum.Date:
      return new Date(value as string);
    case ColumnTypeEnum.Time:
      return new Date(`1970-01-01T${value as string}Z`);
    case ColumnTypeEnum.Bytes:
      return new Uint8Array(value as ArrayBufferLike);
  }
  const element = ARRAY_ELEMENTS.get(type);
  if (element !== undefined && Array.isArray(value)) return value.map((v) => valueOf(v, element));
  return value;
}

const ARRAY_ELEMENTS = new Map<ColumnType, ColumnType>([
  [ColumnTypeEnum.Int32Array, ColumnTypeEnum.Int32],
  [ColumnTypeEnum.Int64Array, ColumnTypeEnum.Int64],
  [ColumnTypeEnum.NumericArray, ColumnTypeEnum.Numeric],
  [ColumnTypeEnum.BooleanArray, ColumnTypeEnum.Boolean],
  [ColumnTypeEnum.JsonArray, ColumnTypeEnum.Json],
  [ColumnTypeEnum.DateTimeArray, ColumnTypeEnum.DateTime],
  [ColumnTypeEnum.DateArray, ColumnTypeEnum.Date],
  [ColumnTypeEnum.TimeArray, ColumnTypeEnum.Time],
  [ColumnTypeEnum.BytesArray, ColumnTypeEnum.Bytes],
]);

function objectsOf(result: SqlResultSet): Record<string, unknown>[] {
  const { columnNames, columnTypes, rows } = result;
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const object: Record<string, unknown> = {};
    for (let c = 0; c < columnNames.length; c++)
      object[columnNames[c]!] = valueOf(row[c], columnTypes[c]!);
    out[r] = object;
  }
  return out;
}

/** The driver-adapter transaction of the `$transaction` being opened in this async context. */
const opening = new AsyncLocalStorage<{ transaction?: Transaction }>();

/** The factory whose connections report the transactions they start to `$transaction` (below). */
export function capturingTransactions<F extends SqlDriverAdapterFactory>(factory: F): F {
  const connect = factory.connect.bind(factory);
  return overriding(factory, {
    async connect() {
      const adapter = await connect();
      const start = adapter.startTransaction.bind(adapter);
      return overriding(adapter, {
        async startTransaction(...args: Parameters<SqlDriverAdapter["startTransaction"]>) {
          const transaction = await start(...args);
          const slot = opening.getStore();
          if (slot && !slot.transaction) slot.transaction = transaction;
          return transaction;
        },
      });
    },
  });
}

/** A raw statement as Prisma's `$queryRaw`/`$executeRaw` take it (template or Prisma.sql), for the driver. */
function sqlQuery(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): SqlQuery {
  const sql = Array.isArray(query)
    ? Prisma.sql(query as TemplateStringsArray, ...values)
    : (query as Prisma.Sql);
  const args = sql.values.map(argOf);
  return { sql: sql.text, args: args.map((a) => a.arg), argTypes: args.map((a) => a.type) };
}

/** Prisma's `$queryRaw`, run by `run`, its rows converted as Prisma converts raw results. */
function rawQuery(run: (query: SqlQuery) => Promise<SqlResultSet>) {
  return async (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
    objectsOf(await run(sqlQuery(query, values)));
}

/** Prisma's `$executeRaw`: the statement's count of affected rows. */
function rawExecute(run: (query: SqlQuery) => Promise<number>) {
  return (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
    run(sqlQuery(query, values));
}

/** A statement Prisma's transaction manager sends itself (no arguments). */
const statement = (sql: string): SqlQuery => ({ sql, args: [], argTypes: [] });

/**
 * Ends a driver-adapter transaction as Prisma's transaction manager ends one: adapters with
 * "phantom" queries (PGlite's) commit or roll back in commit()/rollback(); the others (pg) are sent
 * COMMIT or ROLLBACK, and commit()/rollback() then release the connection (a failed COMMIT still
 * releases it, and its error is the one thrown).
 */
async function endTransaction(transaction: Transaction, commit: boolean): Promise<void> {
  if (transaction.options.usePhantomQuery)
    return commit ? transaction.commit() : transaction.rollback();
  if (commit) {
    try {
      await transaction.executeRaw(statement("COMMIT"));
    } catch (err) {
      await transaction.rollback().catch(() => {});
      throw err;
    }
    return transaction.commit();
  }
  try {
    await transaction.executeRaw(statement("ROLLBACK"));
  } finally {
    await transaction.rollback();
  }
}

/**
 * A transaction that runs raw statements only: what `rawTransaction` hands its work (raw
 * statements on one driver-adapter transaction). A Prisma transaction client is one too, so
 * helpers that only run raw SQL take this and serve both kinds of transaction.
 */
export interface RawTx {
  $queryRaw<T = unknown>(
    query: TemplateStringsArray | Prisma.Sql,
    ...values: unknown[]
  ): Promise<T>;
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number>;
}

const rawTransactions = new WeakMap<object, <T>(work: (tx: RawTx) => Promise<T>) => Promise<T>>();

/**
 * Runs `work` in a transaction of raw statements only, opened on the driver adapter directly:
 * BEGIN, the work's statements, COMMIT (ROLLBACK when `work` throws), on the same pool or embedded
 * database as Prisma's transactions, prepared and counted the same way. Prisma's interactive
 * transactions (transaction ids, timers, tracing spans, a client of proxies per transaction)
 * cost more CPU than a whole channel message's own work; the hottest write takes this path.
 * `client` is a client made by directRawQueries; any other falls back to its `$transaction`.
 */
export function rawTransaction<T>(client: object, work: (tx: RawTx) => Promise<T>): Promise<T> {
  const open = rawTransactions.get(client);
  if (open) return open(work);
  return (client as { $transaction: (w: (tx: RawTx) => Promise<T>) => Promise<T> }).$transaction(
    work,
  );
}

/** `object` with some members replaced; the others are its own, run on it. */
function overriding<C extends object>(object: C, members: Record<string, unknown>): C {
  return new Proxy(object, {
    get(target, prop) {
      if (typeof prop === "string" && Object.hasOwn(members, prop)) return members[prop];
      const value: unknown = Reflect.get(target, prop);
      // Prisma's own methods run on Prisma's client, not on this proxy.
      return typeof value === "function"
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/**
 * The client with `$queryRaw` going to a connection of `factory` (the one Prisma was given: same
 * pool or embedded database, same statement names and counting). Every other member is Prisma's.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any client whose $transaction takes any arguments (Prisma's overloads)
export function directRawQueries<C extends { $transaction: (...args: any[]) => Promise<unknown> }>(
  client: C,
  factory: SqlDriverAdapterFactory,
): C {
  let adapter: Promise<SqlDriverAdapter> | undefined;
  const $queryRaw = rawQuery(async (query) =>
    (await (adapter ??= factory.connect())).queryRaw(query),
  );
  function $transaction(work: unknown, options?: unknown) {
    // A batch (an array of queries) is Prisma's alone.
    if (typeof work !== "function") return client.$transaction(work, options);
    const slot: { transaction?: Transaction } = {};
    return opening.run(slot, () =>
      client.$transaction((tx: object) => {
        const transaction = slot.transaction;
        return (work as (tx: object) => Promise<unknown>)(
          transaction
            ? overriding(tx, { $queryRaw: rawQuery((query) => transaction.queryRaw(query)) })
            : tx,
        );
      }, options),
    );
  }
  async function $rawTransaction<T>(work: (tx: RawTx) => Promise<T>): Promise<T> {
    const transaction = await (await (adapter ??= factory.connect())).startTransaction();
    let result: T;
    try {
      result = await work({
        $queryRaw: rawQuery((query) => transaction.queryRaw(query)),
        $executeRaw: rawExecute((query) => transaction.executeRaw(query)),
      } as RawTx);
    } catch (err) {
      await endTransaction(transaction, false).catch(() => {});
      throw err;
    }
    await endTransaction(transaction, true);
    return result;
  }
  const wrapped = overriding(client, { $queryRaw, $transaction });
  rawTransactions.set(wrapped, $rawTransaction);
  return wrapped;
}
