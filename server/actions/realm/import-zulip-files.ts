/**
 * The files of an organization export, taken in by the import (Zulip's import_uploads,
 * process_avatars and create_image_attachments in zerver/lib/import_realm.py): `uploads/`,
 * `avatars/`, `emoji/` and `realm_icons/`, each listed by its `records.json`.
 *
 * - **Checked first** (readExportFiles, before anything is written): each records.json (all
 *   optional: an export without files has none) is read, every record's path must stay inside
 *   its directory and its file must be in the export; a missing one is refused with one line
 *   naming the file and the record.
 * - **Stored under the new organization's path ids** (PlacedFiles, inside the import's
 *   transaction): an upload under a fresh random path id as an upload here gets one, with its
 *   thumbnails made again if it is an image; an avatar under a new random hash, its sizes made
 *   again from the original by avatarImages (one that does not decode leaves the user with
 *   Gravatar's, as Zulip's process_avatars does); custom emoji and the icon and logos re-based on
 *   the new organization's id. Each file is copied from the export into the store one at a time,
 *   through the incoming directory as an upload is; only images to resize are read whole.
 * - **Undone** when the transaction fails: every file placed is deleted again.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../../config.ts";
import type { Tx } from "../../db/index.ts";
import {
  FILE_DIRS,
  isSafeRelativePath,
  RECORDS_FILE,
  str,
  type FileKind,
} from "../../lib/export/zulip-format.ts";
import { emojiPathId } from "../../lib/realm/realm-emoji.ts";
import { REALM_IMAGE_FILES, realmImagePathId } from "../../lib/realm/realm.ts";
import {
  insertImageAttachment,
  isThumbnailedType,
  makeThumbnails,
  thumbnailPathId,
} from "../../lib/uploads/thumbnails.ts";
import type { UploadStorage } from "../../lib/uploads/upload-storage.ts";
import { guessType, incomingDir, removeFile } from "../../lib/uploads/uploads.ts";
import {
  avatarImages,
  avatarPathId,
  BadImageError,
  mediumAvatarPathId,
  originalAvatarPathId,
} from "../../lib/users/avatars.ts";
import { ImportError } from "./import-error.ts";

/** An avatar's files in the export: the image as shown and the one as uploaded, either optional. */
export interface AvatarFiles {
  image?: string;
  original?: string;
}

/** The export's files, by what refers to them; each a path in the unpacked export. */
export interface ExportFiles {
  /** Uploads by their path id in the export (the record's `s3_path`, the attachment's `path_id`). */
  uploads: Map<string, { file: string; name: string }>;
  /** Avatars by the user's id in the export. */
  avatars: Map<number, AvatarFiles>;
  /** Custom emoji images by file name, each with its `.original` where the export has one. */
  emoji: { file: string; fileName: string; original: boolean }[];
  /** The organization's icon and logos by their file name (`icon.png`, …). */
  realmIcons: { file: string; name: string }[];
}

type FileRecord = Record<string, unknown>;

/** A directory's records with the file each names, checked: a missing file is refused. */
function readRecords(root: string, kind: FileKind): { record: FileRecord; file: string }[] {
  const dir = FILE_DIRS[kind];
  const where = `${dir}/${RECORDS_FILE}`;
  const path = join(root, dir, RECORDS_FILE);
  if (!existsSync(path)) return [];
  let records: unknown;
  try {
    records = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ImportError(`${where}: not complete JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(records) || records.some((r) => !r || typeof r !== "object"))
    throw new ImportError(`${where}: not a list of records`);
  return (records as FileRecord[]).map((record, i) => {
    const name = `record ${i + 1} (${str(record.path) || "no path"})`;
    const relative = str(record.path);
    if (!isSafeRelativePath(relative))
      throw new ImportError(`${where}: ${name}: its path is not a file inside ${dir}/`);
    const file = join(root, dir, relative);
    if (!existsSync(file) || !statSync(file).isFile())
      throw new ImportError(`${where}: ${name}: ${dir}/${relative} is missing from the export`);
    return { record, file };
  });
}

const isOriginal = (record: FileRecord) =>
  (str(record.s3_path) || str(record.path)).endsWith(".original");
const baseName = (path: string) => path.split("/").at(-1)!;

/** Every records.json of the export, read and checked (see the file comment). */
export function readExportFiles(root: string): ExportFiles {
  const files: ExportFiles = { uploads: new Map(), avatars: new Map(), emoji: [], realmIcons: [] };
  for (const { record, file } of readRecords(root, "uploads"))
    files.uploads.set(str(record.s3_path) || str(record.path), {
      file,
      name: baseName(str(record.path)),
    });
  for (const [i, { record, file }] of readRecords(root, "avatars").entries()) {
    const userId = Number(record.user_profile_id);
    if (!Number.isSafeInteger(userId))
      throw new ImportError(
        `${FILE_DIRS.avatars}/${RECORDS_FILE}: record ${i + 1} (${str(record.path)}): no user_profile_id`,
      );
    const avatar = files.avatars.get(userId) ?? {};
    if (isOriginal(record)) avatar.original = file;
    else avatar.image = file;
    files.avatars.set(userId, avatar);
  }
  for (const [i, { record, file }] of readRecords(root, "emoji").entries()) {
    const fileName = str(record.file_name);
    if (!isSafeRelativePath(fileName) || fileName.includes("/"))
      throw new ImportError(
        `${FILE_DIRS.emoji}/${RECORDS_FILE}: record ${i + 1} (${str(record.path)}): its file_name '${fileName}' is not a file name`,
      );
    files.emoji.push({ file, fileName, original: isOriginal(record) });
  }
  // Only the names this server serves: anything else in the directory could never be shown.
  for (const { record, file } of readRecords(root, "realmIcons")) {
    const name = baseName(str(record.path));
    if ((REALM_IMAGE_FILES as readonly string[]).includes(name))
      files.realmIcons.push({ file, name });
  }
  return files;
}

const MiB = 1024 * 1024;

/**
 * The files an import has placed in the store, so that they can be deleted again if its
 * transaction fails.
 */
export class PlacedFiles {
  readonly pathIds: string[] = [];

  constructor(
    private readonly storage: UploadStorage,
    private readonly config: Pick<
      Config,
      "dataDir" | "maxFileUploadSizeMib" | "maxAvatarFileSizeMib"
    >,
  ) {}

  /** A file in the incoming directory that the store's put moves in (or removes after it). */
  private async place(pathId: string, contentType: string, fill: (temp: string) => Promise<void>) {
    const dir = incomingDir(this.config);
    await mkdir(dir, { recursive: true });
    const temp = join(dir, randomBytes(16).toString("hex"));
    try {
      await fill(temp);
      // Recorded first: a put that fails half-way is deleted too.
      this.pathIds.push(pathId);
      await this.storage.put(pathId, { path: temp, contentType });
    } finally {
      await removeFile(temp);
    }
  }

  /** Copies a file of the export into the store, without reading it into memory. */
  copy(pathId: string, source: string, contentType: string) {
    return this.place(pathId, contentType, (temp) => copyFile(source, temp));
  }

  write(pathId: string, data: Buffer, contentType: string) {
    return this.place(pathId, contentType, (temp) => writeFile(temp, data));
  }

  /** Deletes every file placed (the import failed after placing them). */
  async remove(): Promise<void> {
    if (this.pathIds.length) await this.storage.delete(this.pathIds);
  }

  /**
   * An upload under its new path id, and if it is an image its thumbnails and image_attachment
   * row, as an upload here gets them (Zulip's create_image_attachments). A file larger than
   * this server takes as an upload is not read for thumbnails.
   */
  async storeUpload(
    tx: Tx,
    realmId: number,
    pathId: string,
    source: string,
    contentType: string,
  ): Promise<void> {
    await this.copy(pathId, source, contentType);
    if (!isThumbnailedType(contentType)) return;
    if (statSync(source).size > this.config.maxFileUploadSizeMib * MiB) return;
    const image = await makeThumbnails(await readFile(source), contentType);
    if (!image) return;
    await insertImageAttachment(tx, realmId, pathId, image);
    for (const t of image.thumbnails)
      await this.write(thumbnailPathId(pathId, t.name), t.data, t.stored.content_type);
  }

  /**
   * A user's avatar under the new `hash` (`<hex>.png`): the original as exported, the image as
   * shown (made again when the export's is no PNG or missing), and the medium size made again
   * from the original (Zulip's ensure_avatar_image). False when the image does not decode (or is
   * larger than an avatar may be here): nothing is stored then.
   */
  async storeAvatar(realmId: number, hash: string, files: AvatarFiles): Promise<boolean> {
    const source = files.original ?? files.image!;
    if (statSync(source).size > this.config.maxAvatarFileSizeMib * MiB) return false;
    let sizes: { small: Buffer; medium: Buffer };
    try {
      sizes = await avatarImages(await readFile(source));
    } catch (err) {
      if (err instanceof BadImageError) return false;
      throw err;
    }
    // The original is never served: its type matters to no one (Zulip's octet-stream too).
    if (files.original)
      await this.copy(
        originalAvatarPathId(realmId, hash),
        files.original,
        "application/octet-stream",
      );
    if (files.image?.endsWith(".png"))
      await this.copy(avatarPathId(realmId, hash), files.image, "image/png");
    else await this.write(avatarPathId(realmId, hash), sizes.small, "image/png");
    await this.write(mediumAvatarPathId(realmId, hash), sizes.medium, "image/png");
    return true;
  }

  /** A custom emoji's image (or its `.original`), kept under its file name in the new organization. */
  storeEmoji(realmId: number, emoji: ExportFiles["emoji"][number]) {
    return this.copy(
      emojiPathId(realmId, emoji.original ? `${emoji.fileName}.original` : emoji.fileName),
      emoji.file,
      guessType(emoji.fileName) ?? "application/octet-stream",
    );
  }

  /** The organization's icon or a logo, under the new organization's id. */
  storeRealmImage(realmId: number, image: ExportFiles["realmIcons"][number]) {
    return this.copy(
      realmImagePathId(realmId, image.name),
      image.file,
      image.name.endsWith(".png") ? "image/png" : "application/octet-stream",
    );
  }
}
