/**
 * A Slack workspace export (the .zip Slack's "Export data" makes: users.json, channels.json,
 * groups.json, dms.json, mpims.json, and each conversation's messages in `<name or id>/<date>.json`)
 * converted to Zulip's export format, as Zulip's own Slack importer does it
 * (zerver/data_import/slack.py, slack_message_conversion.py): the converted directory is then
 * imported like any Zulip export (actions/realm/import-zulip.ts).
 *
 * - Users keep their names and emails (a user without one gets `<slack id>@<fake domain>`);
 *   owners, admins and guests keep their roles; deactivated users and bots come across
 *   deactivated or as bots.
 * - Public channels become public channels, private ones private, with their members; 1:1
 *   conversations become direct messages, group conversations group direct messages.
 * - A channel's messages go to the topic "imported from Slack"; a thread goes to a topic of its
 *   own, named by its first message (Zulip's thread-to-topic conversion).
 * - Slack's markup becomes Zulip's Markdown: `<@U123>` a mention, `<#C123|name>` a channel link,
 *   `<!channel>`/`<!here>`/`<!everyone>` a wildcard mention, `<url|text>` a link, `*bold*`,
 *   `_italic_` and `~strike~` Zulip's.
 * - Reactions with the emoji of their name. Files Slack hosts are downloaded with the
 *   workspace's token and become uploads (slack-files.ts); without one they stay linked to
 *   Slack. What cannot be mapped is counted in the report.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CHANNEL_GROUP_SETTINGS,
  REALM_GROUP_SETTINGS,
  settingColumn,
  SYSTEM_GROUP_NESTING,
  SystemGroups,
  USER_GROUP_SETTINGS,
  type GroupSetting,
  type SystemGroupName,
} from "../groups/group-settings.ts";
import { emojiCodeForName } from "../markdown/emoji.ts";
import { RecipientType } from "../recipients.ts";
import { Role } from "../users/users.ts";
import { SlackFiles, type SlackFileOptions } from "./slack-files.ts";
import { MESSAGES_PER_FILE, messagesFile, str } from "./zulip-format.ts";

/** Zulip's Message.MessageType.NORMAL (2 is a resolve-topic notice). */
const NORMAL_MESSAGE = 1;
/** Zulip's topic for a channel's messages outside threads. */
export const SLACK_DEFAULT_TOPIC = "imported from Slack";
/** Message subtypes that are not messages (joins, leaves, renames), as Zulip skips them. */
const SKIPPED_SUBTYPES = new Set([
  "channel_join",
  "channel_leave",
  "channel_name",
  "channel_purpose",
  "channel_topic",
  "channel_archive",
  "channel_unarchive",
  "group_join",
  "group_leave",
  "pinned_item",
  "bot_add",
  "bot_remove",
]);

export class SlackExportError extends Error {}

type Json = Record<string, unknown>;

/** A nested object of the export (`profile`, `purpose`), or an empty one. */
const obj = (value: unknown): Json =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};
const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);

function readList(dir: string, file: string, required = false): Json[] {
  const path = join(dir, file);
  if (!existsSync(path)) {
    if (required) throw new SlackExportError(`${file}: not found (is this a Slack export?)`);
    return [];
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new SlackExportError(`${file}: not complete JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(value)) throw new SlackExportError(`${file}: not a list`);
  return value as Json[];
}

export interface SlackConversion {
  users: number;
  channels: number;
  messages: number;
  /** What could not be mapped, one line each ("3 files linked, not copied"). */
  unmapped: string[];
}

/** The directory holding users.json: the one given, or its only subdirectory. */
function slackRoot(dir: string): string {
  if (existsSync(join(dir, "users.json"))) return dir;
  const subdirs = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory());
  if (subdirs.length === 1 && existsSync(join(dir, subdirs[0]!.name, "users.json")))
    return join(dir, subdirs[0]!.name);
  throw new SlackExportError("users.json: not found (is this a Slack export?)");
}

/** Converts the Slack export in `slackDir` into a Zulip export in `outDir`, with its files (see slack-files.ts). */
export async function convertSlackExport(
  slackDir: string,
  outDir: string,
  options: {
    name: string;
    stringId: string;
    fakeEmailDomain: string;
    now?: Date;
  } & SlackFileOptions,
): Promise<SlackConversion> {
  const root = slackRoot(slackDir);
  const now = (options.now ?? new Date()).getTime() / 1000;
  const counts = new Map<string, number>();
  const count = (what: string, n = 1) => counts.set(what, (counts.get(what) ?? 0) + n);

  // System groups 1–8, in Zulip's order.
  const systemNames = Object.values(SystemGroups);
  const groupId = (name: SystemGroupName) => systemNames.indexOf(name) + 1;
  const defaultGroup = (setting: GroupSetting, forSystem = false) => {
    const name = (forSystem ? setting.defaultForSystemGroups : undefined) ?? setting.default;
    // A creator's own group does not exist in an import: nobody, as Zulip with no creator.
    return groupId(name.startsWith("role:") ? (name as SystemGroupName) : SystemGroups.NOBODY);
  };
  const fields = (settings: Record<string, GroupSetting>, forSystem = false) =>
    Object.fromEntries(
      Object.values(settings).map((s) => [
        settingColumn(s).replace(/_id$/, ""),
        defaultGroup(s, forSystem),
      ]),
    );

  // Users, by Slack id: ids 100, 101, … and personal recipients 1000, 1001, …
  const slackUsers = readList(root, "users.json", true);
  const users = new Map<
    string,
    { id: number; name: string; email: string; recipient: number; active: boolean }
  >();
  const userRows: Json[] = [];
  const recipients: Json[] = [];
  const memberships: Json[] = [];
  for (const [i, u] of slackUsers.entries()) {
    const id = 100 + i;
    const profile = obj(u.profile);
    const fullName =
      str(profile.real_name) ||
      str(u.real_name) ||
      str(profile.display_name) ||
      str(u.name) ||
      str(u.id);
    const email = str(profile.email) || `${str(u.id).toLowerCase()}@${options.fakeEmailDomain}`;
    const role =
      u.is_primary_owner || u.is_owner
        ? Role.OWNER
        : u.is_admin
          ? Role.ADMINISTRATOR
          : u.is_restricted || u.is_ultra_restricted
            ? Role.GUEST
            : Role.MEMBER;
    const active = !u.deleted;
    users.set(str(u.id), { id, name: fullName, email, recipient: 1000 + i, active });
    userRows.push({
      id,
      realm: 1,
      email,
      delivery_email: email,
      full_name: fullName,
      date_joined: now,
      is_active: active,
      is_bot: Boolean(u.is_bot),
      bot_type: u.is_bot ? 1 : null,
      bot_owner: null,
      role,
      timezone: typeof u.tz === "string" ? u.tz : "",
      avatar_source: "G",
      recipient: 1000 + i,
    });
    recipients.push({ id: 1000 + i, type: RecipientType.PERSONAL, type_id: id });
    const group =
      role === Role.OWNER
        ? SystemGroups.OWNERS
        : role === Role.ADMINISTRATOR
          ? SystemGroups.ADMINISTRATORS
          : role === Role.GUEST
            ? SystemGroups.EVERYONE
            : SystemGroups.MEMBERS;
    memberships.push({ id: memberships.length + 1, user_group: groupId(group), user_profile: id });
    if (role === Role.MEMBER)
      memberships.push({
        id: memberships.length + 1,
        user_group: groupId(SystemGroups.FULL_MEMBERS),
        user_profile: id,
      });
  }
  const userOf = (slackId: unknown) => users.get(str(slackId));

  // Channels: public, then private; ids 1, 2, … with recipients 2001, 2002, …
  interface Conversation {
    dir: string;
    recipient: number;
    members: number[];
    kind: "channel" | "dm" | "group";
    name?: string;
  }
  const conversations: Conversation[] = [];
  const channelRows: Json[] = [];
  const channelNames = new Map<string, string>();
  const subscriptions: Json[] = [];
  const subscribe = (user: number, recipient: number, active = true) =>
    subscriptions.push({ id: subscriptions.length + 1, user_profile: user, recipient, active });
  for (const u of userRows) subscribe(u.id as number, u.recipient as number);
  const channels: Json[] = [
    ...readList(root, "channels.json").map((c) => ({ ...c, private: false })),
    ...readList(root, "groups.json").map((c) => ({ ...c, private: true })),
  ];
  for (const [i, c] of channels.entries()) {
    const id = i + 1;
    const recipient = 2001 + i;
    channelNames.set(str(c.id), str(c.name));
    const members = ((c.members ?? []) as unknown[])
      .map((m) => userOf(m)?.id)
      .filter((m): m is number => m !== undefined);
    channelRows.push({
      id,
      realm: 1,
      name: str(c.name).slice(0, 60),
      description: str(obj(c.purpose).value) || str(obj(c.topic).value),
      date_created: Number(c.created ?? now),
      creator: userOf(c.creator)?.id ?? null,
      is_archived: Boolean(c.is_archived),
      recipient,
      invite_only: c.private,
      history_public_to_subscribers: !c.private,
      is_web_public: false,
      ...fields(CHANNEL_GROUP_SETTINGS),
    });
    recipients.push({ id: recipient, type: RecipientType.STREAM, type_id: id });
    for (const m of members) subscribe(m, recipient);
    conversations.push({
      dir: str(c.name),
      recipient,
      members,
      kind: "channel",
      name: str(c.name),
    });
  }

  // Direct messages: 1:1 to the other's personal recipient, groups as direct-message groups.
  const groupRows: Json[] = [];
  for (const d of readList(root, "dms.json")) {
    const members = list(d.members)
      .map((m) => userOf(m)?.id)
      .filter((m): m is number => m !== undefined);
    if (members.length === 0) continue;
    conversations.push({ dir: str(d.id), recipient: -1, members, kind: "dm" });
  }
  for (const [i, g] of readList(root, "mpims.json").entries()) {
    const members = list(g.members)
      .map((m) => userOf(m)?.id)
      .filter((m): m is number => m !== undefined);
    const recipient = 3001 + i;
    groupRows.push({ id: i + 1, huddle_hash: "", recipient, group_size: members.length });
    recipients.push({ id: recipient, type: RecipientType.DIRECT_MESSAGE_GROUP, type_id: i + 1 });
    for (const m of members) subscribe(m, recipient);
    conversations.push({ dir: str(g.name), recipient, members, kind: "group" });
  }

  // Messages: every conversation's daily files, in time order across all of them.
  interface Pending {
    ts: number;
    row: Json;
    readers: number[];
    mentioned: Set<number>;
    reactions: Json[];
    attachments: Json[];
  }
  mkdirSync(outDir, { recursive: true });
  const slackFiles = new SlackFiles(outDir, 1, options, count);
  const pending: Pending[] = [];
  const threadTopics = new Map<string, string>();
  for (const conv of conversations) {
    const dir = join(root, conv.dir);
    if (!existsSync(dir)) continue;
    const days = readdirSync(dir)
      .filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f))
      .sort();
    const raw: Json[] = [];
    // Each message as Slack wrote it (its own `file`, if any, is a file_share's file).
    for (const day of days) raw.push(...readList(dir, day));
    raw.sort((a, b) => Number(a.ts) - Number(b.ts));
    for (const m of raw) {
      if (m.type !== "message") continue;
      if (m.subtype && SKIPPED_SUBTYPES.has(str(m.subtype))) {
        count(`${str(m.subtype)} events skipped`);
        continue;
      }
      const sender = userOf(m.user);
      if (!sender) {
        count("messages without a known sender (integrations' posts) skipped");
        continue;
      }
      const mentioned = new Set<number>();
      let content = convertMarkup(str(m.text), {
        user: (id) => {
          const u = userOf(id);
          if (u) mentioned.add(u.id);
          return u?.name;
        },
        channel: (id) => channelNames.get(id),
      });
      const files = await slackFiles.convert(m, sender);
      content += files.links.map((link) => `\n${link}`).join("");
      if (content.trim() === "") {
        count("empty messages skipped");
        continue;
      }
      let topic = "";
      let recipient = conv.recipient;
      if (conv.kind === "channel") {
        const thread = m.thread_ts ? `${conv.dir}:${str(m.thread_ts)}` : null;
        if (thread && !threadTopics.has(thread)) threadTopics.set(thread, threadTopic(content));
        topic =
          (thread && m.thread_ts !== m.ts) || (thread && Number(m.reply_count ?? 0) > 0)
            ? threadTopics.get(thread)!
            : SLACK_DEFAULT_TOPIC;
      } else if (conv.kind === "dm") {
        const other = conv.members.find((x) => x !== sender.id) ?? sender.id;
        recipient = 1000 + userRows.findIndex((u) => u.id === other);
      }
      const reactions: Json[] = [];
      for (const r of (m.reactions ?? []) as Json[]) {
        const name = str(r.name).replace(/::skin-tone-\d$/, "");
        const code = emojiCodeForName(name);
        if (!code) {
          count("reactions with a custom or unknown emoji skipped", list(r.users).length);
          continue;
        }
        for (const who of (r.users ?? []) as unknown[]) {
          const u = userOf(who);
          if (u)
            reactions.push({
              user_profile: u.id,
              emoji_name: name,
              emoji_code: code,
              reaction_type: "unicode_emoji",
            });
        }
      }
      pending.push({
        ts: Number(m.ts),
        row: {
          sender: sender.id,
          recipient,
          realm: 1,
          subject: topic,
          content,
          rendered_content: null,
          date_sent: Number(m.ts),
          sending_client: 1,
          type: NORMAL_MESSAGE,
          has_attachment: files.hasAttachment,
          has_image: files.hasImage,
          has_link: files.links.length > 0 || /https?:\/\//.test(content),
        },
        readers: conv.members,
        mentioned,
        reactions,
        attachments: files.attachments,
      });
    }
  }
  pending.sort((a, b) => a.ts - b.ts);

  const reactionRows: Json[] = [];
  let file = 0;
  for (let i = 0; i < pending.length; i += MESSAGES_PER_FILE) {
    const batch = pending.slice(i, i + MESSAGES_PER_FILE);
    const messages: Json[] = [];
    const userMessages: Json[] = [];
    batch.forEach((p, j) => {
      const id = i + j + 1;
      messages.push({ id, ...p.row });
      const isPrivate = p.row.subject === "" ? 2048 : 0;
      for (const reader of new Set([...p.readers, p.row.sender as number]))
        // Imported history is read, as Zulip's importers mark it; mentions stay mentions.
        userMessages.push({
          user_profile: reader,
          message: id,
          flags_mask: 1 | isPrivate | (p.mentioned.has(reader) ? 8 : 0),
        });
      for (const r of p.reactions)
        reactionRows.push({ id: reactionRows.length + 1, message: id, ...r });
      for (const a of p.attachments) a.messages = [id];
    });
    writeFileSync(
      join(outDir, messagesFile(++file)),
      JSON.stringify({ zerver_message: messages, zerver_usermessage: userMessages }),
    );
  }

  const realm = {
    import_source: "slack",
    zerver_realm: [
      {
        id: 1,
        name: options.name,
        string_id: options.stringId,
        date_created: now,
        ...fields(REALM_GROUP_SETTINGS),
      },
    ],
    zerver_client: [{ id: 1, name: "populate_db" }],
    zerver_usergroup: systemNames.map((_, i) => ({ id: i + 1, realm: 1 })),
    zerver_namedusergroup: systemNames.map((name, i) => ({
      id: i + 1,
      usergroup_ptr: i + 1,
      realm_for_sharding: 1,
      name,
      description: "",
      is_system_group: true,
      date_created: now,
      ...fields(USER_GROUP_SETTINGS, true),
    })),
    zerver_usergroupmembership: memberships,
    zerver_groupgroupmembership: SYSTEM_GROUP_NESTING.map(([sup, sub], i) => ({
      id: i + 1,
      supergroup: groupId(sup),
      subgroup: groupId(sub),
    })),
    zerver_userprofile: userRows,
    zerver_recipient: recipients,
    zerver_stream: channelRows,
    zerver_huddle: groupRows,
    zerver_subscription: subscriptions,
    zerver_defaultstream: channelRows
      .filter((c) => !c.invite_only && channels[(c.id as number) - 1]?.is_general)
      .map((c, i) => ({ id: i + 1, realm: 1, stream: c.id })),
    zerver_reaction: reactionRows,
  };
  writeFileSync(join(outDir, "realm.json"), JSON.stringify(realm));
  slackFiles.write();
  return {
    users: userRows.length,
    channels: channelRows.length,
    messages: pending.length,
    unmapped: [...counts].map(([what, n]) => `${n} ${what}`),
  };
}

/** A thread's topic: its first message's first line, as Zulip names it, within 60 characters. */
function threadTopic(content: string): string {
  const line =
    content
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "thread";
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** Slack's message markup as Zulip's Markdown (slack_message_conversion.py). */
export function convertMarkup(
  text: string,
  names: { user: (id: string) => string | undefined; channel: (id: string) => string | undefined },
): string {
  return text
    .replace(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g, (all, id: string) => {
      const name = names.user(id);
      return name ? `@**${name}**` : all;
    })
    .replace(/<#(C[A-Z0-9]+)(?:\|([^>]*))?>/g, (_, id: string, label?: string) => {
      const name = names.channel(id) ?? label;
      return name ? `#**${name}**` : `#${id}`;
    })
    .replace(/<!(channel|here|everyone)(?:\|[^>]*)?>/g, "@**all**")
    .replace(/<(https?:\/\/[^|>]+)\|([^>]+)>/g, "[$2]($1)")
    .replace(/<(https?:\/\/[^>]+)>/g, "$1")
    .replace(/<mailto:([^|>]+)\|([^>]+)>/g, "[$2](mailto:$1)")
    .replace(/(^|[\s(])\*([^*\n]+)\*(?=[\s.,;:!?)]|$)/g, "$1**$2**")
    .replace(/(^|[\s(])_([^_\n]+)_(?=[\s.,;:!?)]|$)/g, "$1*$2*")
    .replace(/(^|[\s(])~([^~\n]+)~(?=[\s.,;:!?)]|$)/g, "$1~~$2~~")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
