/**
 * The narrow of an event queue (POST /register `narrow`): which message events the queue takes.
 * Zulip checks it with check_narrow_for_events and applies it in Tornado with
 * build_narrow_predicate; here it is checked and put in one form once, at register, and applied
 * by the queue's poll in SQL (events/queues.ts ACCEPTS). Channels and senders given by ID are
 * stored by name and email, which is what a message event carries.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { QueueNarrowTerm } from "../../events/queues.ts";
import { normalizeTerms, type NarrowTerm } from "./narrow-terms.ts";

/** check_narrow_for_events's operators ("stream" is the legacy name of "channel"). */
const EVENTS_NARROW_OPERATORS = new Set([
  "channel",
  "stream",
  "topic",
  "exact-topic",
  "sender",
  "is",
]);
const UNSUPPORTED_IS_OPERANDS = new Set(["followed"]);

export async function eventQueueNarrow(
  ctx: Pick<RequestContext, "db" | "realm" | "user">,
  narrow: NarrowTerm[],
): Promise<QueueNarrowTerm[]> {
  const terms = normalizeTerms(narrow);
  for (const { operator, operand } of terms) {
    if (!EVENTS_NARROW_OPERATORS.has(operator))
      throw new JsonableError(`Operator ${operator} not supported.`);
    if (operator === "is" && UNSUPPORTED_IS_OPERANDS.has(String(operand)))
      throw new JsonableError(`Operand ${String(operand)} not supported.`);
  }
  // _default_narrow: a bot's default channel for events, when it gives no narrow.
  if (terms.length === 0 && ctx.user.defaultEventsRegisterStreamId !== null) {
    const channel = await ctx.db.stream.findUnique({
      where: { id: ctx.user.defaultEventsRegisterStreamId },
      select: { name: true },
    });
    if (channel) return [{ operator: "channel", operand: channel.name, negated: false }];
  }
  const channelIds = terms
    .filter(
      (t) => (t.operator === "channel" || t.operator === "stream") && typeof t.operand === "number",
    )
    .map((t) => t.operand as number);
  const senderIds = terms
    .filter((t) => t.operator === "sender" && typeof t.operand === "number")
    .map((t) => t.operand as number);
  const [channels, senders] = await Promise.all([
    channelIds.length
      ? ctx.db.stream.findMany({
          where: { realmId: ctx.realm.id, id: { in: channelIds } },
          select: { id: true, name: true },
        })
      : [],
    senderIds.length
      ? ctx.db.userProfile.findMany({
          where: { realmId: ctx.realm.id, id: { in: senderIds } },
          select: { id: true, email: true },
        })
      : [],
  ]);
  const channelName = new Map(channels.map((c) => [c.id, c.name]));
  const senderEmail = new Map(senders.map((u) => [u.id, u.email]));
  return terms.map(({ operator, operand, negated }) => {
    let value = String(operand);
    // An unknown ID matches no message (no name or email is empty).
    if (typeof operand === "number" && (operator === "channel" || operator === "stream"))
      value = channelName.get(operand) ?? "";
    else if (typeof operand === "number" && operator === "sender")
      value = senderEmail.get(operand) ?? "";
    else if (operator === "sender" && value === "me") value = ctx.user.email;
    return { operator, operand: value, negated };
  });
}
