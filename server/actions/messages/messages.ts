/**
 * Sending a message (zerver/actions/message_send.py), in two steps as Zulip splits it:
 * `checkMessage` resolves and checks the recipients, permissions and content and renders it,
 * writing nothing; `doSendMessage({ tx, events }, request)` writes the message, its per-user rows and
 * (for a new direct-message group) the group inside the caller's transaction and logs the
 * `message` events there, so scheduled delivery and edits send within transactions of their own.
 * `checkSendMessage` is both, in one transaction. doSendMessage runs raw statements only, so that
 * a send opens the lighter transaction of `inRawTransaction` (the hottest write there is).
 */
import { Prisma, type Db, type RawTx, type Realm, type UserProfile } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import { JsonableError, StreamWithIdDoesNotExistError } from "../../errors.ts";
import {
  renderMarkdown,
  extractMentionCandidates,
  uploadPathIds,
  type MarkdownContext,
} from "../../lib/markdown/index.ts";
import type { RenderResult } from "../../lib/markdown/types.ts";
import { clientIdFor, defaultReadBySender, storedClientName } from "../../lib/clients.ts";
import { sentMessageDict } from "../../lib/messages/message-dicts.ts";
import { compiledLinkifiers, topicLinksOf } from "../../lib/realm/linkifiers.ts";
import { isStorableId } from "../../lib/ids.ts";
import { flagsOf, flagsToList, type FlagName } from "../../lib/messages/messages.ts";
import { FLAG_BITS } from "../../lib/messages/flags.ts";
import { isStorableText } from "../../lib/text.ts";
import { uploadPreviews } from "../../lib/uploads/thumbnails.ts";
import { directMessageGroupHash, RecipientType } from "../../lib/recipients.ts";
import {
  emptyTopicDisplayName,
  normalizeContent,
  normalizeTopic,
} from "../../lib/messages/topics.ts";
import {
  can,
  canInChannel,
  groupMembers,
  isUserInGroup,
  userGroupIds,
} from "../../lib/groups/permissions.ts";
import { accessSql, allowsReadingGroups, channelAllows } from "../../lib/access/channels.ts";
import { findChannel, type ChannelRow } from "../../lib/channels/channels.ts";
import { afterCommit, inRawTransaction } from "../transaction.ts";
import { missedMessageEmailScheduled } from "../../workers/missed-message-emails.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { realmHost, realmUrl } from "../../lib/realm/realm.ts";
import { claimAttachments } from "../../lib/uploads/attachments.ts";
import { widgetFor } from "../../lib/messages/submessages.ts";
import { doAddWidgetSubmessage } from "./submessages.ts";
import { autoSetTopicVisibility, type AutomaticChange } from "../channels/user-topics.ts";
import {
  dependsOnInitiation,
  mayChangeVisibility,
  policyForSendMessage,
} from "../../lib/messages/topic-visibility.ts";
import { TopicVisibility } from "../../lib/messages/topics.ts";
import { alertedUserIds } from "../../lib/users/alert-words.ts";
import {
  emailRowsSql,
  notificationDecisionSql,
  pushRowsSql,
} from "../../lib/notifications/missed-messages.ts";
import { mentionedGroupByUser } from "../../lib/notifications/group-mentions.ts";
import { usesNotificationBouncer } from "../../lib/push/push-bouncer.ts";
import { pushNotificationsQueued } from "../../workers/push-notifications.ts";

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
  /** Local echo: the sender's event queue and the client's id for its local copy (queue_id, local_id). */
  localEcho?: LocalEcho;
  /** Checked to be stored and sent later (a scheduled message): recipients' alert words are matched at delivery. */
  sendLater?: boolean;
}

export interface LocalEcho {
  queueId: string;
  localId: string;
}

/**
 * What checking a message reads with: a request's context, or (for messages the server sends
 * itself inside a transaction: notices, reports, scheduled delivery) the same over that
 * transaction. `internal` skips the sender's channel-access checks, as Zulip's system bots skip them.
 */
export interface MessageChecker extends Pick<RequestContext, "realm" | "user" | "config" | "now"> {
  db: Db;
  internal?: boolean;
  /**
   * The root client, when `db` is a transaction: its per-process caches of what no sending
   * transaction writes (linkifiers, alert words) still serve, so a notice sent inside a
   * transaction costs no more statements than a send outside one.
   */
  cacheDb?: Db;
}

async function resolveChannel(
  ctx: MessageChecker,
  target: Extract<MessageTarget, { kind: "channel" }>,
): Promise<ChannelRow> {
  const stream = await findChannel(
    ctx.db,
    ctx.realm.id,
    target.streamId !== undefined ? { id: target.streamId } : { name: target.streamName! },
  );
  if (!stream) {
    if (target.streamId !== undefined) throw new StreamWithIdDoesNotExistError(target.streamId);
    throw new JsonableError(`Channel '${target.streamName}' does not exist`, {
      code: "STREAM_DOES_NOT_EXIST",
      data: { stream: target.streamName },
    });
  }
  if (ctx.internal) return stream;
  await checkMaySendToChannel(ctx, stream);
  return stream;
}

/** access_stream_for_send_message: whether the sender may post in the channel (typing notifications check it too). */
export async function checkMaySendToChannel(ctx: MessageChecker, stream: ChannelRow) {
  // Archived channels take no messages.
  if (stream.isArchived || !(await maySendTo(ctx, stream)))
    throw new JsonableError(`Not authorized to send to channel '${stream.name}'`);
  if (!(await canInChannel(ctx.db, ctx.user, stream, "can_send_message_group")))
    throw new JsonableError("You do not have permission to post in this channel.");
}

/** access_stream_for_send_message (lib/access/channels.ts CHANNEL_SEND); a bot also where its owner is subscribed. */
async function maySendTo(ctx: MessageChecker, stream: ChannelRow): Promise<boolean> {
  if (
    ctx.user.isBot &&
    ctx.user.botOwnerId !== null &&
    stream.subscriberIds.includes(ctx.user.botOwnerId)
  )
    return true;
  return allowsReadingGroups(
    "CHANNEL_SEND",
    ctx.user,
    stream,
    stream.subscriberIds.includes(ctx.user.id),
    () => userGroupIds(ctx.db, ctx.user),
  );
}

/**
 * The channel's topics_policy (or the organization's, for `inherit`) for a message in `topic`.
 * An edit that keeps its message in place is held to the empty_topic_only rule only
 * (`placed: false`), as Zulip's build_message_edit_request.
 */
export function checkTopicPolicy(realm: Realm, stream: ChannelRow, topic: string, placed = true) {
  const policy = stream.topicsPolicy === "inherit" ? realm.topicsPolicy : stream.topicsPolicy;
  const name = emptyTopicDisplayName(realm);
  if (topic === "" && placed && policy === "disable_empty_topic")
    throw new JsonableError(`Sending messages to the ${name} is not allowed in this channel.`);
  if (topic !== "" && policy === "empty_topic_only")
    throw new JsonableError(`Only the ${name} topic is allowed in this channel.`);
}

/**
 * check_for_can_create_topic_group_violation: a message starting a topic (sent, or moved there)
 * needs the channel's can_create_topic_group, or for a bot its owner's. Nothing is read when the
 * setting is role:everyone (found with the channel), and the topic is looked up only for users
 * who lack the permission.
 */
export async function checkCanCreateTopic(ctx: MessageChecker, stream: ChannelRow, topic: string) {
  if (
    ctx.internal ||
    stream.anyoneCreatesTopics ||
    (await canInChannel(ctx.db, ctx.user, stream, "can_create_topic_group"))
  )
    return;
  const existing = await ctx.db.$queryRaw<unknown[]>`
    SELECT 1 FROM message WHERE realm_id = ${ctx.realm.id} AND recipient_id = ${stream.recipientId} AND lower(subject) = lower(${topic}) AND is_channel_message LIMIT 1`;
  if (existing.length > 0) return;
  if (ctx.user.isBot && ctx.user.botOwnerId !== null) {
    const owner = await ctx.db.userProfile.findFirst({
      where: { id: ctx.user.botOwnerId, realmId: ctx.realm.id },
      select: { id: true, realmId: true, role: true },
    });
    if (owner && (await canInChannel(ctx.db, owner, stream, "can_create_topic_group"))) return;
  }
  throw new JsonableError("You do not have permission to create new topics in this channel.");
}

/** What a direct message needs of its recipients. */
export type RecipientUser = Pick<
  UserProfile,
  "id" | "email" | "fullName" | "isActive" | "recipientId" | "isMirrorDummy"
>;

export async function resolveDirectRecipients(
  ctx: MessageChecker,
  target: Extract<MessageTarget, { kind: "direct" }>,
): Promise<RecipientUser[]> {
  const ids = target.userIds ?? [];
  const emails = target.emails ?? [];
  if (ids.length === 0 && emails.length === 0)
    throw new JsonableError("Message must have recipients");
  const users = await usersByIdsOrEmails(ctx, ids, emails);
  for (const id of ids)
    if (!users.some((u) => u.id === id)) throw new JsonableError(`Invalid user ID ${id}`);
  for (const e of emails)
    if (!users.some((u) => u.email.toLowerCase() === e.toLowerCase()))
      throw new JsonableError(`Invalid email '${e}'`);
  for (const u of users)
    if (!u.isActive && u.id !== ctx.user.id)
      throw new JsonableError(`'${u.email}' is no longer using Zulip.`);
  return users;
}

/** Users by id or by API email (case-insensitively, through the (realm_id, lower(email)) index). */
async function usersByIdsOrEmails(
  ctx: MessageChecker,
  ids: number[],
  emails: string[],
): Promise<RecipientUser[]> {
  const lowered = emails.filter(isStorableText).map((e) => e.toLowerCase());
  ids = ids.filter(isStorableId); // the others name nobody (reported as invalid by the caller)
  return ctx.db.$queryRaw<RecipientUser[]>`
    SELECT id, email, full_name AS "fullName", is_active AS "isActive", recipient_id AS "recipientId", is_mirror_dummy AS "isMirrorDummy"
    FROM user_profile
    WHERE realm_id = ${ctx.realm.id} AND (id = ANY (${ids}::int[]) OR lower(email) = ANY (${lowered}::text[]))`;
}

/**
 * The channels a message may link (Zulip's get_stream_name_map): those whose content the author
 * may access, so that a link never names a private channel to someone who may not see it; the
 * server's own notices (no acting user in Zulip) link any channel.
 */
const linkableChannel = (ctx: MessageChecker) =>
  ctx.internal ? Prisma.raw("TRUE") : accessSql("CHANNEL_CONTENT", ctx.user, "s");

/**
 * What rendering needs to resolve the content's mentions and show its uploaded images: nothing
 * is read for content without any, and the images' previews are one statement for all.
 */
export async function markdownContext(
  ctx: MessageChecker,
  content: string,
): Promise<Partial<MarkdownContext>> {
  const wanted = extractMentionCandidates(content);
  const lower = (names: string[]) => names.map((n) => n.toLowerCase());
  const pathIds = uploadPathIds(content).filter(isStorableText);
  const [users, groups, channels, imagePreviews] = await Promise.all([
    wanted.userNames.length || wanted.userIds.length
      ? ctx.db.$queryRaw<{ id: number; fullName: string }[]>`
          SELECT id, full_name AS "fullName" FROM user_profile
          WHERE realm_id = ${ctx.realm.id} AND is_active AND (id = ANY (${wanted.userIds}::int[]) OR lower(full_name) = ANY (${lower(wanted.userNames)}::text[]))`
      : [],
    wanted.groupNames.length
      ? ctx.db.$queryRaw<{ id: number; name: string; canMentionGroupId: number }[]>`
          SELECT id, name, can_mention_group_id AS "canMentionGroupId" FROM named_user_group
          WHERE realm_id = ${ctx.realm.id} AND NOT deactivated AND lower(name) = ANY (${lower(wanted.groupNames)}::text[])`
      : [],
    wanted.channelNames.length
      ? ctx.db.$queryRaw<{ id: number; name: string }[]>`
          SELECT s.id, s.name FROM stream s WHERE s.realm_id = ${ctx.realm.id} AND lower(s.name) = ANY (${lower(wanted.channelNames)}::text[])
            AND ${linkableChannel(ctx)}`
      : [],
    uploadPreviews(ctx.db, ctx.realm.id, pathIds),
  ]);
  const usersByName = new Map<string, { id: number; fullName: string }[]>();
  for (const u of users)
    usersByName.set(u.fullName.toLowerCase(), [
      ...(usersByName.get(u.fullName.toLowerCase()) ?? []),
      u,
    ]);
  return {
    // Links into the organization itself are made relative, as Zulip renders them.
    realmUrl: await realmUrl(ctx.db, ctx.realm, ctx.config),
    linkifiers: await compiledLinkifiers(ctx.db, ctx.realm.id, ctx.cacheDb),
    mediaPreviews: ctx.realm.inlineImagePreview,
    imagePreviews,
    usersByName,
    usersById: new Map(users.map((u) => [u.id, u])),
    groupsByName: new Map(groups.map((g) => [g.name.toLowerCase(), g])),
    channelsByName: new Map(channels.map((c) => [c.name.toLowerCase(), c])),
  };
}

/**
 * The recipient of a direct conversation: the other user's personal recipient (the sender's own
 * for a message to oneself), or a group's, created on first use.
 */
export async function directRecipient(
  tx: RawTx,
  realmId: number,
  sender: RecipientUser,
  others: RecipientUser[],
) {
  const members = [...new Map([sender, ...others].map((u) => [u.id, u])).values()];
  if (members.length <= 2) {
    const other = members.find((u) => u.id !== sender.id) ?? sender;
    return {
      recipientId: other.recipientId!,
      recipientType: RecipientType.PERSONAL,
      recipientTypeId: other.id,
      memberIds: members.map((u) => u.id),
    };
  }
  const ids = members.map((u) => u.id).sort((a, b) => a - b);
  const hash = directMessageGroupHash(ids);
  const group = (g: { id: number; recipientId: number | null }) => ({
    recipientId: g.recipientId!,
    recipientType: RecipientType.DIRECT_MESSAGE_GROUP,
    recipientTypeId: g.id,
    memberIds: ids,
  });
  const found = () => tx.$queryRaw<{ id: number; recipientId: number | null }[]>`
    SELECT id, recipient_id AS "recipientId" FROM direct_message_group WHERE huddle_hash = ${hash}`;
  const [existing] = await found();
  if (existing) return group(existing);
  // The first messages to a new group may race to create it: ON CONFLICT lets one transaction
  // create it (this statement waits for the other to commit), and the others read its row.
  const created = await tx.$queryRaw<{ id: number }[]>`
    INSERT INTO direct_message_group (realm_id, huddle_hash, group_size) VALUES (${realmId}, ${hash}, ${ids.length})
    ON CONFLICT (huddle_hash) DO NOTHING RETURNING id`;
  if (created.length === 0) return group((await found())[0]!);
  const groupId = created[0]!.id;
  // Its recipient, and every member subscribed to it, in one statement.
  const [recipient] = await tx.$queryRaw<[{ id: number }]>`
    WITH r AS (
      INSERT INTO recipient (realm_id, type, type_id) VALUES (${realmId}, ${RecipientType.DIRECT_MESSAGE_GROUP}, ${groupId}) RETURNING id),
    g AS (UPDATE direct_message_group SET recipient_id = (SELECT id FROM r) WHERE id = ${groupId}),
    s AS (INSERT INTO subscription (realm_id, user_profile_id, recipient_id) SELECT ${realmId}, u, r.id FROM r, unnest(${ids}::int[]) AS u)
    SELECT id FROM r`;
  return group({ id: groupId, recipientId: recipient.id });
}

/** A message checked and rendered, ready for doSendMessage (Zulip's SendMessageRequest). */
export interface SendMessageRequest {
  realm: Realm;
  sender: UserProfile;
  stream: ChannelRow | null;
  topic: string;
  /** Direct messages: the other recipients, as named. */
  directUsers: RecipientUser[];
  content: string;
  rendered: RenderResult;
  /** Users mentioned directly or through a group they belong to. */
  mentionedUserIds: Set<number>;
  /**
   * Members of a mentioned group not mentioned by name, and the group their notifications name
   * (lib/notifications/group-mentions.ts).
   */
  mentionedGroupByUser: ReadonlyMap<number, number>;
  /** Users whose alert words the content contains (rendering_result.user_ids_with_alert_words). */
  alertedUserIds: ReadonlySet<number>;
  /** The topic's links (linkifiers and bare URLs), for the message event. */
  topicLinks: { text: string; url: string }[];
  sendingClientId: number;
  clientName: string;
  readBySender: boolean;
  /** Others for whom the message starts read (the acting user of a notice: Zulip's mark_as_read_for_acting_user). */
  readByUserIds?: ReadonlySet<number>;
  realmHost: string;
  sentAt: Date;
  localEcho?: LocalEcho;
  /** Whether recipients may be pushed to: a bouncer is configured. */
  pushNotifications: boolean;
}

/** Checks everything and renders the content; writes nothing (but a new client's name row). */
export async function checkMessage(
  ctx: RequestContext,
  input: SendMessageInput,
): Promise<SendMessageRequest> {
  return checkMessageWith(ctx, input, await clientIdFor(ctx.db, input.clientName));
}

/** checkMessage over any database handle (a transaction too), the sending client's id known. */
export async function checkMessageWith(
  ctx: MessageChecker,
  input: SendMessageInput,
  sendingClientId: number,
): Promise<SendMessageRequest> {
  const content = normalizeContent(input.content);
  let stream: ChannelRow | null = null;
  let topic = "";
  let directUsers: RecipientUser[] = [];
  if (input.target.kind === "channel") {
    stream = await resolveChannel(ctx, input.target);
    if (input.target.topic === undefined) throw new JsonableError("Missing topic");
    topic = normalizeTopic(input.target.topic, ctx.realm);
    await checkCanCreateTopic(ctx, stream, topic);
    checkTopicPolicy(ctx.realm, stream, topic);
  } else directUsers = await resolveDirectRecipients(ctx, input.target);

  const markdown = await markdownContext(ctx, content);
  const rendered = renderMarkdown(content, markdown);
  if (stream && rendered.wildcardMention && !ctx.internal)
    await checkWildcardMention(ctx, rendered.wildcardMention, stream.subscriberIds.length);
  const mentionedUserIds = await checkMentions(ctx, markdown, rendered);

  return {
    alertedUserIds: input.sendLater
      ? new Set()
      : await alertedUserIds(ctx.db, ctx.realm.id, content, ctx.cacheDb),
    realm: ctx.realm,
    sender: ctx.user,
    stream,
    topic,
    directUsers,
    content,
    rendered,
    mentionedUserIds,
    mentionedGroupByUser: await mentionedGroupByUser(
      ctx.db,
      ctx.realm.id,
      rendered.mentionedGroupIds,
      rendered.mentionedUserIds,
    ),
    topicLinks: stream ? topicLinksOf(markdown.linkifiers ?? [], topic) : [],
    sendingClientId,
    clientName: storedClientName(input.clientName),
    readBySender: input.readBySender ?? defaultReadBySender(input.clientName),
    realmHost: await realmHost(ctx.db, ctx.realm, ctx.config),
    sentAt: ctx.now(),
    localEcho: input.localEcho,
    pushNotifications: usesNotificationBouncer(ctx.config),
  };
}

/**
 * The users a rendering mentions. A group may be mentioned (not silently) only by its
 * can_mention_group (Zulip's check_user_group_mention_allowed); the mention then mentions its
 * members, as Zulip adds them to mentions_user_ids.
 */
export async function checkMentions(
  ctx: MessageChecker,
  markdown: Partial<MarkdownContext>,
  rendered: RenderResult,
): Promise<Set<number>> {
  for (const group of markdown.groupsByName?.values() ?? []) {
    const { id, name, canMentionGroupId } = group as {
      id: number;
      name: string;
      canMentionGroupId: number;
    };
    if (
      rendered.mentionedGroupIds.has(id) &&
      !ctx.internal &&
      !(await isUserInGroup(ctx.db, ctx.user, canMentionGroupId))
    )
      throw new JsonableError(`You are not allowed to mention user group '${name}'.`);
  }
  const mentionedUserIds = new Set(rendered.mentionedUserIds);
  if (rendered.mentionedGroupIds.size)
    for (const id of await groupMembers(ctx.db, ctx.realm.id, [...rendered.mentionedGroupIds]))
      mentionedUserIds.add(id);
  return mentionedUserIds;
}

/**
 * Wildcard mentions (@**all**, @**topic**) that would notify many users need
 * can_mention_many_users_group (Zulip's wildcard_mention_policy_authorizes_user).
 */
export async function checkWildcardMention(
  ctx: MessageChecker,
  kind: "channel" | "topic",
  audience: number,
) {
  if (audience > WILDCARD_MENTION_THRESHOLD) {
    if (!(await can(ctx.db, ctx.user, ctx.realm, "can_mention_many_users_group"))) {
      if (kind === "channel")
        throw new JsonableError(
          "You do not have permission to use channel wildcard mentions in this channel.",
          { code: "STREAM_WILDCARD_MENTION_NOT_ALLOWED" },
        );
      throw new JsonableError(
        "You do not have permission to use topic wildcard mentions in this topic.",
        { code: "TOPIC_WILDCARD_MENTION_NOT_ALLOWED" },
      );
    }
  }
}

/** Writes a checked message inside the caller's transaction and logs its events there. */
export async function doSendMessage(
  { tx, events }: UnitOfWork<RawTx>,
  request: SendMessageRequest,
): Promise<{ id: number; automaticNewVisibilityPolicy?: number }> {
  const { realm, sender, stream, rendered } = request;
  let recipientId: number;
  let userIds: number[];
  if (stream) {
    recipientId = stream.recipientId;
    userIds = [...new Set([...stream.subscriberIds, sender.id])];
  } else {
    ({ recipientId, memberIds: userIds } = await directRecipient(
      tx,
      realm.id,
      sender,
      request.directUsers,
    ));
  }
  const flagsFor = (userId: number): bigint => {
    const names: FlagName[] = [];
    if ((userId === sender.id && request.readBySender) || request.readByUserIds?.has(userId))
      names.push("read");
    if (request.mentionedUserIds.has(userId)) names.push("mentioned");
    if (request.alertedUserIds.has(userId)) names.push("has_alert_word");
    if (rendered.wildcardMention === "channel") names.push("stream_wildcard_mentioned");
    if (rendered.wildcardMention === "topic") names.push("topic_wildcard_mentioned");
    if (!stream) names.push("is_private");
    return flagsOf(...names);
  };
  // The message and every recipient's row in one statement, whatever the number of recipients.
  const flags = userIds.map((id) => flagsFor(id).toString());
  const groups = userIds.map((id) => request.mentionedGroupByUser.get(id) ?? null);
  // Who is emailed or pushed to about it while away is decided here too
  // (lib/notifications/missed-messages.ts).
  const notified = {
    realmId: realm.id,
    senderId: sender.id,
    sentAt: request.sentAt,
    push: request.pushNotifications,
    channel: stream ? { streamId: stream.id, recipientId, topic: request.topic } : null,
  };
  // Users who muted the sender get the message read (Zulip's muted_sender_user_ids, part of
  // mark_as_read_user_ids): found and applied in the same statement.
  const [message] = await tx.$queryRaw<
    [{ id: number; muted_by: number[]; email_due: Date | null; pushes: number } & SenderTopicFacts]
  >`
    WITH mu AS (SELECT user_profile_id FROM muted_user WHERE muted_user_id = ${sender.id}),
    m AS (
      INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version, date_sent,
                           sending_client_id, type, has_attachment, has_image, has_link, is_channel_message)
      VALUES (${realm.id}, ${sender.id}, ${recipientId}, ${request.topic}, ${request.content}, ${rendered.html}, 1, ${request.sentAt},
              ${request.sendingClientId}, 1, ${rendered.hasAttachment}, ${rendered.hasImage}, ${rendered.hasLink}, ${stream !== null})
      RETURNING id),
    rcp AS (SELECT u, f, g FROM unnest(${userIds}::int[], ${flags}::bigint[], ${groups}::int[]) AS t(u, f, g)),
    um AS (
      INSERT INTO user_message (user_profile_id, message_id, flags)
      SELECT u, m.id, CASE WHEN u IN (SELECT user_profile_id FROM mu) THEN f | ${FLAG_BITS.read} ELSE f END
      FROM m, rcp),
    ${notificationDecisionSql(notified)},
    ${emailRowsSql(request.sentAt)},
    ${request.pushNotifications ? pushRowsSql() : Prisma.sql`np AS (SELECT 1 WHERE FALSE)`}
    SELECT id, ARRAY(SELECT user_profile_id FROM mu) AS muted_by, (SELECT min(scheduled_timestamp) FROM ne) AS email_due,
      (SELECT count(*)::int FROM np) AS pushes,
      ${senderTopicSql(request, recipientId)} FROM m`;
  if (message.email_due) {
    const due = message.email_due;
    afterCommit(tx, () => missedMessageEmailScheduled(due));
  }
  if (message.pushes > 0) afterCommit(tx, pushNotificationsQueued);
  const mutedBy = new Set(message.muted_by.map(Number));
  const automaticNewVisibilityPolicy = stream
    ? await followOnSend({ tx, events }, request, stream, userIds, message)
    : undefined;
  if (stream && stream.firstMessageId === null)
    await tx.$executeRaw`UPDATE stream SET first_message_id = ${message.id} WHERE id = ${stream.id}`;
  // Links to uploads claim them; has_attachment then says whether any was claimed.
  if (rendered.hasAttachment)
    await claimAttachments(tx, realm, sender, { messageId: message.id }, rendered);

  // The event carries the rendered message and its Markdown source; each queue takes the form
  // its client asked for (events/format.ts), and each user their own flags.
  const participants = stream ? [] : [sender, ...request.directUsers];
  const dict = sentMessageDict({
    id: message.id,
    realm,
    sender,
    request,
    stream,
    participants,
    recipientId,
  });
  // A `/poll` or `/todo` message gets its widget now, and the message event carries it.
  const widget = widgetFor(request.content);
  if (widget)
    dict.submessages = [
      await doAddWidgetSubmessage(
        tx,
        { realmId: realm.id, messageId: message.id, senderId: sender.id },
        widget,
      ),
    ];
  const userData = new Map(
    userIds.map((id) => [
      id,
      { flags: flagsToList(flagsFor(id) | (mutedBy.has(id) ? FLAG_BITS.read : 0n)) },
    ]),
  );
  // Local echo: only the sender's queue `queue_id` gets `local_message_id` (events/format.ts).
  const echo = request.localEcho
    ? { sender_queue_id: request.localEcho.queueId, local_id: request.localEcho.localId }
    : {};
  // A public channel's message also goes to queues registered with all_public_streams.
  events.add(
    { type: "message", message: dict, markdown: request.content, ...echo },
    userIds,
    userData,
    { allPublic: stream !== null && channelAllows("CHANNEL_ALL_PUBLIC_QUEUES", stream) },
  );
  return { id: message.id, automaticNewVisibilityPolicy };
}

/** What the sending statement reads of the sender's view of the topic, before the message is in it. */
interface SenderTopicFacts {
  /** The sender's policy for the topic (null: none, INHERIT). */
  sender_policy: number | null;
  /** Whether the sender muted the channel (null: not subscribed). */
  channel_muted: boolean | null;
  /** Whether the sender could see an earlier message in the topic; read only for ON_INITIATION. */
  topic_existed: boolean | null;
}

/**
 * The columns of SenderTopicFacts, read in the statement that inserts the message: its other
 * reads do not see the row it inserts, so "an earlier message" is any message found. Nulls when
 * no automatic policy can apply (a direct message, a bot, both settings "never").
 */
function senderTopicSql(request: SendMessageRequest, recipientId: number) {
  const { sender, stream, realm } = request;
  if (!stream || !mayChangeVisibility(sender))
    return Prisma.sql`NULL::int AS sender_policy, NULL::bool AS channel_muted, NULL::bool AS topic_existed`;
  const lower = request.topic.toLowerCase();
  const policy = Prisma.sql`(SELECT visibility_policy FROM user_topic
    WHERE user_profile_id = ${sender.id} AND stream_id = ${stream.id} AND topic_name_lower = ${lower})`;
  // The sender's own view: with protected history, only the messages they received.
  const earlier = stream.historyPublicToSubscribers
    ? Prisma.sql`SELECT 1 FROM message o WHERE o.realm_id = ${realm.id} AND o.recipient_id = ${recipientId}
        AND lower(o.subject) = lower(${request.topic})`
    : Prisma.sql`SELECT 1 FROM message o JOIN user_message um ON um.message_id = o.id AND um.user_profile_id = ${sender.id}
        WHERE o.realm_id = ${realm.id} AND o.recipient_id = ${recipientId} AND lower(o.subject) = lower(${request.topic})`;
  return Prisma.sql`${policy} AS sender_policy,
    (SELECT is_muted FROM subscription WHERE user_profile_id = ${sender.id} AND recipient_id = ${recipientId}) AS channel_muted,
    CASE WHEN ${dependsOnInitiation(sender)} AND ${policy} IS NULL THEN EXISTS (${earlier}) END AS topic_existed`;
}

/**
 * do_send_messages's automatic visibility changes for a channel message: the sender's, by their
 * automatic follow and unmute settings, and FOLLOWED for each human recipient personally mentioned
 * who has `automatically_follow_topics_where_mentioned` (not over a muted or followed topic). One
 * statement when anything changes; the sender's new policy, for the answer.
 */
async function followOnSend(
  uow: UnitOfWork<RawTx>,
  request: SendMessageRequest,
  stream: ChannelRow,
  recipients: number[],
  facts: SenderTopicFacts,
): Promise<number | undefined> {
  const { sender } = request;
  const changes: AutomaticChange[] = [];
  if (mayChangeVisibility(sender)) {
    const policy = policyForSendMessage(
      sender,
      facts.channel_muted === true,
      facts.sender_policy === null ? TopicVisibility.INHERIT : Number(facts.sender_policy),
      facts.topic_existed === true,
    );
    if (policy !== null) changes.push({ userId: sender.id, policy, mention: false });
  }
  const receiving = new Set(recipients);
  for (const id of request.rendered.mentionedUserIds)
    if (receiving.has(id) && !changes.some((c) => c.userId === id))
      changes.push({ userId: id, policy: TopicVisibility.FOLLOWED, mention: true });
  if (changes.length === 0) return undefined;
  const changed = await autoSetTopicVisibility(
    uow,
    request.realm.id,
    { streamId: stream.id, recipientId: stream.recipientId, topic: request.topic },
    changes,
    request.sentAt,
  );
  return changed.get(sender.id);
}

/** Check and send, in one transaction (Zulip's check_send_message). */
export async function checkSendMessage(
  ctx: RequestContext,
  input: SendMessageInput,
): Promise<{ id: number; automaticNewVisibilityPolicy?: number }> {
  const request = await checkMessage(ctx, input);
  return inRawTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    doSendMessage({ tx, events }, request),
  );
}
