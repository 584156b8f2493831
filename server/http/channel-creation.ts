/**
 * The options of a channel to create, parsed alike by POST /channels/create and by
 * POST /users/me/subscriptions (which creates the channels it names that do not exist).
 */
import type { ChannelCreation } from "../actions/channels/channels.ts";
import { CHANNEL_GROUP_SETTINGS, type ChannelSettingName } from "../lib/groups/group-settings.ts";
import type { GroupSettingValue } from "../lib/groups/user-groups.ts";

/** The options of a channel to create, as POST /channels/create and POST /users/me/subscriptions name them. */
export interface CreationOptions {
  invite_only?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  folder_id?: number | null;
  topics_policy?: ChannelCreation["topicsPolicy"];
  message_retention_days?: number | string;
}

/** A channel to create from a request's options (and every channel group setting it names). */
export function channelCreation(
  name: string,
  description: string | undefined,
  body: CreationOptions,
): ChannelCreation {
  const groupSettings: Partial<Record<ChannelSettingName, GroupSettingValue>> = {};
  for (const setting of Object.keys(CHANNEL_GROUP_SETTINGS) as ChannelSettingName[]) {
    const value = (body as Record<string, unknown>)[setting];
    if (value !== undefined) groupSettings[setting] = value as GroupSettingValue;
  }
  return {
    name,
    description,
    inviteOnly: body.invite_only,
    isWebPublic: body.is_web_public,
    historyPublicToSubscribers: body.history_public_to_subscribers,
    isDefaultStream: body.is_default_stream,
    folderId: body.folder_id,
    topicsPolicy: body.topics_policy,
    messageRetentionDays: body.message_retention_days,
    groupSettings,
  };
}
