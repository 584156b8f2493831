/**
 * Reporting a message to the organization's moderators (zerver/views/message_report.py and
 * zerver/lib/message_report.py): the notification bot posts the report, in Zulip's Markdown, to
 * the moderation request channel and confirms it to the reporter in a direct message, both in
 * one transaction.
 */
import type { Message, UserProfile } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { Related } from "../../lib/messages/message-dicts.ts";
import {
  globalTimeSyntax,
  messageLinkSyntax,
  messageLinkUrl,
  silentMentionSyntax,
  type LinkedMessage,
} from "../../lib/messages/message-links.ts";
import { accessMessage } from "../../lib/messages/messages.ts";
import { realmUrl } from "../../lib/realm/realm.ts";
import { RecipientType } from "../../lib/recipients.ts";
import { REPORT_MESSAGE_TYPES } from "../../lib/register/register-state.ts";
import { MAX_MESSAGE_LENGTH } from "../../lib/messages/topics.ts";
import { internalSendMessage, notificationBot } from "./internal-send.ts";
import { inTransaction } from "../transaction.ts";

export type ReportType = "spam" | "harassment" | "inappropriate" | "norms" | "other";

/** Realm.MAX_REPORT_MESSAGE_EXPLANATION_LENGTH. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
/** The reported message is cut shorter than a message, leaving room for the description and the report's own text. */
export const MAX_REPORT_MESSAGE_SNIPPET_LENGTH =
  MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;
const TRUNCATION_NOTICE = "\n[message truncated]";

export interface MessageReportInput {
  messageId: number;
  reportType: ReportType;
  description: string;
}

/** POST /messages/{message_id}/report, in Zulip's order of checks. */
export async function doReportMessage(
  ctx: RequestContext,
  input: MessageReportInput,
): Promise<void> {
  const { realm, user } = ctx;
  if (input.reportType === "other" && input.description === "")
    throw new JsonableError("An explanation is required.");
  const channelId = realm.moderationRequestChannelId;
  if (channelId === null)
    throw new JsonableError("Message reporting is not enabled in this organization.");
  const { message, related } = await accessMessage(ctx.db, user, input.messageId, realm);

  const bot = await notificationBot(ctx, realm);
  const url = await realmUrl(ctx.db, realm, ctx.config);
  const reported = reportedMessage(message, related);
  const reason = REPORT_MESSAGE_TYPES.find((t) => t.key === input.reportType)!.name;

  await inTransaction(ctx, realm.id, async ({ tx, events }) => {
    const [channel] = await tx.$queryRaw<{ topics_policy: string; is_archived: boolean }[]>`
      SELECT topics_policy::text AS topics_policy, is_archived FROM stream WHERE id = ${channelId}`;
    // Zulip's internal send refuses an archived channel, and the view then reports the failure.
    if (!channel || channel.is_archived)
      throw new JsonableError("Failed to send the message report.");
    const topic =
      channel.topics_policy === "empty_topic_only" ? "" : `${reported.sender.fullName} moderation`;
    const content = reportContent(user, reported, reason, input.description, url);
    try {
      await internalSendMessage(
        { tx, events },
        {
          deps: ctx,
          realm,
          sender: bot,
          target: { kind: "channel", streamId: channelId, topic },
          content,
        },
      );
    } catch (error) {
      if (error instanceof JsonableError)
        throw new JsonableError("Failed to send the message report.");
      throw error;
    }
    const confirmation = `You reported [a message](${messageLinkUrl(url, reported.link)}) for ${reason.toLowerCase()}.`;
    await internalSendMessage(
      { tx, events },
      {
        deps: ctx,
        realm,
        sender: bot,
        target: { kind: "direct", userIds: [user.id] },
        content: confirmation,
      },
    );
  });
}

export type Person = { id: number; fullName: string };

/** What the report says of the message: who sent it, where, and to whom. */
export interface ReportedMessage {
  message: Message;
  sender: Person;
  link: LinkedMessage;
  /** Direct messages: every participant, by id. */
  participants: Person[];
}

export function reportedMessage(message: Message, related: Related): ReportedMessage {
  const users = new Map(related.users.map((u) => [u.id, { id: u.id, fullName: u.fullName }]));
  const sender = users.get(message.senderId)!;
  const recipient = related.recipients.find((r) => r.id === message.recipientId)!;
  if (recipient.type === RecipientType.STREAM)
    return {
      message,
      sender,
      participants: [],
      link: {
        id: message.id,
        kind: "channel",
        channelId: recipient.typeId,
        channelName: recipient.name!,
        topic: message.subject,
      },
    };
  const ids =
    recipient.type === RecipientType.PERSONAL
      ? [recipient.typeId, message.senderId]
      : related.groupMembers.filter((m) => m.recipientId === recipient.id).map((m) => m.userId);
  const participants = [...new Set(ids)].sort((a, b) => a - b).map((id) => users.get(id)!);
  return {
    message,
    sender,
    participants,
    link: { id: message.id, kind: "direct", userIds: participants.map((p) => p.id) },
  };
}

/** get_user_mentions_for_display: "A", "A and B", "A, B, and C". */
export function mentionList(users: Person[]): string {
  const mentions = users.map(silentMentionSyntax);
  if (mentions.length <= 2) return mentions.join(" and ");
  return `${mentions.slice(0, -1).join(", ")}, and ${mentions.at(-1)}`;
}

/** truncate_content, in code points as Python counts. */
export function truncate(content: string, maxLength: number, notice: string): string {
  const chars = [...content];
  return chars.length > maxLength
    ? chars.slice(0, maxLength - notice.length).join("") + notice
    : content;
}

/** get_unused_fence: a backtick fence longer than any the content opens a line with. */
export function unusedFence(content: string): string {
  let length = 3;
  for (const match of content.matchAll(/^ {0,3}(`{3,})/gm))
    length = Math.max(length, match[1]!.length + 1);
  return "`".repeat(length);
}

/** send_message_report's Markdown: who reported whose message, the reason, and the message under a spoiler. */
function reportContent(
  reporter: UserProfile,
  reported: ReportedMessage,
  reason: string,
  description: string,
  url: string,
): string {
  const { message, sender, participants, link } = reported;
  const by = `${silentMentionSyntax(reporter)} reported a message sent by ${silentMentionSyntax(sender)}`;
  const at = `at ${globalTimeSyntax(message.dateSent)}.`;
  let header: string;
  let original: string;
  if (link.kind === "channel") {
    header = `${by} ${at}`;
    original = `Original message at ${messageLinkSyntax(link.channelId, link.channelName, link.topic, message.id)}`;
  } else {
    // A one-on-one conversation names its other party only when the reporter sent the message.
    if (participants.length <= 2 && sender.id !== reporter.id) header = `${by} ${at}`;
    else if (participants.length <= 2)
      header = `${by} to ${silentMentionSyntax(participants.find((p) => p.id !== reporter.id) ?? sender)} ${at}`;
    else header = `${by} to ${mentionList(participants.filter((p) => p.id !== sender.id))} ${at}`;
    original = `[Original message](${messageLinkUrl(url, link)})`;
  }
  const quoted = truncate(message.content, MAX_REPORT_MESSAGE_SNIPPET_LENGTH, TRUNCATION_NOTICE);
  const fence = unusedFence(quoted);
  return `${header}\n\`\`\`quote\n**${reason}**. ${description}\n\`\`\`\n\n${fence} spoiler ${original}\n${quoted}\n${fence}`;
}
