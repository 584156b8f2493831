/**
 * Importing a Zulip organization export (zerver/lib/import_realm.py) into a new organization of
 * this server: `npm run manage -- import-zulip PATH`, PATH the `.tar.gz` Zulip's `export` command
 * and `POST /export/realm` make (or our own export's, or the unpacked directory).
 *
 * - **Ids**: every table's ids move by one offset, taken from its sequence, so order is kept and
 *   no map of old to new ids is held (a foreign key moves by its table's offset, a recipient's
 *   `type_id` by its type's). The clients messages were sent from are matched by name.
 * - **Checks first**: every file is read and every reference checked before anything is
 *   written (a reference to a user, channel, group, recipient or message that is not in the
 *   export is refused naming its file, table and row); a truncated file, an unknown format or an
 *   organization that exists already is refused the same way, with one line.
 * - **One transaction**: the whole organization commits at once or not at all, so a crash or a
 *   refused row leaves nothing behind and the import can simply be run again. The message files
 *   are read one at a time (1,000 messages each), so memory stays flat (1,000,000 messages
 *   peaked at 300 MiB); what is kept across them is one entry per channel topic.
 * - **What it takes**: the organization and its settings, users and bots (API keys kept unless
 *   already used on this server, then new ones), groups and their members, channels,
 *   subscriptions, direct-message groups, default channels, domains, linkifiers, custom emoji
 *   (their rows), profile fields and values, topics' visibility, muted users, alert words,
 *   messages with each user's flags (rendered where the export lacks it), reactions and
 *   submessages, the uploads' rows and the messages linking them; and the files (uploads,
 *   avatars, custom emoji images, icon and logos: import-zulip-files.ts), stored under the new
 *   organization's path ids, with messages' links to uploads rewritten to them (Zulip's
 *   fix_upload_links). A file the records name that the export lacks is refused before anything
 *   is written; if the transaction fails after files were stored, they are deleted again.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import type { AppDeps } from "../../context.ts";
import type { Tx } from "../../db/index.ts";
import { generateApiKey } from "../../lib/auth/passwords.ts";
import { INTERNAL_BOTS } from "../../lib/users/internal-bots.ts";
import { fakeEmailDomain } from "../../lib/realm/realm.ts";
import { doCreateUser } from "../users/users.ts";
import { renderMarkdown } from "../../lib/markdown/index.ts";
import type { MarkdownContext, MentionUser } from "../../lib/markdown/types.ts";
import { directMessageGroupHash, RecipientType } from "../../lib/recipients.ts";
import { subdomainProblem } from "../../lib/realm/realm.ts";
import { editRows } from "../../lib/export/edit-history.ts";
import { uploadStorage } from "../../lib/uploads/upload-storage.ts";
import { guessType, newPathId } from "../../lib/uploads/uploads.ts";
import { ImportError } from "./import-error.ts";
import { PlacedFiles, readExportFiles } from "./import-zulip-files.ts";
import {
  AFTER_MESSAGES,
  ATTACHMENT_FILE,
  ATTACHMENT_TABLE,
  CLIENT_KEY,
  FORMAT,
  isTime,
  MESSAGE_TABLE,
  REALM_TABLES,
  str,
  tableColumns,
  USER_MESSAGE_TABLE,
  type Column,
  type ExportTable,
  type FileKind,
} from "../../lib/export/zulip-format.ts";

export { ImportError };

export interface ImportResult {
  realmId: number;
  stringId: string;
  users: number;
  channels: number;
  messages: number;
  /** What was stored, by kind: uploads, users' avatars, emoji, icon and logos (each in its forms). */
  files: Record<FileKind, number>;
}

type Row = Record<string, unknown>;

/** Columns set after every table is in: they refer to tables inserted later. */
const DEFERRED: Record<string, string[]> = {
  realm: [
    "new_stream_announcements_stream_id",
    "signup_announcements_stream_id",
    "zulip_update_announcements_stream_id",
    "moderation_request_channel_id",
  ],
  user_profile: ["default_sending_stream_id", "default_events_register_stream_id"],
};
/**
 * Tables older exports do not carry (Zulip's before 11, ours before channel folders travelled):
 * when the export lacks the table, references to it are dropped.
 */
const OPTIONAL_TABLES = new Set(["channel_folder"]);
const RECIPIENT_TABLES: Record<number, string> = {
  [RecipientType.PERSONAL]: "user_profile",
  [RecipientType.STREAM]: "stream",
  [RecipientType.DIRECT_MESSAGE_GROUP]: "direct_message_group",
};
const BATCH = 1000;

function readJson(dir: string, file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(join(dir, file), "utf8");
  } catch (err) {
    throw new ImportError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value))
      throw new Error("not an object");
    return value as Record<string, unknown>;
  } catch (err) {
    throw new ImportError(`${file}: not a complete JSON object (${(err as Error).message})`);
  }
}

function rowsOf(file: string, data: Record<string, unknown>, key: string): Row[] {
  const rows = data[key] ?? [];
  if (!Array.isArray(rows) || rows.some((r) => !r || typeof r !== "object"))
    throw new ImportError(`${file}: ${key} is not a list of rows`);
  return rows as Row[];
}

/** The directory holding realm.json: the one given, or its only subdirectory (a tarball's top). */
export function exportRoot(dir: string): string {
  if (existsSync(join(dir, "realm.json"))) return dir;
  const subdirs = readdirSync(dir).filter((n) => statSync(join(dir, n)).isDirectory());
  if (subdirs.length === 1 && existsSync(join(dir, subdirs[0]!, "realm.json")))
    return join(dir, subdirs[0]!);
  throw new ImportError("realm.json: not found (is this a Zulip organization export?)");
}

export async function doImportZulip(
  deps: Pick<AppDeps, "db" | "log" | "config">,
  dir: string,
  options: { subdomain?: string } = {},
): Promise<ImportResult> {
  const { config } = deps;
  const root = exportRoot(dir);
  const made = existsSync(join(root, "export.json")) ? readJson(root, "export.json") : null;
  if (made && Number(made.zulip_export_format) > FORMAT.zulip_export_format)
    throw new ImportError(
      `export.json: format version ${String(made.zulip_export_format)} is newer than this server reads (${FORMAT.zulip_export_format})`,
    );
  const realmData = readJson(root, "realm.json");
  const tables = new Map<string, Row[]>();
  for (const spec of [...REALM_TABLES, ...AFTER_MESSAGES])
    tables.set(spec.table, rowsOf("realm.json", realmData, spec.key));
  // Zulip keeps its mirror dummies apart, and its system bots outside every organization (only
  // their email and ids): here both are users of the organization, the bots with their own
  // personal recipient, as this server makes every organization's internal bots.
  tables
    .get("user_profile")!
    .push(...rowsOf("realm.json", realmData, "zerver_userprofile_mirrordummy"));
  const fromZulip = "zerver_userprofile_crossrealm" in realmData;
  for (const bot of rowsOf("realm.json", realmData, "zerver_userprofile_crossrealm")) {
    const email = str(bot.email);
    const spec = INTERNAL_BOTS.find((b) => b.email === email);
    tables.get("user_profile")!.push({
      id: bot.id,
      email,
      delivery_email: email,
      full_name: spec?.fullName ?? email.split("@")[0],
      is_bot: true,
      bot_type: spec?.botType ?? 1,
      role: spec?.role ?? 400,
      is_active: true,
      recipient: bot.recipient_id,
    });
    tables
      .get("recipient")!
      .push({ id: bot.recipient_id, type: RecipientType.PERSONAL, type_id: bot.id });
  }
  const notExported = new Set(
    REALM_TABLES.filter((t) => OPTIONAL_TABLES.has(t.table) && !(t.key in realmData)).map(
      (t) => t.table,
    ),
  );
  const [realmRow, ...more] = tables.get("realm")!;
  if (!realmRow || more.length)
    throw new ImportError("realm.json: zerver_realm must hold exactly one organization");
  const stringId = options.subdomain ?? str(realmRow.string_id);
  const problem = stringId === "" ? null : subdomainProblem(stringId);
  if (problem) throw new ImportError(`subdomain '${stringId}': ${problem}`);
  if (await deps.db.realm.findUnique({ where: { stringId } }))
    throw new ImportError(
      `an organization with the subdomain '${stringId}' exists already: an import makes a new organization (give another with --subdomain)`,
    );

  const recipientTypes = new Map(
    tables.get("recipient")!.map((r) => [Number(r.id), Number(r.type)]),
  );

  // The message files: each read once now, to check it, find the range of message ids and each
  // channel topic's latest message (one entry a topic, by its exact name).
  const messageFiles = readdirSync(root)
    .filter((n) => /^messages-\d{6}\.json$/.test(n))
    .sort();
  let minMessage = Infinity;
  let maxMessage = -Infinity;
  let messageCount = 0;
  const latestInTopic = new Map<string, { recipient: number; subject: string; id: number }>();
  for (const file of messageFiles) {
    const data = readJson(root, file);
    const messages = rowsOf(file, data, MESSAGE_TABLE.key);
    rowsOf(file, data, USER_MESSAGE_TABLE.key);
    for (const m of messages) {
      const id = Number(m.id);
      if (!Number.isSafeInteger(id)) throw new ImportError(`${file}: a message without an id`);
      minMessage = Math.min(minMessage, id);
      maxMessage = Math.max(maxMessage, id);
      const recipient = Number(m.recipient);
      if (recipientTypes.get(recipient) !== RecipientType.STREAM) continue;
      const subject = ourSubject(m.subject);
      const key = `${recipient}\n${subject}`;
      if ((latestInTopic.get(key)?.id ?? -Infinity) < id)
        latestInTopic.set(key, { recipient, subject, id });
    }
    messageCount += messages.length;
  }

  // The files, and the uploads' rows with the messages linking each: every file must be there.
  const exported = readExportFiles(root);
  const attachments = existsSync(join(root, ATTACHMENT_FILE))
    ? rowsOf(ATTACHMENT_FILE, readJson(root, ATTACHMENT_FILE), ATTACHMENT_TABLE.key)
    : [];
  tables.set(ATTACHMENT_TABLE.table, attachments);
  /** The path ids each message links (by the message's id in the export), to rewrite its links. */
  const linkedUploads = new Map<number, string[]>();
  /** The same for the scheduled messages. */
  const scheduledUploads = new Map<number, string[]>();
  const scheduledIds = new Set(tables.get("scheduled_message")!.map((r) => Number(r.id)));
  for (const a of attachments) {
    const where = `${ATTACHMENT_FILE}: ${ATTACHMENT_TABLE.key} row ${str(a.id)}`;
    const pathId = str(a.path_id);
    if (!exported.uploads.has(pathId))
      throw new ImportError(`${where}: its file ${pathId} is not in uploads/records.json`);
    if (!Array.isArray(a.messages ?? [])) throw new ImportError(`${where}: messages is not a list`);
    for (const m of (a.messages ?? []) as unknown[]) {
      const id = Number(m);
      if (!(id >= minMessage && id <= maxMessage))
        throw new ImportError(`${where}: message ${String(m)} is not in the export`);
      linkedUploads.set(id, [...(linkedUploads.get(id) ?? []), pathId]);
    }
    if (!Array.isArray(a.scheduled_messages ?? []))
      throw new ImportError(`${where}: scheduled_messages is not a list`);
    for (const m of (a.scheduled_messages ?? []) as unknown[]) {
      const id = Number(m);
      if (!scheduledIds.has(id))
        throw new ImportError(`${where}: scheduled message ${String(m)} is not in the export`);
      scheduledUploads.set(id, [...(scheduledUploads.get(id) ?? []), pathId]);
    }
  }

  // What each table's rows are, for checking references before writing anything.
  const known = new Map<string, Set<number>>();
  for (const [table, rows] of tables) known.set(table, new Set(rows.map((r) => Number(r.id))));
  known.set("named_user_group", known.get("user_group")!);
  const userFields = new Set(
    tables
      .get("custom_profile_field")!
      .filter((f) => Number(f.field_type) === 6)
      .map((f) => Number(f.id)),
  );
  // A direct-message group's members are its recipient's subscribers.
  const groupMembers = new Map<number, number[]>();
  for (const sub of tables.get("subscription")!) {
    const recipient = Number(sub.recipient);
    if (recipientTypes.get(recipient) !== RecipientType.DIRECT_MESSAGE_GROUP) continue;
    groupMembers.set(recipient, [...(groupMembers.get(recipient) ?? []), Number(sub.user_profile)]);
  }
  const userActive = new Map(
    tables.get("user_profile")!.map((r) => [Number(r.id), r.is_active !== false]),
  );
  for (const userId of exported.avatars.keys())
    if (!known.get("user_profile")!.has(userId))
      throw new ImportError(
        `avatars/records.json: the avatar of user ${userId}: user ${userId} is not in the export`,
      );
  // An uploaded avatar gets a new random name; one whose files the export lacks is Gravatar's.
  const avatarHashes = new Map<number, string>();
  for (const u of tables.get("user_profile")!)
    if (u.avatar_source === "U" && exported.avatars.has(Number(u.id)))
      avatarHashes.set(Number(u.id), randomBytes(20).toString("hex") + ".png");

  const placed = new PlacedFiles(await uploadStorage(config), config);

  const work = deps.db.$transaction(
    async (tx) => {
      // Offsets: each table's ids move above what its sequence has handed out.
      const offsets = new Map<string, number>();
      const allocate = async (table: string, ids: number[]) => {
        if (ids.length === 0) return offsets.set(table, 0);
        const min = Math.min(...ids);
        const max = Math.max(...ids);
        const [{ base }] = await tx.$queryRawUnsafe<[{ base: number }]>(
          `SELECT nextval(pg_get_serial_sequence('"${table}"', 'id'))::int AS base`,
        );
        const offset = base - min;
        await tx.$queryRawUnsafe(
          `SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), $1::bigint)`,
          max + offset,
        );
        offsets.set(table, offset);
      };
      for (const [table, rows] of tables)
        if (table !== "named_user_group")
          await allocate(
            table,
            rows.map((r) => Number(r.id)),
          );
      offsets.set("named_user_group", offsets.get("user_group")!);
      if (messageCount) await allocate("message", [minMessage, maxMessage]);
      else offsets.set("message", 0);
      const realmId = Number(realmRow.id) + offsets.get("realm")!;
      // Each upload's new path id, as an upload here gets one (Zulip's import_uploads).
      const uploadPaths = new Map(
        attachments.map((a) => {
          const old = str(a.path_id);
          return [old, newPathId(realmId, exported.uploads.get(old)!.name)] as const;
        }),
      );

      // What rendering a message the export has no rendering for needs: the organization's
      // users, groups and channels by name, as they will be (made once, when first needed).
      let rendering: Partial<MarkdownContext> | undefined;
      const renderContext = () => {
        if (rendering) return rendering;
        const users: MentionUser[] = tables
          .get("user_profile")!
          .filter((u) => u.is_active !== false)
          .map((u) => ({
            id: Number(u.id) + offsets.get("user_profile")!,
            fullName: str(u.full_name),
          }));
        const usersByName = new Map<string, MentionUser[]>();
        for (const u of users)
          usersByName.set(u.fullName.toLowerCase(), [
            ...(usersByName.get(u.fullName.toLowerCase()) ?? []),
            u,
          ]);
        const byName = (rows: Row[], table: string) =>
          new Map(
            rows.map((r) => [
              str(r.name).toLowerCase(),
              { id: Number(r.id) + offsets.get(table)!, name: str(r.name) },
            ]),
          );
        rendering = {
          usersByName,
          usersById: new Map(users.map((u) => [u.id, u])),
          groupsByName: byName(
            tables.get("named_user_group")!.filter((g) => g.is_system_group !== true),
            "user_group",
          ),
          channelsByName: byName(tables.get("stream")!, "stream"),
        };
        return rendering;
      };

      const clients = await matchClients(tx, rowsOf("realm.json", realmData, CLIENT_KEY));
      const usedKeys = new Set(
        (
          await tx.userProfile.findMany({
            where: {
              apiKey: {
                in: tables
                  .get("user_profile")!
                  .map((u) => str(u.api_key))
                  .filter(Boolean),
              },
            },
            select: { apiKey: true },
          })
        ).map((u) => u.apiKey),
      );

      const columnsOf = new Map<string, Column[]>();
      const columns = async (spec: ExportTable) => {
        if (!columnsOf.has(spec.table)) columnsOf.set(spec.table, await tableColumns(tx, spec));
        return columnsOf.get(spec.table)!;
      };

      /** A row of the export as our row: references moved, times converted. */
      const convert = (file: string, spec: ExportTable, cols: Column[], row: Row): Row => {
        const out: Row = {};
        const where = `${file}: ${spec.key} row ${str(row.id) || JSON.stringify(row).slice(0, 60)}`;
        const move = (table: string, value: unknown): number | null => {
          if (value === null || value === undefined) return null;
          if (notExported.has(table)) return null;
          const id = Number(value);
          if (table === "client") {
            const mapped = clients.get(id);
            if (mapped === undefined)
              throw new ImportError(`${where}: client ${id} is not in ${CLIENT_KEY}`);
            return mapped;
          }
          const ids = known.get(table);
          const inRange = table === "message" ? id >= minMessage && id <= maxMessage : ids?.has(id);
          if (!inRange) throw new ImportError(`${where}: ${table} ${id} is not in the export`);
          return id + offsets.get(table)!;
        };
        for (const c of cols) {
          const field =
            c.field in row
              ? c.field
              : (spec.aliases?.[c.name]?.find((alias) => alias in row) ?? c.field);
          if (!(field in row) && c.name !== "realm_id") continue;
          const value = row[field];
          if (c.name === "realm_id") out.realm_id = realmId;
          else if (DEFERRED[spec.table]?.includes(c.name)) out[c.name] = null;
          else if (c.name === "id")
            out.id = c.references
              ? move(c.references, value)
              : Number(value) + (offsets.get(spec.table) ?? 0);
          else if (c.references) out[c.name] = move(c.references, value);
          else if (spec.table === "recipient" && c.name === "type_id")
            out.type_id = move(RECIPIENT_TABLES[Number(row.type)] ?? "?", value);
          else if (spec.table === "stream" && c.name === "first_message_id")
            out.first_message_id = value == null || !messageCount ? null : move("message", value);
          else if (isTime(c) && typeof value === "number")
            out[c.name] = new Date(value * 1000).toISOString();
          else out[c.name] = value;
        }
        return out;
      };

      /** Links to uploads in these text columns, moved to the uploads' new path ids. */
      const relink = (out: Row, olds: string[] | undefined, columns: string[]) => {
        for (const old of olds ?? []) {
          const path = uploadPaths.get(old)!;
          for (const column of columns)
            if (typeof out[column] === "string") out[column] = out[column].split(old).join(path);
        }
      };

      /** Our own columns, recomputed. */
      const complete = (spec: ExportTable, out: Row, row: Row) => {
        switch (spec.table) {
          case "realm":
            out.string_id = stringId;
            break;
          case "user_profile":
            if (!out.api_key || usedKeys.has(str(out.api_key))) out.api_key = generateApiKey();
            out.avatar_hash = avatarHashes.get(Number(row.id)) ?? null;
            if (out.avatar_source === "U" && !out.avatar_hash) out.avatar_source = "G";
            break;
          case "subscription":
            out.is_user_active = userActive.get(Number(row.user_profile)) ?? true;
            break;
          case "direct_message_group":
            // Its hash names its members (Zulip's get_direct_message_group_hash): theirs here.
            out.huddle_hash = directMessageGroupHash(
              (groupMembers.get(Number(row.recipient)) ?? []).map(
                (u) => u + offsets.get("user_profile")!,
              ),
            );
            break;
          case "user_topic":
            out.topic_name_lower = str(out.topic_name).toLowerCase();
            break;
          case "message":
            if (typeof out.subject === "string") out.subject = ourSubject(out.subject);
            out.is_channel_message =
              recipientTypes.get(Number(row.recipient)) === RecipientType.STREAM;
            // Links to its uploads name their new path ids (Zulip's fix_upload_links).
            if (row.has_attachment === true)
              relink(out, linkedUploads.get(Number(row.id)), ["content", "rendered_content"]);
            if (out.rendered_content == null) {
              out.rendered_content = renderMarkdown(str(out.content), renderContext()).html;
              out.rendered_content_version = 1;
            }
            break;
          case "user_message":
            out.flags = Number(row.flags_mask ?? 0);
            break;
          case "custom_profile_field_value":
            // A users field's value is the JSON list of its users' ids.
            if (userFields.has(Number(row.field)) && typeof out.value === "string")
              out.value = JSON.stringify(
                (JSON.parse(out.value) as number[]).map(
                  (id) => Number(id) + offsets.get("user_profile")!,
                ),
              );
            break;
          case "scheduled_message":
            if (row.has_attachment === true)
              relink(out, scheduledUploads.get(Number(row.id)), ["content", "rendered_content"]);
            break;
          case "attachment":
            out.path_id = uploadPaths.get(str(row.path_id));
            out.content_type ??= guessType(str(out.file_name));
            break;
          case "reaction":
          case "user_status":
            // A custom emoji's reaction (or status) names it by its id.
            if (out.reaction_type === "realm_emoji" && out.emoji_code)
              out.emoji_code = String(Number(out.emoji_code) + offsets.get("realm_emoji")!);
            break;
        }
        return out;
      };

      const insert = async (file: string, spec: ExportTable, rows: Row[]) => {
        const cols = await columns(spec);
        for (let i = 0; i < rows.length; i += BATCH) {
          const batch = rows
            .slice(i, i + BATCH)
            .map((r) => complete(spec, convert(file, spec, cols, r), r));
          await insertBatch(tx, spec.table, batch, `${file}: ${spec.key}`);
        }
      };

      // The organization and its groups refer to each other: one statement.
      const realmCols = await columns(REALM_TABLES[0]!);
      const groupCols = await columns(REALM_TABLES[1]!);
      const realmOut = complete(
        REALM_TABLES[0]!,
        convert("realm.json", REALM_TABLES[0]!, realmCols, realmRow),
        realmRow,
      );
      // The organization's uuid names it at the bouncer: kept unless this server has it already.
      const uuid = str(realmOut.uuid);
      if (
        !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(uuid) ||
        (await tx.realm.findFirst({ where: { uuid }, select: { id: true } }))
      )
        realmOut.uuid = randomUUID();
      const groups = tables
        .get("user_group")!
        .map((r) => convert("realm.json", REALM_TABLES[1]!, groupCols, r));
      await guard("realm.json: zerver_realm and zerver_usergroup", () =>
        tx.$executeRawUnsafe(
          `WITH r AS (INSERT INTO realm (${names(realmOut)}) SELECT ${names(realmOut)} FROM json_populate_recordset(NULL::realm, $1::json))
           INSERT INTO user_group (${names(groups[0] ?? { id: 0 })}) SELECT ${names(groups[0] ?? { id: 0 })} FROM json_populate_recordset(NULL::user_group, $2::json)`,
          JSON.stringify([realmOut]),
          JSON.stringify(groups),
        ),
      );
      for (const spec of REALM_TABLES.slice(2))
        await insert("realm.json", spec, tables.get(spec.table)!);

      // Now that every channel is in: the columns that refer to them.
      for (const [table, cols] of Object.entries(DEFERRED)) {
        const rows = tables.get(table)!;
        const spec = REALM_TABLES.find((s) => s.table === table)!;
        const all = await columns(spec);
        for (const name of cols) {
          const col = all.find((c) => c.name === name);
          if (!col) continue;
          const pairs = rows
            .filter((r) => r[col.field] != null)
            .map((r) => [
              Number(r.id) + offsets.get(table)!,
              Number(r[col.field]) + offsets.get("stream")!,
            ]);
          for (const [id, stream] of pairs) {
            if (!known.get("stream")!.has(stream! - offsets.get("stream")!))
              throw new ImportError(
                `realm.json: ${spec.key} row ${id! - offsets.get(table)!}: stream ${stream! - offsets.get("stream")!} is not in the export`,
              );
            await tx.$executeRawUnsafe(
              `UPDATE "${table}" SET "${name}" = $1 WHERE id = $2`,
              stream,
              id,
            );
          }
        }
      }

      // The files, before the messages as in Zulip (an image's thumbnails exist when a message
      // shows it). Deleted again if the import fails from here on.
      const files: Record<FileKind, number> = { uploads: 0, avatars: 0, emoji: 0, realmIcons: 0 };
      for (const a of attachments) {
        const contentType =
          str(a.content_type) || guessType(str(a.file_name)) || "application/octet-stream";
        const path = uploadPaths.get(str(a.path_id))!;
        await placed.storeUpload(
          tx,
          realmId,
          path,
          exported.uploads.get(str(a.path_id))!.file,
          contentType,
        );
        files.uploads++;
      }
      for (const [userId, hash] of avatarHashes) {
        if (await placed.storeAvatar(realmId, hash, exported.avatars.get(userId)!)) {
          files.avatars++;
          continue;
        }
        deps.log.warn({ userId }, "import: an avatar does not decode; the user has Gravatar's");
        await tx.$executeRaw`
          UPDATE user_profile SET avatar_source = 'G', avatar_hash = NULL
          WHERE id = ${userId + offsets.get("user_profile")!}`;
      }
      for (const emoji of exported.emoji) {
        await placed.storeEmoji(realmId, emoji);
        if (!emoji.original) files.emoji++;
      }
      for (const image of exported.realmIcons) await placed.storeRealmImage(realmId, image);
      files.realmIcons = new Set(
        exported.realmIcons.map((i) => i.name.replace(/\.[a-z]+$/, "")),
      ).size;

      // channel_topic (kept by a trigger on message) holds each channel topic's latest message.
      // Moved by every file's statement, a topic would gain a row version a file, none of which
      // can be pruned before this transaction ends, and each conflict check reads them all: a
      // cost growing with the square of the files (1,000,000 messages with 503 topics in every
      // file: 496 s, 220 s without). Written first with their latest messages, the topics leave
      // the trigger nothing to update.
      const topics = [...latestInTopic.values()].map((t) => ({
        recipient_id: t.recipient + offsets.get("recipient")!,
        subject: t.subject,
        id: t.id + offsets.get("message")!,
      }));
      for (let i = 0; i < topics.length; i += BATCH)
        await guard("message files: channel topics", () =>
          tx.$executeRawUnsafe(
            `INSERT INTO channel_topic (recipient_id, topic_lower, realm_id, subject, max_id)
             SELECT DISTINCT ON (recipient_id, lower(subject)) recipient_id, lower(subject), $2::int, subject, id
             FROM json_to_recordset($1::json) AS t(recipient_id int, subject text, id int)
             ORDER BY recipient_id, lower(subject), id DESC
             ON CONFLICT (recipient_id, topic_lower) DO UPDATE SET subject = excluded.subject, max_id = excluded.max_id
             WHERE excluded.max_id > channel_topic.max_id`,
            JSON.stringify(topics.slice(i, i + BATCH)),
            realmId,
          ),
        );
      for (const [i, file] of messageFiles.entries()) {
        const data = readJson(root, file);
        const messages = rowsOf(file, data, MESSAGE_TABLE.key);
        await insert(file, MESSAGE_TABLE, messages);
        // user_message's insert trigger finds each batch's messages with a plan its connection
        // keeps until `message`'s statistics change, and autovacuum cannot see this
        // transaction's rows: planned while the table was nearly empty, it read the whole table
        // for every batch, and the time grew with the square of the messages (250,000 in 112 s,
        // 500,000 in 428 s). Statistics taken after files 1, 2, 4, 8, … make it plan again, with
        // the index once the table is large.
        if (Number.isInteger(Math.log2(i + 1))) await tx.$executeRawUnsafe(`ANALYZE "message"`);
        await insert(file, USER_MESSAGE_TABLE, rowsOf(file, data, USER_MESSAGE_TABLE.key));
        // Their edit histories, as this server keeps them: rows of message_edit.
        const edits = messages.flatMap((m) => {
          try {
            const rows = editRows(
              m.edit_history,
              { id: Number(m.id) + offsets.get("message")!, realmId },
              (u) => (known.get("user_profile")!.has(u) ? u + offsets.get("user_profile")! : null),
              (c) => (known.get("stream")!.has(c) ? c + offsets.get("stream")! : null),
            );
            if (m.has_attachment === true)
              for (const edit of rows)
                relink(edit as unknown as Row, linkedUploads.get(Number(m.id)), [
                  "prev_content",
                  "prev_rendered_content",
                ]);
            return rows;
          } catch (err) {
            throw new ImportError(
              `${file}: ${MESSAGE_TABLE.key} row ${str(m.id)}: ${(err as Error).message}`,
            );
          }
        });
        for (let i = 0; i < edits.length; i += BATCH)
          await insertBatch(
            tx,
            "message_edit",
            edits.slice(i, i + BATCH) as unknown as Row[],
            `${file}: edit_history`,
          );
      }
      for (const spec of AFTER_MESSAGES) await insert("realm.json", spec, tables.get(spec.table)!);

      // The uploads' rows and the messages and scheduled messages linking each.
      await insert(ATTACHMENT_FILE, ATTACHMENT_TABLE, attachments);
      const links = attachments.flatMap((a) =>
        ((a.messages ?? []) as unknown[]).map((m) => ({
          attachment_id: Number(a.id) + offsets.get("attachment")!,
          message_id: Number(m) + offsets.get("message")!,
        })),
      );
      for (let i = 0; i < links.length; i += BATCH)
        await insertBatch(
          tx,
          "attachment_message",
          links.slice(i, i + BATCH),
          `${ATTACHMENT_FILE}: ${ATTACHMENT_TABLE.key} messages`,
        );
      const scheduledLinks = attachments.flatMap((a) =>
        ((a.scheduled_messages ?? []) as unknown[]).map((m) => ({
          attachment_id: Number(a.id) + offsets.get("attachment")!,
          scheduled_message_id: Number(m) + offsets.get("scheduled_message")!,
        })),
      );
      for (let i = 0; i < scheduledLinks.length; i += BATCH)
        await insertBatch(
          tx,
          "attachment_scheduled_message",
          scheduledLinks.slice(i, i + BATCH),
          `${ATTACHMENT_FILE}: ${ATTACHMENT_TABLE.key} scheduled_messages`,
        );

      // Zulip's system bots live outside organizations: an organization from Zulip gets its
      // internal bots (notices are sent as them), as every organization made here has them.
      const realm = await tx.realm.findUniqueOrThrow({ where: { id: realmId } });
      const present = new Set(
        tables.get("user_profile")!.map((u) => str(u.delivery_email ?? u.email)),
      );
      for (const bot of INTERNAL_BOTS)
        if (fromZulip && !present.has(bot.email))
          await doCreateUser(tx, realm, bot, await fakeEmailDomain(tx, realm, config));

      return {
        realmId,
        stringId,
        users: tables.get("user_profile")!.length,
        channels: tables.get("stream")!.length,
        messages: messageCount,
        files,
      };
    },
    { timeout: 24 * 60 * 60_000, maxWait: 60_000 },
  );
  try {
    return await work;
  } catch (err) {
    // Nothing half-imported is left behind: the rows rolled back, the files go too.
    await placed
      .remove()
      .catch((e: unknown) =>
        deps.log.error({ err: e }, "import: files placed by a failed import could not be deleted"),
      );
    throw err;
  }
}

/** Zulip stores a direct message's topic as "\u0007" (Message.DM_TOPIC); here it is "". */
const ourSubject = (value: unknown) => (str(value) === "\u0007" ? "" : str(value));

const names = (row: Row) =>
  Object.keys(row)
    .map((k) => `"${k}"`)
    .join(", ");

/**
 * Rows in as few statements as their shapes allow: rows with the same fields together, so a
 * field one row lacks takes the column's default rather than null. A failure names the file
 * and table the rows came from.
 */
async function insertBatch(tx: Tx, table: string, rows: Row[], where: string) {
  const shapes = new Map<string, Row[]>();
  for (const row of rows) {
    const key = Object.keys(row).join(",");
    shapes.set(key, [...(shapes.get(key) ?? []), row]);
  }
  for (const [key, same] of shapes) {
    const cols = key
      .split(",")
      .map((k) => `"${k}"`)
      .join(", ");
    await guard(where, () =>
      tx.$executeRawUnsafe(
        `INSERT INTO "${table}" (${cols}) SELECT ${cols} FROM json_populate_recordset(NULL::"${table}", $1::json)`,
        JSON.stringify(same),
      ),
    );
  }
}

async function guard<T>(where: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ImportError) throw err;
    const message = (err as Error).message.split("\n").filter(Boolean).at(-1) ?? String(err);
    throw new ImportError(`${where}: ${message}`);
  }
}

/** The export's clients, by name: this server's of the same name, or new ones. */
async function matchClients(tx: Tx, rows: Row[]): Promise<Map<number, number>> {
  const map = new Map<number, number>();
  for (const row of rows) {
    const name = str(row.name);
    const client =
      (await tx.client.findFirst({ where: { name } })) ??
      (await tx.client.create({ data: { name } }));
    map.set(Number(row.id), client.id);
  }
  return map;
}
