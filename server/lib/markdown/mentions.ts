/**
 * Mentions (`@**user**`, `@_**silent**`, `@*group*`) and channel links
 * (`#**channel**`, `#**channel>topic**`, `#**channel>topic@123**`): the
 * syntax, resolution against the caller's context, their HTML, and the cheap
 * candidate scan done before the context is loaded. Matching lives here, not
 * in the inline rule, because the emphasis scanner must skip the same spans.
 */
import type { RendererRule } from "markdown-it";
import { escapeAttr, escapeRegExp, escapeText, isWhitespaceChar, matchSticky } from "./text.ts";
import type { MarkdownContext, MentionCandidates, MentionUser } from "./types.ts";

const STREAM_WILDCARDS = new Set(["all", "everyone", "stream", "channel"]);
const TOPIC_WILDCARDS = new Set(["topic"]);

const USER_MENTION_RE = /@(_?)\*\*([^*]+)\*\*/y;
const GROUP_MENTION_RE = /@(_?)\*([^*]+)\*/y;
/** `Name|id` or `|id`: the id form, which also disambiguates equal names. */
const ID_SYNTAX_RE = /^([^\n]+)?\|(\d+)$/;

/** Mentions may start after start-of-text, whitespace, or one of these. */
const MENTION_PRECEDERS = `'"({[/<`;
/** Channel links: the same, except not after '[' (so `[#**x**](url)` doesn't double-link). */
const CHANNEL_PRECEDERS = `'"({/<`;

function boundaryOk(src: string, pos: number, preceders: string): boolean {
  if (pos === 0) return true;
  const prev = src[pos - 1]!;
  return isWhitespaceChar(prev) || preceders.includes(prev);
}

/** What an inline match produced: where it ends and the token to push. */
export interface InlineMatch {
  end: number;
  type: string;
  meta: Record<string, unknown>;
}

type UserMentionTarget =
  | { kind: "user"; id: number; name: string }
  | { kind: "channel_wildcard"; name: string }
  | { kind: "topic_wildcard"; name: string };

/** Meta of a `zulip_user_mention` token (core.ts silences mentions inside quotes). */
export type UserMentionMeta = UserMentionTarget & { silent: boolean };
/** Meta of a `zulip_group_mention` token. (Metas are types, not interfaces: token metas are typed as records.) */
export type GroupMentionMeta = {
  id: number;
  name: string;
  silent: boolean;
};

function resolveUserMention(name: string, ctx: Partial<MarkdownContext>): UserMentionTarget | null {
  if (STREAM_WILDCARDS.has(name)) return { kind: "channel_wildcard", name };
  if (TOPIC_WILDCARDS.has(name)) return { kind: "topic_wildcard", name };
  const idSyntax = ID_SYNTAX_RE.exec(name);
  let user: MentionUser | undefined;
  if (idSyntax) {
    user = ctx.usersById?.get(Number(idSyntax[2]));
    // @**user_1_name|id_for_user_2** is invalid (exact-case name check, as Zulip).
    if (user && idSyntax[1] !== undefined && user.fullName !== idSyntax[1]) return null;
  } else {
    const matches = ctx.usersByName?.get(name.toLowerCase());
    // Ambiguous names need the |id form.
    if (matches && matches.length === 1) user = matches[0];
  }
  return user ? { kind: "user", id: user.id, name: user.fullName } : null;
}

/** A user or group mention at pos that resolves in ctx, else null (it stays text). */
export function matchMentionAt(
  src: string,
  pos: number,
  max: number,
  ctx: Partial<MarkdownContext>,
): InlineMatch | null {
  if (src.charCodeAt(pos) !== 0x40 /* @ */ || !boundaryOk(src, pos, MENTION_PRECEDERS)) return null;
  let m = matchSticky(USER_MENTION_RE, src, pos, max);
  if (m) {
    const target = resolveUserMention(m[2]!, ctx);
    if (!target) return null;
    const meta: UserMentionMeta = { ...target, silent: m[1] === "_" };
    return { end: pos + m[0].length, type: "zulip_user_mention", meta };
  }
  m = matchSticky(GROUP_MENTION_RE, src, pos, max);
  if (m) {
    const group = ctx.groupsByName?.get(m[2]!.toLowerCase());
    if (group) {
      const meta: GroupMentionMeta = { id: group.id, name: group.name, silent: m[1] === "_" };
      return { end: pos + m[0].length, type: "zulip_group_mention", meta };
    }
  }
  return null;
}

type ChannelLinkMeta = {
  channelId: number;
  channelName: string;
  topic?: string;
  messageId?: string;
};

/** The three channel-link forms, most specific first; a form whose channel is unknown falls through. */
const CHANNEL_LINK_FORMS: Array<{
  re: RegExp;
  type: string;
  meta: (m: RegExpExecArray) => Omit<ChannelLinkMeta, "channelId">;
}> = [
  {
    re: /#\*\*([^*>]+)>([^*]*)@(\d+)\*\*/y,
    type: "zulip_message_link",
    meta: (m) => ({ channelName: m[1]!, topic: m[2]!, messageId: m[3]! }),
  },
  {
    re: /#\*\*([^*>]+)>([^*]+)\*\*/y,
    type: "zulip_topic_link",
    meta: (m) => ({ channelName: m[1]!, topic: m[2]! }),
  },
  { re: /#\*\*([^*]+)\*\*/y, type: "zulip_channel_link", meta: (m) => ({ channelName: m[1]! }) },
];

function findChannel(
  name: string,
  ctx: Partial<MarkdownContext>,
): { id: number; name: string } | null {
  const channel = ctx.channelsByName?.get(name.toLowerCase());
  // Zulip looks channels up by exact name.
  return channel && channel.name === name ? channel : null;
}

/** A channel/topic/message link at pos whose channel exists in ctx, else null. */
export function matchChannelLinkAt(
  src: string,
  pos: number,
  max: number,
  ctx: Partial<MarkdownContext>,
): InlineMatch | null {
  if (src.charCodeAt(pos) !== 0x23 /* # */ || !boundaryOk(src, pos, CHANNEL_PRECEDERS)) return null;
  for (const form of CHANNEL_LINK_FORMS) {
    const m = matchSticky(form.re, src, pos, max);
    const channel = m && findChannel(m[1]!, ctx);
    if (m && channel) {
      const meta: ChannelLinkMeta = { channelId: channel.id, ...form.meta(m) };
      return { end: pos + m[0].length, type: form.type, meta };
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------

/** Zulip's hash_util_encode: percent-encode everything but [A-Za-z0-9_.~-], then '.'→'%2E', '%'→'.'. */
function hashUtilEncode(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/\./g, "%2E")
    .replace(/%/g, ".");
}

/** `/#narrow/channel/<id>-<name>[/topic/<topic>[/near/<message id>]]`, as the web app builds it. */
function narrowUrl(link: ChannelLinkMeta): string {
  let url = `/#narrow/channel/${link.channelId}-${hashUtilEncode(link.channelName.replace(/ /g, "-"))}`;
  if (link.topic !== undefined) url += `/topic/${hashUtilEncode(link.topic)}`;
  if (link.messageId !== undefined) url += `/near/${link.messageId}`;
  return url;
}

/** Silent mentions show the bare name; others get the "@". */
function mentionText(meta: { name: string; silent: boolean }): string {
  return escapeText(meta.silent ? meta.name : `@${meta.name}`);
}

export const renderUserMention: RendererRule = (tokens, idx) => {
  const meta = tokens[idx]!.meta as UserMentionMeta;
  const silent = meta.silent ? " silent" : "";
  if (meta.kind === "topic_wildcard")
    return `<span class="topic-mention${silent}">${mentionText(meta)}</span>`;
  const cls =
    meta.kind === "channel_wildcard" ? "user-mention channel-wildcard-mention" : "user-mention";
  const id = meta.kind === "channel_wildcard" ? "*" : String(meta.id);
  return `<span class="${cls}${silent}" data-user-id="${id}">${mentionText(meta)}</span>`;
};

export const renderGroupMention: RendererRule = (tokens, idx) => {
  const meta = tokens[idx]!.meta as GroupMentionMeta;
  return `<span class="user-group-mention${meta.silent ? " silent" : ""}" data-user-group-id="${meta.id}">${mentionText(meta)}</span>`;
};

/** Renders all three channel-link token types. */
export const renderChannelLink: RendererRule = (tokens, idx) => {
  const token = tokens[idx]!;
  const meta = token.meta as ChannelLinkMeta;
  const href = escapeAttr(narrowUrl(meta));
  switch (token.type) {
    case "zulip_message_link":
      return `<a class="message-link" href="${href}">${escapeText(`#${meta.channelName} > ${meta.topic} @ 💬`)}</a>`;
    case "zulip_topic_link":
      return `<a class="stream-topic" data-stream-id="${meta.channelId}" href="${href}">${escapeText(`#${meta.channelName} > ${meta.topic}`)}</a>`;
    default:
      return `<a class="stream" data-stream-id="${meta.channelId}" href="${href}">${escapeText("#" + meta.channelName)}</a>`;
  }
};

// ---------------------------------------------------------------------------
// Candidate scan (before the context exists)
// ---------------------------------------------------------------------------

const notAfter = (preceders: string): string => String.raw`(?<![^\s${escapeRegExp(preceders)}])`;
const CANDIDATE_USER_RE = new RegExp(
  String.raw`${notAfter(MENTION_PRECEDERS)}@_?\*\*([^*]+)\*\*`,
  "gu",
);
const CANDIDATE_GROUP_RE = new RegExp(
  String.raw`${notAfter(MENTION_PRECEDERS)}@_?\*([^*]+)\*`,
  "gu",
);
const CANDIDATE_CHANNEL_RE = new RegExp(
  String.raw`${notAfter(CHANNEL_PRECEDERS)}#\*\*([^*]+)\*\*`,
  "gu",
);

/**
 * Cheap scan for the names/ids a message may mention, so the caller can load
 * just those users, groups and channels for `renderMarkdown`. Over-approximates
 * (ignores code blocks etc.).
 */
export function extractMentionCandidates(content: string): MentionCandidates {
  const userNames = new Set<string>();
  const userIds = new Set<number>();
  const groupNames = new Set<string>();
  const channelNames = new Set<string>();
  if (content.includes("@")) {
    for (const m of content.matchAll(CANDIDATE_USER_RE)) {
      const text = m[1]!;
      if (STREAM_WILDCARDS.has(text) || TOPIC_WILDCARDS.has(text)) continue;
      const idSyntax = ID_SYNTAX_RE.exec(text);
      if (idSyntax) {
        userIds.add(Number(idSyntax[2]));
        if (idSyntax[1] !== undefined) userNames.add(idSyntax[1]);
      } else {
        userNames.add(text);
      }
    }
    for (const m of content.matchAll(CANDIDATE_GROUP_RE)) groupNames.add(m[1]!);
  }
  if (content.includes("#")) {
    for (const m of content.matchAll(CANDIDATE_CHANNEL_RE)) {
      const text = m[1]!;
      channelNames.add(text);
      // `#**channel>topic**`: the channel part is what needs loading.
      const gt = text.indexOf(">");
      if (gt > 0) channelNames.add(text.slice(0, gt));
    }
  }
  return {
    userNames: [...userNames],
    userIds: [...userIds],
    groupNames: [...groupNames],
    channelNames: [...channelNames],
  };
}
