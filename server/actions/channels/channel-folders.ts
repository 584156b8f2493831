/**
 * Creating and changing channel folders (zerver/actions/channel_folders.py), administrators only,
 * each change a `channel_folder` event to everyone in the organization.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import { renderMarkdown } from "../../lib/markdown/index.ts";
import {
  accessChannelFolder,
  channelFolderDict,
  checkChannelFolderName,
} from "../../lib/channels/channel-folders.ts";
import { refuseNul } from "../../lib/text.ts";
import { activeUserIds, requireRealmAdmin } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";

const rendered = (description: string) => (description ? renderMarkdown(description).html : "");

/** check_add_channel_folder: the next position in the organization's order. */
export async function doCreateChannelFolder(
  ctx: RequestContext,
  input: { name: string; description: string },
): Promise<number> {
  requireRealmAdmin(ctx.user);
  return inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const name = await checkChannelFolderName(tx, ctx.realm.id, input.name);
    refuseNul(input.description, "channel folder description");
    const last = await tx.channelFolder.aggregate({
      where: { realmId: ctx.realm.id },
      _max: { order: true },
    });
    const folder = await tx.channelFolder.create({
      data: {
        realmId: ctx.realm.id,
        name,
        description: input.description,
        renderedDescription: rendered(input.description),
        creatorId: ctx.user.id,
        order: (last._max.order ?? -1) + 1,
      },
    });
    events.add(
      { type: "channel_folder", op: "add", channel_folder: channelFolderDict(folder) },
      await activeUserIds(tx, ctx.realm.id),
    );
    return folder.id;
  });
}

/** update_channel_folder: the fields sent, in one event of what changed. */
export async function doUpdateChannelFolder(
  ctx: RequestContext,
  folderId: number,
  input: { name?: string; description?: string; isArchived?: boolean },
) {
  requireRealmAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const folder = await accessChannelFolder(tx, ctx.realm.id, folderId);
    const data: Record<string, unknown> = {};
    const changed: Record<string, unknown> = {};
    if (input.name !== undefined) {
      const name = await checkChannelFolderName(tx, ctx.realm.id, input.name, folder.id);
      if (name !== folder.name) data.name = changed.name = name;
    }
    if (
      input.description !== undefined &&
      refuseNul(input.description, "channel folder description") !== folder.description
    ) {
      data.description = changed.description = input.description;
      data.renderedDescription = changed.rendered_description = rendered(input.description);
    }
    if (input.isArchived !== undefined && input.isArchived !== folder.isArchived) {
      if (
        input.isArchived &&
        (await tx.stream.count({ where: { folderId: folder.id, isArchived: false } })) > 0
      )
        throw new JsonableError(
          "You need to remove all the channels from this folder to archive it.",
        );
      data.isArchived = changed.is_archived = input.isArchived;
    }
    if (Object.keys(data).length === 0) return;
    await tx.channelFolder.update({ where: { id: folder.id }, data });
    events.add(
      { type: "channel_folder", op: "update", channel_folder_id: folder.id, data: changed },
      await activeUserIds(tx, ctx.realm.id),
    );
  });
}

/**
 * try_reorder_realm_channel_folders: each folder's order becomes its (last) position in `order`;
 * every folder, archived ones too, must be listed; IDs of no folder are ignored. One UPDATE for
 * all of them; the event carries the list as sent.
 */
export async function doReorderChannelFolders(ctx: RequestContext, order: number[]) {
  requireRealmAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const position = new Map(order.map((id, i) => [id, i]));
    const folders = await tx.channelFolder.findMany({
      where: { realmId: ctx.realm.id },
      select: { id: true },
    });
    if (folders.some((f) => !position.has(f.id))) throw new JsonableError("Invalid order mapping.");
    if (folders.length) {
      const ids = folders.map((f) => f.id);
      await tx.$executeRaw`
        UPDATE channel_folder f SET "order" = m.ord
        FROM unnest(${ids}::int[], ${ids.map((id) => position.get(id)!)}::int[]) AS m(id, ord)
        WHERE f.id = m.id`;
    }
    events.add(
      { type: "channel_folder", op: "reorder", order },
      await activeUserIds(tx, ctx.realm.id),
    );
  });
}
