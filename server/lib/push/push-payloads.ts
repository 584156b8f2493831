/**
 * What an E2EE push notification says (api_docs/mobile-notifications.md; zerver/lib/
 * push_notifications.py get_message_payload and get_remove_payload in their E2EE form): the JSON
 * encrypted to each device. A new message names its sender, its conversation (channel and topic,
 * or every participant of a direct message) and a snippet of its content; a removal names the
 * messages read elsewhere.
 */
import { RecipientType } from "../recipients.ts";

/** What a notification says of any message when the server redacts content. */
export const REDACTED_CONTENT = "New message";

/** Zulip truncates a notification's content to 200 characters, then an ellipsis. */
const CONTENT_LIMIT = 200;

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  "#39": "'",
  "#x27": "'",
  nbsp: " ",
};

/**
 * get_mobile_push_content, in short: the rendering as plain text (paragraphs and line breaks as
 * new lines, a quote's lines with "> ", tags dropped, entities decoded), truncated.
 */
export function pushContent(renderedHtml: string): string {
  const text = renderedHtml
    .replace(/<blockquote>([\s\S]*?)<\/blockquote>/g, (_, inner: string) =>
      pushContent(inner)
        .split("\n")
        .map((line) => `> ${line}`)
        .join("\n"),
    )
    .replace(/<br\s*\/?>/g, "\n")
    .replace(/<\/(p|li|h[1-6]|pre|tr)>/g, "\n")
    .replace(/<img [^>]*alt="([^"]*)"[^>]*>/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (entity, name: string) => {
      if (ENTITIES[name] !== undefined) return ENTITIES[name];
      if (name.startsWith("#x")) return String.fromCodePoint(parseInt(name.slice(2), 16));
      if (name.startsWith("#")) return String.fromCodePoint(Number(name.slice(1)));
      return entity;
    })
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return text.length > CONTENT_LIMIT ? `${text.slice(0, CONTENT_LIMIT)}…` : text;
}

export interface PushRealm {
  name: string;
  url: string;
}

export interface PushedMessage {
  id: number;
  senderId: number;
  senderFullName: string;
  /** Absolute. */
  senderAvatarUrl: string;
  recipientType: number;
  channelId: number | null;
  channelName: string | null;
  topic: string;
  renderedContent: string;
  dateSent: Date;
  /** A direct message's participants, the user and the sender included. */
  participantIds: number[];
  /** The group whose mention the push is for (not for a personal mention). */
  mentionedGroup: { id: number; name: string } | null;
}

/**
 * A new message's payload (get_message_payload). With `redact` (Zulip's
 * PUSH_NOTIFICATION_REDACT_CONTENT) the content is get_mobile_push_content's "New message"
 * rather than the message's: the relay and the phone's platform see nothing of it.
 */
export function messagePayload(realm: PushRealm, userId: number, m: PushedMessage, redact = false) {
  const common = {
    content: redact ? REDACTED_CONTENT : pushContent(m.renderedContent),
    ...(m.mentionedGroup && {
      mentioned_user_group_id: m.mentionedGroup.id,
      mentioned_user_group_name: m.mentionedGroup.name,
    }),
    message_id: m.id,
    realm_name: realm.name,
    realm_url: realm.url,
    sender_avatar_url: m.senderAvatarUrl,
    sender_full_name: m.senderFullName,
    sender_id: m.senderId,
    time: Math.floor(m.dateSent.getTime() / 1000),
    type: "message",
    user_id: userId,
  };
  if (m.recipientType === RecipientType.STREAM)
    return {
      ...common,
      channel_id: m.channelId,
      channel_name: m.channelName,
      recipient_type: "channel",
      topic: m.topic,
    };
  return {
    ...common,
    recipient_type: "direct",
    recipient_user_ids: [...new Set(m.participantIds)].sort((a, b) => a - b),
  };
}

/**
 * handle_remove_push_notification's limit: a removal names the newest 200 messages at most (APNs
 * takes 4 KB; older notifications are the likeliest to have been dismissed by hand already).
 */
const MAX_REMOVED_IDS = 200;

/** The payload that removes the notifications of messages read (or deleted) elsewhere. */
export function removePayload(realm: PushRealm, userId: number, messageIds: number[]) {
  return {
    message_ids: [...messageIds].sort((a, b) => a - b).slice(-MAX_REMOVED_IDS),
    realm_name: realm.name,
    realm_url: realm.url,
    type: "remove",
    user_id: userId,
  };
}
