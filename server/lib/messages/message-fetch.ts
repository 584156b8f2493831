/**
 * The reads of GET /messages (zerver/views/message_fetch.py get_messages_backend and
 * zerver/lib/narrow.py limit_query_to_range) and GET /messages/matches_narrow
 * (messages_in_narrow_backend): the messages of a compiled narrow around an anchor, or by id,
 * each with the user's flags and, for a search, its highlighted matches, in one statement.
 */
import { CUSTOM_PLAN, Prisma, type Db, type Message } from "../../db/index.ts";
import type { MessageRow } from "./message-dicts.ts";
import { isStorableId } from "../ids.ts";
import { MAX_MESSAGE_ID, MESSAGE_COLUMNS } from "./messages.ts";
import type { CompiledNarrow, NarrowSource } from "../narrow/narrow.ts";
import { matchColumns, searchMatch, type SearchMatch } from "../narrow/search.ts";

/** Zulip's LARGER_THAN_MAX_MESSAGE_ID: the anchor of "newest", and of first_unread when nothing is unread. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

export interface RangeRequest {
  /**
   * A message id (possibly beyond any id, as "newest" is), the first unread message of the
   * narrow, or its first message sent at or after a date (anchor=date, feature level 445).
   */
  anchor: number | "first_unread" | { date: Date; realmId: number };
  numBefore: number;
  numAfter: number;
}

/** A message as buildMessageDicts takes it, with its highlighted matches when the narrow is a search. */
export interface FetchedRow extends MessageRow {
  search?: SearchMatch;
}

export interface FetchedRange {
  /** The anchor used: the one asked for, or the computed first unread message (LARGER_THAN_MAX_MESSAGE_ID when none). */
  anchor: number;
  /** Up to numBefore matching messages before the anchor, oldest first. */
  before: FetchedRow[];
  /** The anchor message, when it matches the narrow. */
  anchorMessage: FetchedRow | null;
  /** Up to numAfter matching messages after the anchor, oldest first. */
  after: FetchedRow[];
}

type Part = -1 | 0 | 1;
type RawRow = { [K in keyof Message]: Message[K] | null } & {
  part: Part | null;
  flags: bigint | number | string | null;
  matchContent?: string;
  matchSubject?: string;
};

/** A raw row as buildMessageDicts takes it; its flags are null for a historical message (no user_message row). */
function messageRow({
  part: _part,
  flags,
  matchContent,
  matchSubject,
  ...message
}: RawRow): FetchedRow {
  const row: FetchedRow = {
    message: message as Message,
    flags: flags === null ? null : BigInt(flags),
  };
  if (matchContent !== undefined && matchSubject !== undefined)
    row.search = searchMatch({ matchContent, matchSubject });
  return row;
}

/**
 * A search's match columns over the rows of `alias` (which has MESSAGE_COLUMNS), or nothing.
 * They are computed on the rows a query returns, after its ranges are limited.
 */
function searchColumns(narrow: CompiledNarrow, alias: string): Prisma.Sql {
  if (!narrow.search) return Prisma.empty;
  const column = (name: string) => Prisma.raw(`${alias}."${name}"`);
  return Prisma.sql`, ${matchColumns(narrow.search.highlight, column("renderedContent"), column("subject"))}`;
}

/**
 * One range of the narrow's rows (a parenthesized SELECT), with `part` saying which. A narrow
 * read in branches (a direct-message pair) is one limited scan per branch, merged and limited
 * again: the first `limit` of a union are among the first `limit` of each of its parts.
 */
function rangeSelect(narrow: CompiledNarrow, part: Part, limit: number | null): Prisma.Sql {
  if (!narrow.branches) return sourceRange(narrow, narrow.history, part, limit);
  const scans = Prisma.join(
    narrow.branches.map((b) => sourceRange(b, false, part, limit)),
    " UNION ALL ",
  );
  if (part === 0) return Prisma.sql`(${scans})`;
  return Prisma.sql`(SELECT * FROM (${scans}) b ORDER BY b.id ${Prisma.raw(part === -1 ? "DESC" : "ASC")} LIMIT ${limit})`;
}

/** One range of one source's rows (a parenthesized SELECT), with `part` saying which. */
function sourceRange(
  narrow: NarrowSource,
  history: boolean,
  part: Part,
  limit: number | null,
): Prisma.Sql {
  const { from, id, where } = narrow;
  const comparison = Prisma.raw(part === -1 ? "<" : part === 0 ? "=" : ">");
  // Each side is its own index scan from the anchor outwards, stopping after `limit` rows. Rows
  // that start from user_message bound message's id as well (the join makes them equal, but the
  // planner does not carry an inequality across it): a merge join then starts both of its index
  // scans at the anchor, instead of walking `message` from its end to the anchor.
  const bound = history ? Prisma.empty : Prisma.sql` AND m.id ${comparison} a.anchor`;
  const order =
    part === -1
      ? Prisma.sql`ORDER BY ${id} DESC LIMIT ${limit}`
      : part === 1
        ? Prisma.sql`ORDER BY ${id} LIMIT ${limit}`
        : Prisma.empty;
  return Prisma.sql`(SELECT ${Prisma.raw(String(part))} AS part, ${MESSAGE_COLUMNS}, um.flags
    FROM ${from} WHERE ${where} AND ${id} ${comparison} a.anchor${bound} ${order})`;
}

/**
 * The organization's first message sent at or after the date, as a scalar subquery: two descents
 * of the (realm_id, date_sent) index (the earliest such time, then the lowest id sent then).
 */
export function firstMessageAtSql(realmId: number, date: Date): Prisma.Sql {
  return Prisma.sql`(SELECT min(d.id) FROM message d WHERE d.realm_id = ${realmId}::int AND d.date_sent = (
    SELECT min(e.date_sent) FROM message e WHERE e.realm_id = ${realmId}::int AND e.date_sent >= ${date}))`;
}

/**
 * anchor=date: the narrow's first message at or after the first message of the organization
 * sent at or after the date (found through the (realm_id, date_sent) index; ids grow with
 * sending time), else the anchor of "newest".
 */
function dateAnchor(narrow: CompiledNarrow, at: { date: Date; realmId: number }): Prisma.Sql {
  const { from, id, where } = narrow;
  const first = firstMessageAtSql(at.realmId, at.date);
  const bound = narrow.history ? Prisma.empty : Prisma.sql` AND m.id >= ${first}`;
  return Prisma.sql`COALESCE((SELECT ${id} FROM ${from} WHERE ${where} AND ${id} >= ${first}${bound}
    ORDER BY ${id} LIMIT 1)::bigint, ${LARGER_THAN_MAX_MESSAGE_ID}::bigint)`;
}

/**
 * The messages around an anchor, in one statement: the anchor (a constant, the first unread
 * message through the unread partial index, or the first at a date) in a one-row CTE, and the before, at and after
 * ranges as a UNION ALL of index scans, each ordered from the anchor outwards and limited.
 * Message ids are 32-bit: an anchor beyond them (as "newest" is) has nothing at or after it.
 */
export async function fetchMessageRange(
  db: Db,
  narrow: CompiledNarrow,
  request: RangeRequest,
): Promise<FetchedRange> {
  const { numBefore, numAfter } = request;
  const computed = typeof request.anchor !== "number";
  const mayHaveLater = computed || (request.anchor as number) <= MAX_MESSAGE_ID;
  const ranges: Prisma.Sql[] = [];
  if (numBefore > 0) ranges.push(rangeSelect(narrow, -1, numBefore));
  if (mayHaveLater) ranges.push(rangeSelect(narrow, 0, null));
  if (numAfter > 0 && mayHaveLater) ranges.push(rangeSelect(narrow, 1, numAfter));
  if (typeof request.anchor === "number" && ranges.length === 0)
    return { anchor: request.anchor, before: [], anchorMessage: null, after: [] };

  const unread = narrow.unread;
  const anchor =
    request.anchor === "first_unread"
      ? Prisma.sql`COALESCE((SELECT ${unread.id} FROM ${unread.from} WHERE ${unread.where} ORDER BY ${unread.id} LIMIT 1)::bigint, ${LARGER_THAN_MAX_MESSAGE_ID}::bigint)`
      : typeof request.anchor === "number"
        ? Prisma.sql`${request.anchor}::bigint`
        : dateAnchor(narrow, request.anchor);
  // MATERIALIZED: the first unread message is looked up once, not once per range the CTE
  // would otherwise be inlined into. LEFT JOIN LATERAL: the anchor comes back even when no
  // message matches.
  // Planned for its values every time (see CUSTOM_PLAN): the best plan depends on them.
  const rows = await db.$queryRaw<
    (RawRow & { anchor: bigint | number | string })[]
  >`${Prisma.raw(CUSTOM_PLAN)}
    WITH a AS MATERIALIZED (SELECT ${anchor} AS anchor)
    SELECT a.anchor AS anchor${
      ranges.length
        ? Prisma.sql`, r.*${searchColumns(narrow, "r")} FROM a LEFT JOIN LATERAL (${Prisma.join(ranges, " UNION ALL ")}) r ON TRUE`
        : Prisma.sql` FROM a`
    }`;

  const result: FetchedRange = {
    anchor: Number(rows[0]!.anchor),
    before: [],
    anchorMessage: null,
    after: [],
  };
  rows.sort((x, y) => (x.id ?? 0) - (y.id ?? 0));
  for (const { anchor: _anchor, ...row } of rows) {
    if (row.part === -1) result.before.push(messageRow(row));
    else if (row.part === 0) result.anchorMessage = messageRow(row);
    else if (row.part === 1) result.after.push(messageRow(row));
  }
  return result;
}

/** The listed messages that match the narrow (and that the user may see), by id, in one statement. */
export async function fetchMessagesById(
  db: Db,
  narrow: CompiledNarrow,
  messageIds: number[],
): Promise<FetchedRow[]> {
  // An id beyond the 32-bit column names no message (and PostgreSQL would refuse to compare it).
  const ids = [...new Set(messageIds.filter(isStorableId))];
  if (!ids.length) return [];
  const rows = await db.$queryRaw<RawRow[]>`
    SELECT r.*${searchColumns(narrow, "r")} FROM (
      SELECT 0 AS part, ${MESSAGE_COLUMNS}, um.flags
      FROM ${narrow.from} WHERE ${narrow.where} AND ${narrow.id} = ANY (${ids}::int[])) r
    ORDER BY r.id`;
  return rows.map(messageRow);
}

/**
 * matches_narrow: which of the listed messages the user received (has a user_message row for)
 * match the narrow, each with its match fields (highlighted for a search; otherwise the
 * rendered content and the escaped topic), in one statement.
 */
export async function fetchNarrowMatches(
  db: Db,
  narrow: CompiledNarrow,
  messageIds: number[],
): Promise<Map<number, SearchMatch>> {
  const ids = [...new Set(messageIds.filter(isStorableId))];
  const matches = new Map<number, SearchMatch>();
  if (!ids.length) return matches;
  const { from, id, where } = narrow.received;
  const rows = await db.$queryRaw<{ id: number; matchContent: string; matchSubject: string }[]>`
    SELECT m.id, ${matchColumns(narrow.search?.highlight ?? null, Prisma.raw("m.rendered_content"), Prisma.raw("m.subject"))}
    FROM ${from} WHERE ${where} AND ${id} = ANY (${ids}::int[])
    ORDER BY ${id}`;
  for (const row of rows) matches.set(row.id, searchMatch(row));
  return matches;
}
