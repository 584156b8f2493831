/**
 * Creating a channel with Zulip's default permission settings and its recipient, and
 * subscribing users to it. (The POST /channels/create operation with every option builds on
 * this when its issue lands.)
 */
import type { Tx } from "../db.ts";
import { renderMarkdown } from "../lib/markdown/index.ts";
import { RecipientType } from "../lib/recipients.ts";
import { getSystemGroupIds, SystemGroups } from "../lib/user-groups.ts";

/** Zulip's defaults for a new channel's group settings (zerver/models/streams.py). */
const CHANNEL_DEFAULTS = {
  canAddSubscribersGroupId: SystemGroups.NOBODY,
  canAdministerChannelGroupId: SystemGroups.NOBODY,
  canCreateTopicGroupId: SystemGroups.EVERYONE,
  canDeleteAnyMessageGroupId: SystemGroups.NOBODY,
  canDeleteOwnMessageGroupId: SystemGroups.EVERYONE,
  canMoveMessagesOutOfChannelGroupId: SystemGroups.NOBODY,
  canMoveMessagesWithinChannelGroupId: SystemGroups.NOBODY,
  canRemoveSubscribersGroupId: SystemGroups.ADMINISTRATORS,
  canResolveTopicsGroupId: SystemGroups.NOBODY,
  canSendMessageGroupId: SystemGroups.EVERYONE,
  canSubscribeGroupId: SystemGroups.NOBODY,
} as const;

/** Zulip's palette for new subscriptions (a few of its STREAM_ASSIGNMENT_COLORS). */
const COLORS = ["#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5", "#f5ce6e", "#c2726a"];

export interface NewChannel {
  name: string;
  description?: string;
  inviteOnly?: boolean;
  historyPublicToSubscribers?: boolean;
  creatorId?: number | null;
}

export async function doCreateChannel(tx: Tx, realmId: number, input: NewChannel) {
  const groups = await getSystemGroupIds(tx, realmId);
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
      ...Object.fromEntries(Object.entries(CHANNEL_DEFAULTS).map(([field, group]) => [field, groups[group]])),
    } as any,
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
