/**
 * Zulip's organization export format (zerver/lib/export.py, read back by zerver/lib/import_realm.py),
 * as far as this server's tables hold it: `realm.json` with one array of rows per table under
 * Zulip's table name (`zerver_userprofile`, …), and the messages in `messages-000001.json`,
 * `messages-000002.json`, … (`zerver_message` and `zerver_usermessage`, 1,000 messages a file).
 *
 * A row is Django's model_to_dict of its model: each column by its field name, a foreign key by
 * the field's name without `_id` (`"sender": 10`), a user message's flags as the integer
 * `flags_mask`, times as float seconds since the epoch. Our tables are Zulip's (the same columns,
 * mostly the same names), so the mapping is derived from the database's own catalogue: a column
 * with a foreign key is written under its name less `_id`, a timestamp as seconds; the few
 * differences are listed below.
 */
import type { Db } from "../../db/index.ts";

/** A table of the export: our table, Zulip's key, and where its rows go. */
export interface ExportTable {
  table: string;
  key: string;
  /** Foreign keys the database does not declare (checked by triggers instead): column → table. */
  fks?: Record<string, string>;
  /** Columns that are ours alone, recomputed on import (not in Zulip's rows). */
  ours?: string[];
  /** Zulip's field for a column whose name the rule does not give: column → field. */
  fields?: Record<string, string>;
  /** Older names Zulip wrote a column under, read on import: column → fields. */
  aliases?: Record<string, string[]>;
}

/**
 * The tables of `realm.json`, in the order an import inserts them (each after what it refers to;
 * the organization and its groups, which refer to each other, in one statement). The messages,
 * user messages, reactions, submessages and attachments follow (realm.json holds the reactions
 * and submessages too, inserted after the message files).
 */
export const REALM_TABLES: ExportTable[] = [
  { table: "realm", key: "zerver_realm" },
  { table: "user_group", key: "zerver_usergroup" },
  { table: "recipient", key: "zerver_recipient" },
  { table: "user_profile", key: "zerver_userprofile" },
  {
    table: "named_user_group",
    key: "zerver_namedusergroup",
    fields: { realm_id: "realm_for_sharding" },
  },
  { table: "user_group_membership", key: "zerver_usergroupmembership" },
  { table: "group_group_membership", key: "zerver_groupgroupmembership" },
  { table: "channel_folder", key: "zerver_channelfolder" },
  {
    table: "stream",
    key: "zerver_stream",
    ours: ["email_token"],
    // Zulip 10 renamed Stream.deactivated to is_archived.
    aliases: { is_archived: ["deactivated"] },
  },
  { table: "direct_message_group", key: "zerver_huddle" },
  { table: "subscription", key: "zerver_subscription", ours: ["is_user_active"] },
  { table: "default_stream", key: "zerver_defaultstream" },
  { table: "realm_domain", key: "zerver_realmdomain" },
  { table: "realm_filter", key: "zerver_realmfilter" },
  { table: "realm_emoji", key: "zerver_realmemoji" },
  { table: "custom_profile_field", key: "zerver_customprofilefield" },
  { table: "custom_profile_field_value", key: "zerver_customprofilefieldvalue" },
  { table: "user_topic", key: "zerver_usertopic", ours: ["topic_name_lower"] },
  { table: "muted_user", key: "zerver_muteduser" },
  { table: "alert_word", key: "zerver_alertword" },
  { table: "realm_playground", key: "zerver_realmplayground" },
  { table: "realm_user_default", key: "zerver_realmuserdefault" },
  { table: "user_status", key: "zerver_userstatus" },
  // Its update id comes from this server's sequence (clients fetch past the one they hold).
  { table: "user_presence", key: "zerver_userpresence", ours: ["last_update_id"] },
  { table: "saved_snippet", key: "zerver_savedsnippet" },
  { table: "navigation_view", key: "zerver_navigationview" },
  { table: "bot_storage_data", key: "zerver_botstoragedata" },
];

export const MESSAGE_TABLE: ExportTable = {
  table: "message",
  key: "zerver_message",
  ours: ["is_channel_message", "search_tsvector"],
};
export const USER_MESSAGE_TABLE: ExportTable = {
  table: "user_message",
  key: "zerver_usermessage",
  fks: { user_profile_id: "user_profile", message_id: "message" },
};
/** In realm.json, but inserted after the messages they belong to. */
export const AFTER_MESSAGES: ExportTable[] = [
  { table: "reaction", key: "zerver_reaction" },
  { table: "submessage", key: "zerver_submessage" },
  {
    table: "scheduled_message",
    key: "zerver_scheduledmessage",
    // A reminder's message is a plain id in both schemas; the delivery's claim is ours alone.
    fks: { reminder_target_message_id: "message" },
    ours: ["claimed_at", "claimed_by", "attempts"],
  },
];
/** Tables of AFTER_MESSAGES whose rows belong to one message (`message_id`). */
export const PER_MESSAGE = new Set(["reaction", "submessage"]);

/**
 * `attachment.json`: the uploads' rows (`zerver_attachment`), each with the ids of the exported
 * messages that link it (`messages`) and of the scheduled messages (`scheduled_messages`).
 */
export const ATTACHMENT_FILE = "attachment.json";
export const ATTACHMENT_TABLE: ExportTable = { table: "attachment", key: "zerver_attachment" };

/**
 * The directories of an export's files (Zulip's export_uploads_and_avatars), each with a
 * `records.json` listing its files: message uploads, avatars, custom emoji images, and the
 * organization's icon and logos.
 */
export const FILE_DIRS = {
  uploads: "uploads",
  avatars: "avatars",
  emoji: "emoji",
  realmIcons: "realm_icons",
} as const;
export type FileKind = keyof typeof FILE_DIRS;
export const RECORDS_FILE = "records.json";

/** The clients messages were sent from: global, matched by name on import. */
export const CLIENT_KEY = "zerver_client";

/** Messages per messages-NNNNNN.json (Zulip's MESSAGE_BATCH_CHUNK_SIZE). */
export const MESSAGES_PER_FILE = 1000;
export const messagesFile = (n: number) => `messages-${String(n).padStart(6, "0")}.json`;

/** What made an export, in `export.json` beside realm.json (Zulip's own exports have none). */
export const FORMAT = { zulip_export_format: 1, made_by: "zulip-compatible-server" } as const;

export interface Column {
  name: string;
  /** information_schema's data_type: "integer", "timestamp with time zone", "ARRAY", … */
  type: string;
  /** The table a foreign key refers to. */
  references?: string;
  /** Zulip's field name for it. */
  field: string;
}

/**
 * A table's columns as the export writes them, from the database's catalogue: a foreign key's
 * field is its name less `_id` (named_user_group's own id, a key to user_group, is Zulip's
 * `usergroup_ptr`).
 */
export async function tableColumns(db: Db, spec: ExportTable): Promise<Column[]> {
  const rows = await db.$queryRaw<{ name: string; type: string; references: string | null }[]>`
    SELECT c.column_name AS name, c.data_type AS type,
      (SELECT ft.relname FROM pg_constraint k
         JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class ft ON ft.oid = k.confrelid
         JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
       WHERE k.contype = 'f' AND t.relname = c.table_name AND a.attname = c.column_name
         AND array_length(k.conkey, 1) = 1 LIMIT 1) AS "references"
    FROM information_schema.columns c
    WHERE c.table_schema = current_schema() AND c.table_name = ${spec.table}
    ORDER BY c.ordinal_position`;
  return rows
    .filter((r) => !(spec.ours ?? []).includes(r.name))
    .map((r) => {
      const references = r.references ?? spec.fks?.[r.name];
      const field =
        spec.fields?.[r.name] ??
        (!references ? r.name : r.name === "id" ? "usergroup_ptr" : r.name.replace(/_id$/, ""));
      return { name: r.name, type: r.type, field, ...(references ? { references } : {}) };
    });
}

export const isTime = (c: Column) => c.type.startsWith("timestamp");

/** A value of an export as text: strings and numbers as they are, anything else empty. */
export const str = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : "";

/**
 * Whether a record's path stays inside its directory: `/`-separated parts, none empty, `.` or
 * `..`, no backslash or NUL. An export's paths are checked so before a file is read or written.
 */
export const isSafeRelativePath = (path: string): boolean =>
  path !== "" &&
  !/[\\\0]/.test(path) &&
  !path.split("/").some((part) => part === "" || part === "." || part === "..");
