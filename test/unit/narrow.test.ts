/**
 * The SQL a narrow compiles to: flag tests written with the literal constants of the partial
 * indexes (a bind parameter would keep the planner from using them), topics through lower(),
 * searches as tsqueries against the full-text index. Narrows that name no channel or user need
 * no database. And Zulip's highlighting of search matches.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Db, Realm, UserProfile } from "../../server/db/index.ts";
import { unreadableWithRowSql } from "../../server/lib/access/channels.ts";
import { compileNarrow, type NarrowTerm } from "../../server/lib/narrow/narrow.ts";
import { highlight } from "../../server/lib/narrow/search.ts";

const noDatabase = new Proxy(
  {},
  { get: () => () => Promise.reject(new Error("no query expected")) },
) as unknown as Db;
const realm = { id: 7, emptyTopicDisplayName: null } as Realm;
const user = { id: 42, realmId: 7, role: 400, recipientId: 99 } as UserProfile;
const compile = (narrow: NarrowTerm[]) => compileNarrow(noDatabase, realm, user, narrow);
const text = (sql: { text: string }) => sql.text.replace(/\s+/g, " ");

/** The test of the user's own rows that their channel is still readable (channel-access.ts), and its values, last. */
const READABLE = " AND m.recipient_id <> ALL (ARRAY(SELECT rs.recipient_id FROM stream rs";
const readableValues = unreadableWithRowSql(user).values;
/** A narrow's SQL without that test. */
function own(sql: { text: string }): string {
  const t = text(sql);
  const start = t.indexOf(READABLE);
  if (start < 0) return t;
  let depth = 0;
  let i = start + " AND ".length;
  for (; i < t.length; i++)
    if (t[i] === "(") depth++;
    else if (t[i] === ")" && --depth === 0) break;
  return t.slice(0, start) + t.slice(i + 1);
}
const ownValues = (sql: { values: unknown[] }) =>
  sql.values.slice(0, sql.values.length - readableValues.length);

/** The partial indexes of user_message, as the migration writes their predicates. */
function partialIndexes(): Map<string, string> {
  const migration = readFileSync(
    new URL("../../prisma/migrations/20261123194345_core/migration.sql", import.meta.url),
    "utf8",
  );
  const found = new Map<string, string>();
  for (const m of migration.matchAll(
    /CREATE INDEX "(user_message_\w+_idx)" ON "user_message" \("user_profile_id", "message_id"\) WHERE \("flags" & (\d+)\) (=|<>) 0;/g,
  ))
    found.set(m[1]!, `(um.flags & ${m[2]}) ${m[3]} 0`);
  return found;
}

describe("compileNarrow", () => {
  it("starts from the user's user_message rows unless a channel's history is read", async () => {
    const narrow = await compile([]);
    expect(narrow.history).toBe(false);
    expect(text(narrow.from)).toBe("user_message um JOIN message m ON m.id = um.message_id");
    expect(text(narrow.id)).toBe("um.message_id");
    expect(own(narrow.where)).toBe("um.user_profile_id = $1 AND m.realm_id = $2 AND TRUE");
    expect(text(narrow.where)).toContain(READABLE);
    expect(ownValues(narrow.where)).toEqual([42, 7]);
    expect(narrow.where.values.slice(2)).toEqual(readableValues);
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
      expect(ownValues(narrow.where)).toEqual([42, 7]);
      expect(text((await compile([{ operator: "is", operand, negated: true }])).where)).toContain(
        complement,
      );
    }
  });

  it("finds the first unread message through the unread index, without muted topics and channels", async () => {
    const narrow = await compile([{ operator: "is", operand: "starred" }]);
    const where = own(narrow.unread.where);
    expect(where).toMatch(
      /^um\.user_profile_id = \$1 AND \(um\.flags & 1\) = 0 AND m\.realm_id = \$2 AND \(um\.flags & 2\) <> 0 AND NOT \(m\.is_channel_message AND /,
    );
    expect(where).toContain("ut.visibility_policy IN (1)");
    // Outside a channel, a muted channel's messages are skipped unless their topic is unmuted or followed.
    expect(where).toContain(
      "sub.is_muted) AND NOT CASE WHEN m.is_channel_message THEN (m.recipient_id, lower(m.subject)) IN ( SELECT ut.recipient_id, ut.topic_name_lower FROM user_topic ut",
    );
    expect(where).toContain("ut.visibility_policy IN (2, 3)");
    expect(text(narrow.unread.from)).toBe("user_message um JOIN message m ON m.id = um.message_id");
  });

  it("matches topics through lower(subject)", async () => {
    const topic = await compile([{ operator: "topic", operand: " Lunch " }]);
    expect(text(topic.where)).toContain("(m.is_channel_message AND lower(m.subject) = lower($3))");
    expect(topic.where.values[2]).toBe("Lunch");
    expect(topic.search).toBeNull();
  });

  it("searches the full-text index: words as plainto_tsquery, quoted phrases as phrase queries", async () => {
    const search = await compile([
      { operator: "search", operand: 'cats "big dog" 100% "unclosed' },
    ]);
    expect(own(search.where)).toBe(
      "um.user_profile_id = $1 AND m.realm_id = $2 AND m.search_tsvector @@ (plainto_tsquery('english'::regconfig, $3) && phraseto_tsquery('english'::regconfig, $4))",
    );
    expect(ownValues(search.where).slice(2)).toEqual(['cats 100% "unclosed', "big dog"]);
    expect(text(search.search!.highlight!)).toBe(
      "plainto_tsquery('english'::regconfig, $1) && phraseto_tsquery('english'::regconfig, $2)",
    );
    // Search terms are one search; a negated one is its own condition, and highlights nothing.
    const two = await compile([
      { operator: "search", operand: "a" },
      { operator: "search", operand: "no", negated: true },
      { operator: "search", operand: '"b c"' },
    ]);
    expect(own(two.where)).toBe(
      "um.user_profile_id = $1 AND m.realm_id = $2 AND NOT (m.search_tsvector @@ (plainto_tsquery('english'::regconfig, $3))) AND m.search_tsvector @@ (plainto_tsquery('english'::regconfig, $4) && phraseto_tsquery('english'::regconfig, $5))",
    );
    expect(ownValues(two.where).slice(2)).toEqual(["no", "a", "b c"]);
    const negated = await compile([{ operator: "search", operand: "x", negated: true }]);
    expect(negated.search).toEqual({ highlight: null });
    // Only blanks: nothing to search for, so nothing matches.
    expect(own((await compile([{ operator: "search", operand: "  " }])).where)).toBe(
      "um.user_profile_id = $1 AND m.realm_id = $2 AND FALSE",
    );
  });

  it("channels:public names the realm's public channels, and reads their history", async () => {
    const narrow = await compile([{ operator: "channels", operand: "public" }]);
    expect(narrow.history).toBe(true);
    expect(text(narrow.where)).toBe(
      "m.realm_id = $1 AND m.recipient_id IN (SELECT s.recipient_id FROM stream s WHERE s.realm_id = $2 AND s.recipient_id IS NOT NULL AND (NOT s.invite_only AND s.history_public_to_subscribers))",
    );
    expect(
      (await compile([{ operator: "channels", operand: "public", negated: true }])).history,
    ).toBe(false);
    const guest = await compileNarrow(noDatabase, realm, { ...user, role: 600 }, [
      { operator: "channels", operand: "public" },
    ]);
    expect(guest.history).toBe(false);
    // matches_narrow reads only the rows the user received.
    expect(text(narrow.received.from)).toBe(
      "user_message um JOIN message m ON m.id = um.message_id",
    );
    expect(text(narrow.received.where)).toMatch(
      /^um\.user_profile_id = \$1 AND m\.realm_id = \$2 AND m\.recipient_id IN/,
    );
  });

  it("keeps text the database cannot store (NUL) out of the query", async () => {
    const narrow = await compile([{ operator: "search", operand: "a\u0000b" }]);
    expect(own(narrow.where)).toContain("AND FALSE");
    expect(ownValues(narrow.where)).toEqual([42, 7]);
  });
});

describe("highlight", () => {
  it("wraps each match in a highlight span", () => {
    expect(highlight("<p><ts-match>KEYWORDMATCH</ts-match> and should work</p>")).toBe(
      '<p><span class="highlight">KEYWORDMATCH</span> and should work</p>',
    );
    expect(highlight("<ts-match>a</ts-match> <ts-match>b</ts-match>c")).toBe(
      '<span class="highlight">a</span> <span class="highlight">b</span>c',
    );
    expect(highlight("no match &amp; more")).toBe("no match &amp; more");
    expect(highlight("")).toBe("");
  });

  it("leaves a match inside an HTML tag as it is (Zulip's highlight_string)", () => {
    expect(
      highlight('<span data-x="<ts-match>word</ts-match>">x</span> <ts-match>word</ts-match>'),
    ).toBe('<span data-x="word">x</span> <span class="highlight">word</span>');
    expect(highlight('<a href="/<ts-match>a</ts-match>"><ts-match>a</ts-match></a>')).toBe(
      '<a href="/a"><span class="highlight">a</span></a>',
    );
  });
});
