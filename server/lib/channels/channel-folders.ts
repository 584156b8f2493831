/**
 * Channel folders (zerver/lib/channel_folders.py): name rules, lookups and the API form
 * (ChannelFolder.to_dict).
 */
import type { ChannelFolder, Db } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { isStorableId } from "../ids.ts";
import { unixSeconds } from "../time.ts";
import { unprintablePosition } from "../text.ts";

export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;

/** A folder of the organization (a channel's `folder_id`, PATCH), else "Invalid channel folder ID". */
export async function accessChannelFolder(db: Db, realmId: number, folderId: number) {
  const folder = isStorableId(folderId)
    ? await db.channelFolder.findFirst({ where: { id: folderId, realmId } })
    : null;
  if (!folder) throw new JsonableError("Invalid channel folder ID");
  return folder;
}

/**
 * check_channel_folder_name: stripped, not empty, every character printable, unique in the
 * organization case-insensitively (but for the folder being renamed).
 */
export async function checkChannelFolderName(
  db: Db,
  realmId: number,
  raw: string,
  except?: number,
): Promise<string> {
  const name = raw.trim();
  if (name === "") throw new JsonableError("Channel folder name can't be empty.");
  const position = unprintablePosition(name);
  if (position)
    throw new JsonableError(`Invalid character in channel folder name, at position ${position}.`);
  const clash = await db.channelFolder.findFirst({
    where: {
      realmId,
      name: { equals: name, mode: "insensitive" },
      ...(except ? { id: { not: except } } : {}),
    },
    select: { id: true },
  });
  if (clash) throw new JsonableError(`Channel folder '${name}' already exists`);
  return name;
}

export function channelFolderDict(folder: ChannelFolder) {
  return {
    id: folder.id,
    name: folder.name,
    description: folder.description,
    rendered_description: folder.renderedDescription,
    order: folder.order,
    is_archived: folder.isArchived,
    creator_id: folder.creatorId,
    date_created: unixSeconds(folder.dateCreated),
  };
}

/** The organization's folders in their order (register's `channel_folders` holds the archived ones too). */
export async function listChannelFolders(db: Db, realmId: number, includeArchived: boolean) {
  const folders = await db.channelFolder.findMany({
    where: { realmId, ...(includeArchived ? {} : { isArchived: false }) },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
  return folders.map(channelFolderDict);
}
