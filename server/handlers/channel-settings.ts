/** PATCH /streams/{stream_id} (update_stream_backend) and DELETE /streams/{stream_id} (deactivate_stream_backend). */
import { doArchiveChannel } from "../actions/channels/channel-archive.ts";
import { doUpdateChannel, type ChannelUpdate } from "../actions/channels/channel-settings.ts";
import type { Handler } from "../http/types.ts";
import { CHANNEL_GROUP_SETTINGS, type ChannelSettingName } from "../lib/groups/group-settings.ts";

export const updateStream: Handler<"update-stream"> = async ({ path, body }, ctx) => {
  const settings: ChannelUpdate["settings"] = {};
  for (const name of Object.keys(CHANNEL_GROUP_SETTINGS) as ChannelSettingName[])
    if (body?.[name] !== undefined) settings[name] = body[name];
  await doUpdateChannel(ctx, path.stream_id, {
    newName: body?.new_name,
    description: body?.description,
    isPrivate: body?.is_private,
    isWebPublic: body?.is_web_public,
    historyPublicToSubscribers: body?.history_public_to_subscribers,
    isDefaultStream: body?.is_default_stream,
    messageRetentionDays: body?.message_retention_days,
    isArchived: body?.is_archived,
    folderId: body?.folder_id,
    topicsPolicy: body?.topics_policy,
    settings,
  });
  return {};
};

export const archiveStream: Handler<"archive-stream"> = async ({ path }, ctx) => {
  await doArchiveChannel(ctx, path.stream_id);
  return {};
};
