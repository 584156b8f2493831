/**
 * Writing an organization in Zulip's export format (lib/export/zulip-format.ts): `realm.json`,
 * the message files of 1,000 messages each, `attachment.json` with the uploads' rows, the files
 * themselves (uploads, avatars, custom emoji, icon and logos: export-files.ts) and `export.json`
 * (what made it), into a directory, then packed as `<name>.tar.gz` with one top directory as
 * Zulip packs it. The messages are read 1,000 at a time by id and the files streamed one at a
 * time, so memory stays flat whatever their number and size.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Prisma, type Db } from "../../db/index.ts";
import type { UploadStorage } from "../uploads/upload-storage.ts";
import { packTarGz } from "./archive.ts";
import { exportFiles } from "./export-files.ts";
import {
  AFTER_MESSAGES,
  ATTACHMENT_FILE,
  ATTACHMENT_TABLE,
  CLIENT_KEY,
  FORMAT,
  isTime,
  MESSAGE_TABLE,
  MESSAGES_PER_FILE,
  messagesFile,
  REALM_TABLES,
  tableColumns,
  USER_MESSAGE_TABLE,
  type ExportTable,
  type FileKind,
} from "./zulip-format.ts";

/** Which rows of a table belong to the organization. */
function realmRows(table: string, realmId: number): Prisma.Sql {
  switch (table) {
    case "realm":
      return Prisma.sql`id = ${realmId}`;
    case "user_group_membership":
      return Prisma.sql`user_group_id IN (SELECT id FROM user_group WHERE realm_id = ${realmId})`;
    case "group_group_membership":
      return Prisma.sql`supergroup_id IN (SELECT id FROM user_group WHERE realm_id = ${realmId})`;
    default:
      return Prisma.sql`realm_id = ${realmId}`;
  }
}

/** Rows as Zulip writes them: foreign keys by field name, times as float seconds. */
async function exportRows(
  db: Db,
  spec: ExportTable,
  where: Prisma.Sql,
): Promise<Record<string, unknown>[]> {
  const columns = await tableColumns(db, spec);
  const [{ rows }] = await db.$queryRaw<[{ rows: Record<string, unknown>[] | null }]>`
    SELECT json_agg(t ORDER BY ${Prisma.raw(spec.table === "user_message" ? "t.message_id, t.user_profile_id" : "t.id")}) AS rows
    FROM ${Prisma.raw(`"${spec.table}"`)} t WHERE ${where}`;
  return (rows ?? []).map((row) => {
    const out: Record<string, unknown> = {};
    for (const c of columns) {
      const value = row[c.name];
      out[c.field] =
        isTime(c) && typeof value === "string" ? Date.parse(value) / 1000 : (value ?? null);
    }
    // Zulip writes a named group's id twice: as `id` and as its `usergroup_ptr`.
    if (spec.table === "named_user_group") out.id = out.usergroup_ptr;
    if (spec.table === "user_message") {
      // Zulip writes a user message's flags as the bit mask `flags_mask`.
      out.flags_mask = Number(out.flags);
      delete out.flags;
    }
    return out;
  });
}

export interface ExportResult {
  tarball: string;
  messages: number;
  /** Message files written. */
  files: number;
  /** Stored files written, by kind. */
  stored: Record<FileKind, number>;
  /** Path ids of files the organization refers to that the upload store does not have. */
  missing: string[];
}

/** Exports the organization `realmId`, with its files from `storage`, to `<outDir>/<name>.tar.gz`. */
export async function exportRealm(
  db: Db,
  realmId: number,
  outDir: string,
  name: string,
  storage: UploadStorage,
): Promise<ExportResult> {
  const dir = join(outDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    const realm: Record<string, object[]> = {};
    for (const spec of [...REALM_TABLES, ...AFTER_MESSAGES])
      realm[spec.key] = await exportRows(db, spec, realmRows(spec.table, realmId));
    realm[CLIENT_KEY] = await db.$queryRaw<object[]>`
      SELECT id, name FROM client WHERE id IN (SELECT DISTINCT sending_client_id FROM message WHERE realm_id = ${realmId})
      ORDER BY id`;
    writeFileSync(join(dir, "realm.json"), JSON.stringify({ import_source: "zulip", ...realm }));

    let after = 0;
    let files = 0;
    let messages = 0;
    for (;;) {
      const ids = (
        await db.$queryRaw<{ id: number }[]>`
          SELECT id FROM message WHERE realm_id = ${realmId} AND id > ${after}
          ORDER BY id LIMIT ${MESSAGES_PER_FILE}`
      ).map((r) => r.id);
      if (ids.length === 0) break;
      const inBatch = Prisma.sql`id = ANY (${ids}::int[])`;
      const file = {
        [MESSAGE_TABLE.key]: await exportRows(db, MESSAGE_TABLE, inBatch),
        [USER_MESSAGE_TABLE.key]: await exportRows(
          db,
          USER_MESSAGE_TABLE,
          Prisma.sql`message_id = ANY (${ids}::int[])`,
        ),
      };
      writeFileSync(join(dir, messagesFile(++files)), JSON.stringify(file));
      messages += ids.length;
      after = ids.at(-1)!;
    }

    const stored = await exportFiles(db, storage, realmId, dir);
    writeFileSync(
      join(dir, ATTACHMENT_FILE),
      JSON.stringify({ [ATTACHMENT_TABLE.key]: await attachmentRows(db, realmId, stored.uploads) }),
    );
    writeFileSync(
      join(dir, "export.json"),
      JSON.stringify({ ...FORMAT, exported_at: new Date().toISOString(), messages }, null, 2),
    );
    const tarball = join(outDir, `${name}.tar.gz`);
    await packTarGz(dir, name, tarball);
    return { tarball, messages, files, stored: stored.counts, missing: stored.missing };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The uploads' rows whose files were exported, each with the ids of the messages linking it
 * (Zulip's `messages`, of the exported messages: all of the organization's) and of its scheduled
 * messages (`scheduled_messages`: none, as scheduled messages are not exported here).
 */
async function attachmentRows(db: Db, realmId: number, exported: Set<string>) {
  const rows = await exportRows(db, ATTACHMENT_TABLE, Prisma.sql`realm_id = ${realmId}`);
  const links = await db.$queryRaw<{ id: number; messages: number[] }[]>`
    SELECT am.attachment_id AS id, array_agg(am.message_id ORDER BY am.message_id) AS messages
    FROM attachment_message am JOIN message m ON m.id = am.message_id
    WHERE m.realm_id = ${realmId} GROUP BY am.attachment_id`;
  const messages = new Map(links.map((l) => [l.id, l.messages]));
  return rows
    .filter((r) => exported.has(r.path_id as string))
    .map((r) => ({
      ...r,
      messages: messages.get(r.id as number) ?? [],
      scheduled_messages: [],
    }));
}
