/**
 * The files of an organization export, as Zulip's export_uploads_and_avatars writes them from its
 * local storage (zerver/lib/export.py: export_uploads_from_local, export_avatars_from_local,
 * export_emoji_from_local, export_realm_icons): four directories, each file at the path its
 * record names and a `records.json` listing the records sorted by path, with the keys Zulip's
 * local storage writes. Whatever the store (the local disk or S3), each file is read through it
 * and streamed to disk, one at a time, so memory stays flat whatever their sizes.
 *
 * - `uploads/<path_id>`: every attachment's file.
 * - `avatars/<realm_id>/<hash>.png` and `<hash>.original`: each uploaded avatar as shown and as
 *   uploaded (not the medium size: an import makes it again from the original, as Zulip's does).
 * - `emoji/<realm_id>/emoji/images/<file_name>` (and its `.original` where the store has one).
 * - `realm_icons/<realm_id>/<icon|logo|night_logo>.<png|original>`: whichever were uploaded.
 *
 * A file the store has lost is left out with its record, and reported: the export stays
 * importable (the attachment's row is left out too, see export-realm.ts).
 */
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Prisma, type Db } from "../../db/index.ts";
import { emojiPathId } from "../realm/realm-emoji.ts";
import { REALM_IMAGE_FILES, realmImagePathId } from "../realm/realm.ts";
import type { UploadStorage } from "../uploads/upload-storage.ts";
import { avatarPathId, originalAvatarPathId } from "../users/avatars.ts";
import { FILE_DIRS, isSafeRelativePath, RECORDS_FILE, type FileKind } from "./zulip-format.ts";

export interface ExportedFiles {
  /** What was written, by kind: uploads, users' avatars, emoji, icon and logos (each in its forms). */
  counts: Record<FileKind, number>;
  /** The path ids of the uploads whose file was written. */
  uploads: Set<string>;
  /** Path ids of files the organization refers to that the store does not have. */
  missing: string[];
}

type FileRecord = Record<string, unknown> & { path: string };

/** An avatar's, emoji's or icon's path id less the store's `avatars/` prefix: Zulip's path. */
const avatarsRelative = (pathId: string) => pathId.replace(/^avatars\//, "");

export async function exportFiles(
  db: Db,
  storage: UploadStorage,
  realmId: number,
  dir: string,
  /** Which uploads (`attachment a`) go in: all of the organization's unless narrowed. */
  uploadsInScope: Prisma.Sql = Prisma.sql`TRUE`,
): Promise<ExportedFiles> {
  const counts: Record<FileKind, number> = { uploads: 0, avatars: 0, emoji: 0, realmIcons: 0 };
  const missing: string[] = [];
  const uploads = new Set<string>();

  /** Streams a stored file to `<kind>/<path>`: its size and time, or null when the store lacks it. */
  const copy = async (kind: FileKind, pathId: string, path: string) => {
    if (!isSafeRelativePath(path)) return null;
    const file = await storage.read(pathId);
    if (!file) return null;
    const target = join(dir, FILE_DIRS[kind], path);
    mkdirSync(dirname(target), { recursive: true });
    const out = createWriteStream(target);
    await pipeline(file.body, out);
    return { size: out.bytesWritten, last_modified: file.lastModified.getTime() / 1000 };
  };
  const records: Record<FileKind, FileRecord[]> = {
    uploads: [],
    avatars: [],
    emoji: [],
    realmIcons: [],
  };

  const attachments = await db.$queryRaw<{ pathId: string; ownerId: number; email: string }[]>`
    SELECT a.path_id AS "pathId", a.owner_id AS "ownerId", u.email
    FROM attachment a JOIN user_profile u ON u.id = a.owner_id
    WHERE a.realm_id = ${realmId} AND ${uploadsInScope} ORDER BY a.id`;
  for (const a of attachments) {
    const written = await copy("uploads", a.pathId, a.pathId);
    if (!written) {
      missing.push(a.pathId);
      continue;
    }
    uploads.add(a.pathId);
    counts.uploads++;
    records.uploads.push({
      realm_id: realmId,
      user_profile_id: a.ownerId,
      user_profile_email: a.email,
      s3_path: a.pathId,
      path: a.pathId,
      ...written,
      content_type: null,
    });
  }

  const avatars = await db.$queryRaw<
    { id: number; email: string; avatarVersion: number; avatarHash: string }[]
  >`
    SELECT id, email, avatar_version AS "avatarVersion", avatar_hash AS "avatarHash"
    FROM user_profile
    WHERE realm_id = ${realmId} AND avatar_source = 'U' AND avatar_hash IS NOT NULL ORDER BY id`;
  for (const user of avatars) {
    // Avatars uploaded before resizing existed have no `.original`: that one is optional.
    for (const [pathId, required] of [
      [avatarPathId(realmId, user.avatarHash), true],
      [originalAvatarPathId(realmId, user.avatarHash), false],
    ] as const) {
      const path = avatarsRelative(pathId);
      const written = await copy("avatars", pathId, path);
      if (!written) {
        if (required) missing.push(pathId);
        continue;
      }
      if (required) counts.avatars++;
      records.avatars.push({
        realm_id: realmId,
        user_profile_id: user.id,
        user_profile_email: user.email,
        avatar_version: user.avatarVersion,
        s3_path: path,
        path,
        ...written,
        content_type: null,
      });
    }
  }

  const emoji = await db.$queryRaw<
    { name: string; fileName: string; authorId: number | null; deactivated: boolean }[]
  >`
    SELECT name, file_name AS "fileName", author_id AS "authorId", deactivated
    FROM realm_emoji WHERE realm_id = ${realmId} AND file_name IS NOT NULL ORDER BY id`;
  for (const e of emoji) {
    // Images are stored as uploaded, with no `.original` beside them; one there is exported too.
    for (const [pathId, required] of [
      [emojiPathId(realmId, e.fileName), true],
      [emojiPathId(realmId, `${e.fileName}.original`), false],
    ] as const) {
      const path = avatarsRelative(pathId);
      if (!(await copy("emoji", pathId, path))) {
        if (required) missing.push(pathId);
        continue;
      }
      if (required) counts.emoji++;
      records.emoji.push({
        realm_id: realmId,
        author: e.authorId,
        path,
        s3_path: path,
        file_name: e.fileName,
        name: e.name,
        deactivated: e.deactivated,
      });
    }
  }

  const images = new Set<string>();
  for (const name of REALM_IMAGE_FILES) {
    const path = `${realmId}/${name}`;
    if (!(await copy("realmIcons", realmImagePathId(realmId, name), path))) continue;
    records.realmIcons.push({ realm_id: realmId, path, s3_path: path });
    images.add(name.replace(/\.[a-z]+$/, ""));
  }
  counts.realmIcons = images.size;

  for (const kind of Object.keys(FILE_DIRS) as FileKind[]) {
    mkdirSync(join(dir, FILE_DIRS[kind]), { recursive: true });
    const sorted = records[kind].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    writeFileSync(join(dir, FILE_DIRS[kind], RECORDS_FILE), JSON.stringify(sorted, null, 2));
  }
  return { counts, uploads, missing };
}
