/**
 * Narrows (zerver/lib/narrow.py NarrowBuilder): a list of `{operator, operand, negated}` terms
 * compiled to one SQL condition, plus the rows to read from — the user's own `user_message`
 * rows, or a channel's whole history when the narrow names a channel whose history the user
 * may read.
 *
 * Everything is tested in SQL, so a narrow costs at most one lookup statement (the channels and
 * users it names) before the query that uses it: flags are bit tests on `um.flags`, never id
 * lists loaded first.
 */
import { Prisma, type Db, type Realm, type UserProfile } from "../db.ts";
import { JsonableError } from "../errors.ts";
import type { Schemas } from "../http/types.ts";
import { FLAG_BITS, isStorableId, MAX_MESSAGE_ID } from "./messages.ts";
import { directMessageGroupHash } from "./recipients.ts";
import { escapeLike } from "./text.ts";
import { normalizeTopic } from "./topics.ts";
import { isGuest } from "./users.ts";

type Sql = Prisma.Sql;
export type NarrowTerm = Schemas["NarrowTerm"];
interface Term {
  operator: string;
  operand: string | number | number[];
  negated: boolean;
}

export class BadNarrowError extends JsonableError {
  constructor(desc: string) {
    super(`Invalid narrow operator: ${desc}`, { code: "BAD_NARROW", data: { desc } });
  }
}

function normalizeTerms(narrow: NarrowTerm[]): Term[] {
  return narrow.map((t) => (Array.isArray(t) ? { operator: t[0]!, operand: t[1]!, negated: false } : { operator: t.operator, operand: t.operand, negated: t.negated ?? false }));
}

/**
 * A flag test on the user's row: `mask` bits set (or, with `set: false`, all clear). The
 * predicates are written with literal constants, exactly as the partial indexes of
 * user_message name them (migration 20261123194345_core): PostgreSQL uses a partial index only
 * when it can prove the query's predicate implies the index's, which it cannot for a bind
 * parameter.
 */
interface FlagTest {
  mask: bigint;
  set: boolean;
}
const flagTest = (mask: bigint, set: boolean): FlagTest => ({ mask, set });

// Maps, not object literals: an operand such as "constructor" must find nothing.
const FLAG_OPERANDS = new Map<string, FlagTest>([
  ["unread", flagTest(FLAG_BITS.read, false)], // user_message_unread_idx: (flags & 1) = 0
  ["starred", flagTest(FLAG_BITS.starred, true)], // user_message_starred_idx: (flags & 2) <> 0
  // Zulip's is:mentioned covers personal, wildcard and group mentions (user_message_mentioned_idx: & 120).
  ["mentioned", flagTest(FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned | FLAG_BITS.group_mentioned, true)],
  ["alerted", flagTest(FLAG_BITS.has_alert_word, true)], // user_message_has_alert_word_idx: (flags & 512) <> 0
]);
const IS_PRIVATE = flagTest(FLAG_BITS.is_private, true); // user_message_is_private_idx: (flags & 2048) <> 0
const UNREAD = FLAG_OPERANDS.get("unread")!;

/**
 * What a message without a user_message row counts as in history mode: Zulip shows such
 * messages as read and historical, so they are never unread, starred or mentioned. (A flag
 * term turns history mode off, see compileNarrow; this keeps the tests right regardless.)
 */
const HISTORICAL_FLAGS = FLAG_BITS.read | FLAG_BITS.historical;

/** The SQL of a flag test (negated: its complement) on `flags`, an expression over `um.flags`. */
function flagCondition(test: FlagTest, negated: boolean, flags: Sql = Prisma.raw("um.flags")): Sql {
  const set = test.set !== negated;
  return Prisma.sql`(${flags} & ${Prisma.raw(test.mask.toString())}) ${Prisma.raw(set ? "<>" : "=")} 0`;
}

/** `has:` operands → the message column that records them (null: has a reaction). */
const HAS_COLUMNS = new Map<string, Sql | null>([
  ["link", Prisma.raw("m.has_link")],
  ["image", Prisma.raw("m.has_image")],
  ["attachment", Prisma.raw("m.has_attachment")],
  ["reaction", null],
]);

const FALSE = Prisma.raw("FALSE");
/** Text PostgreSQL cannot store (a NUL character) names nothing, and must not reach a query. */
const storableText = (text: string) => !text.includes("\u0000");

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
  /** The user's unread messages in the narrow, from the unread partial index (for anchor=first_unread). */
  unread: NarrowSource;
}

/** Channels and users a narrow names, looked up together in one statement. */
interface ChannelInfo {
  recipientId: number | null;
  /** Whether the user may read the channel's history without a user_message row (as lib/messages.ts accessMessage decides). */
  historyReadable: boolean;
}
interface UserInfo {
  id: number;
  recipientId: number | null;
}
interface Lookups {
  channelIds: number[];
  channelNames: string[];
  userIds: number[];
  userEmails: string[];
}
interface Resolved {
  channelsById: Map<number, ChannelInfo>;
  channelsByName: Map<number, ChannelInfo>;
  usersById: Map<number, UserInfo>;
  usersByEmail: Map<number, UserInfo>;
}
type ChannelRef = (r: Resolved) => ChannelInfo | undefined;
type UserRef = (r: Resolved) => UserInfo | undefined;

/** Registers keys to look up, returning how to find each one's answer; unstorable keys name nothing. */
class LookupBuilder {
  readonly keys: Lookups = { channelIds: [], channelNames: [], userIds: [], userEmails: [] };
  channel(operand: string | number): ChannelRef {
    if (typeof operand === "number") {
      if (!isStorableId(operand)) return () => undefined;
      const i = this.keys.channelIds.push(operand) - 1;
      return (r) => r.channelsById.get(i);
    }
    if (!storableText(operand)) return () => undefined;
    const i = this.keys.channelNames.push(operand) - 1;
    return (r) => r.channelsByName.get(i);
  }
  user(operand: string | number): UserRef {
    if (typeof operand === "number") {
      if (!isStorableId(operand)) return () => undefined;
      const i = this.keys.userIds.push(operand) - 1;
      return (r) => r.usersById.get(i);
    }
    const email = operand.trim();
    if (!storableText(email)) return () => undefined;
    const i = this.keys.userEmails.push(email) - 1;
    return (r) => r.usersByEmail.get(i);
  }
}

/**
 * One statement for every channel and user the narrow names: by id, or case-insensitively by
 * name / API email through the (realm_id, lower(…)) unique indexes. Each key comes back with
 * its position, so an answer never depends on lowercasing the same way in JavaScript.
 */
async function resolveLookups(db: Db, realm: Realm, user: UserProfile, keys: Lookups): Promise<Resolved> {
  const resolved: Resolved = { channelsById: new Map(), channelsByName: new Map(), usersById: new Map(), usersByEmail: new Map() };
  const channelColumns = Prisma.sql`s.id, s.recipient_id AS "recipientId", s.invite_only AS "inviteOnly", s.history_public_to_subscribers AS "historyPublic",
    EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_profile_id = ${user.id} AND sub.recipient_id = s.recipient_id AND sub.active) AS subscribed`;
  const userColumns = Prisma.sql`u.id, u.recipient_id AS "recipientId", NULL::boolean AS "inviteOnly", NULL::boolean AS "historyPublic", NULL::boolean AS subscribed`;
  const parts: Sql[] = [];
  if (keys.channelIds.length)
    parts.push(Prisma.sql`SELECT 'channelsById' AS kind, t.i::int AS i, ${channelColumns}
      FROM unnest(${keys.channelIds}::int[]) WITH ORDINALITY AS t(id, i) JOIN stream s ON s.id = t.id AND s.realm_id = ${realm.id}`);
  if (keys.channelNames.length)
    parts.push(Prisma.sql`SELECT 'channelsByName' AS kind, t.i::int AS i, ${channelColumns}
      FROM unnest(${keys.channelNames}::text[]) WITH ORDINALITY AS t(name, i) JOIN stream s ON s.realm_id = ${realm.id} AND lower(s.name) = lower(t.name)`);
  if (keys.userIds.length)
    parts.push(Prisma.sql`SELECT 'usersById' AS kind, t.i::int AS i, ${userColumns}
      FROM unnest(${keys.userIds}::int[]) WITH ORDINALITY AS t(id, i) JOIN user_profile u ON u.id = t.id AND u.realm_id = ${realm.id}`);
  if (keys.userEmails.length)
    parts.push(Prisma.sql`SELECT 'usersByEmail' AS kind, t.i::int AS i, ${userColumns}
      FROM unnest(${keys.userEmails}::text[]) WITH ORDINALITY AS t(email, i) JOIN user_profile u ON u.realm_id = ${realm.id} AND lower(u.email) = lower(t.email)`);
  if (!parts.length) return resolved;
  const rows = await db.$queryRaw<
    { kind: keyof Resolved; i: number; id: number; recipientId: number | null; inviteOnly: boolean | null; historyPublic: boolean | null; subscribed: boolean | null }[]
  >(Prisma.join(parts, " UNION ALL "));
  for (const row of rows) {
    // WITH ORDINALITY counts from 1.
    if (row.kind === "usersById" || row.kind === "usersByEmail") resolved[row.kind].set(row.i - 1, { id: row.id, recipientId: row.recipientId });
    else
      resolved[row.kind].set(row.i - 1, {
        recipientId: row.recipientId,
        // As lib/messages.ts accessMessage decides: shared history, and public (not for guests) or subscribed.
        historyReadable: !!row.historyPublic && ((!row.inviteOnly && !isGuest(user)) || !!row.subscribed),
      });
  }
  return resolved;
}

/** What a term compiles to once its lookups are answered (null: no condition). */
type Build = (r: Resolved, history: boolean) => Sql | null;
interface ParsedTerm {
  term: Term;
  build: Build;
  /** The build applies the term's negation itself (flag tests: their complement keeps a literal predicate). */
  negates?: boolean;
  /** A channel term that grants history when its channel's history is readable. */
  channel?: ChannelRef;
}

/** `col = value`, or FALSE when there is no value (a user or channel without a recipient matches nothing). */
const eq = (column: string, value: number | null | undefined): Sql => (value == null ? FALSE : Prisma.sql`${Prisma.raw(column)} = ${value}`);

function parseTerm(term: Term, realm: Realm, user: UserProfile, lookups: LookupBuilder): ParsedTerm {
  const { operator, operand } = term;
  switch (operator) {
    case "channel":
    case "stream": {
      const channel = lookups.channel(typeof operand === "number" ? operand : String(operand));
      return {
        term,
        channel,
        build: (r) => {
          const info = channel(r);
          if (!info) throw new BadNarrowError(`unknown channel ${operand}`);
          return eq("m.recipient_id", info.recipientId);
        },
      };
    }
    case "topic":
    case "subject": {
      const topic = normalizeTopic(String(operand), realm);
      // lower(subject): served by the (realm_id, recipient_id, lower(subject), id) index.
      return { term, build: () => Prisma.sql`(m.is_channel_message AND lower(m.subject) = lower(${topic}))` };
    }
    case "sender": {
      const sender = lookups.user(operand as string | number);
      return {
        term,
        build: (r) => {
          const u = sender(r);
          if (!u) throw new BadNarrowError(`unknown user ${operand}`);
          return Prisma.sql`m.sender_id = ${u.id}`;
        },
      };
    }
    case "id": {
      // Zulip's by_id: the operand must be digits; an id beyond the 32-bit column matches nothing.
      if (!/^\d+$/.test(String(operand))) throw new BadNarrowError("Invalid message ID");
      const id = Number(operand);
      return { term, build: () => (id <= MAX_MESSAGE_ID ? Prisma.sql`m.id = ${id}` : FALSE) };
    }
    case "search": {
      // Every word, case-insensitively, in the content or the topic (full-text search comes later).
      const words = String(operand).split(/\s+/).filter(Boolean);
      if (!words.every(storableText)) return { term, build: () => FALSE };
      if (!words.length) return { term, build: () => null };
      return {
        term,
        build: () =>
          // LIKE's default escape character is the backslash escapeLike uses.
          Prisma.join(
            words.map((w) => {
              const pattern = `%${escapeLike(w)}%`;
              return Prisma.sql`(m.content ILIKE ${pattern} OR m.subject ILIKE ${pattern})`;
            }),
            " AND ",
          ),
      };
    }
    case "has": {
      const column = HAS_COLUMNS.get(String(operand));
      if (column === undefined) throw new BadNarrowError(`unknown 'has' operand ${operand}`);
      return { term, build: () => column ?? Prisma.sql`EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = m.id)` };
    }
    case "is": {
      if (operand === "resolved") return { term, build: () => Prisma.sql`(m.is_channel_message AND m.subject LIKE ${"✔ %"})` };
      const test = operand === "dm" || operand === "private" ? IS_PRIVATE : FLAG_OPERANDS.get(String(operand));
      if (!test) throw new BadNarrowError(`unknown 'is' operand ${operand}`);
      return { term, negates: true, build: (_r, history) => flagCondition(test, term.negated, history ? Prisma.raw(`COALESCE(um.flags, ${HISTORICAL_FLAGS})`) : undefined) };
    }
    case "dm":
    case "pm-with":
    case "dm-including":
    case "group-pm-with": {
      const parts = Array.isArray(operand) ? operand : typeof operand === "number" ? [operand] : String(operand).split(",").filter(Boolean);
      const refs = parts.map((p) => lookups.user(p));
      const unknown = operator === "dm" || operator === "pm-with" ? `unknown user in ${operand}` : `unknown user ${operand}`;
      const usersOf = (r: Resolved) =>
        refs.map((ref) => {
          const u = ref(r);
          if (!u) throw new BadNarrowError(unknown);
          return u;
        });
      if (operator === "dm-including" || operator === "group-pm-with")
        return {
          term,
          build: (r) => {
            const ids = [...new Set(usersOf(r).map((u) => u.id))];
            if (!ids.length) return FALSE;
            // A direct message any of them received.
            return Prisma.sql`(NOT m.is_channel_message AND EXISTS (
              SELECT 1 FROM user_message o WHERE o.message_id = m.id AND o.user_profile_id IN (${Prisma.join(ids)})))`;
          },
        };
      return {
        term,
        build: (r) => {
          const others = usersOf(r);
          const memberIds = [...new Set([user.id, ...others.map((u) => u.id)])];
          if (memberIds.length <= 2) {
            // One-to-one (or with oneself): the messages either way.
            const other = others.find((u) => u.id !== user.id) ?? { id: user.id, recipientId: user.recipientId };
            return Prisma.sql`((${eq("m.recipient_id", other.recipientId)} AND m.sender_id = ${user.id}) OR (${eq("m.recipient_id", user.recipientId)} AND m.sender_id = ${other.id}))`;
          }
          // A group conversation, by its members' hash; -1 (no recipient) when it never existed,
          // so that the comparison is false rather than NULL, also under NOT.
          const hash = directMessageGroupHash(memberIds);
          return Prisma.sql`m.recipient_id = COALESCE((SELECT g.recipient_id FROM direct_message_group g WHERE g.huddle_hash = ${hash}), -1)`;
        },
      };
    }
    case "near":
    case "with":
      return { term, build: () => null };
    default:
      throw new BadNarrowError(`unknown operator ${operator}`);
  }
}

/**
 * Compiles a narrow for `user`. Terms are checked in order, and the first bad one is reported,
 * as Zulip does; the channels and users they name are looked up in one statement first.
 */
export async function compileNarrow(db: Db, realm: Realm, user: UserProfile, narrow: NarrowTerm[]): Promise<CompiledNarrow> {
  const lookups = new LookupBuilder();
  const parsed: ParsedTerm[] = [];
  let invalid: unknown;
  for (const term of normalizeTerms(narrow)) {
    try {
      parsed.push(parseTerm(term, realm, user, lookups));
    } catch (e) {
      // An earlier term naming an unknown channel or user is reported first: look those up.
      invalid = e;
      break;
    }
  }
  const resolved = await resolveLookups(db, realm, user, lookups.keys);

  // Zulip's ok_to_include_history: a (non-negated) channel whose history the user may read;
  // but any `is:` term other than is:resolved is about the user's own rows, of which
  // historical messages have none.
  let history = false;
  for (const p of parsed) if (p.channel && !p.term.negated && p.channel(resolved)?.historyReadable) history = true;
  if (parsed.some((p) => p.term.operator === "is" && p.term.operand !== "resolved")) history = false;

  const conditions: Sql[] = [];
  for (const p of parsed) {
    const condition = p.build(resolved, history);
    if (!condition) continue;
    // NOT is exact: but for the flag tests (which negate themselves), every condition is over
    // NOT NULL columns, EXISTS or constants, never NULL.
    conditions.push(p.term.negated && !p.negates ? Prisma.sql`NOT (${condition})` : condition);
  }
  if (invalid) throw invalid;

  const terms = conditions.length ? Prisma.join(conditions, " AND ") : Prisma.raw("TRUE");
  const ownRows: NarrowSource = {
    from: Prisma.raw("user_message um JOIN message m ON m.id = um.message_id"),
    id: Prisma.raw("um.message_id"),
    where: Prisma.sql`um.user_profile_id = ${user.id} AND m.realm_id = ${realm.id} AND ${terms}`,
  };
  // Only the user's own rows can be unread: a historical message has none and counts as read.
  const unread = { ...ownRows, where: Prisma.sql`um.user_profile_id = ${user.id} AND ${flagCondition(UNREAD, false)} AND m.realm_id = ${realm.id} AND ${terms}` };
  if (!history) return { history, ...ownRows, unread };
  return {
    history,
    from: Prisma.sql`message m LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}`,
    id: Prisma.raw("m.id"),
    where: Prisma.sql`m.realm_id = ${realm.id} AND ${terms}`,
    unread,
  };
}
