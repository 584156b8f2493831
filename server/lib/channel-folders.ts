/**
 * Channel folders (zerver/lib/channel_folders.py). Interim: the channel-folders part of issue 8
 * completes this file, keeping `accessChannelFolder`'s signature.
 */
import type { Db } from "../db.ts";
import { JsonableError } from "../errors.ts";
import { isStorableId } from "./messages.ts";

/** A folder of the organization for a channel's `folder_id`, else "Invalid channel folder ID". */
export async function accessChannelFolder(db: Db, realmId: number, folderId: number) {
  const folder = isStorableId(folderId) ? await db.channelFolder.findFirst({ where: { id: folderId, realmId }, select: { id: true, isArchived: true } }) : null;
  if (!folder) throw new JsonableError("Invalid channel folder ID");
  return folder;
}
