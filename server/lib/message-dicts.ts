/**
 * Message objects as the API returns them (zerver/lib/message.py MessageDict), built for a
 * batch of messages with one query per related table, never one per message.
 */
import type { Message, PrismaClient, Realm, Tx, UserProfile } from "../db.ts";
import type { ApiMessage } from "../http/types.ts";
import { clientNames } from "./clients.ts";
import { flagsToList } from "./messages.ts";
import { RecipientType } from "./recipients.ts";
import { topicForClient } from "./topics.ts";
import { canSeeDeliveryEmail, gravatarUrl } from "./users.ts";

type Db = PrismaClient | Tx;
const unix = (d: Date) => Math.floor(d.getTime() / 1000);

export interface MessageDictOptions {
  applyMarkdown: boolean;
  allowEmptyTopicName: boolean;
  clientGravatar: boolean;
  /** With client_gravatar, avatar_url is null for senders whose real email the viewer may see. */
  viewer?: Pick<UserProfile, "id" | "role">;
  /** The messages were just sent: they have no reactions or submessages yet to look up. */
  justSent?: boolean;
}

export interface MessageRow {
  message: Message;
  /** The viewer's flags; null when the message is read from channel history without a row. */
  flags: bigint | null;
}

function groupByMessage<T extends { messageId: number }>(rows: T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const row of rows) out.set(row.messageId, [...(out.get(row.messageId) ?? []), row]);
  return out;
}

export async function buildMessageDicts(db: Db, realm: Realm, rows: MessageRow[], options: MessageDictOptions): Promise<ApiMessage[]> {
  if (rows.length === 0) return [];
  const messageIds = rows.map((r) => r.message.id);
  const channelRecipientIds = [...new Set(rows.filter((r) => r.message.isChannelMessage).map((r) => r.message.recipientId))];
  const directRecipientIds = [...new Set(rows.filter((r) => !r.message.isChannelMessage).map((r) => r.message.recipientId))];
  // Edit history exists only for messages edited or moved, and may be hidden by the organization.
  const editedIds = rows.filter((r) => r.message.lastEditTime || r.message.lastMovedTime).map((r) => r.message.id);
  const [streams, directRecipients, reactions, submessages, edits, clients] = await Promise.all([
    channelRecipientIds.length ? db.stream.findMany({ where: { recipientId: { in: channelRecipientIds } }, select: { id: true, name: true, recipientId: true } }) : [],
    directRecipientIds.length ? db.recipient.findMany({ where: { id: { in: directRecipientIds } }, select: { id: true, type: true, typeId: true } }) : [],
    options.justSent ? [] : db.reaction.findMany({ where: { messageId: { in: messageIds } }, orderBy: { id: "asc" } }),
    options.justSent ? [] : db.submessage.findMany({ where: { messageId: { in: messageIds } }, orderBy: { id: "asc" } }),
    realm.messageEditHistoryVisibilityPolicy === 3 || editedIds.length === 0
      ? []
      : db.messageEdit.findMany({ where: { messageId: { in: editedIds } }, orderBy: { id: "desc" } }),
    clientNames(db, rows.map((r) => r.message.sendingClientId)),
  ]);
  const streamByRecipient = new Map(streams.map((s) => [s.recipientId!, s]));
  const recipients = [
    ...directRecipients,
    ...streams.map((s) => ({ id: s.recipientId!, type: RecipientType.STREAM as number, typeId: s.id })),
  ];
  // Members of direct-message groups are the group recipient's subscriptions (as in Zulip).
  const groupRecipientIds = recipients.filter((r) => r.type === RecipientType.DIRECT_MESSAGE_GROUP).map((r) => r.id);
  const groupMembers = new Map<number, number[]>();
  if (groupRecipientIds.length) {
    const subs = await db.subscription.findMany({ where: { recipientId: { in: groupRecipientIds } }, select: { recipientId: true, userProfileId: true } });
    for (const s of subs) groupMembers.set(s.recipientId, [...(groupMembers.get(s.recipientId) ?? []), s.userProfileId]);
  }
  const recipientById = new Map(recipients.map((r) => [r.id, r]));
  const participantsOf = (m: Message): number[] => {
    const r = recipientById.get(m.recipientId)!;
    if (r.type === RecipientType.PERSONAL) return [...new Set([r.typeId, m.senderId])];
    return groupMembers.get(r.id) ?? [m.senderId];
  };
  const userIds = new Set<number>();
  for (const { message } of rows) {
    userIds.add(message.senderId);
    if (recipientById.get(message.recipientId)!.type !== RecipientType.STREAM) participantsOf(message).forEach((id) => userIds.add(id));
  }
  const users = new Map(
    (
      await db.userProfile.findMany({
        where: { id: { in: [...userIds] } },
        select: { id: true, email: true, deliveryEmail: true, fullName: true, isMirrorDummy: true, avatarVersion: true, role: true, isBot: true, emailAddressVisibility: true },
      })
    ).map((u) => [u.id, u]),
  );
  const reactionsOf = groupByMessage(reactions);
  const submessagesOf = groupByMessage(submessages);
  const editsOf = groupByMessage(edits);

  return rows.map(({ message: m, flags }) => {
    const recipient = recipientById.get(m.recipientId)!;
    const sender = users.get(m.senderId)!;
    const isStream = recipient.type === RecipientType.STREAM;
    const participantIds = isStream ? [] : participantsOf(m);
    // message_edit_history_visibility_policy 2 ("moves only") hides content edits.
    const history = (editsOf.get(m.id) ?? []).filter((e) => realm.messageEditHistoryVisibilityPolicy !== 2 || e.prevStreamId !== null || e.prevTopic !== null);
    const dict: ApiMessage = {
      id: m.id,
      type: isStream ? "stream" : "private",
      subject: isStream ? topicForClient(m.subject, realm, options.allowEmptyTopicName) : "",
      topic_links: [],
      content: options.applyMarkdown ? (m.renderedContent ?? "") : m.content,
      content_type: options.applyMarkdown ? "text/html" : "text/x-markdown",
      display_recipient: isStream
        ? streamByRecipient.get(recipient.id)!.name
        : [...participantIds].sort((a, b) => a - b).map((id) => {
            const u = users.get(id)!;
            return { id: u.id, email: u.email, full_name: u.fullName, is_mirror_dummy: u.isMirrorDummy };
          }),
      recipient_id: m.recipientId,
      sender_id: m.senderId,
      sender_email: sender.email,
      sender_full_name: sender.fullName,
      sender_realm_str: realm.stringId,
      avatar_url:
        options.clientGravatar && options.viewer && canSeeDeliveryEmail(options.viewer, sender) ? null : gravatarUrl(sender.deliveryEmail, sender.avatarVersion),
      client: clients.get(m.sendingClientId) ?? "Internal",
      is_me_message: /^\/me( |$)/.test(m.content),
      timestamp: unix(m.dateSent),
      reactions: (reactionsOf.get(m.id) ?? []).map((r) => ({ emoji_name: r.emojiName, emoji_code: r.emojiCode, reaction_type: r.reactionType as "unicode_emoji", user_id: r.userProfileId })),
      submessages: (submessagesOf.get(m.id) ?? []).map((s) => ({ msg_type: s.msgType, content: s.content, message_id: s.messageId, sender_id: s.senderId, id: s.id })),
      flags: flags === null ? ["read", "historical"] : flagsToList(flags),
    };
    if (isStream) dict.stream_id = recipient.typeId;
    if (m.lastEditTime) dict.last_edit_timestamp = unix(m.lastEditTime);
    if (m.lastMovedTime) dict.last_moved_timestamp = unix(m.lastMovedTime);
    if (history.length) {
      dict.edit_history = history.map((e) => {
        const entry: NonNullable<ApiMessage["edit_history"]>[number] = { user_id: e.userId, timestamp: unix(e.editTime) };
        if (e.prevContent !== null) entry.prev_content = e.prevContent;
        if (e.prevRenderedContent !== null) entry.prev_rendered_content = e.prevRenderedContent;
        if (e.prevStreamId !== null) entry.prev_stream = e.prevStreamId;
        if (e.streamId !== null) entry.stream = e.streamId;
        if (e.prevTopic !== null) entry.prev_topic = topicForClient(e.prevTopic, realm, options.allowEmptyTopicName);
        if (e.topic !== null) entry.topic = topicForClient(e.topic, realm, options.allowEmptyTopicName);
        return entry;
      });
    }
    return dict;
  });
}
