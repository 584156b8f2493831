/**
 * Narrows (zerver/lib/narrow.py NarrowBuilder): a list of `{operator, operand, negated}` terms
 * compiled to one SQL condition, plus the rows to read from — the user's own `user_message`
 * rows, or a channel's whole history when the narrow names a channel whose history the user
 * may read.
 *
 * Everything is tested in SQL, so a narrow costs at most one lookup statement (the channels and
 * users it names) before the query that uses it: flags are bit tests on `um.flags`, topic
 * visibility and channel muting EXISTS tests, a search one `@@` on the full-text index; never
 * id lists loaded first. Only `with` (the conversation of a message) costs one more statement.
 */
import { Prisma, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import { unreadableWithRowSql } from "../access/channels.ts";
import { resolveLookups, storableText, LookupBuilder } from "./narrow-lookups.ts";
import {
  ConversationKinds,
  FALSE,
  flagCondition,
  mutedCondition,
  parseTerm,
  TRUE,
  UNREAD,
  type ParsedTerm,
} from "./narrow-operators.ts";
import { applyWith, normalizeTerms, type NarrowTerm } from "./narrow-terms.ts";
import { searchCondition, searchTsquery } from "./search.ts";
import { isGuest } from "../users/users.ts";

export type { NarrowTerm } from "./narrow-terms.ts";
type Sql = Prisma.Sql;

/** Where a query's rows come from: `FROM`, the id column to range and order on, and `WHERE`. */
export interface NarrowSource {
  /** `message m` and the user's `user_message um`, joined. */
  from: Sql;
  /** The id column of the table the rows start from (`um.message_id` or `m.id`): ranges and order use it, so its index serves them. */
  id: Sql;
  /** The scope (the user's rows, or the organization's messages) and every term's condition. */
  where: Sql;
}

export interface CompiledNarrow extends NarrowSource {
  /**
   * Whether the narrow reads a channel's whole history: rows from `message`, with the user's
   * `user_message` row LEFT JOINed (absent for messages from before they subscribed).
   * Otherwise rows start from the user's `user_message` rows.
   */
  history: boolean;
  /**
   * The user's unread messages in the narrow, from the unread partial index (for
   * anchor=first_unread); as in Zulip, without muted topics, nor muted channels unless the
   * narrow names a channel.
   */
  unread: NarrowSource;
  /**
   * The narrow's rows as the union of disjoint sources of direct messages, each ordered by its id
   * column through an index: a limited range reads each, limited, and merges them (a
   * direct-message pair, one per sender). Absent: the narrow's rows are read as one.
   */
  branches?: NarrowSource[];
  /** The narrow over the messages the user received (their user_message rows), whatever `history` is: matches_narrow reads these. */
  received: NarrowSource;
  /**
   * For a narrow with a search term: what its results are highlighted with (the tsquery of its
   * search terms that are not negated; null when there is none). Null for other narrows, whose
   * results carry no match fields.
   */
  search: { highlight: Sql | null } | null;
}

/**
 * Compiles a narrow for `user`. Terms are checked in order, and the first bad one is reported,
 * as Zulip does; the channels and users they name are looked up in one statement first.
 * Search terms are one search, as Zulip's add_narrow_conditions joins them (a negated one is
 * its own condition).
 */
export async function compileNarrow(
  db: Db,
  realm: Realm,
  user: UserProfile,
  narrow: NarrowTerm[],
): Promise<CompiledNarrow> {
  const terms = await applyWith(db, realm, user, normalizeTerms(narrow));
  const lookups = new LookupBuilder();
  const kinds = new ConversationKinds();
  const parsed: ParsedTerm[] = [];
  const searches: string[] = [];
  let invalid: unknown;
  for (const term of terms) {
    if (term.operator === "search" && !term.negated) {
      searches.push(String(term.operand));
      continue;
    }
    try {
      parsed.push(parseTerm(term, realm, user, lookups, kinds));
    } catch (e) {
      // An earlier term naming an unknown channel or user is reported first: look those up.
      invalid = e;
      break;
    }
  }
  const resolved = await resolveLookups(db, realm, user, lookups.keys);

  // Zulip's ok_to_include_history: a (non-negated) channel whose history the user may read, or
  // channels:public for those who may read public channels; but any `is:` term other than
  // is:resolved is about the user's own rows, of which historical messages have none.
  let history = false;
  for (const p of parsed) {
    if (p.term.negated) continue;
    if (p.channel?.(resolved)?.historyReadable || (p.publicChannels && !isGuest(user)))
      history = true;
  }
  if (parsed.some((p) => p.term.operator === "is" && p.term.operand !== "resolved"))
    history = false;

  // A term whose condition is the OR of ordered index ranges (a direct-message pair): a limited
  // range of the user's own rows is read as one ordered, limited scan per branch, merged
  // (rangeSelect), each branch's WHERE being every other condition and that branch.
  const driver = history ? undefined : parsed.find((p) => p.branches && !p.term.negated);
  const branchConditions = driver?.branches?.(resolved) ?? null;
  const conditions: Sql[] = [];
  const otherConditions: Sql[] = [];
  for (const p of parsed) {
    const condition = p.build(resolved, history);
    if (!condition) continue;
    // NOT is exact: but for the flag tests (which negate themselves), every condition is over
    // NOT NULL columns, EXISTS, IN over non-NULL values or constants, never NULL.
    const applied = p.term.negated && !p.negates ? Prisma.sql`NOT (${condition})` : condition;
    conditions.push(applied);
    if (p !== driver) otherConditions.push(applied);
  }
  if (invalid) throw invalid as Error;

  let search: CompiledNarrow["search"] = null;
  if (searches.length) {
    const operand = searches.join(" ");
    const tsquery = storableText(operand) ? searchTsquery(operand) : null;
    const condition = tsquery ? searchCondition(tsquery) : FALSE;
    conditions.push(condition);
    otherConditions.push(condition);
    search = { highlight: tsquery };
  } else if (parsed.some((p) => p.term.operator === "search")) search = { highlight: null };

  const where = conditions.length ? Prisma.join(conditions, " AND ") : TRUE;
  // A row of the user's own is not enough for a channel message (has_message_access): the
  // channel must still be readable to them (not a private channel they left, say). The channels
  // they may not read are one array, read once per statement (an InitPlan); `<> ALL` over it
  // leaves the planner's row estimates as they were (an `IN (subquery)` halved them and made it
  // merge-join the whole message table for a rare flag: test/api/scale-plans.test.ts). Direct
  // messages' recipients are never channels', so they always pass.
  const readable = Prisma.sql`m.recipient_id <> ALL (ARRAY(${unreadableWithRowSql(user)}))`;
  const received: NarrowSource = {
    from: Prisma.raw("user_message um JOIN message m ON m.id = um.message_id"),
    id: Prisma.raw("um.message_id"),
    where: Prisma.sql`um.user_profile_id = ${user.id} AND m.realm_id = ${realm.id} AND ${where} AND ${readable}`,
  };
  // Only the user's own rows can be unread: a historical message has none and counts as read.
  // Zulip's find_first_unread_anchor skips what is muted; a channel's own muting only outside it.
  const namesChannel = parsed.some((p) => p.channel);
  const unread = {
    ...received,
    where: Prisma.sql`um.user_profile_id = ${user.id} AND ${flagCondition(UNREAD, false)} AND m.realm_id = ${realm.id} AND ${where} AND ${readable} AND NOT ${mutedCondition(user, !namesChannel)}`,
  };
  if (!history) {
    const others = otherConditions.length ? Prisma.join(otherConditions, " AND ") : TRUE;
    const branches = branchConditions?.map((branch) => ({
      from: Prisma.sql`message m JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}`,
      id: Prisma.raw("m.id"),
      // Direct messages only (their recipients are never a channel's): no readability test.
      where: Prisma.sql`m.realm_id = ${realm.id} AND ${branch} AND ${others}`,
    }));
    return { history, ...received, unread, received, search, ...(branches ? { branches } : {}) };
  }
  return {
    history,
    from: Prisma.sql`message m LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}`,
    id: Prisma.raw("m.id"),
    where: Prisma.sql`m.realm_id = ${realm.id} AND ${where}`,
    unread,
    received,
    search,
  };
}
