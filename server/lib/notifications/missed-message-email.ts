/**
 * The email about messages a user missed, one per conversation, as Zulip's
 * do_send_missedmessage_events_reply_in_zulip and its templates (zerver/lib/email_notifications.py,
 * templates/zerver/emails/missed_message.*) write it: the subject names the conversation, the
 * body has the messages under their conversation's header, each sender's run under their name,
 * the text part quoting each message's Markdown and the HTML part its rendering with links made
 * absolute, then why it was sent, a link to the conversation and the settings, and an
 * unsubscribe link (also as List-Unsubscribe, for mail clients' one-click unsubscribe).
 * With message content off (the user's or the organization's setting) the email says only that
 * there are new messages and links to them.
 */
import type { OutgoingEmail } from "../../actions/email/outbox.ts";
import { escapeAttr, escapeText } from "../markdown/text.ts";
import { encodeChannel, encodeHashComponent, encodeUserIds } from "../messages/message-links.ts";
import { RESOLVED_TOPIC_PREFIX } from "../messages/topics.ts";
import { RecipientType } from "../recipients.ts";
import { MENTION_TRIGGERS, Trigger } from "./missed-messages.ts";
import { groupToName, type MentionedGroup } from "./group-mentions.ts";

export interface MissedMessage {
  id: number;
  senderId: number;
  senderName: string;
  recipientId: number;
  recipientType: number;
  streamId: number | null;
  streamName: string | null;
  topic: string;
  content: string;
  renderedContent: string;
  dateSent: Date;
  /** Why the user is told of it; null for a message shown for context only. */
  trigger: string | null;
  /** The user group whose mention it is told for (the trigger is then "mentioned"), or null. */
  mentionedUserGroupId: number | null;
}

export interface EmailRecipient {
  id: number;
  fullName: string;
  deliveryEmail: string;
  /** message_content_in_email_notifications and the organization's allowing it, together. */
  showContent: boolean;
  /** Whether the subject ends with the organization's name (realm_name_in_email_notifications_policy). */
  realmNameInSubject: boolean;
}

export interface EmailRealm {
  id: number;
  name: string;
  url: string;
}

/** `Open Zulip to see the spoiler content` is what Zulip puts in place of a spoiler's body. */
const SPOILER_TITLE = "Open Zulip to see the spoiler content";

/** The conversation a message is in, for grouping: a channel's topic, or a DM's recipient. */
export function conversationKey(
  m: Pick<MissedMessage, "recipientId" | "recipientType" | "senderId" | "topic">,
): string {
  return m.recipientType === RecipientType.STREAM
    ? `${m.recipientId}:${m.topic.toLowerCase()}`
    : m.recipientType === RecipientType.PERSONAL
      ? `${m.recipientId}:${m.senderId}`
      : `${m.recipientId}`;
}

/** The conversation's link in the web app (personal_narrow_url, direct_message_group_narrow_url, topic_narrow_url). */
export function narrowUrl(realm: EmailRealm, m: MissedMessage, otherIds: number[]): string {
  if (m.recipientType === RecipientType.STREAM)
    return `${realm.url}/#narrow/channel/${encodeChannel(m.streamId!, m.streamName!)}/topic/${encodeHashComponent(m.topic)}`;
  if (m.recipientType === RecipientType.PERSONAL)
    return `${realm.url}/#narrow/dm/${m.senderId}-${encodeHashComponent(m.senderName.replace(/[ "%/<>`]+/g, "-"))}`;
  return `${realm.url}/#narrow/dm/${encodeUserIds(otherIds)}`;
}

/** Zulip's direct_message_group_display_name: "A and B", "A, B, and C", "A, B, and 2 others". */
function groupName(names: string[]): string {
  if (names.length <= 2) return names.join(" and ");
  if (names.length === 3) return `${names[0]}, ${names[1]}, and ${names[2]}`;
  return `${names.slice(0, 2).join(", ")}, and ${names.length - 2} others`;
}

/** Relative links and images made absolute; inline image previews dropped (the mail server cannot fetch them with the user's login). */
export function emailHtml(rendered: string, realmUrl: string): string {
  return rendered
    .replace(/<div class="message_inline_image">[\s\S]*?<\/div>/g, "")
    .replace(/<div class="spoiler-content"[^>]*>[\s\S]*?<\/div>/g, "")
    .replace(
      /<div class="spoiler-header">\s*/g,
      `<div class="spoiler-header"><span class="spoiler-title" title="${SPOILER_TITLE}">(${SPOILER_TITLE})</span> `,
    )
    .replace(/\b(href|src)="\/(?!\/)/g, `$1="${realmUrl}/`);
}

/** The text part's form of a message: its Markdown, image links bare, uploads absolute, quoted. */
export function emailText(content: string, realmUrl: string): string {
  return content
    .replace(/\[(\S*)\]\((\S*)\)/g, "$2")
    .replace(/(^|[^\w/])\/user_uploads\//g, `$1${realmUrl}/user_uploads/`)
    .replace(/^```+\s*spoiler[^\n]*\n[\s\S]*?^```+\s*$/gm, `(${SPOILER_TITLE})`)
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
}

export interface ConversationEmail {
  user: EmailRecipient;
  realm: EmailRealm;
  /** The conversation's messages, missed and for context, oldest first. */
  messages: MissedMessage[];
  /** For a group DM: the other members' ids and names. */
  others: { id: number; fullName: string }[];
  /** The groups the messages' mentions name (mentionedUserGroupId), with their sizes. */
  groups: ReadonlyMap<number, MentionedGroup>;
  unsubscribeUrl: string;
  noreplyAddress: string;
}

/** One conversation's email (do_send_missedmessage_events_reply_in_zulip). */
export function conversationEmail(input: ConversationEmail): OutgoingEmail {
  const { user, realm, messages, others } = input;
  const first = messages.find((m) => m.trigger !== null) ?? messages[0]!;
  const missed = messages.filter((m) => m.trigger !== null);
  const triggers = new Set(missed.map((m) => m.trigger!));
  const mention = [...triggers].some((t) => MENTION_TRIGGERS.has(t));
  const url = narrowUrl(
    realm,
    first,
    others.map((o) => o.id),
  );
  // The senders named: of a channel's mentions, only those who mentioned the user.
  const named = missed.filter((m) =>
    first.recipientType === RecipientType.STREAM && mention
      ? MENTION_TRIGGERS.has(m.trigger!)
      : true,
  );
  const senders = [...new Map(named.map((m) => [m.senderId, m.senderName])).values()];

  let subject: string;
  let header: string;
  let headerHtml: string;
  if (first.recipientType === RecipientType.DIRECT_MESSAGE_GROUP) {
    const names = others.map((o) => o.fullName);
    subject = `Group DMs with ${groupName(names)}`;
    header = `You and ${names.join(", ")}`;
    headerHtml = `<a href="${escapeAttr(url)}">${escapeText(header)}</a>`;
  } else if (first.recipientType === RecipientType.PERSONAL) {
    subject = `DMs with ${senders.join(", ")}`;
    header = `You and ${first.senderName}`;
    headerHtml = `<a href="${escapeAttr(url)}">${escapeText(header)}</a>`;
  } else {
    const resolved = first.topic.startsWith(RESOLVED_TOPIC_PREFIX);
    const bare = resolved ? first.topic.slice(RESOLVED_TOPIC_PREFIX.length) : first.topic;
    subject = `${resolved ? "[resolved] " : ""}#${first.streamName} > ${bare}`;
    header = `${first.streamName} > ${first.topic}`;
    const channelUrl = `${realm.url}/#narrow/channel/${encodeChannel(first.streamId!, first.streamName!)}`;
    headerHtml = `<a href="${escapeAttr(channelUrl)}">${escapeText(first.streamName!)}</a> &gt; <a href="${escapeAttr(url)}">${escapeText(first.topic)}</a>`;
  }
  if (!user.showContent) subject = "New messages";
  if (user.realmNameInSubject) subject += ` [${realm.name}]`;

  const reason = reasonText(first, triggers, groupToName(missed, input.groups));
  const text: string[] = [];
  const html: string[] = [];
  if (user.showContent) {
    text.push(header, "");
    html.push(`<div class="recipient_header" style="font-weight:bold">${headerHtml}</div>`);
    // Runs of one sender under one name; a DM's are the user's partner's, unnamed.
    let previous: number | null = null;
    for (const m of messages) {
      const showSender = m.recipientType !== RecipientType.PERSONAL && m.senderId !== previous;
      previous = m.senderId;
      if (showSender) text.push(`${m.senderName}:`);
      text.push(emailText(m.content, realm.url), "");
      html.push(
        `<div class="message_content">${showSender ? `<b>${escapeText(m.senderName)}</b>: ` : ""}${emailHtml(m.renderedContent, realm.url)}</div>`,
      );
    }
  } else {
    const count = missed.length === 1 ? "a new message" : `${missed.length} new messages`;
    const why =
      "This email does not include message content because you or your organization disabled message content in email notifications.";
    text.push(`You have ${count} in ${realm.name}.`, "", why, "");
    html.push(`<p>You have ${count} in ${escapeText(realm.name)}.</p>`, `<p>${why}</p>`);
  }
  text.push(
    "--",
    reason,
    "",
    "Do not reply to this email. View or reply in Zulip:",
    url,
    "",
    "Manage email preferences:",
    `${realm.url}/#settings/notifications`,
    "",
    "Unsubscribe from missed message emails:",
    input.unsubscribeUrl,
    "",
  );
  html.push(
    `<hr><p>${escapeText(reason)}</p>`,
    `<p>Do not reply to this email. <a href="${escapeAttr(url)}">View or reply in Zulip</a></p>`,
    `<p><a href="${escapeAttr(`${realm.url}/#settings/notifications`)}">Manage email preferences</a> | <a href="${escapeAttr(input.unsubscribeUrl)}">Unsubscribe from missed message emails</a></p>`,
  );
  return {
    realmId: realm.id,
    to: user.deliveryEmail,
    from: `"Zulip notifications" <${input.noreplyAddress}>`,
    subject,
    text: text.join("\n"),
    html: html.join("\n"),
    template: "zerver/emails/missed_message",
    headers: {
      "List-Unsubscribe": `<${input.unsubscribeUrl}>`,
      "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    },
  };
}

/**
 * The footer's "You are receiving this because …", by the strongest trigger; a mention through a
 * group (and none by name) names the group, as the template's mentioned_user_group_name does.
 */
function reasonText(m: MissedMessage, triggers: Set<string>, group: MentionedGroup | null): string {
  const channel = `#${m.streamName}`;
  if (triggers.has(Trigger.DIRECT_MESSAGE))
    return m.recipientType === RecipientType.DIRECT_MESSAGE_GROUP
      ? "You are receiving this because you were included in a group direct message."
      : "You are receiving this because you received a direct message.";
  if (group) return `You are receiving this because @${group.name} was mentioned.`;
  if (triggers.has(Trigger.MENTION))
    return "You are receiving this because you were personally mentioned.";
  if (
    triggers.has(Trigger.TOPIC_WILDCARD_MENTION) ||
    triggers.has(Trigger.TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC)
  )
    return "You are receiving this because all topic participants were mentioned in this topic.";
  if (
    triggers.has(Trigger.STREAM_WILDCARD_MENTION) ||
    triggers.has(Trigger.STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC)
  )
    return `You are receiving this because everyone was mentioned in ${channel}.`;
  if (triggers.has(Trigger.FOLLOWED_TOPIC_EMAIL))
    return "You are receiving this because you have email notifications enabled for topics you follow.";
  return `You are receiving this because you have email notifications enabled for ${channel}.`;
}
