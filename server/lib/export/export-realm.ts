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
import { editHistories } from "./edit-history.ts";
import {
  defaultSettings,
  directMessageGroupCondition,
  ExportType,
  FULL_EXPORT,
  messageCondition,
  privateRowsCondition,
  scopeSubscriptionRow,
  scopeUserRow,
  type ExportScope,
} from "./export-scope.ts";
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
  PER_MESSAGE,
  REALM_TABLES,
  tableColumns,
  USER_MESSAGE_TABLE,
  type ExportTable,
  type FileKind,
} from "./zulip-format.ts";

/** Which rows of a table the export holds: the organization's, within the export's scope. */
function realmRows(table: string, realmId: number, scope: ExportScope): Prisma.Sql {
  const own = organizationRows(table, realmId);
  const inScope = [
    privateRowsCondition(table, scope),
    table === "recipient"
      ? directMessageGroupCondition(scope, "id")
      : table === "subscription" || table === "direct_message_group"
        ? directMessageGroupCondition(scope, "recipient_id")
        : null,
    PER_MESSAGE.has(table) && scope !== FULL_EXPORT
      ? Prisma.sql`message_id IN (SELECT m.id FROM message m WHERE m.realm_id = ${realmId} AND ${messageCondition(scope)})`
      : null,
  ].filter((c) => c !== null);
  return inScope.length
    ? Prisma.join(
        [own, ...inScope].map((c) => Prisma.sql`(${c})`),
        " AND ",
      )
    : own;
}

function organizationRows(table: string, realmId: number): Prisma.Sql {
  switch (table) {
    case "realm":
      return Prisma.sql`id = ${realmId}`;
    case "user_group_membership":
      return Prisma.sql`user_group_id IN (SELECT id FROM user_group WHERE realm_id = ${realmId})`;
    case "group_group_membership":
      return Prisma.sql`supergroup_id IN (SELECT id FROM user_group WHERE realm_id = ${realmId})`;
    case "bot_storage_data":
      return Prisma.sql`bot_profile_id IN (SELECT id FROM user_profile WHERE realm_id = ${realmId})`;
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

/**
 * Exports the organization `realmId`, with its files from `storage`, to `<outDir>/<name>.tar.gz`:
 * everything, or what the scope of a data export requested through the API holds
 * (lib/export/export-scope.ts).
 */
export async function exportRealm(
  db: Db,
  realmId: number,
  outDir: string,
  name: string,
  storage: UploadStorage,
  scope: ExportScope = FULL_EXPORT,
): Promise<ExportResult> {
  const dir = join(outDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    const consenting = new Set(scope.consenting);
    const inMessages = messageCondition(scope);
    const realm: Record<string, object[]> = {};
    for (const spec of [...REALM_TABLES, ...AFTER_MESSAGES])
      realm[spec.key] = await exportRows(db, spec, realmRows(spec.table, realmId, scope));
    if (scope !== FULL_EXPORT) {
      const defaults = await defaultSettings(db, realmId);
      realm.zerver_userprofile = (realm.zerver_userprofile as Record<string, unknown>[]).map((u) =>
        scopeUserRow(u, scope, consenting, defaults),
      );
      realm.zerver_subscription = (realm.zerver_subscription as Record<string, unknown>[]).map(
        (s) => scopeSubscriptionRow(s, scope, consenting),
      );
      // A channel's first message may be one the export leaves out: its first exported one.
      const firsts = new Map(
        (
          await db.$queryRaw<{ recipient: number; first: number }[]>`
            SELECT m.recipient_id AS recipient, min(m.id) AS first FROM message m
            WHERE m.realm_id = ${realmId} AND ${inMessages} GROUP BY m.recipient_id`
        ).map((r) => [r.recipient, r.first]),
      );
      for (const stream of realm.zerver_stream as Record<string, unknown>[])
        stream.first_message_id = firsts.get(Number(stream.recipient)) ?? null;
    }
    realm[CLIENT_KEY] = await db.$queryRaw<object[]>`
      SELECT id, name FROM client WHERE id IN (
        SELECT sending_client_id FROM message WHERE realm_id = ${realmId}
        UNION SELECT sending_client_id FROM scheduled_message WHERE realm_id = ${realmId}
        UNION SELECT client_id FROM user_status WHERE realm_id = ${realmId})
      ORDER BY id`;
    writeFileSync(join(dir, "realm.json"), JSON.stringify({ import_source: "zulip", ...realm }));

    let after = 0;
    let files = 0;
    let messages = 0;
    for (;;) {
      const ids = (
        await db.$queryRaw<{ id: number }[]>`
          SELECT m.id FROM message m WHERE m.realm_id = ${realmId} AND m.id > ${after}
            AND ${inMessages}
          ORDER BY m.id LIMIT ${MESSAGES_PER_FILE}`
      ).map((r) => r.id);
      if (ids.length === 0) break;
      const inBatch = Prisma.sql`id = ANY (${ids}::int[])`;
      const messageRows = await exportRows(db, MESSAGE_TABLE, inBatch);
      const histories = await editHistories(db, ids);
      for (const m of messageRows) m.edit_history = histories.get(Number(m.id)) ?? null;
      const file = {
        [MESSAGE_TABLE.key]: messageRows,
        [USER_MESSAGE_TABLE.key]: await exportRows(
          db,
          USER_MESSAGE_TABLE,
          scope.type === ExportType.FULL_WITH_CONSENT
            ? Prisma.sql`message_id = ANY (${ids}::int[]) AND user_profile_id = ANY (${scope.consenting}::int[])`
            : Prisma.sql`message_id = ANY (${ids}::int[])`,
        ),
      };
      writeFileSync(join(dir, messagesFile(++files)), JSON.stringify(file));
      messages += ids.length;
      after = ids.at(-1)!;
    }

    // The uploads the exported messages and scheduled messages link, as far as the scope goes.
    const exportedMessage = Prisma.sql`SELECT m.id FROM message m WHERE m.realm_id = ${realmId} AND ${inMessages}`;
    const exportedScheduled = Prisma.sql`SELECT id FROM scheduled_message
      WHERE realm_id = ${realmId} AND ${privateRowsCondition("scheduled_message", scope) ?? Prisma.sql`TRUE`}`;
    const uploadsInScope =
      scope === FULL_EXPORT
        ? Prisma.sql`TRUE`
        : Prisma.sql`(EXISTS (SELECT 1 FROM attachment_message am WHERE am.attachment_id = a.id
              AND am.message_id IN (${exportedMessage}))
            OR EXISTS (SELECT 1 FROM attachment_scheduled_message asm WHERE asm.attachment_id = a.id
              AND asm.scheduled_message_id IN (${exportedScheduled})))`;
    const stored = await exportFiles(db, storage, realmId, dir, uploadsInScope);
    writeFileSync(
      join(dir, ATTACHMENT_FILE),
      JSON.stringify({
        [ATTACHMENT_TABLE.key]: await attachmentRows(
          db,
          realmId,
          stored.uploads,
          exportedMessage,
          exportedScheduled,
        ),
      }),
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
 * The uploads' rows whose files were exported, each with the ids of the exported messages linking
 * it (Zulip's `messages`) and of the exported scheduled messages (`scheduled_messages`).
 */
async function attachmentRows(
  db: Db,
  realmId: number,
  exported: Set<string>,
  exportedMessage: Prisma.Sql,
  exportedScheduled: Prisma.Sql,
) {
  const rows = await exportRows(db, ATTACHMENT_TABLE, Prisma.sql`realm_id = ${realmId}`);
  const links = await db.$queryRaw<{ id: number; messages: number[] }[]>`
    SELECT am.attachment_id AS id, array_agg(am.message_id ORDER BY am.message_id) AS messages
    FROM attachment_message am WHERE am.message_id IN (${exportedMessage})
    GROUP BY am.attachment_id`;
  const scheduledLinks = await db.$queryRaw<{ id: number; scheduled: number[] }[]>`
    SELECT asm.attachment_id AS id,
      array_agg(asm.scheduled_message_id ORDER BY asm.scheduled_message_id) AS scheduled
    FROM attachment_scheduled_message asm WHERE asm.scheduled_message_id IN (${exportedScheduled})
    GROUP BY asm.attachment_id`;
  const messages = new Map(links.map((l) => [l.id, l.messages]));
  const scheduled = new Map(scheduledLinks.map((l) => [l.id, l.scheduled]));
  return rows
    .filter((r) => exported.has(r.path_id as string))
    .map((r) => ({
      ...r,
      messages: messages.get(r.id as number) ?? [],
      scheduled_messages: scheduled.get(r.id as number) ?? [],
    }));
}
