/**
 * Markdown the server writes into its own messages (reports, notices, failed deliveries): links
 * to messages and topics as Zulip's zerver/lib/url_encoding.py (message_link_url and its
 * helpers) and zerver/lib/topic_link_util.py (the `#**channel>topic@id**` syntax and its
 * fallback) write them, silent mentions and times. The links encode as the server does, which
 * differs from the Markdown renderer's narrow links (markdown/mentions.ts): `*` stays as it is.
 */

/** A message as a link needs it: its channel and topic, or every participant of its conversation. */
export type LinkedMessage =
  | { id: number; kind: "channel"; channelId: number; channelName: string; topic: string }
  | { id: number; kind: "direct"; userIds: number[] };

/** encode_hash_component: percent-encoding (`*` kept), then `.` → `.2E` and `%` → `.`. */
export function encodeHashComponent(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/\./g, "%2E")
    .replace(/%/g, ".");
}

/** encode_channel: `<id>-<name>`, spaces as dashes. */
export function encodeChannel(channelId: number, channelName: string): string {
  return `${channelId}-${encodeHashComponent(channelName.replace(/ /g, "-"))}`;
}

/** encode_user_ids: the sorted ids, with `-group` for three or more. */
export function encodeUserIds(userIds: number[]): string {
  const ids = [...new Set(userIds)].sort((a, b) => a - b);
  return ids.join(",") + (ids.length >= 3 ? "-group" : "");
}

/** message_link_url: the absolute `near` link of a channel or direct message. */
export function messageLinkUrl(realmUrl: string, message: LinkedMessage): string {
  if (message.kind === "channel")
    return `${realmUrl}/#narrow/channel/${encodeChannel(message.channelId, message.channelName)}/topic/${encodeHashComponent(message.topic)}/near/${message.id}`;
  return `${realmUrl}/#narrow/dm/${encodeUserIds(message.userIds)}/near/${message.id}`;
}

/** Names that would break the `#**…**` syntax (topic_link_util's invalid_stream_topic_regex). */
const BREAKS_LINK_SYNTAX = /[`>*&[\]]|\$\$/;
const ESCAPES: Record<string, string> = {
  "`": "&#96;",
  ">": "&gt;",
  "*": "&#42;",
  "&": "&amp;",
  $$: "&#36;&#36;",
  "[": "&#91;",
  "]": "&#93;",
};
const escapeLinkText = (text: string) => text.replace(/[`>*&[\]]|\$\$/g, (m) => ESCAPES[m]!);

/**
 * get_fallback_markdown_link: a plain Markdown link (relative to the organization) to a channel,
 * a topic or a message, for names the `#**…**` syntax cannot hold. The empty topic is shown as
 * "general chat" (Message.EMPTY_TOPIC_FALLBACK_NAME).
 */
export function fallbackMarkdownLink(
  channelId: number,
  channelName: string,
  topic?: string,
  messageId?: number,
): string {
  let link = `#narrow/channel/${encodeChannel(channelId, channelName)}`;
  let text = `#${escapeLinkText(channelName)}`;
  if (topic !== undefined) {
    link += `/topic/${encodeHashComponent(topic)}`;
    text += ` > ${escapeLinkText(topic === "" ? "general chat" : topic)}`;
  }
  if (messageId !== undefined) {
    link += `/near/${messageId}`;
    text += " @ 💬";
  }
  return `[${text}](${link})`;
}

/** get_stream_link_syntax: `#**channel**`, or the fallback link. */
export function channelLinkSyntax(channelId: number, channelName: string): string {
  if (BREAKS_LINK_SYNTAX.test(channelName)) return fallbackMarkdownLink(channelId, channelName);
  return `#**${channelName}**`;
}

/** get_message_link_syntax: `#**channel>topic@id**`, or the fallback link. */
export function messageLinkSyntax(
  channelId: number,
  channelName: string,
  topic: string,
  messageId: number,
): string {
  if (BREAKS_LINK_SYNTAX.test(channelName) || BREAKS_LINK_SYNTAX.test(topic))
    return fallbackMarkdownLink(channelId, channelName, topic, messageId);
  return `#**${channelName}>${topic}@${messageId}**`;
}

/**
 * get_stream_topic_link_syntax: `#**channel>topic**`, or the fallback link (also for the empty
 * topic, which this server's `#**…>…**` syntax cannot name).
 */
export function topicLinkSyntax(channelId: number, channelName: string, topic: string): string {
  if (topic === "" || BREAKS_LINK_SYNTAX.test(channelName) || BREAKS_LINK_SYNTAX.test(topic))
    return fallbackMarkdownLink(channelId, channelName, topic);
  return `#**${channelName}>${topic}**`;
}

/** silent_mention_syntax_for_user: `@_**Name|id**`, a mention that notifies nobody. */
export const silentMentionSyntax = (user: { id: number; fullName: string }) =>
  `@_**${user.fullName}|${user.id}**`;

/** datetime_to_global_time: `<time:…>` in UTC to the second, shown in each reader's time zone. */
export const globalTimeSyntax = (date: Date) => `<time:${date.toISOString().slice(0, 19)}+00:00>`;
