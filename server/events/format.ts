/**
 * Shaping a logged event for one queue when the queue takes it: the log holds plain data, and
 * what depends on the client (apply_markdown, the empty topic's display name for clients without
 * the `empty_topic_name` capability, per-user data such as message flags) is applied here, as
 * Zulip's Tornado does in process_message_event / ClientDescriptor.
 */
import type { ZulipEvent } from "./log.ts";
import type { QueueOptions } from "./queues.ts";

export interface FormatContext {
  /** The organization's display name of the empty topic. */
  emptyTopicDisplayName: string;
  /** The queue taking the event. */
  queueId: string;
}

type Formatter = (
  event: ZulipEvent,
  userData: Record<string, unknown> | null,
  options: QueueOptions,
  ctx: FormatContext,
) => ZulipEvent;

/**
 * `message` events are logged with the rendered HTML in `message.content` and the Markdown
 * source in `markdown`; per-user `flags` come from the user data. A send with `queue_id` and
 * `local_id` logs them as `sender_queue_id` and `local_id`: that queue alone gets
 * `local_message_id` (Tornado's process_message_event, `is_sender`).
 */
function formatMessage(
  event: ZulipEvent,
  userData: Record<string, unknown> | null,
  options: QueueOptions,
  ctx: FormatContext,
): ZulipEvent {
  const { markdown, sender_queue_id, local_id, ...rest } = event as ZulipEvent & {
    markdown: string;
    message: Record<string, unknown>;
    sender_queue_id?: string;
    local_id?: string;
  };
  const message = { ...rest.message };
  if (!options.applyMarkdown)
    Object.assign(message, { content: markdown, content_type: "text/x-markdown" });
  if (
    message.type === "stream" &&
    message.subject === "" &&
    !options.clientCapabilities.empty_topic_name
  )
    message.subject = ctx.emptyTopicDisplayName;
  const echo =
    sender_queue_id === ctx.queueId && local_id !== undefined ? { local_message_id: local_id } : {};
  return { ...rest, message, flags: userData?.flags ?? [], ...echo };
}

/**
 * A user's avatar: with `client_gravatar`, null when the client can compute the Gravatar URL
 * itself from an email it may see (as lib/users/users.ts toApiUser does for the register state).
 */
function formatRealmUser(
  event: ZulipEvent,
  userData: Record<string, unknown> | null,
  options: QueueOptions,
): ZulipEvent {
  const person = event.person as
    { delivery_email?: string | null; avatar_url?: string | null } | undefined;
  const shaped = userData ? { ...event, ...userData } : event;
  if (event.op !== "add" || !person || !options.clientGravatar || !person.delivery_email)
    return shaped;
  return { ...shaped, person: { ...person, avatar_url: null } };
}

/**
 * `update_message`: per-user `flags`, and the empty topic under its display name for clients
 * without the `empty_topic_name` capability (Tornado's process_message_update_event).
 */
function formatMessageUpdate(
  event: ZulipEvent,
  userData: Record<string, unknown> | null,
  options: QueueOptions,
  ctx: FormatContext,
): ZulipEvent {
  const shaped: ZulipEvent = userData ? { ...event, ...userData } : { ...event };
  if (!options.clientCapabilities.empty_topic_name)
    for (const key of ["orig_subject", "subject"])
      if (shaped[key] === "") shaped[key] = ctx.emptyTopicDisplayName;
  return shaped;
}

/**
 * `presence` is logged with both forms (Tornado's process_presence_event): the modern
 * `presences` map for clients with `simplified_presence_events`, else the legacy fields, without
 * `email` for `slim_presence` queues.
 */
function formatPresence(
  event: ZulipEvent,
  _userData: Record<string, unknown> | null,
  options: QueueOptions,
): ZulipEvent {
  const { presences, email, ...legacy } = event;
  if (options.clientCapabilities.simplified_presence_events && presences !== undefined)
    return { type: event.type, presences };
  return options.slimPresence ? legacy : { ...legacy, email };
}

/** The empty topic under its display name in events that name a topic by `key`, for clients without `empty_topic_name`. */
function withTopicDisplayName(key: string): Formatter {
  return (event, userData, options, ctx) => {
    const shaped: ZulipEvent = userData ? { ...event, ...userData } : { ...event };
    if (!options.clientCapabilities.empty_topic_name && shaped[key] === "")
      shaped[key] = ctx.emptyTopicDisplayName;
    return shaped;
  };
}

/** The archiving markers only choose which queues take a `stream` event (queues.ts); Zulip strips them. */
function formatStream(event: ZulipEvent, userData: Record<string, unknown> | null): ZulipEvent {
  const {
    for_archiving: _a,
    for_unarchiving: _u,
    ...rest
  } = userData ? { ...event, ...userData } : event;
  return rest;
}

/** Zulip's process_mark_message_unread_event: the empty topic of each message under its display name. */
function formatMessageFlags(
  event: ZulipEvent,
  userData: Record<string, unknown> | null,
  options: QueueOptions,
  ctx: FormatContext,
): ZulipEvent {
  const shaped: ZulipEvent = userData ? { ...event, ...userData } : event;
  const details = shaped.message_details as Record<string, { topic?: string }> | undefined;
  if (options.clientCapabilities.empty_topic_name || !details) return shaped;
  const renamed = Object.fromEntries(
    Object.entries(details).map(([id, d]) => [
      id,
      d.topic === "" ? { ...d, topic: ctx.emptyTopicDisplayName } : d,
    ]),
  );
  return { ...shaped, message_details: renamed };
}

const FORMATTERS: Record<string, Formatter> = {
  stream: formatStream,
  update_message_flags: formatMessageFlags,
  presence: formatPresence,
  message: formatMessage,
  update_message: formatMessageUpdate,
  realm_user: formatRealmUser,
  user_topic: withTopicDisplayName("topic_name"),
  typing: withTopicDisplayName("topic"),
  delete_message: withTopicDisplayName("topic"),
};

export function formatEvent(
  event: ZulipEvent,
  userData: Record<string, unknown> | null,
  options: QueueOptions,
  ctx: FormatContext,
): ZulipEvent {
  const formatter = FORMATTERS[event.type];
  if (formatter) return formatter(event, userData, options, ctx);
  return userData ? { ...event, ...userData } : event;
}
