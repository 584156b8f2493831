/**
 * Creating a channel with Zulip's default permission settings and its recipient, and
 * subscribing users to it. (The POST /channels/create operation with every option builds on
 * this when its issue lands.)
 */
import type { Prisma, Tx } from "../db.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import { RecipientType } from "../lib/recipients.ts";
import type { PendingEvents } from "../events.ts";
import { CHANNEL_GROUP_SETTINGS, type SystemGroupName } from "../lib/group-settings.ts";
import { createCreatorGroup, getSystemGroupIds } from "../lib/user-groups.ts";

/** Zulip's palette for new subscriptions (a few of its STREAM_ASSIGNMENT_COLORS). */
const COLORS = ["#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5", "#f5ce6e", "#c2726a"];

export interface NewChannel {
  name: string;
  description?: string;
  inviteOnly?: boolean;
  historyPublicToSubscribers?: boolean;
  creatorId?: number | null;
}

/**
 * `events`: the caller's pending events, when it runs inside `inTransaction`. A creator default
 * makes a new group holding the creator, which their cached memberships (lib/permissions.ts) lack
 * until it names `groups:<realm id>`. Without events (organization setup), nothing has cached them.
 */
export async function doCreateChannel(tx: Tx, realmId: number, input: NewChannel, events?: Pick<PendingEvents, "invalidate">) {
  const groups = await getSystemGroupIds(tx, realmId);
  // Zulip's defaults (lib/group-settings.ts); "channel_creator" is an anonymous group of the
  // creator, one per setting (each is updated in place later), or role:nobody without one.
  const settings: Record<string, number> = {};
  for (const setting of Object.values(CHANNEL_GROUP_SETTINGS)) {
    if (setting.default !== "channel_creator") settings[setting.field] = groups[setting.default as SystemGroupName];
    else if (input.creatorId == null) settings[setting.field] = groups["role:nobody"];
    else {
      settings[setting.field] = await createCreatorGroup(tx, realmId, input.creatorId);
      events?.invalidate(`groups:${realmId}`);
    }
  }
  const description = input.description ?? "";
  const stream = await tx.stream.create({
    data: {
      realmId,
      name: input.name,
      description,
      renderedDescription: description ? renderMarkdown(description).html : "",
      inviteOnly: input.inviteOnly ?? false,
      historyPublicToSubscribers: input.historyPublicToSubscribers ?? !input.inviteOnly,
      creatorId: input.creatorId ?? null,
      ...settings,
    } as Prisma.StreamUncheckedCreateInput,
  });
  const recipient = await tx.recipient.create({ data: { realmId, type: RecipientType.STREAM, typeId: stream.id } });
  return tx.stream.update({ where: { id: stream.id }, data: { recipientId: recipient.id } });
}

export async function doSubscribe(tx: Tx, realmId: number, stream: { id: number; recipientId: number | null }, userIds: number[]) {
  const existing = await tx.subscription.count({ where: { userProfileId: { in: userIds }, recipientId: stream.recipientId! } });
  await tx.subscription.createMany({
    data: userIds.map((userProfileId, i) => ({
      realmId,
      userProfileId,
      recipientId: stream.recipientId!,
      color: COLORS[(stream.id + i) % COLORS.length]!,
    })),
    skipDuplicates: true,
  });
  const count = await tx.subscription.count({ where: { recipientId: stream.recipientId!, active: true, isUserActive: true } });
  await tx.stream.update({ where: { id: stream.id }, data: { subscriberCount: count } });
  return userIds.length - existing;
}

// ---------------------------------------------------------------------------------------------
// Interfaces for POST /channels/create and POST /users/me/subscriptions (issue 8). The bodies
// below are interim: the channels part replaces them (keeping the signatures).

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
  messageRetentionDays?: number | "realm_default" | "unlimited" | "forever";
  groupSettings?: Partial<Record<import("../lib/group-settings.ts").ChannelSettingName, import("../lib/user-groups.ts").GroupSettingValue>>;
}

/**
 * Checks (the caller's permissions, names, every value) and creates the channels in the caller's
 * transaction, with their events; subscribes nobody (the caller then uses bulkAddSubscriptions,
 * then announceNewChannels). Uses `tx` only, never `ctx.db`.
 */
export async function createChannels(
  tx: Tx,
  events: PendingEvents,
  ctx: import("../context.ts").RequestContext,
  inputs: ChannelCreation[],
): Promise<import("../db.ts").Stream[]> {
  const created = [];
  for (const input of inputs) created.push(await doCreateChannel(tx, ctx.realm.id, { name: input.name, description: input.description, inviteOnly: input.inviteOnly, historyPublicToSubscribers: input.historyPublicToSubscribers, creatorId: ctx.user.id }, events));
  return created;
}

/**
 * The notification bot's messages about new channels, after their subscribers were added: the
 * "channel events" message in each new channel and, with `announce`, the announcement in the
 * organization's new-channel announcements channel.
 */
export async function announceNewChannels(
  _tx: Tx,
  _events: PendingEvents,
  _ctx: import("../context.ts").RequestContext,
  _streams: import("../db.ts").Stream[],
  _options: { announce: boolean },
): Promise<void> {}
