/**
 * A narrow's terms (zerver/lib/narrow.py): the request's `{operator, operand, negated}` terms (or
 * legacy pairs) in one form, Zulip's errors for bad ones, and `with` replaced by the conversation
 * of the message it names.
 */
import { Prisma, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { Schemas } from "../schemas.ts";
import { messageAccessSql } from "../access/channels.ts";
import { isStorableId } from "../ids.ts";
import { RecipientType } from "../recipients.ts";

export type NarrowTerm = Schemas["NarrowTerm"];
export interface Term {
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

export function normalizeTerms(narrow: NarrowTerm[]): Term[] {
  return narrow.map((t) =>
    Array.isArray(t)
      ? { operator: t[0]!, operand: t[1]!, negated: false }
      : { operator: t.operator, operand: t.operand, negated: t.negated ?? false },
  );
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
 * statement; access by the rule of channel-access.ts, as for GET /messages/{id}.
 */
async function conversationOf(
  db: Db,
  realm: Realm,
  user: UserProfile,
  messageId: number,
): Promise<Term[] | null> {
  if (!isStorableId(messageId)) return null;
  const [row] = await db.$queryRaw<
    {
      recipientType: number;
      typeId: number;
      subject: string;
      senderId: number;
      members: number[] | null;
    }[]
  >`
    SELECT r.type AS "recipientType", r.type_id AS "typeId", m.subject, m.sender_id AS "senderId",
           CASE WHEN r.type = ${RecipientType.DIRECT_MESSAGE_GROUP} THEN ARRAY(SELECT sub.user_profile_id FROM subscription sub WHERE sub.recipient_id = r.id) END AS members
    FROM message m JOIN recipient r ON r.id = m.recipient_id
    LEFT JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${user.id}
    LEFT JOIN stream s ON m.is_channel_message AND s.recipient_id = m.recipient_id
    WHERE m.id = ${messageId} AND m.realm_id = ${realm.id} AND ${messageAccessSql(user, Prisma.raw("um.message_id IS NOT NULL"))}`;
  if (!row) return null;
  const term = (operator: string, operand: Term["operand"]): Term => ({
    operator,
    operand,
    negated: false,
  });
  if (row.recipientType === RecipientType.STREAM)
    return [term("channel", row.typeId), term("topic", row.subject)];
  // The conversation's members, the user among them (a group's are its subscribers).
  return [term("dm", row.members ?? [row.senderId, row.typeId])];
}

/**
 * Zulip's update_narrow_terms_containing_with_operator: `with` (one at most) stands for the
 * conversation of a message, replacing the narrow's own channel, topic and dm terms. A message
 * the user may not see leaves a narrow that already names a conversation as it is.
 */
export async function applyWith(
  db: Db,
  realm: Realm,
  user: UserProfile,
  terms: Term[],
): Promise<Term[]> {
  const withTerms = terms.filter((t) => t.operator === "with");
  if (withTerms.length === 0) return terms;
  if (withTerms.length > 1)
    throw new InvalidOperatorCombinationError("Duplicate 'with' operators.");
  const rest = terms.filter((t) => t.operator !== "with");
  const operand = withTerms[0]!.operand;
  const id =
    typeof operand === "number"
      ? operand
      : /^\s*[+-]?\d+\s*$/.test(String(operand))
        ? Number(operand)
        : null;
  if (id === null) throw new BadNarrowError("Invalid 'with' operator");
  const conversation = await conversationOf(db, realm, user, id);
  if (!conversation) {
    if (definesConversation(rest)) return rest;
    throw new BadNarrowError("Invalid 'with' operator");
  }
  return [...conversation, ...rest.filter((t) => !CONVERSATION_OPERATORS.has(t.operator))];
}
