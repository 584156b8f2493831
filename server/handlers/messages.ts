import { checkSendMessage, type MessageTarget } from "../actions/messages.ts";
import { IncompatibleParametersError, JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { buildMessageDicts, type MessageRow } from "../lib/message-dicts.ts";
import { accessMessage, FLAG_BITS, MAX_MESSAGE_ID } from "../lib/messages.ts";
import { compileNarrow, messageIdsWithFlags } from "../lib/narrow.ts";
import type { Prisma } from "../db.ts";

/** Zulip's anchor for "newest" (LARGER_THAN_MAX_MESSAGE_ID). */
const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;
const MAX_MESSAGES_PER_FETCH = 5000;

/** The sending client's name, from the User-Agent (Zulip's parse_client), e.g. "ZulipMobile". */
function clientName(userAgent: string | undefined): string {
  const name = userAgent?.split(/[/\s]/)[0]?.trim();
  return name || "Unspecified";
}

/** POST /messages (zerver/views/message_send.py send_message_backend). */
export const sendMessage: Handler<"send-message"> = async ({ body }, ctx) => {
  const to = body.to;
  let target: MessageTarget;
  if (body.type === "channel" || body.type === "stream") {
    let channel: unknown = to;
    if (Array.isArray(to)) {
      if (to.length !== 1) throw new JsonableError("Expected exactly one channel");
      channel = to[0];
    }
    const topic = body.topic ?? body.subject;
    target = typeof channel === "number" ? { kind: "channel", streamId: channel, topic } : { kind: "channel", streamName: String(channel), topic };
  } else {
    const list = Array.isArray(to) ? to : typeof to === "number" ? [to] : String(to).split(",").map((e) => e.trim()).filter(Boolean);
    if (list.some((x) => typeof x === "number") && list.some((x) => typeof x === "string")) throw new JsonableError("Recipient lists may contain emails or user IDs, but not both.");
    target = typeof list[0] === "number" ? { kind: "direct", userIds: list as number[] } : { kind: "direct", emails: list as string[] };
  }
  return checkSendMessage(ctx, { target, content: body.content, clientName: clientName(ctx.userAgent), readBySender: body.read_by_sender });
};

/** GET /messages/{message_id} (zerver/views/message_edit.py json_fetch_raw_message). */
export const getMessage: Handler<"get-message"> = async ({ path, query }, ctx) => {
  const { message, flags } = await accessMessage(ctx.db, ctx.user, path.message_id);
  const [dict] = await buildMessageDicts(ctx.db, ctx.realm, [{ message, flags }], {
    applyMarkdown: query.apply_markdown ?? true,
    allowEmptyTopicName: query.allow_empty_topic_name ?? false,
    clientGravatar: false,
  });
  return { message: dict!, raw_content: message.content };
};

/** GET /messages (zerver/views/message_fetch.py get_messages_backend). */
export const getMessages: Handler<"get-messages"> = async ({ query }, ctx) => {
  const numBefore = query.num_before ?? 0;
  const numAfter = query.num_after ?? 0;
  const includeAnchor = query.include_anchor ?? true;
  const firstUnread = query.use_first_unread_anchor ?? false;
  if (query.message_ids !== undefined && (numBefore > 0 || numAfter > 0 || query.anchor !== undefined || firstUnread))
    throw new IncompatibleParametersError(["num_before", "num_after", "anchor", "message_ids", "include_anchor", "use_first_unread_anchor"]);
  // The legacy use_first_unread_anchor=true stands for anchor=first_unread (parse_anchor_value).
  const anchorParam = firstUnread ? "first_unread" : query.anchor;
  if (query.message_ids === undefined && anchorParam === undefined) throw new JsonableError("Missing 'anchor' argument.");
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw new JsonableError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);

  const narrow = await compileNarrow(ctx.db, ctx.realm, ctx.user, query.narrow ?? []);
  // Without a readable channel history the user sees only messages they received.
  const scope: Prisma.MessageWhereInput = narrow.historyStream ? narrow.where : { AND: [narrow.where, { userMessages: { some: { userProfileId: ctx.user.id } } }] };
  const find = (where: Prisma.MessageWhereInput, order: "asc" | "desc", take?: number) =>
    ctx.db.message.findMany({ where: { AND: [scope, where] }, orderBy: { id: order }, ...(take !== undefined ? { take } : {}) });

  let messages;
  let anchor = 0;
  let foundAnchor = false;
  let foundOldest = false;
  let foundNewest = false;
  if (query.message_ids !== undefined) {
    messages = await find({ id: { in: query.message_ids } }, "asc");
  } else {
    if (anchorParam === "newest") anchor = LARGER_THAN_MAX_MESSAGE_ID;
    else if (anchorParam === "oldest") anchor = 0;
    else if (anchorParam === "first_unread") {
      const unread = await messageIdsWithFlags(ctx.db, ctx.user.id, FLAG_BITS.read, false);
      const first = unread.length ? await find({ id: { in: unread } }, "asc", 1) : [];
      anchor = first[0]?.id ?? LARGER_THAN_MAX_MESSAGE_ID;
    } else anchor = anchorParam as number;
    // Message ids are 32-bit; an anchor beyond them (as "newest" is) has nothing at or after it.
    const beyond = anchor > MAX_MESSAGE_ID;
    const [before, at, after] = await Promise.all([
      numBefore > 0 ? find(beyond ? {} : { id: { lt: anchor } }, "desc", numBefore) : [],
      beyond ? [] : find({ id: anchor }, "asc", 1),
      numAfter > 0 && !beyond ? find({ id: { gt: anchor } }, "asc", numAfter) : [],
    ]);
    foundAnchor = at.length > 0;
    foundOldest = anchorParam === "oldest" || before.length < numBefore;
    foundNewest = anchor >= LARGER_THAN_MAX_MESSAGE_ID || after.length < numAfter;
    messages = [...before.reverse(), ...(includeAnchor ? at : []), ...after];
  }

  const userMessages = await ctx.db.userMessage.findMany({
    where: { userProfileId: ctx.user.id, messageId: { in: messages.map((m) => m.id) } },
    select: { messageId: true, flags: true },
  });
  const flags = new Map(userMessages.map((um) => [um.messageId, um.flags]));
  const rows: MessageRow[] = messages.map((message) => ({ message, flags: flags.get(message.id) ?? null }));
  const dicts = await buildMessageDicts(ctx.db, ctx.realm, rows, {
    applyMarkdown: query.apply_markdown ?? true,
    allowEmptyTopicName: query.allow_empty_topic_name ?? false,
    clientGravatar: query.client_gravatar ?? true,
    viewer: ctx.user,
  });
  return { anchor, found_anchor: foundAnchor, found_oldest: foundOldest, found_newest: foundNewest, history_limited: false, messages: dicts };
};
