/**
 * A lookup whose value PostgreSQL cannot even store — an integer beyond the 32-bit id columns,
 * text with a NUL character — cannot match a row. PostgreSQL refuses such a query instead of
 * finding nothing; this extension answers reads with "nothing found", so a client sending
 * `message_id=99999999999` gets Zulip's "Invalid message(s)" rather than a server error.
 * Writes are untouched: validation refuses such values before anything is written.
 */
import { Prisma } from "../../generated/prisma/client.ts";

/** SQLSTATEs of values a column cannot hold: numeric out of range, bad byte sequence, NUL in text. */
const UNSTORABLE = new Set(["22003", "22021", "22P05"]);

function isUnstorableValue(e: unknown): boolean {
  if (!(e instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (e.code === "P2020") return true;
  const cause = (
    e.meta as { driverAdapterError?: { cause?: { originalCode?: string } } } | undefined
  )?.driverAdapterError?.cause;
  return UNSTORABLE.has(cause?.originalCode ?? "");
}

const EMPTY: Record<string, () => unknown> = {
  findFirst: () => null,
  findUnique: () => null,
  findMany: () => [],
  count: () => 0,
};

export const unmatchableValuesFindNothing = Prisma.defineExtension({
  name: "unmatchable-values-find-nothing",
  query: {
    $allModels: {
      async $allOperations({ operation, args, query }) {
        try {
          return await query(args);
        } catch (e) {
          const empty = EMPTY[operation];
          if (empty && isUnstorableValue(e)) return empty();
          throw e;
        }
      },
    },
  },
});
