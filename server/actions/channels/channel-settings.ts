/**
 * PATCH /streams/{id} (zerver/views/streams.py update_stream_backend and the do_* functions of
 * zerver/actions/streams.py it calls), in Zulip's order of checks and changes, all in one
 * transaction with their events and Notification Bot's notices. Who may see the channel before
 * and after a change decides who gets `stream` update, delete or create (lib/access/channels.ts
 * through lib/channels/channel-settings.ts metadataUserIds).
 */
import type { Stream, Tx } from "../../db/index.ts";
import type { RequestContext } from "../../context.ts";
import {
  IncompatibleParametersError,
  JsonableError,
  OrganizationOwnerRequiredError,
} from "../../errors.ts";
import type { PendingEvents } from "../../events/index.ts";
import { accessChannelFolder } from "../../lib/channels/channel-folders.ts";
import {
  accessChannelForUpdate,
  activeSubscriberIds,
  descriptionNotice,
  hasContentAccessFor,
  metadataUserIds,
  permissionNotice,
  permissionPolicyName,
  postingPermissionNotice,
  renameNotice,
  retentionNotice,
  topicsPolicyNotice,
  whoHasPermission,
  type ChannelForUpdate,
} from "../../lib/channels/channel-settings.ts";
import { toChannelDicts } from "../../lib/channels/channels.ts";
import { channelExistsError } from "./channels.ts";
import { requireDefaultChannelManager, setDefaultChannel } from "./default-streams.ts";
import {
  CHANNEL_GROUP_SETTINGS,
  SystemGroups,
  type ChannelSettingName,
} from "../../lib/groups/group-settings.ts";
import { renderMarkdown } from "../../lib/markdown/index.ts";
import { can } from "../../lib/groups/permissions.ts";
import {
  checkGroupSettingUpdate,
  deleteAnonymousGroups,
  getSystemGroupIds,
  groupSettingValue,
  groupSettingValuesAndNames,
  type GroupSettingValue,
} from "../../lib/groups/user-groups.ts";
import { Role } from "../../lib/users/users.ts";
import { doUnarchiveChannel } from "./channel-archive.ts";
import {
  channelDescription,
  checkChannelName,
  parseRetentionDays,
  sendChannelEventsNotice,
} from "./channels.ts";
import { notificationBot, type InternalSender } from "../messages/internal-send.ts";
import { inTransaction } from "../transaction.ts";

export type TopicsPolicy =
  "inherit" | "allow_empty_topic" | "disable_empty_topic" | "empty_topic_only";

export interface ChannelUpdate {
  newName?: string;
  description?: string;
  isPrivate?: boolean;
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  isDefaultStream?: boolean;
  messageRetentionDays?: number | string;
  isArchived?: boolean;
  /** undefined: not sent; null: out of its folder. */
  folderId?: number | null;
  topicsPolicy?: TopicsPolicy;
  settings: Partial<
    Record<ChannelSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>
  >;
}

/** The settings that let their holders see a channel (stream_permission_group_settings_granting_metadata_access). */
const METADATA_SETTINGS = new Set<ChannelSettingName>([
  "can_add_subscribers_group",
  "can_administer_channel_group",
  "can_subscribe_group",
]);
/** The settings that give content access, whose change needs it (…_requiring_content_access). */
const CONTENT_SETTINGS = new Set<ChannelSettingName>([
  "can_add_subscribers_group",
  "can_subscribe_group",
]);
const DELETE_SETTINGS = new Set<ChannelSettingName>([
  "can_delete_any_message_group",
  "can_delete_own_message_group",
]);
/** Stream.SYSTEM_GROUPS_ENUM_MAP, for the legacy stream_post_policy. */
const STREAM_POST_POLICY: Record<string, number> = {
  "role:administrators": 2,
  "role:fullmembers": 3,
  "role:moderators": 4,
};

/** What every step of one update shares. */
interface Step {
  tx: Tx;
  events: PendingEvents;
  ctx: RequestContext;
  bot: InternalSender;
  channel: ChannelForUpdate;
}

/** update_stream_backend. */
export async function doUpdateChannel(ctx: RequestContext, streamId: number, input: ChannelUpdate) {
  const bot = await notificationBot(ctx, ctx.realm);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const channel = await accessChannelForUpdate(tx, ctx.user, streamId);
    const step: Step = { tx, events, ctx, bot, channel };
    const { user, realm } = ctx;
    const stream = channel.stream;

    // The proposed privacy must be a valid combination.
    const isPrivate = input.isPrivate ?? stream.inviteOnly;
    const isWebPublic = input.isWebPublic ?? stream.isWebPublic;
    const isDefault =
      input.isDefaultStream ??
      (await tx.defaultStream.count({ where: { realmId: realm.id, streamId: stream.id } })) > 0;
    const history =
      input.historyPublicToSubscribers ??
      (input.isPrivate !== undefined ? !input.isPrivate : stream.historyPublicToSubscribers);
    if ((isWebPublic && !history) || (isWebPublic && isPrivate) || (!isPrivate && !history))
      throw new JsonableError("Invalid parameters");
    if (isPrivate && isDefault) throw new JsonableError("A default channel cannot be private.");
    if (!isPrivate && realm.moderationRequestChannelId === stream.id)
      throw new JsonableError("Moderation request channel must be private.");
    if (input.isPrivate !== undefined && !hasContentAccessFor(user, channel))
      throw new JsonableError("Channel content access is required.");
    if (input.isPrivate !== undefined) {
      const setting = input.isPrivate
        ? "can_create_private_channel_group"
        : "can_create_public_channel_group";
      if (!(await can(tx, user, realm, setting)))
        throw new JsonableError("Insufficient permission");
    }
    if (input.isWebPublic) {
      if (!ctx.config.webPublicStreamsEnabled || !realm.enableSpectatorAccess)
        throw new JsonableError("Web-public channels are not enabled.");
      if (!(await can(tx, user, realm, "can_create_web_public_channel_group")))
        throw new JsonableError("Insufficient permission");
    }
    // validate_can_create_topic_group_setting_for_protected_history_streams, for the new history
    // (a new can_create_topic_group is checked with the group settings below).
    if (
      !history &&
      stream.historyPublicToSubscribers &&
      input.settings.can_create_topic_group === undefined &&
      stream.canCreateTopicGroupId !==
        (await getSystemGroupIds(tx, realm.id))[SystemGroups.EVERYONE]
    )
      throw new IncompatibleParametersError([
        "history_public_to_subscribers",
        "can_create_topic_group",
      ]);
    if (
      input.isPrivate !== undefined ||
      input.isWebPublic !== undefined ||
      input.historyPublicToSubscribers !== undefined
    )
      await changePermission(step, { inviteOnly: isPrivate, isWebPublic, history });

    if (input.isDefaultStream !== undefined) {
      requireDefaultChannelManager(ctx);
      await setDefaultChannel(step, ctx.realm.id, channel.stream.id, input.isDefaultStream);
    }

    if (input.messageRetentionDays !== undefined) {
      if (user.role !== Role.OWNER) throw new OrganizationOwnerRequiredError();
      const days = parseRetentionDays(input.messageRetentionDays);
      const old = channel.stream.messageRetentionDays;
      await setProperty(step, { messageRetentionDays: days }, "message_retention_days", days);
      await notice(step, retentionNotice(user, realm, old, days));
    }

    if (input.isArchived === false)
      channel.stream = await doUnarchiveChannel({ tx, events }, ctx, bot, channel.stream);

    if (input.topicsPolicy !== undefined) {
      if (!(await can(tx, user, realm, "can_set_topics_policy_group")))
        throw new JsonableError("Insufficient permission");
      const old = channel.stream.topicsPolicy;
      if (old !== input.topicsPolicy) {
        await setProperty(
          step,
          { topicsPolicy: input.topicsPolicy },
          "topics_policy",
          input.topicsPolicy,
        );
        await notice(step, topicsPolicyNotice(user, realm, old, input.topicsPolicy));
      }
    }

    if (input.description !== undefined) {
      const description = channelDescription(input.description);
      const old = channel.stream.description;
      const rendered = description ? renderMarkdown(description).html : "";
      await setProperty(
        step,
        { description, renderedDescription: rendered },
        "description",
        description,
        { rendered_description: rendered },
      );
      await notice(step, descriptionNotice(user, old, description));
    }

    if (input.newName !== undefined) await rename(step, input.newName.trim());

    if (input.folderId !== undefined) {
      const folderId =
        input.folderId === null
          ? null
          : (await accessChannelFolder(tx, realm.id, input.folderId)).id;
      await setProperty(step, { folderId }, "folder_id", folderId);
    }

    await changeGroupSettings(step, input.settings);
  });
}

/** Writes columns of the channel and tells everyone who may see it (do_set_stream_property and its kin). */
async function setProperty(
  { tx, events, ctx, channel }: Step,
  data: Partial<Stream>,
  property: string,
  value: unknown,
  extra: Record<string, unknown> = {},
) {
  const before = channel.stream;
  channel.stream = await tx.stream.update({ where: { id: before.id }, data });
  events.add(
    {
      type: "stream",
      op: "update",
      stream_id: before.id,
      name: before.name,
      property,
      value,
      ...extra,
    },
    await metadataUserIds(tx, ctx.realm.id, channel.stream),
  );
}

/** maybe_send_channel_events_notice for this channel, as it now is. */
function notice({ tx, events, ctx, bot, channel }: Step, content: string) {
  return sendChannelEventsNotice({ tx, events }, ctx, bot, channel.stream, content);
}

/**
 * do_rename_stream after update_stream_backend's checks: not the same name, and (unless only the
 * case changes) a valid name no other channel has.
 */
async function rename(step: Step, name: string) {
  const { tx, ctx, channel } = step;
  const old = channel.stream.name;
  if (old === name) throw new JsonableError("Channel already has that name.");
  if (old.toLowerCase() !== name.toLowerCase()) {
    checkChannelName(name);
    const taken = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM stream WHERE realm_id = ${ctx.realm.id} AND lower(name) = lower(${name})`;
    // check_stream_name_available: ChannelExistsError (409) since Zulip 10, whether or not the
    // caller can see the channel that holds the name (Zulip does not look).
    if (taken.length > 0) throw channelExistsError(name);
  }
  await setProperty(step, { name }, "name", name);
  await notice(step, renameNotice(ctx.user, old, name));
}

/**
 * do_change_stream_permission: users who may now see the channel get `stream` create and its
 * subscribers (`peer_add`), users who no longer may get `stream` delete (their event queues and
 * reads follow the access rule from now on), and the others `stream` update of `invite_only`.
 */
async function changePermission(
  step: Step,
  wanted: { inviteOnly: boolean; isWebPublic: boolean; history: boolean },
) {
  const { tx, ctx, channel } = step;
  const before = channel.stream;
  const realmId = ctx.realm.id;
  const hadAccess = await metadataUserIds(tx, realmId, before);
  const after = await tx.stream.update({
    where: { id: before.id },
    data: {
      inviteOnly: wanted.inviteOnly,
      isWebPublic: wanted.isWebPublic,
      historyPublicToSubscribers: wanted.history,
    },
  });
  channel.stream = after;
  const hasAccess = await metadataUserIds(tx, realmId, after);
  await announceAccessChange(step, hadAccess, hasAccess, {
    property: "invite_only",
    value: after.inviteOnly,
    history_public_to_subscribers: after.historyPublicToSubscribers,
    is_web_public: after.isWebPublic,
  });
  await notice(
    step,
    permissionNotice(ctx.user, permissionPolicyName(before), permissionPolicyName(after)),
  );
}

/** The events of a change that may change who sees the channel: create and peer_add, delete, update. */
async function announceAccessChange(
  { tx, events, channel }: Step,
  before: Set<number>,
  after: Set<number>,
  update: Record<string, unknown>,
) {
  const stream = channel.stream;
  const gained = [...after].filter((id) => !before.has(id));
  const lost = [...before].filter((id) => !after.has(id));
  if (gained.length > 0) {
    events.add(
      {
        type: "stream",
        op: "create",
        streams: await toChannelDicts(tx, [stream]),
        for_unarchiving: false,
      },
      gained,
    );
    events.add(
      {
        type: "subscription",
        op: "peer_add",
        stream_ids: [stream.id],
        user_ids: (await activeSubscriberIds(tx, stream)).sort((a, b) => a - b),
      },
      gained,
    );
  }
  if (lost.length > 0)
    events.add(
      {
        type: "stream",
        op: "delete",
        streams: [{ stream_id: stream.id }],
        stream_ids: [stream.id],
      },
      lost,
    );
  const gainedSet = new Set(gained);
  events.add(
    { type: "stream", op: "update", stream_id: stream.id, name: stream.name, ...update },
    [...after].filter((id) => !gainedSet.has(id)),
  );
}

/**
 * The group settings, each through the group-setting engine ({new, old}, anonymous groups), in
 * the registry's order (do_change_stream_group_based_setting).
 */
async function changeGroupSettings(step: Step, settings: ChannelUpdate["settings"]) {
  const { tx, events, ctx, channel } = step;
  const realmId = ctx.realm.id;
  for (const setting of Object.values(CHANNEL_GROUP_SETTINGS)) {
    const update = settings[setting.name];
    if (update === undefined) continue;
    const stream = channel.stream;
    const currentId = stream[setting.field];
    const oldValue = await groupSettingValue(tx, currentId);
    const change = await checkGroupSettingUpdate(tx, events, realmId, setting, currentId, update);
    if (!change) continue;
    if (CONTENT_SETTINGS.has(setting.name) && !hasContentAccessFor(ctx.user, channel))
      throw new JsonableError("Channel content access is required.");
    const groups = await getSystemGroupIds(tx, realmId);
    if (
      DELETE_SETTINGS.has(setting.name) &&
      change.groupId !== groups[SystemGroups.NOBODY] &&
      !(await can(tx, ctx.user, ctx.realm, "can_set_delete_message_policy_group"))
    )
      throw new JsonableError("Insufficient permission");
    // validate_can_create_topic_group_setting_for_protected_history_streams.
    if (
      setting.name === "can_create_topic_group" &&
      !stream.historyPublicToSubscribers &&
      change.groupId !== groups[SystemGroups.EVERYONE]
    )
      throw new IncompatibleParametersError([
        "history_public_to_subscribers",
        "can_create_topic_group",
      ]);
    const before = METADATA_SETTINGS.has(setting.name)
      ? await metadataUserIds(tx, realmId, stream)
      : null;
    channel.stream = await tx.stream.update({
      where: { id: stream.id },
      data: { [setting.field]: change.groupId },
    });
    if (change.replacedGroupId !== null) await deleteAnonymousGroups(tx, [change.replacedGroupId]);
    const after = await metadataUserIds(tx, realmId, channel.stream);
    const property = { property: setting.name, value: change.value };
    if (before) await announceAccessChange(step, before, after, property);
    else
      events.add(
        { type: "stream", op: "update", stream_id: stream.id, name: stream.name, ...property },
        after,
      );
    if (setting.name === "can_send_message_group")
      await announcePostingChange(step, currentId, change.groupId, oldValue, change.value, after);
  }
}

/**
 * A change of can_send_message_group: the legacy stream_post_policy and is_announcement_only
 * events when the policy they describe changed, and Notification Bot's notice.
 */
async function announcePostingChange(
  step: Step,
  oldGroupId: number,
  newGroupId: number,
  oldValue: GroupSettingValue,
  newValue: GroupSettingValue,
  audience: Set<number>,
) {
  const { tx, events, ctx, channel } = step;
  const { systemNames } = await groupSettingValuesAndNames(tx, [oldGroupId, newGroupId]);
  const policy = (id: number) => STREAM_POST_POLICY[systemNames.get(id) ?? ""] ?? 1;
  const [oldPolicy, newPolicy] = [policy(oldGroupId), policy(newGroupId)];
  if (oldPolicy !== newPolicy) {
    const base = {
      type: "stream",
      op: "update",
      stream_id: channel.stream.id,
      name: channel.stream.name,
    };
    events.add({ ...base, property: "stream_post_policy", value: newPolicy }, audience);
    events.add({ ...base, property: "is_announcement_only", value: newPolicy === 2 }, audience);
  }
  await notice(
    step,
    postingPermissionNotice(
      ctx.user,
      await whoHasPermission(tx, oldValue),
      await whoHasPermission(tx, newValue),
    ),
  );
}
