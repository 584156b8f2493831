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
import { Prisma, type Db, type Realm, type UserProfile } from "../db.ts";
import { JsonableError } from "../errors.ts";
import type { Schemas } from "./schemas.ts";
import { FLAG_BITS, isStorableId, MAX_MESSAGE_ID } from "./messages.ts";
import { directMessageGroupHash, RecipientType } from "./recipients.ts";
import { searchCondition, searchTsquery } from "./search.ts";
import { normalizeTopic, RESOLVED_TOPIC_PREFIX, TopicVisibility } from "./topics.ts";
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

/** Zulip's InvalidOperatorCombinationError: terms that cannot go together (the same code). */
export class InvalidOperatorCombinationError extends JsonableError {
  constructor(desc: string) {
    super(`Invalid narrow operator combination: ${desc}`, { code: "BAD_NARROW", data: { desc } });
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
const TRUE = Prisma.raw("TRUE");
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
  /**
   * The user's unread messages in the narrow, from the unread partial index (for
   * anchor=first_unread); as in Zulip, without muted topics, nor muted channels unless the
   * narrow names a channel.
   */
  unread: NarrowSource;
  /** The narrow over the messages the user received (their user_message rows), whatever `history` is: matches_narrow reads these. */
  received: NarrowSource;
  /**
   * For a narrow with a search term: what its results are highlighted with (the tsquery of its
   * search terms that are not negated; null when there is none). Null for other narrows, whose
   * results carry no match fields.
   */
  search: { highlight: Sql | null } | null;
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
  /** channels:public, which grants history to those who may read public channels. */
  publicChannels?: boolean;
}

/** `col = value`, or FALSE when there is no value (a user or channel without a recipient matches nothing). */
const eq = (column: string, value: number | null | undefined): Sql => (value == null ? FALSE : Prisma.sql`${Prisma.raw(column)} = ${value}`);

/** The user has one of these visibility policies for the message's topic (user_topic rows are per channel recipient and lowercased topic). */
function topicPolicy(user: UserProfile, policies: number[]): Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_profile_id = ${user.id} AND ut.recipient_id = m.recipient_id
    AND ut.topic_name_lower = lower(m.subject) AND ut.visibility_policy IN (${Prisma.raw(policies.join(", "))}))`;
}

/**
 * A channel message the user has muted (zerver/lib/user_topics.py exclude_stream_and_topic_mutes,
 * inverted): its topic is muted, or (with `channelMutes`) its channel is, unless the topic is
 * unmuted or followed.
 */
function mutedCondition(user: UserProfile, channelMutes: boolean): Sql {
  const topicMuted = topicPolicy(user, [TopicVisibility.MUTED]);
  if (!channelMutes) return Prisma.sql`(m.is_channel_message AND ${topicMuted})`;
  return Prisma.sql`(m.is_channel_message AND (${topicMuted} OR (EXISTS (
    SELECT 1 FROM subscription sub WHERE sub.user_profile_id = ${user.id} AND sub.recipient_id = m.recipient_id AND sub.active AND sub.is_muted)
    AND NOT ${topicPolicy(user, [TopicVisibility.UNMUTED, TopicVisibility.FOLLOWED])})))`;
}

/**
 * Zulip's check_not_both_channel_and_dm_narrow: a narrow whose (non-negated) terms ask for
 * both channel messages and direct messages is refused at the term that makes it so.
 */
class ConversationKinds {
  private channel = false;
  private dm = false;
  add(kind: "channel" | "dm", negated: boolean) {
    if (negated) return;
    if (kind === "channel") this.channel = true;
    else this.dm = true;
    if (this.channel && this.dm) throw new BadNarrowError("No message can be both a channel message and direct message");
  }
}

/** The operands of `channels` / `streams`, and which channels each names. */
const CHANNELS_OPERANDS = new Map<string, Sql>([
  ["public", Prisma.raw("NOT s.invite_only AND s.history_public_to_subscribers")],
  ["web-public", Prisma.raw("NOT s.invite_only AND s.history_public_to_subscribers AND s.is_web_public")],
]);

function parseTerm(term: Term, realm: Realm, user: UserProfile, lookups: LookupBuilder, kinds: ConversationKinds): ParsedTerm {
  const { operator, operand, negated } = term;
  switch (operator) {
    case "channel":
    case "stream": {
      kinds.add("channel", negated);
      const channel = lookups.channel(typeof operand === "number" ? operand : String(operand));
      return {
        term,
        channel,
        build: (r) => {
          const info = channel(r);
          if (!info) throw new BadNarrowError(`unknown channel ${String(operand)}`);
          return eq("m.recipient_id", info.recipientId);
        },
      };
    }
    case "channels":
    case "streams": {
      kinds.add("channel", negated);
      const channels = CHANNELS_OPERANDS.get(String(operand));
      if (!channels) throw new BadNarrowError(`unknown channels operand ${String(operand)}`);
      return {
        term,
        publicChannels: operand === "public",
        // recipient_id IS NOT NULL: with a NULL in the list, NOT IN would be NULL, never true.
        build: () =>
          Prisma.sql`m.recipient_id IN (SELECT s.recipient_id FROM stream s WHERE s.realm_id = ${realm.id} AND s.recipient_id IS NOT NULL AND ${channels})`,
      };
    }
    case "topic":
    case "subject": {
      kinds.add("channel", negated);
      const topic = normalizeTopic(String(operand), realm);
      // lower(subject): served by the (realm_id, recipient_id, lower(subject), id) index.
      return { term, build: () => Prisma.sql`(m.is_channel_message AND lower(m.subject) = lower(${topic}))` };
    }
    case "sender": {
      // `me` is the caller, as in Zulip's search syntax.
      if (operand === "me") return { term, build: () => Prisma.sql`m.sender_id = ${user.id}` };
      const sender = lookups.user(operand as string | number);
      return {
        term,
        build: (r) => {
          const u = sender(r);
          if (!u) throw new BadNarrowError(`unknown user ${String(operand)}`);
          return Prisma.sql`m.sender_id = ${u.id}`;
        },
      };
    }
    case "id": {
      // Zulip's by_id: digits, and no more than the largest possible message id.
      if (!/^\d+$/.test(String(operand)) || Number(operand) > MAX_MESSAGE_ID) throw new BadNarrowError("Invalid message ID");
      const id = Number(operand);
      return { term, build: () => Prisma.sql`m.id = ${id}` };
    }
    case "search": {
      // A negated search (compileNarrow joins the others into one tsquery).
      const text = String(operand);
      const tsquery = storableText(text) ? searchTsquery(text) : null;
      return { term, build: () => (tsquery ? searchCondition(tsquery) : FALSE) };
    }
    case "has": {
      const column = HAS_COLUMNS.get(String(operand));
      if (column === undefined) throw new BadNarrowError(`unknown 'has' operand ${String(operand)}`);
      return { term, build: () => column ?? Prisma.sql`EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = m.id)` };
    }
    case "is": {
      if (operand === "resolved") return { term, build: () => Prisma.sql`(m.is_channel_message AND m.subject LIKE ${`${RESOLVED_TOPIC_PREFIX}%`})` };
      if (operand === "followed") return { term, build: () => Prisma.sql`(m.is_channel_message AND ${topicPolicy(user, [TopicVisibility.FOLLOWED])})` };
      if (operand === "muted") return { term, build: () => mutedCondition(user, true) };
      const isDm = operand === "dm" || operand === "private";
      // -is:dm asks for channel messages.
      if (isDm) kinds.add(negated ? "channel" : "dm", false);
      const test = isDm ? IS_PRIVATE : FLAG_OPERANDS.get(String(operand));
      if (!test) throw new BadNarrowError(`unknown 'is' operand ${String(operand)}`);
      return { term, negates: true, build: (_r, history) => flagCondition(test, negated, history ? Prisma.raw(`COALESCE(um.flags, ${HISTORICAL_FLAGS})`) : undefined) };
    }
    case "in": {
      // in:home is the combined feed: nothing muted; in:all is everything.
      if (operand === "home") return { term, build: () => Prisma.sql`NOT ${mutedCondition(user, true)}` };
      if (operand === "all") return { term, build: () => null };
      throw new BadNarrowError(`unknown 'in' operand ${String(operand)}`);
    }
    case "dm":
    case "pm-with":
    case "dm-including":
    case "group-pm-with": {
      kinds.add("dm", negated);
      const parts = Array.isArray(operand) ? operand : typeof operand === "number" ? [operand] : String(operand).split(",");
      const refs = parts.map((p) => lookups.user(p));
      const unknown = operator === "dm" || operator === "pm-with" ? `unknown user in ${String(operand)}` : `unknown user ${String(operand)}`;
      const usersOf = (r: Resolved) =>
        refs.map((ref) => {
          const u = ref(r);
          if (!u) throw new BadNarrowError(unknown);
          return u;
        });
      if (operator === "dm-including" || operator === "group-pm-with") {
        // group-pm-with: only group conversations.
        const group =
          operator === "group-pm-with" ? Prisma.sql` AND EXISTS (SELECT 1 FROM recipient rc WHERE rc.id = m.recipient_id AND rc.type = ${RecipientType.DIRECT_MESSAGE_GROUP})` : Prisma.empty;
        return {
          term,
          build: (r) => {
            const ids = [...new Set(usersOf(r).map((u) => u.id))];
            // A direct message they received too (the rows start from the user's own).
            return Prisma.sql`(NOT m.is_channel_message AND EXISTS (
              SELECT 1 FROM user_message o WHERE o.message_id = m.id AND o.user_profile_id IN (${Prisma.join(ids)}))${group})`;
          },
        };
      }
      // An empty list of users names no conversation.
      if (!parts.length) return { term, build: () => FALSE };
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
      // The client's anchor; it filters nothing (Zulip's by_near).
      return { term, build: () => null };
    default:
      throw new BadNarrowError(`unknown operator ${operator}`);
  }
}

const CONVERSATION_OPERATORS = new Set(["stream", "channel", "topic", "dm", "pm-with"]);

/** Zulip's can_narrow_define_conversation: a direct-message conversation, or a channel and a topic. */
function definesConversation(terms: Term[]): boolean {
  let channel = false;
  let topic = false;
  for (const { operator } of terms) {
    if (operator === "dm" || operator === "pm-with") return true;
    if (operator === "stream" || operator === "channel") channel = true;
    else if (operator === "topic") topic = true;
    if (channel && topic) return true;
  }
  return false;
}

/**
 * The conversation of a message the user may see, as narrow terms (channel and topic, or the
 * direct-message conversation by its members), or null when there is no such message. One
 * statement; access as lib/messages.ts accessMessage decides it.
 */
async function conversationOf(db: Db, realm: Realm, user: UserProfile, messageId: number): Promise<Term[] | null> {
  if (!isStorableId(messageId)) return null;
  const [row] = await db.$queryRaw<
    { recipientType: number; typeId: number; subject: string; senderId: number; received: boolean; historyOpen: boolean | null; inviteOnly: boolean | null; subscribed: boolean; members: number[] | null }[]
  >`
    SELECT r.type AS "recipientType", r.type_id AS "typeId", m.subject, m.sender_id AS "senderId", um.message_id IS NOT NULL AS received,
           s.history_public_to_subscribers AS "historyOpen", s.invite_only AS "inviteOnly",
           EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_profile_id = ${user.id} AND sub.recipient_id = m.recipient_id AND sub.active) AS subscribed,
           CASE WHEN r.type = ${RecipientType.DIRECT_MESSAGE_GROUP} THEN ARRAY(SELECT sub.user_profile_id FROM subscription sub WHERE sub.recipient_id = r.id) END AS members
    FROM message m JOIN recipient r ON r.id = m.recipient_id
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}
    LEFT JOIN stream s ON r.type = ${RecipientType.STREAM} AND s.id = r.type_id
    WHERE m.id = ${messageId} AND m.realm_id = ${realm.id}`;
  if (!row) return null;
  const term = (operator: string, operand: Term["operand"]): Term => ({ operator, operand, negated: false });
  if (row.recipientType === RecipientType.STREAM) {
    if (!row.received && !(row.historyOpen && ((!row.inviteOnly && !isGuest(user)) || row.subscribed))) return null;
    return [term("channel", row.typeId), term("topic", row.subject)];
  }
  if (!row.received) return null;
  // The conversation's members, the user among them (a group's are its subscribers).
  return [term("dm", row.members ?? [row.senderId, row.typeId])];
}

/**
 * Zulip's update_narrow_terms_containing_with_operator: `with` (one at most) stands for the
 * conversation of a message, replacing the narrow's own channel, topic and dm terms. A message
 * the user may not see leaves a narrow that already names a conversation as it is.
 */
async function applyWith(db: Db, realm: Realm, user: UserProfile, terms: Term[]): Promise<Term[]> {
  const withTerms = terms.filter((t) => t.operator === "with");
  if (withTerms.length === 0) return terms;
  if (withTerms.length > 1) throw new InvalidOperatorCombinationError("Duplicate 'with' operators.");
  const rest = terms.filter((t) => t.operator !== "with");
  const operand = withTerms[0]!.operand;
  const id = typeof operand === "number" ? operand : /^\s*[+-]?\d+\s*$/.test(String(operand)) ? Number(operand) : null;
  if (id === null) throw new BadNarrowError("Invalid 'with' operator");
  const conversation = await conversationOf(db, realm, user, id);
  if (!conversation) {
    if (definesConversation(rest)) return rest;
    throw new BadNarrowError("Invalid 'with' operator");
  }
  return [...conversation, ...rest.filter((t) => !CONVERSATION_OPERATORS.has(t.operator))];
}

/**
 * Compiles a narrow for `user`. Terms are checked in order, and the first bad one is reported,
 * as Zulip does; the channels and users they name are looked up in one statement first.
 * Search terms are one search, as Zulip's add_narrow_conditions joins them (a negated one is
 * its own condition).
 */
export async function compileNarrow(db: Db, realm: Realm, user: UserProfile, narrow: NarrowTerm[]): Promise<CompiledNarrow> {
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
    if (p.channel?.(resolved)?.historyReadable || (p.publicChannels && !isGuest(user))) history = true;
  }
  if (parsed.some((p) => p.term.operator === "is" && p.term.operand !== "resolved")) history = false;

  const conditions: Sql[] = [];
  for (const p of parsed) {
    const condition = p.build(resolved, history);
    if (!condition) continue;
    // NOT is exact: but for the flag tests (which negate themselves), every condition is over
    // NOT NULL columns, EXISTS, IN over non-NULL values or constants, never NULL.
    conditions.push(p.term.negated && !p.negates ? Prisma.sql`NOT (${condition})` : condition);
  }
  if (invalid) throw invalid as Error;

  let search: CompiledNarrow["search"] = null;
  if (searches.length) {
    const operand = searches.join(" ");
    const tsquery = storableText(operand) ? searchTsquery(operand) : null;
    conditions.push(tsquery ? searchCondition(tsquery) : FALSE);
    search = { highlight: tsquery };
  } else if (parsed.some((p) => p.term.operator === "search")) search = { highlight: null };

  const where = conditions.length ? Prisma.join(conditions, " AND ") : TRUE;
  const received: NarrowSource = {
    from: Prisma.raw("user_message um JOIN message m ON m.id = um.message_id"),
    id: Prisma.raw("um.message_id"),
    where: Prisma.sql`um.user_profile_id = ${user.id} AND m.realm_id = ${realm.id} AND ${where}`,
  };
  // Only the user's own rows can be unread: a historical message has none and counts as read.
  // Zulip's find_first_unread_anchor skips what is muted; a channel's own muting only outside it.
  const namesChannel = parsed.some((p) => p.channel);
  const unread = {
    ...received,
    where: Prisma.sql`um.user_profile_id = ${user.id} AND ${flagCondition(UNREAD, false)} AND m.realm_id = ${realm.id} AND ${where} AND NOT ${mutedCondition(user, !namesChannel)}`,
  };
  if (!history) return { history, ...received, unread, received, search };
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
