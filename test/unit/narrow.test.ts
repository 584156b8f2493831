/**
 * The SQL a narrow compiles to: flag tests written with the literal constants of the partial
 * indexes (a bind parameter would keep the planner from using them), topics through lower(),
 * search patterns escaped. Narrows that name no channel or user need no database.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Db, Realm, UserProfile } from "../../server/db.ts";
import { compileNarrow, type NarrowTerm } from "../../server/lib/narrow.ts";

const noDatabase = new Proxy({}, { get: () => () => Promise.reject(new Error("no query expected")) }) as unknown as Db;
const realm = { id: 7, emptyTopicDisplayName: null } as Realm;
const user = { id: 42, realmId: 7, role: 400, recipientId: 99 } as UserProfile;
const compile = (narrow: NarrowTerm[]) => compileNarrow(noDatabase, realm, user, narrow);
const text = (sql: { text: string }) => sql.text.replace(/\s+/g, " ");

/** The partial indexes of user_message, as the migration writes their predicates. */
function partialIndexes(): Map<string, string> {
  const migration = readFileSync(new URL("../../prisma/migrations/20261123194345_core/migration.sql", import.meta.url), "utf8");
  const found = new Map<string, string>();
  for (const m of migration.matchAll(/CREATE INDEX "(user_message_\w+_idx)" ON "user_message" \("user_profile_id", "message_id"\) WHERE \("flags" & (\d+)\) (=|<>) 0;/g))
    found.set(m[1]!, `(um.flags & ${m[2]}) ${m[3]} 0`);
  return found;
}

describe("compileNarrow", () => {
  it("starts from the user's user_message rows unless a channel's history is read", async () => {
    const narrow = await compile([]);
    expect(narrow.history).toBe(false);
    expect(text(narrow.from)).toBe("user_message um JOIN message m ON m.id = um.message_id");
    expect(text(narrow.id)).toBe("um.message_id");
    expect(text(narrow.where)).toBe("um.user_profile_id = $1 AND m.realm_id = $2 AND TRUE");
    expect(narrow.where.values).toEqual([42, 7]);
  });

  it("tests each flag with the literal predicate of its partial index, negations with the complement", async () => {
    const indexes = partialIndexes();
    const cases: [string, string, string][] = [
      ["unread", "user_message_unread_idx", "(um.flags & 1) <> 0"],
      ["starred", "user_message_starred_idx", "(um.flags & 2) = 0"],
      ["mentioned", "user_message_mentioned_idx", "(um.flags & 120) = 0"],
      ["alerted", "user_message_has_alert_word_idx", "(um.flags & 512) = 0"],
      ["dm", "user_message_is_private_idx", "(um.flags & 2048) = 0"],
      ["private", "user_message_is_private_idx", "(um.flags & 2048) = 0"],
    ];
    expect(new Set(cases.map((c) => c[1]))).toEqual(new Set(indexes.keys()));
    for (const [operand, index, complement] of cases) {
      const narrow = await compile([{ operator: "is", operand }]);
      expect(text(narrow.where)).toContain(indexes.get(index));
      expect(narrow.where.values).toEqual([42, 7]);
      expect(text((await compile([{ operator: "is", operand, negated: true }])).where)).toContain(complement);
    }
  });

  it("finds the first unread message through the unread index", async () => {
    const narrow = await compile([{ operator: "is", operand: "starred" }]);
    expect(text(narrow.unread.where)).toBe("um.user_profile_id = $1 AND (um.flags & 1) = 0 AND m.realm_id = $2 AND (um.flags & 2) <> 0");
    expect(text(narrow.unread.from)).toBe("user_message um JOIN message m ON m.id = um.message_id");
  });

  it("matches topics through lower(subject), and escapes search words for LIKE", async () => {
    const topic = await compile([{ operator: "topic", operand: " Lunch " }]);
    expect(text(topic.where)).toContain("(m.is_channel_message AND lower(m.subject) = lower($3))");
    expect(topic.where.values[2]).toBe("Lunch");
    const search = await compile([{ operator: "search", operand: "100% a_b c\\d" }]);
    expect(search.where.values.slice(2)).toEqual(["%100\\%%", "%100\\%%", "%a\\_b%", "%a\\_b%", "%c\\\\d%", "%c\\\\d%"]);
    expect(text(search.where)).toContain("(m.content ILIKE $3 OR m.subject ILIKE $4)");
    const negated = await compile([{ operator: "search", operand: "x", negated: true }]);
    expect(text(negated.where)).toContain("NOT ((m.content ILIKE $3 OR m.subject ILIKE $4))");
  });

  it("keeps text the database cannot store (NUL) out of the query", async () => {
    const narrow = await compile([{ operator: "search", operand: "a\u0000b" }]);
    expect(text(narrow.where)).toContain("AND FALSE");
    expect(narrow.where.values).toEqual([42, 7]);
  });
});
