/**
 * Each narrow operator compiled to an SQL condition (zerver/lib/narrow.py NarrowBuilder's by_*
 * methods): flags are bit tests on `um.flags`, topic visibility and channel muting EXISTS tests, a
 * search one `@@` on the full-text index; the channels and users a term names come from the
 * narrow's one lookup statement (narrow-lookups.ts).
 */
import { Prisma, type Realm, type UserProfile } from "../../db/index.ts";
import { FLAG_BITS, MAX_MESSAGE_ID } from "../messages/messages.ts";
import { BadNarrowError, type Term } from "./narrow-terms.ts";
import {
  storableText,
  type ChannelRef,
  type LookupBuilder,
  type Resolved,
} from "./narrow-lookups.ts";
import { directMessageGroupHash, RecipientType } from "../recipients.ts";
import { searchCondition, searchTsquery } from "./search.ts";
import { normalizeTopic, RESOLVED_TOPIC_PREFIX, TopicVisibility } from "../messages/topics.ts";
import { accessSql } from "../access/channels.ts";

type Sql = Prisma.Sql;

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
  [
    "mentioned",
    flagTest(
      FLAG_BITS.mentioned |
        FLAG_BITS.stream_wildcard_mentioned |
        FLAG_BITS.topic_wildcard_mentioned |
        FLAG_BITS.group_mentioned,
      true,
    ),
  ],
  ["alerted", flagTest(FLAG_BITS.has_alert_word, true)], // user_message_has_alert_word_idx: (flags & 512) <> 0
]);
const IS_PRIVATE = flagTest(FLAG_BITS.is_private, true); // user_message_is_private_idx: (flags & 2048) <> 0
export const UNREAD = FLAG_OPERANDS.get("unread")!;

/**
 * What a message without a user_message row counts as in history mode: Zulip shows such
 * messages as read and historical, so they are never unread, starred or mentioned. (A flag
 * term turns history mode off, see compileNarrow; this keeps the tests right regardless.)
 */
const HISTORICAL_FLAGS = FLAG_BITS.read | FLAG_BITS.historical;

/** The SQL of a flag test (negated: its complement) on `flags`, an expression over `um.flags`. */
export function flagCondition(
  test: FlagTest,
  negated: boolean,
  flags: Sql = Prisma.raw("um.flags"),
): Sql {
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

export const FALSE = Prisma.raw("FALSE");
export const TRUE = Prisma.raw("TRUE");

/** What a term compiles to once its lookups are answered (null: no condition). */
type Build = (r: Resolved, history: boolean) => Sql | null;
export interface ParsedTerm {
  term: Term;
  build: Build;
  /** The build applies the term's negation itself (flag tests: their complement keeps a literal predicate). */
  negates?: boolean;
  /** A channel term that grants history when its channel's history is readable. */
  channel?: ChannelRef;
  /** channels:public, which grants history to those who may read public channels. */
  publicChannels?: boolean;
  /**
   * The term's condition as the OR of branches of direct messages, each an ordered index range
   * of `message` (a pair: one per sender). compileNarrow reads a limited range as a UNION ALL of
   * one ordered, limited scan per branch when the term is not negated. Null: no branches for
   * these operands.
   */
  branches?: (r: Resolved) => Sql[] | null;
}

/** `col = value`, or FALSE when there is no value (a user or channel without a recipient matches nothing). */
const eq = (column: string, value: number | null | undefined): Sql =>
  value == null ? FALSE : Prisma.sql`${Prisma.raw(column)} = ${value}`;

/**
 * A channel message whose topic the user has one of these visibility policies for (user_topic
 * rows are per channel recipient and lowercased topic). The IN sits under a CASE so that
 * PostgreSQL cannot pull it up into a join: it hashes the user's topics once per statement and
 * tests each row against them while walking the user's rows from the anchor, instead of reading
 * every message of every such topic and sorting them (98 ms for 159 followed topics at 10,000
 * people) or probing user_topic per row through an index that does not lead with recipient_id.
 * Never NULL (both columns are NOT NULL), so it can be negated.
 */
function topicPolicy(user: UserProfile, policies: number[]): Sql {
  return Prisma.sql`CASE WHEN m.is_channel_message THEN (m.recipient_id, lower(m.subject)) IN (
    SELECT ut.recipient_id, ut.topic_name_lower FROM user_topic ut WHERE ut.user_profile_id = ${user.id}
    AND ut.visibility_policy IN (${Prisma.raw(policies.join(", "))})) ELSE FALSE END`;
}

/**
 * A channel message the user has muted (zerver/lib/user_topics.py exclude_stream_and_topic_mutes,
 * inverted): its topic is muted, or (with `channelMutes`) its channel is, unless the topic is
 * unmuted or followed.
 */
export function mutedCondition(user: UserProfile, channelMutes: boolean): Sql {
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
export class ConversationKinds {
  private channel = false;
  private dm = false;
  add(kind: "channel" | "dm", negated: boolean) {
    if (negated) return;
    if (kind === "channel") this.channel = true;
    else this.dm = true;
    if (this.channel && this.dm)
      throw new BadNarrowError("No message can be both a channel message and direct message");
  }
}

/** The operands of `channels` / `streams`, and which channels each names. */
const CHANNELS_OPERANDS = new Map<string, Sql>([
  ["public", accessSql("NARROW_PUBLIC", null, "s")],
  ["web-public", accessSql("NARROW_WEB_PUBLIC", null, "s")],
  // Feature level 489: the messages the user received in archived channels.
  ["archived", accessSql("NARROW_ARCHIVED", null, "s")],
]);

export function parseTerm(
  term: Term,
  realm: Realm,
  user: UserProfile,
  lookups: LookupBuilder,
  kinds: ConversationKinds,
): ParsedTerm {
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
      return {
        term,
        build: () => Prisma.sql`(m.is_channel_message AND lower(m.subject) = lower(${topic}))`,
      };
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
    case "mentions": {
      // Feature level 446: a direct, visible personal mention of the user, which is what sets
      // `mentioned` on their own row (silent, wildcard and group mentions set other bits or none).
      const mentioned = lookups.user(operand as string | number);
      return {
        term,
        build: (r) => {
          const u = mentioned(r);
          if (!u) throw new BadNarrowError(`unknown user ${String(operand)}`);
          return Prisma.sql`EXISTS (SELECT 1 FROM user_message mum WHERE mum.user_profile_id = ${u.id}
            AND mum.message_id = m.id AND ${flagCondition(flagTest(FLAG_BITS.mentioned, true), false, Prisma.raw("mum.flags"))})`;
        },
      };
    }
    case "id": {
      // Zulip's by_id: digits, and no more than the largest possible message id.
      if (!/^\d+$/.test(String(operand)) || Number(operand) > MAX_MESSAGE_ID)
        throw new BadNarrowError("Invalid message ID");
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
      if (column === undefined)
        throw new BadNarrowError(`unknown 'has' operand ${String(operand)}`);
      return {
        term,
        build: () =>
          column ?? Prisma.sql`EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = m.id)`,
      };
    }
    case "is": {
      if (operand === "resolved")
        return {
          term,
          build: () =>
            Prisma.sql`(m.is_channel_message AND m.subject LIKE ${`${RESOLVED_TOPIC_PREFIX}%`})`,
        };
      if (operand === "followed")
        return {
          term,
          build: () =>
            Prisma.sql`(m.is_channel_message AND ${topicPolicy(user, [TopicVisibility.FOLLOWED])})`,
        };
      if (operand === "muted") return { term, build: () => mutedCondition(user, true) };
      const isDm = operand === "dm" || operand === "private";
      // -is:dm asks for channel messages.
      if (isDm) kinds.add(negated ? "channel" : "dm", false);
      const test = isDm ? IS_PRIVATE : FLAG_OPERANDS.get(String(operand));
      if (!test) throw new BadNarrowError(`unknown 'is' operand ${String(operand)}`);
      return {
        term,
        negates: true,
        build: (_r, history) =>
          flagCondition(
            test,
            negated,
            history ? Prisma.raw(`COALESCE(um.flags, ${HISTORICAL_FLAGS})`) : undefined,
          ),
      };
    }
    case "in": {
      // in:home is the combined feed: nothing muted; in:all is everything.
      if (operand === "home")
        return { term, build: () => Prisma.sql`NOT ${mutedCondition(user, true)}` };
      if (operand === "all") return { term, build: () => null };
      throw new BadNarrowError(`unknown 'in' operand ${String(operand)}`);
    }
    case "dm":
    case "pm-with":
    case "dm-including":
    case "group-pm-with": {
      kinds.add("dm", negated);
      const parts = Array.isArray(operand)
        ? operand
        : typeof operand === "number"
          ? [operand]
          : String(operand).split(",");
      const refs = parts.map((p) => lookups.user(p));
      const unknown =
        operator === "dm" || operator === "pm-with"
          ? `unknown user in ${String(operand)}`
          : `unknown user ${String(operand)}`;
      const usersOf = (r: Resolved) =>
        refs.map((ref) => {
          const u = ref(r);
          if (!u) throw new BadNarrowError(unknown);
          return u;
        });
      if (operator === "dm-including" || operator === "group-pm-with") {
        // group-pm-with: only group conversations.
        const group =
          operator === "group-pm-with"
            ? Prisma.sql` AND EXISTS (SELECT 1 FROM recipient rc WHERE rc.id = m.recipient_id AND rc.type = ${RecipientType.DIRECT_MESSAGE_GROUP})`
            : Prisma.empty;
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
      // A one-to-one conversation's messages (or one with oneself) are its two senders'
      // (realm_id, sender_id, recipient_id, id) ranges: one scan each, rather than collecting
      // both through a bitmap and sorting them all. Null for a group conversation.
      const pairBranches = (r: Resolved) => {
        const others = usersOf(r);
        if (new Set([user.id, ...others.map((u) => u.id)]).size > 2) return null;
        const other = others.find((u) => u.id !== user.id) ?? user;
        const branch = (sender: number, recipient: number | null | undefined) =>
          Prisma.sql`(${eq("m.recipient_id", recipient)} AND m.sender_id = ${sender})`;
        const branches = [branch(user.id, other.recipientId)];
        if (other.id !== user.id) branches.push(branch(other.id, user.recipientId));
        return branches;
      };
      return {
        term,
        branches: pairBranches,
        build: (r) => {
          // One-to-one (or with oneself): the messages either way.
          const pair = pairBranches(r);
          if (pair) return Prisma.sql`(${Prisma.join(pair, " OR ")})`;
          const others = usersOf(r);
          const memberIds = [...new Set([user.id, ...others.map((u) => u.id)])];
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
