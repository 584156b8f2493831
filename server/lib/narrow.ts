/**
 * Narrows (zerver/lib/narrow.py): a list of `{operator, operand, negated}` terms turned into
 * a filter on messages, plus the scope to read from — the user's own message rows, or a
 * channel's whole history when the narrow names a channel whose history the user may read.
 */
import type { Prisma, PrismaClient, Realm, Stream, Tx, UserProfile } from "../db.ts";
import { JsonableError } from "../errors.ts";
import type { Schemas } from "../http/types.ts";
import { canReadChannelHistory, FLAG_BITS, MAX_MESSAGE_ID } from "./messages.ts";
import { directMessageGroupHash } from "./recipients.ts";
import { normalizeTopic } from "./topics.ts";
import { iexact, icontains, startsWith } from "./text.ts";

type Db = PrismaClient | Tx;
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

// Maps, not object literals: an operand such as "constructor" must find nothing.
const FLAG_OPERANDS = new Map<string, { bits: bigint; set: boolean }>([
  ["starred", { bits: FLAG_BITS.starred, set: true }],
  ["mentioned", { bits: FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned, set: true }],
  ["alerted", { bits: FLAG_BITS.has_alert_word, set: true }],
  ["unread", { bits: FLAG_BITS.read, set: false }],
]);

/** `has:` operands → the message column that records them (null: has a reaction). */
const HAS_FIELDS = new Map<string, "hasLink" | "hasImage" | "hasAttachment" | null>([
  ["link", "hasLink"],
  ["image", "hasImage"],
  ["attachment", "hasAttachment"],
  ["reaction", null],
]);

/** IDs of the user's messages with (or without) the given flag bits. */
export async function messageIdsWithFlags(db: Db, userId: number, bits: bigint, set: boolean): Promise<number[]> {
  const rows = set
    ? await db.$queryRaw<{ message_id: number }[]>`SELECT message_id FROM user_message WHERE user_profile_id = ${userId} AND (flags & ${bits}) <> 0`
    : await db.$queryRaw<{ message_id: number }[]>`SELECT message_id FROM user_message WHERE user_profile_id = ${userId} AND (flags & ${bits}) = 0`;
  return rows.map((r) => r.message_id);
}

export interface CompiledNarrow {
  where: Prisma.MessageWhereInput;
  /** The channel whose full history the user reads (no UserMessage row needed), if any. */
  historyStream: Stream | null;
}

export async function compileNarrow(db: Db, realm: Realm, user: UserProfile, narrow: NarrowTerm[]): Promise<CompiledNarrow> {
  const clauses: Prisma.MessageWhereInput[] = [];
  let historyStream: Stream | null = null;
  for (const term of normalizeTerms(narrow)) {
    const clause = await termClause(db, realm, user, term);
    if (term.operator === "channel" || term.operator === "stream") {
      if (!term.negated && clause.stream && (await canReadChannelHistory(db, user, clause.stream))) historyStream = clause.stream;
    }
    if (clause.where) clauses.push(term.negated ? { NOT: clause.where } : clause.where);
  }
  return { where: { realmId: realm.id, AND: clauses }, historyStream };
}

async function userByOperand(db: Db, realm: Realm, operand: string | number): Promise<UserProfile | null> {
  if (typeof operand === "number") return db.userProfile.findFirst({ where: { realmId: realm.id, id: operand } });
  return db.userProfile.findFirst({ where: { realmId: realm.id, email: iexact(operand.trim()) } });
}

async function termClause(db: Db, realm: Realm, user: UserProfile, term: Term): Promise<{ where?: Prisma.MessageWhereInput; stream?: Stream }> {
  const { operator, operand } = term;
  switch (operator) {
    case "channel":
    case "stream": {
      const where = typeof operand === "number" ? { id: operand } : { name: iexact(String(operand)) };
      const stream = await db.stream.findFirst({ where: { realmId: realm.id, ...where } });
      if (!stream) throw new BadNarrowError(`unknown channel ${operand}`);
      return { where: { recipientId: stream.recipientId! }, stream };
    }
    case "topic":
    case "subject":
      return { where: { isChannelMessage: true, subject: iexact(normalizeTopic(String(operand), realm)) } };
    case "sender": {
      const sender = await userByOperand(db, realm, operand as string | number);
      if (!sender) throw new BadNarrowError(`unknown user ${operand}`);
      return { where: { senderId: sender.id } };
    }
    case "id": {
      // Zulip's by_id: the operand must be digits; an id beyond the 32-bit column matches nothing.
      if (!/^\d+$/.test(String(operand))) throw new BadNarrowError("Invalid message ID");
      const id = Number(operand);
      return { where: id <= MAX_MESSAGE_ID ? { id } : { id: { in: [] } } };
    }
    case "search": {
      const words = String(operand).split(/\s+/).filter(Boolean);
      return {
        where: {
          AND: words.map((w) => ({
            OR: [{ content: icontains(w) }, { subject: icontains(w) }],
          })),
        },
      };
    }
    case "has": {
      const field = HAS_FIELDS.get(String(operand));
      if (field === undefined) throw new BadNarrowError(`unknown 'has' operand ${operand}`);
      if (field === null) return { where: { reactions: { some: {} } } };
      return { where: { [field]: true } };
    }
    case "is": {
      if (operand === "dm" || operand === "private") return { where: { isChannelMessage: false } };
      if (operand === "resolved") return { where: { isChannelMessage: true, subject: startsWith("✔ ") } };
      const flag = FLAG_OPERANDS.get(String(operand));
      if (!flag) throw new BadNarrowError(`unknown 'is' operand ${operand}`);
      return { where: { id: { in: await messageIdsWithFlags(db, user.id, flag.bits, flag.set) } } };
    }
    case "dm":
    case "pm-with":
    case "dm-including":
    case "group-pm-with": {
      const parts = Array.isArray(operand) ? operand : typeof operand === "number" ? [operand] : String(operand).split(",").filter(Boolean);
      const others: UserProfile[] = [];
      for (const p of parts) {
        const u = await userByOperand(db, realm, p);
        if (!u) throw new BadNarrowError(operator === "dm" || operator === "pm-with" ? `unknown user in ${operand}` : `unknown user ${operand}`);
        others.push(u);
      }
      if (operator === "dm-including" || operator === "group-pm-with") {
        const ids = others.map((u) => u.id);
        return { where: { isChannelMessage: false, userMessages: { some: { userProfileId: { in: ids } } } } };
      }
      const members = [...new Map([user, ...others].map((u) => [u.id, u])).values()];
      if (members.length <= 2) {
        const other = members.find((u) => u.id !== user.id) ?? user;
        return {
          where: {
            OR: [
              { recipientId: other.recipientId!, senderId: user.id },
              { recipientId: user.recipientId!, senderId: other.id },
            ],
          },
        };
      }
      const group = await db.directMessageGroup.findUnique({ where: { huddleHash: directMessageGroupHash(members.map((u) => u.id)) } });
      return { where: { recipientId: group?.recipientId ?? -1 } };
    }
    case "near":
    case "with":
      return {};
    default:
      throw new BadNarrowError(`unknown operator ${operator}`);
  }
}
