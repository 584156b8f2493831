import { checkSendMessage, type MessageTarget } from "../actions/messages/messages.ts";
import { IncompatibleParametersError, JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { clientNameFromUserAgent } from "../lib/clients.ts";
import { buildMessageDicts } from "../lib/messages/message-dicts.ts";
import { hiddenSenders } from "../lib/access/users.ts";
import {
  fetchMessageRange,
  fetchMessagesById,
  fetchNarrowMatches,
  LARGER_THAN_MAX_MESSAGE_ID,
  type FetchedRow,
} from "../lib/messages/message-fetch.ts";
import { accessMessage } from "../lib/messages/messages.ts";
import { compileNarrow } from "../lib/narrow/narrow.ts";

const MAX_MESSAGES_PER_FETCH = 5000;

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
    target =
      typeof channel === "number"
        ? { kind: "channel", streamId: channel, topic }
        : { kind: "channel", streamName: String(channel), topic };
  } else {
    const list = Array.isArray(to)
      ? to
      : typeof to === "number"
        ? [to]
        : String(to)
            .split(",")
            .map((e) => e.trim())
            .filter(Boolean);
    if (list.some((x) => typeof x === "number") && list.some((x) => typeof x === "string"))
      throw new JsonableError("Recipient lists may contain emails or user IDs, but not both.");
    target =
      typeof list[0] === "number"
        ? { kind: "direct", userIds: list as number[] }
        : { kind: "direct", emails: list as string[] };
  }
  const localEcho =
    body.queue_id !== undefined && body.local_id !== undefined
      ? { queueId: body.queue_id, localId: body.local_id }
      : undefined;
  const { id, automaticNewVisibilityPolicy } = await checkSendMessage(ctx, {
    target,
    content: body.content,
    clientName: clientNameFromUserAgent(ctx.userAgent),
    readBySender: body.read_by_sender,
    localEcho,
  });
  return {
    id,
    ...(automaticNewVisibilityPolicy === undefined
      ? {}
      : { automatic_new_visibility_policy: automaticNewVisibilityPolicy as 2 | 3 }),
  };
};

/** GET /messages/{message_id} (zerver/views/message_edit.py json_fetch_raw_message). */
export const getMessage: Handler<"get-message"> = async ({ path, query }, ctx) => {
  const { message, flags, related } = await accessMessage(
    ctx.db,
    ctx.user,
    path.message_id,
    ctx.realm,
  );
  const options = {
    applyMarkdown: query.apply_markdown ?? true,
    allowEmptyTopicName: query.allow_empty_topic_name ?? false,
    clientGravatar: false,
  };
  const inaccessibleSenders = await hiddenSenders(ctx.db, ctx.user, ctx.realm, ctx.config, [
    message.senderId,
  ]);
  const [dict] = await buildMessageDicts(
    ctx.db,
    ctx.realm,
    [{ message, flags }],
    { ...options, inaccessibleSenders },
    related,
  );
  return { message: dict!, raw_content: message.content };
};

/** GET /messages (zerver/views/message_fetch.py get_messages_backend). */
export const getMessages: Handler<"get-messages"> = async ({ query }, ctx) => {
  const numBefore = query.num_before ?? 0;
  const numAfter = query.num_after ?? 0;
  const includeAnchor = query.include_anchor ?? true;
  const firstUnread = query.use_first_unread_anchor ?? false;
  if (
    query.message_ids !== undefined &&
    (numBefore > 0 || numAfter > 0 || query.anchor !== undefined || firstUnread)
  )
    throw new IncompatibleParametersError([
      "num_before",
      "num_after",
      "anchor",
      "message_ids",
      "include_anchor",
      "use_first_unread_anchor",
    ]);
  // The legacy use_first_unread_anchor=true stands for anchor=first_unread (parse_anchor_value).
  const anchorParam = firstUnread ? "first_unread" : query.anchor;
  if (query.message_ids === undefined && anchorParam === undefined)
    throw new JsonableError("Missing 'anchor' argument.");
  if (
    numBefore + numAfter > MAX_MESSAGES_PER_FETCH ||
    (query.message_ids?.length ?? 0) > MAX_MESSAGES_PER_FETCH
  )
    throw new JsonableError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  if (numBefore > 0 && numAfter > 0 && !includeAnchor)
    throw new JsonableError("The anchor can only be excluded at an end of the range");

  const narrow = await compileNarrow(ctx.db, ctx.realm, ctx.user, query.narrow ?? []);
  let rows: FetchedRow[];
  let range: {
    anchor?: number;
    found_anchor: boolean;
    found_oldest: boolean;
    found_newest: boolean;
  };
  if (query.message_ids !== undefined) {
    rows = await fetchMessagesById(ctx.db, narrow, query.message_ids);
    range = { found_anchor: false, found_oldest: false, found_newest: false };
  } else {
    // parse_anchor_value: a numeric anchor arrives clamped to [0, LARGER_THAN_MAX_MESSAGE_ID]
    // (the spec's x-zulip-clamp, applied by http/form.ts).
    const anchor =
      anchorParam === "newest"
        ? LARGER_THAN_MAX_MESSAGE_ID
        : anchorParam === "oldest"
          ? 0
          : anchorParam === "first_unread"
            ? anchorParam
            : anchorParam!;
    const fetched = await fetchMessageRange(ctx.db, narrow, { anchor, numBefore, numAfter });
    rows = [
      ...fetched.before,
      ...(includeAnchor && fetched.anchorMessage ? [fetched.anchorMessage] : []),
      ...fetched.after,
    ];
    range = {
      anchor: fetched.anchor,
      found_anchor: fetched.anchorMessage !== null,
      found_oldest: anchorParam === "oldest" || fetched.before.length < numBefore,
      found_newest: fetched.anchor >= LARGER_THAN_MAX_MESSAGE_ID || fetched.after.length < numAfter,
    };
  }
  const dicts = await buildMessageDicts(ctx.db, ctx.realm, rows, {
    applyMarkdown: query.apply_markdown ?? true,
    allowEmptyTopicName: query.allow_empty_topic_name ?? false,
    clientGravatar: query.client_gravatar ?? true,
    viewer: ctx.user,
    inaccessibleSenders: await hiddenSenders(
      ctx.db,
      ctx.user,
      ctx.realm,
      ctx.config,
      rows.map((r) => r.message.senderId),
    ),
  });
  // A search's results carry their highlighted matches (Zulip's search_fields).
  const messages = dicts.map((dict, i) => ({ ...dict, ...rows[i]!.search }));
  return { ...range, history_limited: false, messages };
};

/** GET /messages/matches_narrow (zerver/views/message_fetch.py messages_in_narrow_backend). */
export const checkMessagesMatchNarrow: Handler<"check-messages-match-narrow"> = async (
  { query },
  ctx,
) => {
  const narrow = await compileNarrow(ctx.db, ctx.realm, ctx.user, query.narrow);
  const matches = await fetchNarrowMatches(ctx.db, narrow, query.msg_ids);
  return { messages: Object.fromEntries([...matches].map(([id, match]) => [String(id), match])) };
};
