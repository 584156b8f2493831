/**
 * The transaction of raw statements that sending a message opens (db/direct-raw.ts
 * rawTransaction, actions/transaction.ts inRawTransaction), on the test database (PGlite, or
 * PostgreSQL with DATABASE_URL): what it commits is there, what throws leaves nothing, and
 * overlapping transactions keep their own statements apart. Also storableJson, which writes
 * every event payload.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../server/db/index.ts";
import { rawTransaction } from "../../server/db/direct-raw.ts";
import { countStatements } from "../../server/db/statements.ts";
import { storableJson } from "../../server/lib/text.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.$executeRawUnsafe("CREATE TABLE raw_tx_probe (id int PRIMARY KEY, note text)");
});
afterAll(() => db?.close());

const notes = async () =>
  (
    await db.prisma.$queryRaw<{ id: number; note: string }[]>`
      SELECT id, note FROM raw_tx_probe ORDER BY id`
  ).map((r) => `${r.id}:${r.note}`);

describe("rawTransaction", () => {
  it("commits its statements, returns the work's value, and counts BEGIN and COMMIT", async () => {
    const counter = { statements: 0 };
    const value = await countStatements(counter, () =>
      rawTransaction(db.prisma, async (tx) => {
        await tx.$executeRaw`INSERT INTO raw_tx_probe VALUES (1, ${"one"})`;
        const [row] = await tx.$queryRaw<
          [{ n: number }]
        >`SELECT count(*)::int AS n FROM raw_tx_probe`;
        return row.n;
      }),
    );
    expect(value).toBe(1);
    expect(await notes()).toEqual(["1:one"]);
    expect(counter.statements).toBe(4);
  });

  it("leaves nothing behind when the work throws after writing", async () => {
    await expect(
      rawTransaction(db.prisma, async (tx) => {
        await tx.$executeRaw`INSERT INTO raw_tx_probe VALUES (2, ${"two"})`;
        throw new Error("refused after the write");
      }),
    ).rejects.toThrow("refused after the write");
    expect(await notes()).toEqual(["1:one"]);
  });

  it("leaves nothing behind when a statement fails, and the connection serves the next one", async () => {
    await expect(
      rawTransaction(db.prisma, async (tx) => {
        await tx.$executeRaw`INSERT INTO raw_tx_probe VALUES (3, ${"three"})`;
        await tx.$executeRaw`INSERT INTO raw_tx_probe VALUES (1, ${"duplicate"})`;
      }),
    ).rejects.toThrow();
    expect(await notes()).toEqual(["1:one"]);
    await rawTransaction(
      db.prisma,
      (tx) => tx.$executeRaw`INSERT INTO raw_tx_probe VALUES (4, 'four')`,
    );
    expect(await notes()).toEqual(["1:one", "4:four"]);
  });

  it("keeps overlapping transactions, and Prisma's own beside them, apart", async () => {
    const write = (id: number, fail: boolean) =>
      rawTransaction(db.prisma, async (tx) => {
        await tx.$executeRaw`INSERT INTO raw_tx_probe VALUES (${id}, ${"overlap"})`;
        await new Promise((r) => setTimeout(r, 5));
        if (fail) throw new Error(`abandon ${id}`);
      });
    const results = await Promise.allSettled([
      write(10, false),
      write(11, true),
      write(12, false),
      db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO raw_tx_probe VALUES (13, 'prisma')`;
      }),
      write(14, true),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "rejected",
    ]);
    expect(await notes()).toEqual(["1:one", "4:four", "10:overlap", "12:overlap", "13:prisma"]);
  });

  it("converts arguments and results as Prisma's raw queries do", async () => {
    const [row] = await rawTransaction(
      db.prisma,
      (tx) => tx.$queryRaw<[{ big: bigint; at: Date; list: number[]; doc: unknown }]>`
        SELECT ${2n ** 40n}::bigint AS big, ${new Date("2026-01-02T03:04:05Z")}::timestamptz AS at,
               ${[1, 2, 3]}::int[] AS list, ${Prisma.sql`'{"a": [1]}'`}::jsonb AS doc`,
    );
    expect(row).toEqual({
      big: 2n ** 40n,
      at: new Date("2026-01-02T03:04:05Z"),
      list: [1, 2, 3],
      doc: { a: [1] },
    });
  });
});

describe("storableJson", () => {
  it("stores NUL as U+FFFD in strings and keys, and leaves an escaped backslash alone", async () => {
    const value = { "k\0": ["a\0b", "\\u0000", "\\\0", "\\\\\0z"], plain: "x" };
    const json = storableJson(value);
    expect(JSON.parse(json)).toEqual({
      "k\ufffd": ["a\ufffdb", "\\u0000", "\\\ufffd", "\\\\\ufffdz"],
      plain: "x",
    });
    expect(storableJson({ a: 1, b: null })).toBe('{"a":1,"b":null}');
    // PostgreSQL's jsonb takes it (it refuses \u0000).
    const [row] = await db.prisma.$queryRaw<[{ doc: unknown }]>`SELECT ${json}::jsonb AS doc`;
    expect(row.doc).toEqual(JSON.parse(json));
  });
});
