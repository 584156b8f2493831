/** Message flags and read state (zerver/views/message_flags.py). */
import {
  doMarkAllAsRead,
  doMarkChannelAsRead,
  doUpdateMessageFlags,
  type FlagChange,
} from "../actions/messages/message-flags.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { accessChannel } from "../lib/channels/channels.ts";
import { fetchMessageRange, LARGER_THAN_MAX_MESSAGE_ID } from "../lib/messages/message-fetch.ts";
import { userMessageExistsForTopic } from "../lib/messages/message-flags.ts";
import { compileNarrow } from "../lib/narrow/narrow.ts";
import { checkTopicName } from "../lib/messages/topics.ts";

/** Zulip's MAX_MESSAGES_PER_UPDATE: the most messages one flags/narrow request changes. */
const MAX_MESSAGES_PER_UPDATE = 5000;

/** `ignored_because_not_subscribed_channels`, present only when `read` was removed. */
function ignoredField(change: FlagChange) {
  return change.ignoredChannels
    ? { ignored_because_not_subscribed_channels: change.ignoredChannels }
    : {};
}

/** POST /messages/flags (update_message_flags): answers with the ids as sent, as Zulip does. */
export const updateMessageFlags: Handler<"update-message-flags"> = async ({ body }, ctx) => {
  const change = await doUpdateMessageFlags(ctx, body.op, body.flag, body.messages);
  return { messages: body.messages, ...ignoredField(change) };
};

/** parse_anchor_value: the special names, or any integer text clamped to [0, LARGER_THAN_MAX_MESSAGE_ID]. */
function parseAnchor(raw: string | number): number | "first_unread" {
  if (raw === "oldest") return 0;
  if (raw === "newest") return LARGER_THAN_MAX_MESSAGE_ID;
  if (raw === "first_unread") return "first_unread";
  const text = String(raw).trim();
  if (!/^[-+]?\d+$/.test(text)) throw new JsonableError("Invalid anchor");
  const value = BigInt(text);
  if (value < 0n) return 0;
  return value > BigInt(LARGER_THAN_MAX_MESSAGE_ID) ? LARGER_THAN_MAX_MESSAGE_ID : Number(value);
}

/** POST /messages/flags/narrow (update_message_flags_for_narrow). */
export const updateMessageFlagsForNarrow: Handler<"update-message-flags-for-narrow"> = async (
  { body },
  ctx,
) => {
  const anchor = parseAnchor(body.anchor);
  const includeAnchor = body.include_anchor ?? true;
  if (body.num_before > 0 && body.num_after > 0 && !includeAnchor)
    throw new JsonableError("The anchor can only be excluded at an end of the range");
  // Zulip's clamp: num_before + num_after <= 5000, num_before keeping at least half when both ask for more.
  const numBefore = Math.min(
    body.num_before,
    Math.max(MAX_MESSAGES_PER_UPDATE - body.num_after, MAX_MESSAGES_PER_UPDATE / 2),
  );
  const numAfter = Math.min(body.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
  // As in Zulip, the narrow is read (and its errors given) before the flag and op are checked.
  const narrow = await compileNarrow(ctx.db, ctx.realm, ctx.user, body.narrow);
  const range = await fetchMessageRange(ctx.db, narrow, { anchor, numBefore, numAfter });
  const rows = [
    ...range.before,
    ...(includeAnchor && range.anchorMessage ? [range.anchorMessage] : []),
    ...range.after,
  ];
  const ids = rows.map((r) => r.message.id);
  const change = await doUpdateMessageFlags(ctx, body.op, body.flag, ids);
  return {
    processed_count: ids.length,
    updated_count: change.changed.length,
    first_processed_id: ids[0] ?? null,
    last_processed_id: ids.at(-1) ?? null,
    found_oldest: anchor === 0 || range.before.length < numBefore,
    found_newest: range.anchor >= LARGER_THAN_MAX_MESSAGE_ID || range.after.length < numAfter,
    ...ignoredField(change),
  };
};

/** POST /mark_all_as_read: `complete` false when the time limit ran out first. */
export const markAllAsRead: Handler<"mark-all-as-read"> = async (_request, ctx) => ({
  complete: await doMarkAllAsRead(ctx),
});

/** POST /mark_stream_as_read (access_stream_by_id, then do_mark_stream_messages_as_read). */
export const markStreamAsRead: Handler<"mark-stream-as-read"> = async ({ body }, ctx) => {
  const stream = await accessChannel(
    ctx.db,
    ctx.user,
    { id: body.stream_id },
    { allowArchived: true },
  );
  await doMarkChannelAsRead(ctx, stream.recipientId, null);
  return {};
};

/** POST /mark_topic_as_read: the topic must hold a message the user received ("No such topic"). */
export const markTopicAsRead: Handler<"mark-topic-as-read"> = async ({ body }, ctx) => {
  const stream = await accessChannel(
    ctx.db,
    ctx.user,
    { id: body.stream_id },
    { allowArchived: true },
  );
  const topic = checkTopicName(body.topic_name, ctx.realm);
  if (!(await userMessageExistsForTopic(ctx.db, ctx.user.id, stream.recipientId, topic)))
    throw new JsonableError(`No such topic '${body.topic_name}'`);
  await doMarkChannelAsRead(ctx, stream.recipientId, topic);
  return {};
};
