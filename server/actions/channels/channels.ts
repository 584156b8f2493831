/**
 * Creating channels (zerver/views/streams.py create_channel and add_subscriptions_backend,
 * zerver/lib/streams.py list_to_streams / create_stream_if_needed): the caller's permissions, the
 * name, every option and group setting checked, the rows written and announced in the caller's
 * transaction. Subscribing is actions/channels/subscriptions.ts.
 */
import type { Prisma, Realm, Stream, Tx } from "../../db/index.ts";
import type { AppDeps, RequestContext } from "../../context.ts";
import { IncompatibleParametersError, JsonableError } from "../../errors.ts";
import type { PendingEvents, UnitOfWork } from "../../events/index.ts";
import { renderMarkdown } from "../../lib/markdown/index.ts";
import { RecipientType } from "../../lib/recipients.ts";
import {
  CHANNEL_GROUP_SETTINGS,
  SystemGroups,
  type ChannelSettingName,
  type SystemGroupName,
} from "../../lib/groups/group-settings.ts";
import {
  createCreatorGroup,
  getSystemGroupIds,
  groupForNewSetting,
  type GroupSettingValue,
} from "../../lib/groups/user-groups.ts";
import { can } from "../../lib/groups/permissions.ts";
import { accessChannelFolder } from "../../lib/channels/channel-folders.ts";
import { metadataAudience, toChannelDicts } from "../../lib/channels/channels.ts";
import { permissionPolicyName, RETAIN_FOREVER } from "../../lib/channels/channel-settings.ts";
import { defaultChannelIds } from "../../lib/channels/default-streams.ts";
import { channelLinkSyntax, silentMentionSyntax } from "../../lib/messages/message-links.ts";
import { refuseNul, unprintablePosition } from "../../lib/text.ts";
import { activeUserIds, isRealmAdmin, Role, requireMemberOrAdmin } from "../../lib/users/users.ts";
import { internalSendMessage, type InternalSender } from "../messages/internal-send.ts";
import { inTransaction } from "../transaction.ts";

export const MAX_CHANNEL_NAME_LENGTH = 60;
/** Realm.STREAM_EVENTS_NOTIFICATION_TOPIC_NAME. */
export const CHANNEL_EVENTS_TOPIC = "channel events";

export interface NewChannel {
  name: string;
  description?: string;
  inviteOnly?: boolean;
  historyPublicToSubscribers?: boolean;
  creatorId?: number | null;
}

/**
 * The rows of a channel with Zulip's default group settings (organization setup and tests; the
 * API goes through doCreateChannels). `events`: the caller's pending events inside `inTransaction`;
 * a creator default makes a group holding the creator, which cached memberships lack until it
 * names `groups:<realm id>`.
 */
export async function doCreateChannel(
  tx: Tx,
  realmId: number,
  input: NewChannel,
  events?: Pick<PendingEvents, "invalidate">,
) {
  const groups = await getSystemGroupIds(tx, realmId);
  const settings: Record<string, number> = {};
  for (const setting of Object.values(CHANNEL_GROUP_SETTINGS))
    settings[setting.field] = await defaultGroup(
      tx,
      realmId,
      groups,
      setting.default,
      input.creatorId ?? null,
      events,
    );
  return insertChannel(tx, realmId, {
    name: input.name,
    description: input.description ?? "",
    inviteOnly: input.inviteOnly ?? false,
    isWebPublic: false,
    historyPublicToSubscribers: input.historyPublicToSubscribers ?? !input.inviteOnly,
    creatorId: input.creatorId ?? null,
    ...settings,
  });
}

/** A setting's default group: a system group, or an anonymous group of the creator (role:nobody without one). */
async function defaultGroup(
  tx: Tx,
  realmId: number,
  groups: Record<SystemGroupName, number>,
  which: string,
  creatorId: number | null,
  events?: Pick<PendingEvents, "invalidate">,
) {
  if (which !== "channel_creator") return groups[which as SystemGroupName];
  if (creatorId === null) return groups[SystemGroups.NOBODY];
  events?.invalidate(`groups:${realmId}`);
  return createCreatorGroup(tx, realmId, creatorId);
}

/** `data`: the stream's columns, every group setting among them. */
async function insertChannel(
  tx: Tx,
  realmId: number,
  data: Record<string, unknown> & { description: string },
) {
  const description = data.description;
  const stream = await tx.stream.create({
    data: {
      ...data,
      realmId,
      renderedDescription: description ? renderMarkdown(description).html : "",
    } as Prisma.StreamUncheckedCreateInput,
  });
  const recipient = await tx.recipient.create({
    data: { realmId, type: RecipientType.STREAM, typeId: stream.id },
  });
  return tx.stream.update({ where: { id: stream.id }, data: { recipientId: recipient.id } });
}

/** One channel to create, as the API gives it (POST /channels/create, POST /users/me/subscriptions). */
export interface ChannelCreation {
  name: string;
  description?: string;
  inviteOnly?: boolean;
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  isDefaultStream?: boolean;
  folderId?: number | null;
  topicsPolicy?: "inherit" | "allow_empty_topic" | "disable_empty_topic" | "empty_topic_only";
  messageRetentionDays?: number | string;
  groupSettings?: Partial<Record<ChannelSettingName, GroupSettingValue>>;
}

const DELETE_SETTINGS = new Set(["can_delete_any_message_group", "can_delete_own_message_group"]);

/** check_stream_name: stripped, not empty, at most 60 characters, every character printable. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw new JsonableError("Channel name can't be empty.");
  if ([...name].length > MAX_CHANNEL_NAME_LENGTH)
    throw new JsonableError(
      `Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`,
    );
  const position = unprintablePosition(name);
  if (position)
    throw new JsonableError(`Invalid character in channel name, at position ${position}.`);
  return name;
}

/** parse_message_retention_days for channels: null (the organization's), -1 (unlimited) or a number of days. */
export function parseRetentionDays(value: number | string): number | null {
  if (value === "realm_default") return null;
  if (value === "unlimited" || value === "forever") return RETAIN_FOREVER;
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  throw new JsonableError(`Bad value for 'message_retention_days': ${value}`);
}

/** A description as stored: newlines become spaces (Zulip's create_stream_if_needed), NUL refused. */
export function channelDescription(raw: string): string {
  return refuseNul(raw.replace(/\n/g, " "), "channel description");
}

/** Channel names are unique in an organization, compared case-insensitively (409 otherwise). */
async function checkChannelNameFree(tx: Tx, realmId: number, name: string) {
  const existing = await tx.$queryRaw<
    unknown[]
  >`SELECT 1 FROM stream WHERE realm_id = ${realmId} AND lower(name) = lower(${name})`;
  if (existing.length > 0) throw channelExistsError(name);
}

/** 409 CHANNEL_ALREADY_EXISTS (ChannelExistsError), naming the name asked for. */
export function channelExistsError(name: string) {
  return new JsonableError(`Channel '${name}' already exists`, {
    code: "CHANNEL_ALREADY_EXISTS",
    httpStatus: 409,
  });
}

/**
 * The checks of list_to_streams for channels the caller creates, before anything is written:
 * creation permissions by privacy, web-public availability, the owner-only retention setting, the
 * topics policy and default-channel permissions.
 */
async function checkCreationPermissions(tx: Tx, ctx: RequestContext, input: ChannelCreation) {
  const { user, realm } = ctx;
  requireMemberOrAdmin(user);
  if (input.isWebPublic) {
    if (!ctx.config.webPublicStreamsEnabled || !realm.enableSpectatorAccess)
      throw new JsonableError("Web-public channels are not enabled.");
    if (!(await can(tx, user, realm, "can_create_web_public_channel_group")))
      throw new JsonableError("Insufficient permission");
  } else if (input.inviteOnly) {
    if (!(await can(tx, user, realm, "can_create_private_channel_group")))
      throw new JsonableError("Insufficient permission");
  } else if (!(await can(tx, user, realm, "can_create_public_channel_group")))
    throw new JsonableError("Insufficient permission");
  if (
    input.messageRetentionDays !== undefined &&
    input.messageRetentionDays !== "realm_default" &&
    user.role !== Role.OWNER
  )
    throw new JsonableError("Must be an organization owner", { code: "UNAUTHORIZED_PRINCIPAL" });
  if (
    input.topicsPolicy !== undefined &&
    input.topicsPolicy !== "inherit" &&
    !(await can(tx, user, realm, "can_set_topics_policy_group"))
  )
    throw new JsonableError("Insufficient permission");
  if (input.isDefaultStream) {
    if (!isRealmAdmin(user)) throw new JsonableError("Insufficient permission");
    if (input.inviteOnly) throw new JsonableError("A default channel cannot be private.");
  }
}

/**
 * Checks and creates the channels in the caller's transaction, with their `stream` create events
 * (and `default_streams` when one is a default channel); subscribes nobody (the caller then uses
 * bulkAddSubscriptions, then doAnnounceNewChannels). Uses `tx` only, never `ctx.db`.
 */
export async function doCreateChannels(
  { tx, events }: UnitOfWork,
  ctx: RequestContext,
  inputs: ChannelCreation[],
): Promise<Stream[]> {
  const realmId = ctx.realm.id;
  const groups = await getSystemGroupIds(tx, realmId);
  const created: Stream[] = [];
  for (const input of inputs) {
    const name = checkChannelName(input.name);
    await checkCreationPermissions(tx, ctx, input);
    await checkChannelNameFree(tx, realmId, name);
    const retention =
      input.messageRetentionDays === undefined
        ? null
        : parseRetentionDays(input.messageRetentionDays);
    const folderId =
      input.folderId == null ? null : (await accessChannelFolder(tx, realmId, input.folderId)).id;
    const inviteOnly = input.inviteOnly ?? false;
    // get_default_value_for_history_public_to_subscribers: public channels always share history.
    const history = inviteOnly ? (input.historyPublicToSubscribers ?? false) : true;
    const settings: Record<string, number> = {};
    for (const setting of Object.values(CHANNEL_GROUP_SETTINGS)) {
      const value = input.groupSettings?.[setting.name];
      settings[setting.field] =
        value === undefined
          ? await defaultGroup(tx, realmId, groups, setting.default, ctx.user.id, events)
          : await groupForNewSetting(tx, events, realmId, setting, value);
      // Letting anyone delete messages is the organization's can_set_delete_message_policy_group's call.
      if (
        DELETE_SETTINGS.has(setting.name) &&
        settings[setting.field] !== groups[SystemGroups.NOBODY] &&
        !(await can(tx, ctx.user, ctx.realm, "can_set_delete_message_policy_group"))
      )
        throw new JsonableError("Insufficient permission");
    }
    // validate_can_create_topic_group_setting_for_protected_history_streams: in a channel whose
    // history is protected, everyone (role:everyone alone) must be able to start topics.
    const topicCreators = input.groupSettings?.can_create_topic_group;
    if (topicCreators !== undefined && !history && topicCreators !== groups[SystemGroups.EVERYONE])
      throw new IncompatibleParametersError([
        "history_public_to_subscribers",
        "can_create_topic_group",
      ]);
    const description = channelDescription(input.description ?? "");
    const stream = await insertChannel(tx, realmId, {
      name,
      description,
      inviteOnly,
      isWebPublic: input.isWebPublic ?? false,
      historyPublicToSubscribers: history,
      creatorId: ctx.user.id,
      messageRetentionDays: retention,
      folderId,
      topicsPolicy: input.topicsPolicy ?? "inherit",
      ...settings,
    });
    if (input.isDefaultStream)
      await tx.defaultStream.create({ data: { realmId, streamId: stream.id } });
    created.push(stream);
  }
  await announceCreation(
    { tx, events },
    ctx.realm,
    created,
    inputs.some((i) => i.isDefaultStream),
  );
  return created;
}

/**
 * send_stream_creation_event: each new channel to the users who may see it before anyone
 * subscribes (every non-guest for a public channel, everyone for a web-public one; for a private
 * one administrators and the holders of its subscribe and administer settings). Subscribers learn
 * of a private channel when they are subscribed.
 */
async function announceCreation(
  { tx, events }: UnitOfWork,
  realm: Realm,
  streams: Stream[],
  defaultsChanged: boolean,
) {
  if (streams.length === 0) return;
  const dicts = await toChannelDicts(tx, streams);
  const audience = await metadataAudience(tx, realm.id, streams);
  for (const [i, stream] of streams.entries())
    events.add(
      { type: "stream", op: "create", streams: [dicts[i]], for_unarchiving: false },
      audience.get(stream.id)!,
    );
  if (defaultsChanged)
    events.add(
      { type: "default_streams", default_streams: await defaultChannelIds(tx, realm.id) },
      await activeUserIds(tx, realm.id),
    );
}

/**
 * send_messages_for_new_subscribers' messages about new channels, after their subscribers were
 * added: with `announce`, Notification Bot's announcement in the organization's new-channel
 * announcements channel, and in each new channel its privacy and description (topic
 * "channel events", unless the organization turned those off). Read for the creator.
 */
export async function doAnnounceNewChannels(
  { tx, events }: UnitOfWork,
  ctx: RequestContext,
  bot: InternalSender,
  streams: Stream[],
  options: { announce: boolean },
) {
  if (streams.length === 0) return;
  const realm = ctx.realm;
  const readBy = new Set([ctx.user.id]);
  const creator = silentMentionSyntax(ctx.user);
  if (options.announce && realm.newStreamAnnouncementsStreamId !== null) {
    const links = streams.map((s) => channelLinkSyntax(s.id, s.name)).join(", ");
    const content =
      streams.length > 1
        ? `${creator} created the following channels: ${links}.`
        : `${creator} created a new channel ${links}.`;
    await internalSendMessage(
      { tx, events },
      {
        deps: ctx,
        realm,
        sender: bot,
        target: {
          kind: "channel",
          streamId: realm.newStreamAnnouncementsStreamId,
          topic: "new channels",
        },
        content,
        readByUserIds: readBy,
      },
    );
  }
  for (const stream of streams) {
    const description = stream.description === "" ? "*No description.*" : stream.description;
    const content = `**${permissionPolicyName(stream)}** channel created by ${creator}. **Description:**\n\`\`\`\` quote\n${description}\n\`\`\`\``;
    await sendChannelEventsNotice({ tx, events }, ctx, bot, stream, content, readBy);
  }
}

/**
 * maybe_send_channel_events_notice: Notification Bot's notice about a channel in the channel
 * itself, topic "channel events" (the empty topic in a channel that allows only that), unless the
 * organization turned those notices off. Archived channels take it too.
 */
export async function sendChannelEventsNotice(
  { tx, events }: UnitOfWork,
  ctx: Pick<RequestContext, "realm" | "config" | "now">,
  bot: InternalSender,
  stream: Pick<Stream, "id" | "topicsPolicy">,
  content: string,
  readBy?: ReadonlySet<number>,
) {
  if (!ctx.realm.sendChannelEventsMessages) return;
  const topic = stream.topicsPolicy === "empty_topic_only" ? "" : CHANNEL_EVENTS_TOPIC;
  await internalSendMessage(
    { tx, events },
    {
      deps: ctx,
      realm: ctx.realm,
      sender: bot,
      target: { kind: "channel", streamId: stream.id, topic },
      content,
      readByUserIds: readBy,
    },
  );
}

/**
 * A channel made from the command line (Zulip's `manage.py create_stream`, create_stream_if_needed
 * with acting_user=None): no creator, so the creator-default settings hold nobody; no "channel
 * events" message and no subscribers. Organization users hear of it as from the API.
 */
export async function doCreateChannelWithoutCreator(
  deps: Pick<AppDeps, "db" | "events">,
  realm: Realm,
  input: { name: string; description: string; inviteOnly: boolean; isDefaultStream: boolean },
): Promise<Stream> {
  const name = checkChannelName(input.name);
  if (input.isDefaultStream && input.inviteOnly)
    throw new JsonableError("A default channel cannot be private.");
  const description = channelDescription(input.description);
  return inTransaction(deps, realm.id, async ({ tx, events }) => {
    await checkChannelNameFree(tx, realm.id, name);
    const stream = await doCreateChannel(
      tx,
      realm.id,
      { name, description, inviteOnly: input.inviteOnly },
      events,
    );
    if (input.isDefaultStream)
      await tx.defaultStream.create({ data: { realmId: realm.id, streamId: stream.id } });
    await announceCreation({ tx, events }, realm, [stream], input.isDefaultStream);
    return stream;
  });
}
