/**
 * POST /channel_folders/create, GET and PATCH (reorder) /channel_folders,
 * PATCH /channel_folders/{channel_folder_id}.
 */
import {
  doCreateChannelFolder,
  doReorderChannelFolders,
  doUpdateChannelFolder,
} from "../actions/channels/channel-folders.ts";
import type { Handler } from "../http/types.ts";
import { listChannelFolders } from "../lib/channels/channel-folders.ts";

export const createChannelFolder: Handler<"create-channel-folder"> = async ({ body }, ctx) => ({
  channel_folder_id: await doCreateChannelFolder(ctx, {
    name: body.name,
    description: body.description,
  }),
});

export const getChannelFolders: Handler<"get-channel-folders"> = async ({ query }, ctx) => ({
  channel_folders: await listChannelFolders(ctx.db, ctx.realm.id, query.include_archived ?? false),
});

export const updateChannelFolder: Handler<"update-channel-folder"> = async (
  { path, body },
  ctx,
) => {
  await doUpdateChannelFolder(ctx, path.channel_folder_id, {
    name: body.name,
    description: body.description,
    isArchived: body.is_archived,
  });
  return {};
};

export const patchChannelFolders: Handler<"patch-channel-folders"> = async ({ body }, ctx) => {
  await doReorderChannelFolders(ctx, body.order);
  return {};
};
