/**
 * Sending a message (zerver/actions/message_send.py): recipients are resolved and checked,
 * the content rendered, and the message, its per-user rows and (for a new direct-message
 * group) the group itself are written in one transaction; `message` events go out after commit.
 */
import type { Realm, Stream, Tx, UserProfile } from "../db.ts";
import type { RequestContext } from "../context.ts";
import { JsonableError, StreamWithIdDoesNotExistError } from "../errors.ts";
import { renderMarkdown, extractMentionCandidates, type MarkdownContext } from "../lib/markdown/index.ts";
import { clientIdFor } from "../lib/clients.ts";
import { buildMessageDicts } from "../lib/message-dicts.ts";
import { flagsOf, flagsToList, type FlagName } from "../lib/messages.ts";
import { directMessageGroupHash, RecipientType } from "../lib/recipients.ts";
import { emptyTopicDisplayName, normalizeContent, normalizeTopic } from "../lib/topics.ts";
import { isUserInGroup } from "../lib/user-groups.ts";
import { isGuest } from "../lib/users.ts";
import { inTransaction } from "./transaction.ts";
import type { EventAdapter } from "../events.ts";
import { iexact } from "../lib/text.ts";
import { realmUrl } from "../lib/realms.ts";

/** Zulip asks for can_mention_many_users_group only when a wildcard would notify more than this. */
const WILDCARD_MENTION_THRESHOLD = 15;

export type MessageTarget =
  | { kind: "channel"; streamId?: number; streamName?: string; topic: string | undefined }
  | { kind: "direct"; userIds?: number[]; emails?: string[] };

export interface SendMessageInput {
  target: MessageTarget;
  content: string;
  clientName: string;
  readBySender?: boolean;
}

async function resolveChannel(ctx: RequestContext, target: Extract<MessageTarget, { kind: "channel" }>): Promise<Stream> {
  const where = target.streamId !== undefined ? { id: target.streamId } : { name: iexact(target.streamName!) };
  const stream = await ctx.db.stream.findFirst({ where: { realmId: ctx.realm.id, ...where } });
  if (!stream) {
    if (target.streamId !== undefined) throw new StreamWithIdDoesNotExistError(target.streamId);
    throw new JsonableError(`Channel '${target.streamName}' does not exist`, { code: "STREAM_DOES_NOT_EXIST", data: { stream: target.streamName } });
  }
  // Guests and private channels need a subscription; archived channels take no messages.
  const needsSubscription = (stream.inviteOnly || isGuest(ctx.user)) && !ctx.user.isBot;
  const subscribed =
    needsSubscription &&
    (await ctx.db.subscription.findFirst({ where: { userProfileId: ctx.user.id, recipientId: stream.recipientId!, active: true }, select: { id: true } }));
  if (stream.isArchived || (needsSubscription && !subscribed)) throw new JsonableError(`Not authorized to send to channel '${stream.name}'`);
  if (!(await isUserInGroup(ctx.db, ctx.user.id, stream.canSendMessageGroupId)))
    throw new JsonableError("You do not have permission to post in this channel.");
  return stream;
}

function checkTopicPolicy(realm: Realm, stream: Stream, topic: string) {
  const policy = stream.topicsPolicy === "inherit" ? realm.topicsPolicy : stream.topicsPolicy;
  const name = emptyTopicDisplayName(realm);
  if (topic === "" && policy === "disable_empty_topic") throw new JsonableError(`Sending messages to the ${name} is not allowed in this channel.`);
  if (topic !== "" && policy === "empty_topic_only") throw new JsonableError(`Only the ${name} topic is allowed in this channel.`);
}

async function resolveDirectRecipients(ctx: RequestContext, target: Extract<MessageTarget, { kind: "direct" }>): Promise<UserProfile[]> {
  const ids = target.userIds ?? [];
  const emails = target.emails ?? [];
  if (ids.length === 0 && emails.length === 0) throw new JsonableError("Message must have recipients");
  const users = await ctx.db.userProfile.findMany({
    where: { realmId: ctx.realm.id, OR: [{ id: { in: ids } }, ...emails.map((e) => ({ email: iexact(e) }))] },
  });
  for (const id of ids) if (!users.some((u) => u.id === id)) throw new JsonableError(`Invalid user ID ${id}`);
  for (const e of emails) if (!users.some((u) => u.email.toLowerCase() === e.toLowerCase())) throw new JsonableError(`Invalid email '${e}'`);
  for (const u of users) if (!u.isActive && u.id !== ctx.user.id) throw new JsonableError(`'${u.email}' is no longer using Zulip.`);
  return users;
}

async function markdownContext(ctx: RequestContext, content: string): Promise<Partial<MarkdownContext>> {
  const wanted = extractMentionCandidates(content);
  const [users, groups, channels] = await Promise.all([
    wanted.userNames.length || wanted.userIds.length
      ? ctx.db.userProfile.findMany({
          where: {
            realmId: ctx.realm.id,
            isActive: true,
            OR: [{ id: { in: wanted.userIds } }, ...wanted.userNames.map((n) => ({ fullName: iexact(n) }))],
          },
          select: { id: true, fullName: true },
        })
      : [],
    wanted.groupNames.length
      ? ctx.db.namedUserGroup.findMany({
          where: { realmId: ctx.realm.id, deactivated: false, OR: wanted.groupNames.map((n) => ({ name: iexact(n) })) },
          select: { id: true, name: true },
        })
      : [],
    wanted.channelNames.length
      ? ctx.db.stream.findMany({
          where: { realmId: ctx.realm.id, OR: wanted.channelNames.map((n) => ({ name: iexact(n) })) },
          select: { id: true, name: true },
        })
      : [],
  ]);
  const usersByName = new Map<string, { id: number; fullName: string }[]>();
  for (const u of users) usersByName.set(u.fullName.toLowerCase(), [...(usersByName.get(u.fullName.toLowerCase()) ?? []), u]);
  return {
    // Links into the organization itself are made relative, as Zulip renders them.
    realmUrl: await realmUrl(ctx.db, ctx.realm, ctx.config),
    usersByName,
    usersById: new Map(users.map((u) => [u.id, u])),
    groupsByName: new Map(groups.map((g) => [g.name.toLowerCase(), g])),
    channelsByName: new Map(channels.map((c) => [c.name.toLowerCase(), c])),
  };
}

/** The recipient of a direct conversation: the other user's personal recipient, or a group's. */
async function directRecipient(tx: Tx, realmId: number, sender: UserProfile, others: UserProfile[]) {
  const members = [...new Map([sender, ...others].map((u) => [u.id, u])).values()];
  if (members.length <= 2) {
    const other = members.find((u) => u.id !== sender.id) ?? sender;
    return { recipientId: other.recipientId!, memberIds: members.map((u) => u.id) };
  }
  const ids = members.map((u) => u.id).sort((a, b) => a - b);
  const hash = directMessageGroupHash(ids);
  const existing = await tx.directMessageGroup.findUnique({ where: { huddleHash: hash }, select: { recipientId: true } });
  if (existing) return { recipientId: existing.recipientId!, memberIds: ids };
  // The first messages to a new group may race to create it: ON CONFLICT lets one transaction
  // create it (this statement waits for the other to commit), and the others read its row.
  const created = await tx.$queryRaw<{ id: number }[]>`
    INSERT INTO direct_message_group (realm_id, huddle_hash, group_size) VALUES (${realmId}, ${hash}, ${ids.length})
    ON CONFLICT (huddle_hash) DO NOTHING RETURNING id`;
  if (created.length === 0) {
    const group = await tx.directMessageGroup.findUniqueOrThrow({ where: { huddleHash: hash }, select: { recipientId: true } });
    return { recipientId: group.recipientId!, memberIds: ids };
  }
  const groupId = created[0]!.id;
  const recipient = await tx.recipient.create({ data: { realmId, type: RecipientType.DIRECT_MESSAGE_GROUP, typeId: groupId }, select: { id: true } });
  await tx.directMessageGroup.update({ where: { id: groupId }, data: { recipientId: recipient.id }, select: { id: true } });
  await tx.subscription.createMany({ data: ids.map((userProfileId) => ({ realmId, userProfileId, recipientId: recipient.id })) });
  return { recipientId: recipient.id, memberIds: ids };
}

export async function checkSendMessage(ctx: RequestContext, input: SendMessageInput): Promise<{ id: number }> {
  const content = normalizeContent(input.content);
  let stream: Stream | null = null;
  let topic = "";
  let directUsers: UserProfile[] = [];
  if (input.target.kind === "channel") {
    stream = await resolveChannel(ctx, input.target);
    if (input.target.topic === undefined) throw new JsonableError("Missing topic");
    topic = normalizeTopic(input.target.topic, ctx.realm);
    checkTopicPolicy(ctx.realm, stream, topic);
  } else directUsers = await resolveDirectRecipients(ctx, input.target);

  const rendered = renderMarkdown(content, await markdownContext(ctx, content));
  const recipientUserIds = stream
    ? (await ctx.db.subscription.findMany({ where: { recipientId: stream.recipientId!, active: true, isUserActive: true }, select: { userProfileId: true } })).map((s) => s.userProfileId)
    : [];
  if (stream && rendered.wildcardMention && recipientUserIds.length > WILDCARD_MENTION_THRESHOLD) {
    if (!(await isUserInGroup(ctx.db, ctx.user.id, ctx.realm.canMentionManyUsersGroupId!))) {
      if (rendered.wildcardMention === "channel")
        throw new JsonableError("You do not have permission to use channel wildcard mentions in this channel.", { code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" });
      throw new JsonableError("You do not have permission to use topic wildcard mentions in this topic.", { code: "TOPIC_WILDCARD_MENTION_NOT_ALLOWED" });
    }
  }

  const flagsFor = (userId: number): bigint => {
    const names: FlagName[] = [];
    if (userId === ctx.user.id && input.readBySender !== false) names.push("read");
    if (rendered.mentionedUserIds.has(userId)) names.push("mentioned");
    if (rendered.wildcardMention === "channel") names.push("stream_wildcard_mentioned");
    if (rendered.wildcardMention === "topic") names.push("topic_wildcard_mentioned");
    if (!stream) names.push("is_private");
    return flagsOf(...names);
  };

  const sendingClientId = await clientIdFor(ctx.db, input.clientName);
  const { message, userIds } = await inTransaction(ctx, ctx.realm.id, async (tx) => {
    let recipientId: number;
    let userIds: number[];
    if (stream) {
      recipientId = stream.recipientId!;
      userIds = [...new Set([...recipientUserIds, ctx.user.id])];
    } else {
      ({ recipientId, memberIds: userIds } = await directRecipient(tx, ctx.realm.id, ctx.user, directUsers));
    }
    const message = await tx.message.create({
      data: {
        realmId: ctx.realm.id,
        senderId: ctx.user.id,
        recipientId,
        subject: topic,
        content,
        renderedContent: rendered.html,
        renderedContentVersion: 1,
        dateSent: ctx.now(),
        sendingClientId,
        type: 1,
        hasAttachment: rendered.hasAttachment,
        hasImage: rendered.hasImage,
        hasLink: rendered.hasLink,
        isChannelMessage: stream !== null,
      },
    });
    await tx.userMessage.createMany({ data: userIds.map((userProfileId) => ({ userProfileId, messageId: message.id, flags: flagsFor(userProfileId) })) });
    if (stream && stream.firstMessageId === null) await tx.stream.update({ where: { id: stream.id }, data: { firstMessageId: message.id } });
    return { message, userIds };
  });

  // Committed: build the event payload (with the pooled client, not the finished transaction)
  // and publish it. Each queue gets the message as its register options asked: raw Markdown
  // for apply_markdown=false, the empty topic's display name for clients without empty_topic_name.
  const [dict] = await buildMessageDicts(ctx.db, ctx.realm, [{ message, flags: 0n }], { applyMarkdown: true, allowEmptyTopicName: true, clientGravatar: false, justSent: true });
  const { flags: _unused, ...eventMessage } = dict!;
  const displayName = emptyTopicDisplayName(ctx.realm);
  const adapt: EventAdapter = (event, queue) => {
    const copy = { ...(event.message as typeof eventMessage) };
    if (!queue.applyMarkdown) Object.assign(copy, { content, content_type: "text/x-markdown" });
    if (copy.type === "stream" && copy.subject === "" && !queue.clientCapabilities.empty_topic_name) copy.subject = displayName;
    return { ...event, message: copy };
  };
  for (const userId of userIds) ctx.events.publish(ctx.realm.id, { type: "message", message: eventMessage, flags: flagsToList(flagsFor(userId)) }, [userId], adapt);
  return { id: message.id };
}
