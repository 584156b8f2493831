/**
 * Message objects as the API returns them (zerver/lib/message.py MessageDict), built for a
 * batch of messages with one query per related table, never one per message.
 */
import { unixSeconds } from "../time.ts";
import { Prisma, type Message, type Db, type Realm, type UserProfile } from "../../db/index.ts";
import type { ApiMessage } from "../schemas.ts";
import { clientNames } from "../clients.ts";
import { flagsToList } from "./flags.ts";
import { RecipientType } from "../recipients.ts";
import { topicForClient } from "./topics.ts";
import { compiledLinkifiers, topicLinksOf } from "../realm/linkifiers.ts";
import { avatarUrl, canSeeDeliveryEmail, dummyEmail, type AvatarRow } from "../users/users.ts";
import { INACCESSIBLE_USER_AVATAR, INACCESSIBLE_USER_NAME } from "../access/users.ts";

export interface MessageDictOptions {
  applyMarkdown: boolean;
  allowEmptyTopicName: boolean;
  clientGravatar: boolean;
  /** With client_gravatar, avatar_url is null for senders whose real email the viewer may see. */
  viewer?: Pick<UserProfile, "id" | "role">;
  /**
   * Senders the viewer may not access (lib/access/users.ts inaccessibleUserIds): their messages
   * show Zulip's "Unknown user" placeholder instead (MessageDict's inaccessible sender).
   */
  inaccessibleSenders?: { ids: Set<number>; fakeEmailDomain: string };
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

export interface Related {
  recipients: { id: number; type: number; typeId: number; name: string | null }[];
  groupMembers: { recipientId: number; userId: number }[];
  users: {
    id: number;
    email: string;
    deliveryEmail: string;
    fullName: string;
    isMirrorDummy: boolean;
    avatarVersion: number;
    avatarSource: string;
    avatarHash: string | null;
    realmId: number;
    role: number;
    isBot: boolean;
    emailAddressVisibility: number;
  }[];
  reactions: {
    messageId: number;
    emojiName: string;
    emojiCode: string;
    reactionType: string;
    userProfileId: number;
  }[];
  submessages: {
    id: number;
    messageId: number;
    senderId: number;
    msgType: string;
    content: string;
  }[];
  edits: {
    messageId: number;
    userId: number | null;
    editTime: number;
    prevContent: string | null;
    prevRenderedContent: string | null;
    prevStreamId: number | null;
    streamId: number | null;
    prevTopic: string | null;
    topic: string | null;
  }[];
}

/**
 * Everything the dicts need besides the messages themselves, as SQL over a CTE `msgs(id,
 * recipient_id, sender_id)` named by the caller: recipients (with channel names),
 * direct-message group members, every user shown, reactions, submessages and edit history. The
 * result columns are those of `Related`; one statement with the caller's own query.
 */
export function relatedSql(withEdits: boolean) {
  const ctes = Prisma.sql`
    rcp AS (SELECT r.id, r.type, r.type_id FROM recipient r WHERE r.id IN (SELECT recipient_id FROM msgs)),
    grp AS (SELECT sub.recipient_id, sub.user_profile_id FROM subscription sub JOIN rcp ON rcp.id = sub.recipient_id AND rcp.type = ${RecipientType.DIRECT_MESSAGE_GROUP}),
    uids AS (SELECT sender_id AS id FROM msgs UNION SELECT type_id FROM rcp WHERE type = ${RecipientType.PERSONAL} UNION SELECT user_profile_id FROM grp)`;
  const columns = Prisma.sql`
      (SELECT COALESCE(json_agg(json_build_object('id', r.id, 'type', r.type, 'typeId', r.type_id, 'name', s.name)), '[]')
         FROM rcp r LEFT JOIN stream s ON r.type = ${RecipientType.STREAM} AND s.id = r.type_id) AS recipients,
      (SELECT COALESCE(json_agg(json_build_object('recipientId', recipient_id, 'userId', user_profile_id)), '[]') FROM grp) AS "groupMembers",
      (SELECT COALESCE(json_agg(json_build_object('id', u.id, 'email', u.email, 'deliveryEmail', u.delivery_email, 'fullName', u.full_name,
                'isMirrorDummy', u.is_mirror_dummy, 'avatarVersion', u.avatar_version,
                'avatarSource', u.avatar_source, 'avatarHash', u.avatar_hash, 'realmId', u.realm_id, 'role', u.role, 'isBot', u.is_bot,
                'emailAddressVisibility', u.email_address_visibility)), '[]')
         FROM user_profile u WHERE u.id IN (SELECT id FROM uids)) AS users,
      (SELECT COALESCE(json_agg(json_build_object('messageId', x.message_id, 'emojiName', x.emoji_name, 'emojiCode', x.emoji_code,
                'reactionType', x.reaction_type, 'userProfileId', x.user_profile_id) ORDER BY x.id), '[]')
         FROM reaction x WHERE x.message_id IN (SELECT id FROM msgs)) AS reactions,
      (SELECT COALESCE(json_agg(json_build_object('id', x.id, 'messageId', x.message_id, 'senderId', x.sender_id, 'msgType', x.msg_type,
                'content', x.content) ORDER BY x.id), '[]')
         FROM submessage x WHERE x.message_id IN (SELECT id FROM msgs)) AS submessages,
      (SELECT COALESCE(json_agg(json_build_object('messageId', e.message_id, 'userId', e.user_id, 'editTime', floor(extract(epoch FROM e.edit_time)),
                'prevContent', e.prev_content, 'prevRenderedContent', e.prev_rendered_content, 'prevStreamId', e.prev_stream_id,
                'streamId', e.stream_id, 'prevTopic', e.prev_topic, 'topic', e.topic) ORDER BY e.id DESC), '[]')
         FROM message_edit e WHERE ${withEdits} AND e.message_id IN (SELECT id FROM msgs)) AS edits`;
  return { ctes, columns };
}

/**
 * Edit history may be hidden by the organization. It is read for every message: resolving a topic
 * leaves history without setting last_edit_time or last_moved_time.
 */
export const showsEditHistory = (realm: Pick<Realm, "messageEditHistoryVisibilityPolicy">) =>
  realm.messageEditHistoryVisibilityPolicy !== 3;

async function loadRelated(db: Db, rows: MessageRow[], realm: Realm): Promise<Related> {
  const msgs = rows.map((r) => r.message);
  const { ctes, columns } = relatedSql(showsEditHistory(realm));
  const [row] = await db.$queryRaw<Related[]>`
    WITH msgs AS (SELECT * FROM unnest(${msgs.map((m) => m.id)}::int[], ${msgs.map((m) => m.recipientId)}::int[], ${msgs.map((m) => m.senderId)}::int[]) AS t(id, recipient_id, sender_id)),
    ${ctes}
    SELECT ${columns}`;
  return row!;
}

/**
 * The dicts of the given messages. `preloaded`: the related rows, when the caller read them in its
 * own statement (relatedSql); otherwise one statement reads them.
 */
export async function buildMessageDicts(
  db: Db,
  realm: Realm,
  rows: MessageRow[],
  options: MessageDictOptions,
  preloaded?: Related,
): Promise<ApiMessage[]> {
  if (rows.length === 0) return [];
  const [related, clients, linkifiers] = await Promise.all([
    preloaded ?? loadRelated(db, rows, realm),
    clientNames(
      db,
      rows.map((r) => r.message.sendingClientId),
    ),
    // Cached per process: no statement once read.
    compiledLinkifiers(db, realm.id),
  ]);
  const { reactions, submessages, edits } = related;
  const recipients = related.recipients;
  const streamByRecipient = new Map(
    recipients
      .filter((r) => r.type === RecipientType.STREAM)
      .map((r) => [r.id, { id: r.typeId, name: r.name! }]),
  );
  const groupMembers = new Map<number, number[]>();
  for (const s of related.groupMembers)
    groupMembers.set(s.recipientId, [...(groupMembers.get(s.recipientId) ?? []), s.userId]);
  const recipientById = new Map(recipients.map((r) => [r.id, r]));
  const participantsOf = (m: Message): number[] => {
    const r = recipientById.get(m.recipientId)!;
    if (r.type === RecipientType.PERSONAL) return [...new Set([r.typeId, m.senderId])];
    return groupMembers.get(r.id) ?? [m.senderId];
  };
  const users = new Map(related.users.map((u) => [u.id, u]));
  const reactionsOf = groupByMessage(reactions);
  const submessagesOf = groupByMessage(submessages);
  const editsOf = groupByMessage(edits);

  return rows.map(({ message: m, flags }) => {
    const recipient = recipientById.get(m.recipientId)!;
    const sender = users.get(m.senderId)!;
    const hidden = options.inaccessibleSenders?.ids.has(m.senderId)
      ? options.inaccessibleSenders
      : undefined;
    const isStream = recipient.type === RecipientType.STREAM;
    const participantIds = isStream ? [] : participantsOf(m);
    // message_edit_history_visibility_policy 2 ("moves only") hides content edits.
    const history = (editsOf.get(m.id) ?? []).filter(
      (e) =>
        realm.messageEditHistoryVisibilityPolicy !== 2 ||
        e.prevStreamId !== null ||
        e.prevTopic !== null,
    );
    const dict: ApiMessage = {
      ...messageDict({
        id: m.id,
        stream: isStream ? streamByRecipient.get(recipient.id)! : null,
        participants: participantIds.map((id) => users.get(id)!),
        subject: topicForClient(m.subject, realm, options.allowEmptyTopicName),
        topicLinks: isStream ? topicLinksOf(linkifiers, m.subject) : [],
        content: options.applyMarkdown ? (m.renderedContent ?? "") : m.content,
        contentType: options.applyMarkdown ? "text/html" : "text/x-markdown",
        source: m.content,
        recipientId: m.recipientId,
        sender: hidden
          ? {
              id: sender.id,
              email: dummyEmail(sender.id, hidden.fakeEmailDomain),
              fullName: INACCESSIBLE_USER_NAME,
            }
          : sender,
        realmStr: realm.stringId,
        avatarUrl: hidden
          ? INACCESSIBLE_USER_AVATAR
          : options.clientGravatar &&
              sender.avatarSource !== "U" &&
              options.viewer &&
              canSeeDeliveryEmail(options.viewer, sender)
            ? null
            : avatarUrl(sender),
        client: clients.get(m.sendingClientId) ?? "Internal",
        dateSent: m.dateSent,
      }),
      reactions: (reactionsOf.get(m.id) ?? []).map((r) => ({
        emoji_name: r.emojiName,
        emoji_code: r.emojiCode,
        reaction_type: r.reactionType as "unicode_emoji",
        user_id: r.userProfileId,
      })),
      submessages: (submessagesOf.get(m.id) ?? []).map((s) => ({
        msg_type: s.msgType,
        content: s.content,
        message_id: s.messageId,
        sender_id: s.senderId,
        id: s.id,
      })),
      flags: flags === null ? ["read", "historical"] : flagsToList(flags),
    };
    if (m.lastEditTime) dict.last_edit_timestamp = unixSeconds(m.lastEditTime);
    if (m.lastMovedTime) dict.last_moved_timestamp = unixSeconds(m.lastMovedTime);
    if (history.length) {
      dict.edit_history = history.map((e) => {
        const entry: NonNullable<ApiMessage["edit_history"]>[number] = {
          user_id: e.userId,
          timestamp: e.editTime,
        };
        if (e.prevContent !== null) entry.prev_content = e.prevContent;
        if (e.prevRenderedContent !== null) entry.prev_rendered_content = e.prevRenderedContent;
        if (e.prevStreamId !== null) entry.prev_stream = e.prevStreamId;
        if (e.streamId !== null) entry.stream = e.streamId;
        if (e.prevTopic !== null)
          entry.prev_topic = topicForClient(e.prevTopic, realm, options.allowEmptyTopicName);
        if (e.topic !== null)
          entry.topic = topicForClient(e.topic, realm, options.allowEmptyTopicName);
        return entry;
      });
    }
    return dict;
  });
}

/** A message's fields as a dict shows them, however they were loaded. */
interface DictParts {
  id: number;
  /** The channel, or null for a direct message (then `participants`). */
  stream: { id: number; name: string } | null;
  participants: Pick<UserProfile, "id" | "email" | "fullName" | "isMirrorDummy">[];
  subject: string;
  topicLinks: { text: string; url: string }[];
  content: string;
  contentType: "text/html" | "text/x-markdown";
  /** The Markdown source (`/me` messages are told by it). */
  source: string;
  recipientId: number;
  sender: Pick<UserProfile, "id" | "email" | "fullName">;
  realmStr: string;
  avatarUrl: string | null;
  client: string;
  dateSent: Date;
}

/** The fields every message dict has; reactions and submessages empty, no flags. */
function messageDict(p: DictParts): Omit<ApiMessage, "flags"> {
  const dict: Omit<ApiMessage, "flags"> = {
    id: p.id,
    type: p.stream ? "stream" : "private",
    subject: p.stream ? p.subject : "",
    topic_links: p.stream ? p.topicLinks : [],
    content: p.content,
    content_type: p.contentType,
    display_recipient: p.stream
      ? p.stream.name
      : [...new Map(p.participants.map((u) => [u.id, u])).values()]
          .sort((a, b) => a.id - b.id)
          .map((u) => ({
            id: u.id,
            email: u.email,
            full_name: u.fullName,
            is_mirror_dummy: u.isMirrorDummy,
          })),
    recipient_id: p.recipientId,
    sender_id: p.sender.id,
    sender_email: p.sender.email,
    sender_full_name: p.sender.fullName,
    sender_realm_str: p.realmStr,
    avatar_url: p.avatarUrl,
    client: p.client,
    is_me_message: /^\/me( |$)/.test(p.source),
    timestamp: unixSeconds(p.dateSent),
    reactions: [],
    submessages: [],
  };
  if (p.stream) dict.stream_id = p.stream.id;
  return dict;
}

/** What sentMessageDict needs to know of a message it did not read back. */
export interface SentMessage {
  id: number;
  realm: Pick<Realm, "stringId">;
  sender: Pick<UserProfile, "id" | "email" | "fullName"> & AvatarRow;
  request: {
    topic: string;
    topicLinks: { text: string; url: string }[];
    rendered: { html: string };
    content: string;
    clientName: string;
    sentAt: Date;
  };
  stream: { id: number; name: string } | null;
  /** Direct messages: everyone in the conversation, the sender included. */
  participants: Pick<UserProfile, "id" | "email" | "fullName" | "isMirrorDummy">[];
  recipientId: number;
}

/**
 * The dict of a message just sent, from the rows the send already holds (no query): the form a
 * `message` event carries, with rendered content and the topic as stored.
 */
export function sentMessageDict(m: SentMessage): Omit<ApiMessage, "flags"> {
  return messageDict({
    id: m.id,
    stream: m.stream,
    participants: m.participants,
    subject: m.request.topic,
    topicLinks: m.request.topicLinks,
    content: m.request.rendered.html,
    contentType: "text/html",
    source: m.request.content,
    recipientId: m.recipientId,
    sender: m.sender,
    realmStr: m.realm.stringId,
    avatarUrl: avatarUrl(m.sender),
    client: m.request.clientName,
    dateSent: m.request.sentAt,
  });
}
