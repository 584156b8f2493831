/**
 * Zulip-compatible Markdown rendering ("rendered_content"), built on
 * markdown-it: the CommonMark block/inline machinery is reused, with a few
 * rules replaced or added so the output matches what Zulip's server
 * (zerver/lib/markdown/) produces, byte for byte where it matters.
 *
 * Two-step, pure API (no DB access here):
 *   1. extractMentionCandidates(content) → names/ids the caller should look up;
 *   2. renderMarkdown(content, ctx)      → html + mention/link flags.
 *
 * Zulip dialect summary (what differs from CommonMark):
 * - a single newline is a <br>; trailing spaces are kept; no setext headings,
 *   no reference links, no raw HTML, no backslash escapes, no `![img](...)`;
 * - `*x*`, `**x**`, `***x***`, `~~x~~` follow Zulip's regexes (single-line,
 *   `_` is never emphasis); link text is literal (no emphasis inside);
 * - fenced blocks (``` / ~~~) start at column 0, are closed by the identical
 *   fence, and may interrupt a paragraph; ```quote / ```spoiler nest;
 * - code renders as `<div class="codehilite">…` (no Pygments highlighting);
 * - bare URLs are linked with Zulip's own URL regex (not linkify-it);
 * - mentions, channel/topic links, `:emoji:`, unicode emoji, `<time:…>`.
 */
import { createRequire } from "node:module";
import MarkdownIt from "markdown-it";
import type { Env, StateBlock, StateCore, StateInline, Token } from "markdown-it";

// ---------------------------------------------------------------------------
// Public API types
// ---------------------------------------------------------------------------

export interface MentionCandidates {
  /** Names as written in `@**Name**` / `@**Name|id**` (not lower-cased; wildcards excluded). */
  userNames: string[];
  /** Ids from `@**Name|id**` / `@**|id**`. */
  userIds: number[];
  /** Group names as written in `@*group*`. */
  groupNames: string[];
  /** Channel names as written in `#**channel**` / `#**channel>topic**`. */
  channelNames: string[];
}

export interface MentionUser {
  id: number;
  fullName: string;
}

export interface MarkdownContext {
  /** lower-cased full name → users with that name (more than one = ambiguous). */
  usersByName: Map<string, MentionUser[]>;
  usersById: Map<number, MentionUser>;
  /** lower-cased group name → group. */
  groupsByName: Map<string, { id: number; name: string }>;
  /** lower-cased channel name → channel (Zulip requires the exact-case name to link). */
  channelsByName: Map<string, { id: number; name: string }>;
  /**
   * Optional: the realm's base URL (e.g. "https://chat.example.com"). Links to
   * `<realm>/#…` and `<realm>/user_uploads/…` are made relative, as Zulip does.
   */
  realmUrl?: string;
  /** Optional: custom (realm) emoji by name, rendered as `<img class="emoji">`. */
  realmEmoji?: Map<string, { sourceUrl: string }>;
}

export interface RenderResult {
  html: string;
  /** Non-silent user mentions (outside quotes). */
  mentionedUserIds: Set<number>;
  /** Non-silent user group mentions (outside quotes). */
  mentionedGroupIds: Set<number>;
  /** "channel" for @**all** (or everyone, channel, stream); "topic" for @**topic**. */
  wildcardMention: "channel" | "topic" | null;
  /** Content starts with "/me " (Zulip's `is_me_message`). */
  isMeMessage: boolean;
  /** Any `<a>` in the output (links, bare URLs, channel/topic links). */
  hasLink: boolean;
  /** A link (outside quotes) to an image file (.png, .jpg, …). */
  hasImage: boolean;
  /** A link to `/user_uploads/…`. */
  hasAttachment: boolean;
  /** Path ids (the part after `/user_uploads/`) of the linked uploads, in order. */
  potentialAttachmentPathIds: string[];
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

const require = createRequire(import.meta.url);

/** Text-node escaping as Python-Markdown does it: only & < >. */
function escapeText(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

/** Attribute escaping: & < > ". */
function escapeAttr(s: string): string {
  return s.replace(/[&<>"]/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&quot;",
  );
}

/** Code-block escaping as Pygments' HTML formatter does it. */
function escapeCode(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;",
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function isWhitespaceChar(ch: string | undefined): boolean {
  return ch !== undefined && /\s/u.test(ch);
}

/** Python's str.expandtabs(4), line by line. */
function expandTabs(src: string): string {
  if (!src.includes("\t")) return src;
  return src
    .split("\n")
    .map((line) => {
      if (!line.includes("\t")) return line;
      let out = "";
      for (const ch of line) {
        if (ch === "\t") out += " ".repeat(4 - (out.length % 4));
        else out += ch;
      }
      return out;
    })
    .join("\n");
}

/** Zulip's hash_util_encode: percent-encode everything but [A-Za-z0-9_.~-], then '.'→'%2E', '%'→'.'. */
function hashUtilEncode(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/\./g, "%2E")
    .replace(/%/g, ".");
}

function encodeChannel(id: number, name: string): string {
  return `${id}-${hashUtilEncode(name.replace(/ /g, "-"))}`;
}

// ---------------------------------------------------------------------------
// URL sanitizing (Zulip's sanitize_url) and the bare-URL regex
// ---------------------------------------------------------------------------

const ALLOWED_SCHEMES = new Set([
  "http", "https", "ftp", "file",
  // https://html.spec.whatwg.org/multipage/system-state.html#safelisted-scheme
  "bitcoin", "geo", "im", "irc", "ircs", "magnet", "mailto", "matrix", "mms", "news", "nntp",
  "openpgp4fpr", "sip", "sms", "smsto", "ssh", "tel", "urn", "webcal", "wtai", "xmpp",
]);

const REJECTED_URL = "\u0000rejected";

/**
 * Returns the href to use, or null if the URL must not become a link
 * (unknown/dangerous scheme such as javascript:).
 */
export function sanitizeUrl(rawUrl: string): string | null {
  // urllib strips leading/trailing C0 controls + space and drops tab/CR/LF anywhere.
  let url = rawUrl.replace(/ /g, "%20").replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "").replace(/[\t\r\n]/g, "");
  const schemeMatch = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  if (!schemeMatch) {
    if (!url.startsWith("//")) {
      const hashAt = url.indexOf("#");
      const beforeFragment = hashAt >= 0 ? url.slice(0, hashAt) : url;
      const queryAt = beforeFragment.indexOf("?");
      const path = queryAt >= 0 ? beforeFragment.slice(0, queryAt) : beforeFragment;
      if (path.includes("@")) return stripEmptyQueryFragment("mailto:" + url);
      if (path.startsWith("/")) return stripEmptyQueryFragment(url);
      if (beforeFragment === "" && hashAt >= 0 && url.length > 1) return url;
    }
    // Zulip: no scheme → assume http://
    return sanitizeUrl("http://" + url);
  }
  const scheme = schemeMatch[1]!.toLowerCase();
  if (!ALLOWED_SCHEMES.has(scheme)) return null;
  return stripEmptyQueryFragment(scheme + url.slice(scheme.length));
}

function stripEmptyQueryFragment(url: string): string {
  if (url.endsWith("#")) url = url.slice(0, -1);
  if (url.endsWith("?")) url = url.slice(0, -1);
  return url;
}

const tldList: string[] = require("tlds") as string[];

/**
 * Zulip's web link regex: a URL starts after whitespace or one of '"(,:< (or at
 * the start), is `http(s)://…`, a bare domain with a known TLD, or an e-mail
 * address, may contain up to 7 levels of balanced parentheses, and must be
 * followed by optional punctuation and then whitespace or the end.
 */
const WEB_LINK_RE: RegExp = (() => {
  const falsePositives = new Set(["java", "md", "mov", "py", "zip"]);
  const tlds = tldList
    .filter((t) => !falsePositives.has(t))
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join("|");
  const inner = String.raw`[^\s()"]*`;
  const group = String.raw`[^\s()"]*?(?:\(%s\)[^\s()"]*?)*`;
  let nested = group;
  for (let i = 0; i < 6; i++) nested = nested.replace("%s", group);
  nested = nested.replace("%s", inner);
  const w = String.raw`\p{L}\p{N}_`;
  const url =
    String.raw`(?:(?:https?://[${w}.:@-]+?|(?:[${w}-]+\.)+(?:${tlds}))(?:/${nested})?)` +
    String.raw`|(?:[${w}.-]+@[${w}.-]+\.[${w}]+)` +
    String.raw`|(?:bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34})`;
  return new RegExp(
    String.raw`(?<![^\s'"(,:<])(?:${url})(?=[!:;?),.'">]*(?:$|\s))`,
    "gu",
  );
})();

// ---------------------------------------------------------------------------
// Emoji data
// ---------------------------------------------------------------------------

interface CompactEmoji {
  hexcode: string;
  label: string;
  group?: number;
}
type ShortcodeMap = Record<string, string | string[]>;

/**
 * Zulip renames some emoji (Google-style names). The dataset (emojibase) is
 * close but not identical; these overrides cover the names Zulip's own test
 * fixtures rely on. name → codepoint; the first name listed for a codepoint
 * becomes its canonical name.
 */
const ZULIP_NAME_OVERRIDES: Array<[string, string]> = [
  ["smile", "1f642"],
  ["big_smile", "1f604"],
  ["frown", "1f641"],
  ["holiday_tree", "1f384"],
  ["up", "2b06"],
  ["division", "2797"],
  ["gold", "1f947"],
  ["silver", "1f948"],
  ["bronze", "1f949"],
  ["working_on_it", "1f6e0"],
];

const emojiNameToCode = new Map<string, string>();
const emojiCodeToName = new Map<string, string>();

function codeFromHex(hexcode: string): string {
  return hexcode
    .toLowerCase()
    .split("-")
    .filter((c) => c !== "fe0f")
    .join("-");
}

(function loadEmojiData(): void {
  const compact = require("emojibase-data/en/compact.json") as CompactEmoji[];
  const presets = [
    require("emojibase-data/en/shortcodes/emojibase.json") as ShortcodeMap,
    require("emojibase-data/en/shortcodes/cldr.json") as ShortcodeMap,
    require("emojibase-data/en/shortcodes/github.json") as ShortcodeMap,
  ];
  for (const [name, code] of ZULIP_NAME_OVERRIDES) {
    emojiNameToCode.set(name, code);
    if (!emojiCodeToName.has(code)) emojiCodeToName.set(code, name);
  }
  // Names are assigned preset by preset so that a dataset's preferred name wins collisions.
  const entries: Array<[string, string[][]]> = [];
  for (const e of compact) {
    // Skip regional indicators (no group) and components (skin tones, hair).
    if (e.group === undefined || e.group === 2) continue;
    const code = codeFromHex(e.hexcode);
    entries.push([
      code,
      presets.map((p) => {
        const v = p[e.hexcode];
        return v === undefined ? [] : Array.isArray(v) ? v : [v];
      }),
    ]);
    if (!emojiCodeToName.has(code)) {
      const first = presets.map((p) => p[e.hexcode]).find((v) => v !== undefined);
      const name = first === undefined ? e.label.toLowerCase().replace(/[^a-z0-9]+/g, "_") : Array.isArray(first) ? first[0]! : first;
      emojiCodeToName.set(code, name);
    }
  }
  for (let p = 0; p < presets.length; p++) {
    for (const [code, names] of entries) {
      for (const name of names[p]!) if (!emojiNameToCode.has(name)) emojiNameToCode.set(name, code);
    }
  }
})();

/** Emoji name → Zulip-style codepoint ("1f642", "1f937-200d-2640"); undefined if unknown. */
export function emojiCodeForName(name: string): string | undefined {
  return emojiNameToCode.get(name);
}

/** Codepoint ("1f642") → canonical emoji name; undefined if unknown. */
export function emojiNameForCode(code: string): string | undefined {
  return emojiCodeToName.get(code);
}

const EMOJI_NAME_RE = /:([\p{L}\p{N}_+-]+):/gu;
const EMOJI_ELEMENT = String.raw`(?:\p{Regional_Indicator}\p{Regional_Indicator}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?)`;
const POSSIBLE_EMOJI_RE = new RegExp(`${EMOJI_ELEMENT}(?:\\u200D${EMOJI_ELEMENT})*`, "gu");
const TEXT_PRESENTATION_RE = /^\P{Emoji_Presentation}\u20E3?$/u;

// ---------------------------------------------------------------------------
// Rendering environment
// ---------------------------------------------------------------------------

interface ZulipEnv extends Env {
  zulipCtx: Partial<MarkdownContext>;
  zulipResult: RenderResult;
}

function getCtx(env: unknown): Partial<MarkdownContext> {
  return ((env as ZulipEnv | undefined)?.zulipCtx ?? {}) as Partial<MarkdownContext>;
}

// ---------------------------------------------------------------------------
// Mentions and channel links: matching + resolution (shared by rules & scanners)
// ---------------------------------------------------------------------------

const STREAM_WILDCARDS = new Set(["all", "everyone", "stream", "channel"]);
const TOPIC_WILDCARDS = new Set(["topic"]);

const USER_MENTION_RE = /@(_?)\*\*([^*]+)\*\*/y;
const GROUP_MENTION_RE = /@(_?)\*([^*]+)\*/y;
const TOPIC_MESSAGE_LINK_RE = /#\*\*([^*>]+)>([^*]*)@(\d+)\*\*/y;
const TOPIC_LINK_RE = /#\*\*([^*>]+)>([^*]+)\*\*/y;
const CHANNEL_LINK_RE = /#\*\*([^*]+)\*\*/y;
const ID_SYNTAX_RE = /^([^\n]+)?\|(\d+)$/;

/** Mentions may start after start-of-text, whitespace, or ' " ( { [ / <. */
function mentionBoundaryOk(src: string, pos: number): boolean {
  if (pos === 0) return true;
  const prev = src[pos - 1]!;
  return isWhitespaceChar(prev) || "'\"({[/<".includes(prev);
}

/** Channel links: like mentions, except not after '[' (so `[#**x**](url)` doesn't double-link). */
function channelBoundaryOk(src: string, pos: number): boolean {
  if (pos === 0) return true;
  const prev = src[pos - 1]!;
  return isWhitespaceChar(prev) || "'\"({/<".includes(prev);
}

type UserMentionTarget =
  | { kind: "user"; id: number; name: string }
  | { kind: "channel_wildcard"; name: string }
  | { kind: "topic_wildcard"; name: string };

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

interface InlineMatch {
  end: number;
  type: string;
  meta: Record<string, unknown>;
}

function matchSticky(re: RegExp, src: string, pos: number, max: number): RegExpExecArray | null {
  re.lastIndex = pos;
  const m = re.exec(src);
  if (!m || m.index + m[0].length > max) return null;
  return m;
}

function matchMentionAt(src: string, pos: number, max: number, ctx: Partial<MarkdownContext>): InlineMatch | null {
  if (src.charCodeAt(pos) !== 0x40 /* @ */ || !mentionBoundaryOk(src, pos)) return null;
  let m = matchSticky(USER_MENTION_RE, src, pos, max);
  if (m) {
    const target = resolveUserMention(m[2]!, ctx);
    if (target) {
      return { end: pos + m[0].length, type: "zulip_user_mention", meta: { ...target, silent: m[1] === "_" } };
    }
    return null;
  }
  m = matchSticky(GROUP_MENTION_RE, src, pos, max);
  if (m) {
    const group = ctx.groupsByName?.get(m[2]!.toLowerCase());
    if (group) {
      return {
        end: pos + m[0].length,
        type: "zulip_group_mention",
        meta: { id: group.id, name: group.name, silent: m[1] === "_" },
      };
    }
  }
  return null;
}

function findChannel(name: string, ctx: Partial<MarkdownContext>): { id: number; name: string } | null {
  const channel = ctx.channelsByName?.get(name.toLowerCase());
  // Zulip looks channels up by exact name.
  return channel && channel.name === name ? channel : null;
}

function matchChannelLinkAt(src: string, pos: number, max: number, ctx: Partial<MarkdownContext>): InlineMatch | null {
  if (src.charCodeAt(pos) !== 0x23 /* # */ || !channelBoundaryOk(src, pos)) return null;
  let m = matchSticky(TOPIC_MESSAGE_LINK_RE, src, pos, max);
  if (m) {
    const channel = findChannel(m[1]!, ctx);
    if (channel) {
      return {
        end: pos + m[0].length,
        type: "zulip_message_link",
        meta: { channelId: channel.id, channelName: m[1]!, topic: m[2]!, messageId: m[3]! },
      };
    }
  }
  m = matchSticky(TOPIC_LINK_RE, src, pos, max);
  if (m) {
    const channel = findChannel(m[1]!, ctx);
    if (channel) {
      return {
        end: pos + m[0].length,
        type: "zulip_topic_link",
        meta: { channelId: channel.id, channelName: m[1]!, topic: m[2]! },
      };
    }
  }
  m = matchSticky(CHANNEL_LINK_RE, src, pos, max);
  if (m) {
    const channel = findChannel(m[1]!, ctx);
    if (channel) {
      return { end: pos + m[0].length, type: "zulip_channel_link", meta: { channelId: channel.id, channelName: m[1]! } };
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Inline code spans (Zulip: `(`+)(.+?)(?<!`)\2(?!`)`, content kept verbatim)
// ---------------------------------------------------------------------------

let backtickRunsSrc: string | null = null;
let backtickRuns: Array<[number, number]> = []; // [start, length] of maximal runs

function getBacktickRuns(src: string): Array<[number, number]> {
  if (backtickRunsSrc === src) return backtickRuns;
  const runs: Array<[number, number]> = [];
  for (let i = src.indexOf("`"); i >= 0; ) {
    let j = i;
    while (src.charCodeAt(j) === 0x60) j++;
    runs.push([i, j - i]);
    i = src.indexOf("`", j);
  }
  backtickRunsSrc = src;
  backtickRuns = runs;
  return runs;
}

/** If a code span starts at pos: [contentStart, contentEnd, end]. */
function matchCodeSpanAt(src: string, pos: number, max: number): [number, number, number] | null {
  if (src.charCodeAt(pos) !== 0x60) return null;
  if (pos > 0 && src.charCodeAt(pos - 1) === 0x5c /* \ */) return null;
  let runLen = 0;
  while (pos + runLen < max && src.charCodeAt(pos + runLen) === 0x60) runLen++;
  const runs = getBacktickRuns(src);
  // First run starting after this one (binary search; runs are sorted).
  let lo = 0;
  let hi = runs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid]![0] < pos + runLen) lo = mid + 1;
    else hi = mid;
  }
  for (let n = runLen; n >= 1; n--) {
    for (let k = lo; k < runs.length; k++) {
      const [start, len] = runs[k]!;
      if (start + len > max) break;
      if (len === n) return [pos + n, start, start + len];
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Emphasis-like spans (Zulip's regexes, found by scanning; protected spans —
// code, resolvable mentions/channel links — are skipped as Zulip's earlier,
// higher-priority patterns would have consumed them)
// ---------------------------------------------------------------------------

function skipProtected(src: string, i: number, max: number, ctx: Partial<MarkdownContext>): number {
  const c = src.charCodeAt(i);
  if (c === 0x60) {
    const code = matchCodeSpanAt(src, i, max);
    return code ? code[2] : -1;
  }
  if (c === 0x40) return matchMentionAt(src, i, max, ctx)?.end ?? -1;
  if (c === 0x23) return matchChannelLinkAt(src, i, max, ctx)?.end ?? -1;
  return -1;
}

/** `***x***`: returns index of the closing `***` or -1. */
function findStrongEmClose(src: string, pos: number, max: number, ctx: Partial<MarkdownContext>): number {
  const start = pos + 3;
  if (start >= max || isWhitespaceChar(src[start])) return -1;
  for (let i = start; i < max; ) {
    const skip = skipProtected(src, i, max, ctx);
    if (skip > 0) {
      i = skip;
      continue;
    }
    const ch = src[i];
    if (ch === "\n" || ch === "^") return -1;
    if (ch === "*") {
      return i > start && i + 3 <= max && src.startsWith("***", i) && !isWhitespaceChar(src[i - 1]) ? i : -1;
    }
    i++;
  }
  return -1;
}

/** `**x**` (single line, lazy): returns index of the closing `**` or -1. */
function findStrongClose(src: string, pos: number, max: number, ctx: Partial<MarkdownContext>): number {
  const start = pos + 2;
  for (let i = start; i < max; ) {
    const skip = skipProtected(src, i, max, ctx);
    if (skip > 0) {
      i = skip;
      continue;
    }
    if (src[i] === "\n") return -1;
    if (i > start && i + 2 <= max && src.charCodeAt(i) === 0x2a && src.charCodeAt(i + 1) === 0x2a) return i;
    i++;
  }
  return -1;
}

/** `*x*` (no `*`, `^` or newline inside; no whitespace just inside): closing `*` or -1. */
function findEmClose(src: string, pos: number, max: number, ctx: Partial<MarkdownContext>): number {
  const start = pos + 1;
  if (start >= max || isWhitespaceChar(src[start]) || src[start] === "*") return -1;
  for (let i = start; i < max; ) {
    const skip = skipProtected(src, i, max, ctx);
    if (skip > 0) {
      i = skip;
      continue;
    }
    const ch = src[i];
    if (ch === "\n" || ch === "^") return -1;
    if (ch === "*") {
      if (src[i + 1] === "*") {
        const strongEnd = findStrongClose(src, i, max, ctx);
        if (strongEnd >= 0) {
          i = strongEnd + 2;
          continue;
        }
      }
      return i > start && !isWhitespaceChar(src[i - 1]) ? i : -1;
    }
    i++;
  }
  return -1;
}

/** `~~x~~` (no `~` or newline inside): closing `~~` or -1. */
function findDelClose(src: string, pos: number, max: number, ctx: Partial<MarkdownContext>): number {
  const start = pos + 2;
  for (let i = start; i < max; ) {
    const skip = skipProtected(src, i, max, ctx);
    if (skip > 0) {
      i = skip;
      continue;
    }
    const ch = src[i];
    if (ch === "\n") return -1;
    if (ch === "~") {
      return i > start && src[i + 1] === "~" && src[i + 2] !== "~" && i + 2 <= max ? i : -1;
    }
    i++;
  }
  return -1;
}

function tokenizeRange(state: StateInline, start: number, end: number): void {
  const oldMax = state.posMax;
  state.pos = start;
  state.posMax = end;
  state.md.inline.tokenize(state);
  state.posMax = oldMax;
}

// ---------------------------------------------------------------------------
// Inline rules
// ---------------------------------------------------------------------------

function ruleNewline(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x0a) return false;
  // nl2br: every newline is a <br>; surrounding spaces are kept.
  if (!silent) state.push("softbreak", "br", 0);
  state.pos++;
  return true;
}

function ruleBackticks(state: StateInline, silent: boolean): boolean {
  const m = matchCodeSpanAt(state.src, state.pos, state.posMax);
  if (!m) return false;
  if (!silent) {
    const token = state.push("code_inline", "code", 0);
    token.content = state.src.slice(m[0], m[1]);
  }
  state.pos = m[2];
  return true;
}

function ruleMention(state: StateInline, silent: boolean): boolean {
  const m = matchMentionAt(state.src, state.pos, state.posMax, getCtx(state.env));
  if (!m) return false;
  if (!silent) state.push(m.type, "span", 0).meta = m.meta;
  state.pos = m.end;
  return true;
}

function ruleChannelLink(state: StateInline, silent: boolean): boolean {
  const m = matchChannelLinkAt(state.src, state.pos, state.posMax, getCtx(state.env));
  if (!m) return false;
  if (!silent) state.push(m.type, "a", 0).meta = m.meta;
  state.pos = m.end;
  return true;
}

function ruleStar(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const pos = state.pos;
  const max = state.posMax;
  if (src.charCodeAt(pos) !== 0x2a) return false;
  const ctx = getCtx(state.env);
  if (src.startsWith("***", pos)) {
    const close = findStrongEmClose(src, pos, max, ctx);
    if (close >= 0) {
      if (!silent) {
        state.push("strong_open", "strong", 1).markup = "**";
        state.push("em_open", "em", 1).markup = "*";
        tokenizeRange(state, pos + 3, close);
        state.push("em_close", "em", -1).markup = "*";
        state.push("strong_close", "strong", -1).markup = "**";
      }
      state.pos = close + 3;
      return true;
    }
  }
  // Link text is literal in Zulip: no strong/emphasis inside it.
  if (state.linkLevel > 0) return false;
  if (src.charCodeAt(pos + 1) === 0x2a) {
    const close = findStrongClose(src, pos, max, ctx);
    if (close < 0) return false;
    if (!silent) {
      state.push("strong_open", "strong", 1).markup = "**";
      tokenizeRange(state, pos + 2, close);
      state.push("strong_close", "strong", -1).markup = "**";
    }
    state.pos = close + 2;
    return true;
  }
  const close = findEmClose(src, pos, max, ctx);
  if (close < 0) return false;
  if (!silent) {
    state.push("em_open", "em", 1).markup = "*";
    tokenizeRange(state, pos + 1, close);
    state.push("em_close", "em", -1).markup = "*";
  }
  state.pos = close + 1;
  return true;
}

function ruleDel(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const pos = state.pos;
  if (src.charCodeAt(pos) !== 0x7e || src.charCodeAt(pos + 1) !== 0x7e) return false;
  if (pos > 0 && src.charCodeAt(pos - 1) === 0x7e) return false;
  if (state.linkLevel > 0) return false;
  const close = findDelClose(src, pos, state.posMax, getCtx(state.env));
  if (close < 0) return false;
  if (!silent) {
    state.push("s_open", "del", 1).markup = "~~";
    tokenizeRange(state, pos + 2, close);
    state.push("s_close", "del", -1).markup = "~~";
  }
  state.pos = close + 2;
  return true;
}

const ENTITY_RE = /&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);/y;

/** HTML entities pass through verbatim (Python-Markdown keeps `&nbsp;` as is). */
function ruleEntity(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x26) return false;
  const m = matchSticky(ENTITY_RE, state.src, state.pos, state.posMax);
  if (!m) return false;
  if (!silent) state.push("zulip_raw", "", 0).content = m[0];
  state.pos += m[0].length;
  return true;
}

const TIME_RE = /<time:([^>]*?)>/y;

function parseTimestamp(input: string): string | null {
  const s = input.trim();
  let ms: number;
  if (/^-?\d+(?:\.\d+)?$/.test(s)) {
    ms = Number(s) * 1000;
  } else {
    const iso = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(s);
    if (iso) {
      const tz = iso[3] ? (iso[3].toUpperCase() === "Z" ? "Z" : iso[3].replace(/^([+-]\d{2})(\d{2})$/, "$1:$2")) : "Z";
      ms = Date.parse(`${iso[1]}T${iso[2] ?? "00:00:00"}${tz}`);
    } else {
      // Other human formats: interpret without zone as UTC, like Zulip.
      ms = Date.parse(`${s} UTC`);
      if (Number.isNaN(ms)) ms = Date.parse(s);
    }
  }
  if (!Number.isFinite(ms)) return null;
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return null;
  const millis = d.getUTCMilliseconds();
  return d.toISOString().replace(/\.\d{3}Z$/, millis ? `.${String(millis).padStart(3, "0")}000Z` : "Z");
}

function ruleTimestamp(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3c) return false;
  const m = matchSticky(TIME_RE, state.src, state.pos, state.posMax);
  if (!m) return false;
  if (!silent) {
    const token = state.push("zulip_time", "time", 0);
    token.content = m[1]!;
    token.meta = { iso: parseTimestamp(m[1]!) };
  }
  state.pos += m[0].length;
  return true;
}

// ---------------------------------------------------------------------------
// Block rules
// ---------------------------------------------------------------------------

/** Zulip's FENCE_RE: fence at column 0, optional `{.lang header}`. */
const FENCE_RE = /^(~{3,}|`{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+\-./#]+)[ ]*([^ ~`][^~`]*)?\}?)?$/;

function lineText(state: StateBlock, line: number): string {
  return state.src.slice(state.bMarks[line]! + state.tShift[line]!, state.eMarks[line]!);
}

type FenceKind = "code" | "quote" | "spoiler" | "math";

function fenceKind(lang: string | undefined): FenceKind {
  const l = lang?.toLowerCase();
  if (l === "quote" || l === "quoted") return "quote";
  if (l === "spoiler") return "spoiler";
  if (l === "math") return "math";
  return "code";
}

function ruleZulipFence(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  if (state.sCount[startLine] !== state.blkIndent) return false;
  const first = lineText(state, startLine);
  const c = first.charCodeAt(0);
  if (c !== 0x60 && c !== 0x7e) return false;
  const m = FENCE_RE.exec(first);
  if (!m) return false;
  if (silent) return true;

  const fence = m[1]!;
  const lang = m[2];
  const header = m[3];
  const kind = fenceKind(lang);

  // Find the closing line, tracking nested fences the way Zulip's fenced-block
  // preprocessor does: inside quote/spoiler blocks new fences nest; inside code
  // only the identical fence closes.
  const stack: Array<{ fence: string; container: boolean }> = [{ fence, container: kind === "quote" || kind === "spoiler" }];
  let closeLine = -1;
  let line = startLine + 1;
  for (; line < endLine; line++) {
    if (state.sCount[line]! < state.blkIndent && !state.isEmpty(line)) break;
    const text = state.sCount[line] === state.blkIndent ? lineText(state, line).trimEnd() : null;
    const top = stack[stack.length - 1]!;
    if (text !== null && text === top.fence) {
      stack.pop();
      if (stack.length === 0) {
        closeLine = line;
        break;
      }
      continue;
    }
    if (top.container && text !== null) {
      const nested = FENCE_RE.exec(text);
      if (nested) {
        const k = fenceKind(nested[2]);
        stack.push({ fence: nested[1]!, container: k === "quote" || k === "spoiler" });
      }
    }
  }
  const contentEnd = closeLine >= 0 ? closeLine : line;
  const nextLine = closeLine >= 0 ? closeLine + 1 : line;

  // Zulip emits nothing for a block without any content lines.
  if (contentEnd <= startLine + 1) {
    state.line = nextLine;
    return true;
  }

  if (kind === "code" || kind === "math") {
    const token = state.push(kind === "math" ? "zulip_math" : "fence", kind === "math" ? "" : "code", 0);
    token.info = lang ?? "";
    token.markup = fence;
    token.content = state.getLines(startLine + 1, contentEnd, state.blkIndent, true);
    token.map = [startLine, nextLine];
    state.line = nextLine;
    return true;
  }

  const oldParent = state.parentType;
  const oldLineMax = state.lineMax;
  state.parentType = "zulip_fence" as typeof state.parentType;
  state.lineMax = contentEnd;
  if (kind === "quote") {
    const open = state.push("blockquote_open", "blockquote", 1);
    open.markup = fence;
    open.map = [startLine, nextLine];
    state.md.block.tokenize(state, startLine + 1, contentEnd);
    state.push("blockquote_close", "blockquote", -1).markup = fence;
  } else {
    const open = state.push("zulip_spoiler_open", "div", 1);
    open.map = [startLine, nextLine];
    const headerText = (header ?? "").trim();
    if (headerText) {
      state.push("paragraph_open", "p", 1);
      const inline = state.push("inline", "", 0);
      inline.content = headerText;
      inline.children = [];
      state.push("paragraph_close", "p", -1);
    }
    state.push("zulip_spoiler_content", "div", 0);
    state.md.block.tokenize(state, startLine + 1, contentEnd);
    state.push("zulip_spoiler_close", "div", -1);
  }
  state.parentType = oldParent;
  state.lineMax = oldLineMax;
  state.line = nextLine;
  return true;
}

/** markdown-it's paragraph rule, but only leading whitespace is stripped (Zulip keeps trailing spaces). */
function ruleParagraph(state: StateBlock, startLine: number, endLine: number): boolean {
  const terminatorRules = state.md.block.ruler.getRules("paragraph");
  const oldParentType = state.parentType;
  let nextLine = startLine + 1;
  state.parentType = "paragraph";
  for (; nextLine < endLine && !state.isEmpty(nextLine); nextLine++) {
    if (state.sCount[nextLine]! - state.blkIndent > 3) continue;
    if (state.sCount[nextLine]! < 0) continue;
    let terminate = false;
    for (const rule of terminatorRules) {
      if (rule(state, nextLine, endLine, true)) {
        terminate = true;
        break;
      }
    }
    if (terminate) break;
  }
  const content = state.getLines(startLine, nextLine, state.blkIndent, false).replace(/^\s+/, "");
  state.line = nextLine;
  state.push("paragraph_open", "p", 1).map = [startLine, state.line];
  const inline = state.push("inline", "", 0);
  inline.content = content;
  inline.map = [startLine, state.line];
  inline.children = [];
  state.push("paragraph_close", "p", -1);
  state.parentType = oldParentType;
  return true;
}

// ---------------------------------------------------------------------------
// Core post-processing: bare URLs, emoji, link fixes, mention bookkeeping
// ---------------------------------------------------------------------------

const IMAGE_EXTENSIONS = [".bmp", ".gif", ".jpe", ".jpeg", ".jpg", ".png", ".webp"];

function makeToken(state: StateCore, type: string, tag: string, nesting: -1 | 0 | 1, level: number): Token {
  const t = new state.Token(type, tag, nesting);
  t.level = level;
  return t;
}

function pushText(state: StateCore, out: Token[], content: string, level: number, atomic = false): void {
  if (!content) return;
  const t = makeToken(state, "text", "", 0, level);
  t.content = content;
  if (atomic) t.meta = { atomic: true };
  out.push(t);
}

/** Split a text token at :emoji: names and unicode emoji. */
function emojify(state: StateCore, text: string, level: number, out: Token[]): void {
  const realmEmoji = getCtx(state.env).realmEmoji;
  let last = 0;
  const emitUnicode = (segment: string): void => {
    // Only non-ASCII text can contain emoji (keycaps need U+20E3).
    if (!/[^\x00-\x7f]/.test(segment)) {
      pushText(state, out, segment, level);
      return;
    }
    let prev = 0;
    POSSIBLE_EMOJI_RE.lastIndex = 0;
    for (let m = POSSIBLE_EMOJI_RE.exec(segment); m; m = POSSIBLE_EMOJI_RE.exec(segment)) {
      const seq = m[0];
      if (TEXT_PRESENTATION_RE.test(seq)) continue;
      const code = Array.from(seq.replace(/\uFE0F/g, ""), (ch) => ch.codePointAt(0)!.toString(16).padStart(4, "0")).join("-");
      const name = emojiCodeToName.get(code);
      if (name === undefined) continue;
      pushText(state, out, segment.slice(prev, m.index), level);
      const t = makeToken(state, "zulip_emoji", "span", 0, level);
      t.meta = { code, name };
      out.push(t);
      prev = m.index + seq.length;
    }
    pushText(state, out, segment.slice(prev), level);
  };
  if (text.includes(":")) {
    EMOJI_NAME_RE.lastIndex = 0;
    for (let m = EMOJI_NAME_RE.exec(text); m; m = EMOJI_NAME_RE.exec(text)) {
      const name = m[1]!;
      const realm = realmEmoji?.get(name);
      const code = realm ? undefined : emojiNameToCode.get(name);
      if (!realm && code === undefined && name !== "zulip") continue;
      emitUnicode(text.slice(last, m.index));
      const t = makeToken(state, "zulip_emoji", "span", 0, level);
      t.meta = realm
        ? { name, src: realm.sourceUrl }
        : name === "zulip"
          ? { name, src: "/static/generated/emoji/images/emoji/unicode/zulip.png" }
          : { code, name };
      out.push(t);
      last = m.index + m[0].length;
    }
  }
  emitUnicode(text.slice(last));
}

/** Split a text token at bare URLs (Zulip's AutoLink pattern). */
function autolink(
  state: StateCore,
  text: string,
  level: number,
  startOk: boolean,
  endOk: boolean,
  inQuote: boolean,
  out: Token[],
): void {
  // Sentinels make the look-behind/look-ahead fail where Zulip would have seen
  // a placeholder or markup character next to this text.
  const prefix = startOk ? "" : "\u0002";
  const subject = prefix + text + (endOk ? "" : "\u0002");
  let last = 0;
  WEB_LINK_RE.lastIndex = 0;
  for (let m = WEB_LINK_RE.exec(subject); m; m = WEB_LINK_RE.exec(subject)) {
    const url = m[0];
    const href = sanitizeUrl(url);
    if (href === null) continue;
    const start = m.index - prefix.length;
    emojify(state, text.slice(last, start), level, out);
    const env = state.env as ZulipEnv;
    const localHref = rewriteLocalLink(href, env.zulipCtx.realmUrl);
    noteLink(localHref, inQuote, env.zulipResult);
    const open = makeToken(state, "link_open", "a", 1, level);
    open.attrs = [["href", localHref]];
    open.markup = "linkify";
    open.info = "auto";
    out.push(open);
    pushText(state, out, url, level + 1, true);
    const close = makeToken(state, "link_close", "a", -1, level);
    close.markup = "linkify";
    close.info = "auto";
    out.push(close);
    last = start + url.length;
  }
  emojify(state, text.slice(last), level, out);
}

function rewriteLocalLink(href: string, realmUrl: string | undefined): string {
  if (!realmUrl) return href;
  const prefix = realmUrl.replace(/\/+$/, "") + "/";
  if (href.startsWith(prefix + "#") || href.startsWith(prefix + "user_uploads/")) return href.slice(prefix.length);
  return href;
}

function noteLink(href: string, inQuote: boolean, result: RenderResult): void {
  result.hasLink = true;
  let path: string | null = null;
  if (href.startsWith("/") && !href.startsWith("//")) path = href;
  else if (href.startsWith("user_uploads/")) path = "/" + href;
  if (path !== null) {
    path = path.replace(/[?#].*$/, "");
    if (path.startsWith("/user_uploads/")) {
      result.hasAttachment = true;
      result.potentialAttachmentPathIds.push(path.slice("/user_uploads/".length));
    }
  } else {
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(href);
    path = m ? m[1]! : null;
  }
  if (!inQuote && path !== null) {
    const lower = path.toLowerCase();
    if (IMAGE_EXTENSIONS.some((ext) => lower.endsWith(ext))) result.hasImage = true;
  }
}

function processInline(state: StateCore, children: Token[], inQuote: boolean): Token[] {
  const ctx = getCtx(state.env);
  const result = (state.env as ZulipEnv).zulipResult;
  const out: Token[] = [];
  let linkDepth = 0;
  for (let i = 0; i < children.length; i++) {
    const tok = children[i]!;
    switch (tok.type) {
      case "text": {
        if (linkDepth > 0 || (tok.meta && tok.meta.atomic)) {
          out.push(tok);
          break;
        }
        const prev = children[i - 1];
        const next = children[i + 1];
        const startOk = !prev || prev.type === "softbreak" || prev.type === "hardbreak";
        const endOk = !next || next.type === "softbreak" || next.type === "hardbreak";
        autolink(state, tok.content, tok.level, startOk, endOk, inQuote, out);
        break;
      }
      case "link_open": {
        if (tok.info !== "auto") linkDepth++;
        const href = rewriteLocalLink(String(tok.attrGet("href") ?? ""), ctx.realmUrl);
        tok.attrSet("href", href);
        noteLink(href, inQuote, result);
        out.push(tok);
        if (tok.info !== "auto") {
          // Empty (or blank) link text shows the URL.
          let j = i + 1;
          while (j < children.length && children[j]!.type === "text" && !children[j]!.content.trim()) j++;
          if (children[j]?.type === "link_close") {
            pushText(state, out, href, tok.level + 1, true);
            i = j - 1;
          }
        }
        break;
      }
      case "link_close":
        if (tok.info !== "auto") linkDepth--;
        out.push(tok);
        break;
      case "zulip_user_mention": {
        const meta = tok.meta as { kind: string; id?: number; silent: boolean };
        // Mentions inside quotes are always silent.
        if (inQuote) meta.silent = true;
        if (!meta.silent) {
          if (meta.kind === "user") result.mentionedUserIds.add(meta.id!);
          else if (meta.kind === "channel_wildcard") result.wildcardMention = "channel";
          else if (result.wildcardMention === null) result.wildcardMention = "topic";
        }
        out.push(tok);
        break;
      }
      case "zulip_group_mention": {
        const meta = tok.meta as { id: number; silent: boolean };
        if (inQuote) meta.silent = true;
        if (!meta.silent) result.mentionedGroupIds.add(meta.id);
        out.push(tok);
        break;
      }
      case "zulip_channel_link":
      case "zulip_topic_link":
      case "zulip_message_link":
        result.hasLink = true;
        out.push(tok);
        break;
      default:
        out.push(tok);
    }
  }
  return out;
}

function coreZulip(state: StateCore): void {
  const tokens = state.tokens;
  let quoteDepth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    switch (tok.type) {
      case "blockquote_open":
        quoteDepth++;
        break;
      case "blockquote_close":
        quoteDepth--;
        break;
      case "inline":
        if (tok.children) tok.children = processInline(state, tok.children, quoteDepth > 0);
        break;
      case "bullet_list_close": {
        // Zulip treats a change of bullet character as the same list.
        const next = tokens[i + 1];
        if (next && next.type === "bullet_list_open" && next.level === tok.level) {
          tokens.splice(i, 2);
          i--;
        }
        break;
      }
      case "th_open":
      case "td_open": {
        const style = tok.attrGet("style");
        if (typeof style === "string") tok.attrSet("style", style.replace(/^text-align:(\w+)$/, "text-align: $1;"));
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Code blocks
// ---------------------------------------------------------------------------

/** Pygments lexer names for common aliases (Zulip's data-code-language). */
const PYGMENTS_NAMES: Record<string, string> = (() => {
  const table: Array<[string, string[]]> = [
    ["Python", ["python", "py", "sage", "python3", "py3", "bazel", "starlark", "pyi"]],
    ["Python 2.x", ["python2", "py2"]],
    ["Python console session", ["pycon", "python-console"]],
    ["Python Traceback", ["pytb", "py3tb"]],
    ["JavaScript", ["javascript", "js"]],
    ["TypeScript", ["typescript", "ts"]],
    ["JSX", ["jsx", "react"]],
    ["TSX", ["tsx"]],
    ["Java", ["java"]],
    ["C", ["c"]],
    ["C++", ["cpp", "c++"]],
    ["C#", ["csharp", "c#", "cs"]],
    ["Go", ["go", "golang"]],
    ["Rust", ["rust", "rs"]],
    ["Ruby", ["ruby", "rb", "duby"]],
    ["PHP", ["php", "php3", "php4", "php5"]],
    ["Bash", ["bash", "sh", "ksh", "zsh", "shell", "openrc"]],
    ["Bash Session", ["console", "shell-session"]],
    ["PowerShell", ["powershell", "pwsh", "posh", "ps1", "psm1"]],
    ["Batchfile", ["batch", "bat", "dosbatch", "winbatch"]],
    ["JSON", ["json", "json-object"]],
    ["YAML", ["yaml"]],
    ["TOML", ["toml"]],
    ["INI", ["ini", "cfg", "dosini"]],
    ["XML", ["xml"]],
    ["HTML", ["html"]],
    ["CSS", ["css"]],
    ["SCSS", ["scss"]],
    ["Sass", ["sass"]],
    ["LESS", ["less"]],
    ["SQL", ["sql"]],
    ["PostgreSQL SQL dialect", ["postgresql", "postgres"]],
    ["MySQL", ["mysql"]],
    ["Kotlin", ["kotlin"]],
    ["Swift", ["swift"]],
    ["Scala", ["scala"]],
    ["Haskell", ["haskell", "hs"]],
    ["Lua", ["lua"]],
    ["Perl", ["perl", "pl"]],
    ["S", ["splus", "s", "r"]],
    ["TeX", ["tex", "latex"]],
    ["Markdown", ["markdown", "md"]],
    ["Diff", ["diff", "udiff"]],
    ["Docker", ["docker", "dockerfile"]],
    ["Makefile", ["make", "makefile", "mf", "bsdmake"]],
    ["Elixir", ["elixir", "ex", "exs"]],
    ["Erlang", ["erlang"]],
    ["Clojure", ["clojure", "clj"]],
    ["Dart", ["dart"]],
    ["Objective-C", ["objective-c", "objectivec", "obj-c", "objc"]],
    ["OCaml", ["ocaml"]],
    ["F#", ["fsharp", "f#"]],
    ["Julia", ["julia", "jl"]],
    ["Matlab", ["matlab"]],
    ["Groovy", ["groovy"]],
    ["CoffeeScript", ["coffeescript", "coffee-script", "coffee"]],
    ["Elm", ["elm"]],
    ["Nim", ["nimrod", "nim"]],
    ["Zig", ["zig"]],
    ["Protocol Buffer", ["protobuf", "proto"]],
    ["Terraform", ["terraform", "tf", "hcl"]],
    ["GraphQL", ["graphql"]],
    ["Nginx configuration file", ["nginx"]],
    ["VimL", ["vim"]],
    ["Text only", ["text"]],
    ["Handlebars", ["handlebars"]],
    ["Emacs Lisp", ["emacs-lisp", "elisp", "emacs"]],
    ["Common Lisp", ["common-lisp", "cl", "lisp"]],
    ["Scheme", ["scheme", "scm"]],
    ["Racket", ["racket", "rkt"]],
    ["Fortran", ["fortran", "f90"]],
    ["Verilog", ["verilog", "v"]],
    ["Solidity", ["solidity"]],
    ["Vue", ["vue"]],
  ];
  const out: Record<string, string> = {};
  for (const [name, aliases] of table) for (const a of aliases) out[a] = name;
  return out;
})();

function codeLanguageName(lang: string): string {
  const l = lang.toLowerCase();
  return Object.prototype.hasOwnProperty.call(PYGMENTS_NAMES, l) ? PYGMENTS_NAMES[l]! : l;
}

/** Zulip/Pygments normalization: rstrip lines, drop leading/trailing blank lines, end with "\n". */
function normalizeCode(code: string): string {
  const text = code
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
    .replace(/^\n+|\n+$/g, "");
  return text + "\n";
}

function renderCode(code: string, lang: string): string {
  const attr = lang ? ` data-code-language="${escapeAttr(codeLanguageName(lang))}"` : "";
  return `<div class="codehilite"${attr}><pre><span></span><code>${escapeCode(normalizeCode(code))}</code></pre></div>\n`;
}

// ---------------------------------------------------------------------------
// The markdown-it instance (built once)
// ---------------------------------------------------------------------------

const md = new MarkdownIt("default", {
  html: false,
  xhtmlOut: false,
  breaks: true,
  linkify: false,
  typographer: false,
});

md.normalizeLink = (url: string): string => sanitizeUrl(url) ?? REJECTED_URL;
md.validateLink = (url: string): boolean => url !== REJECTED_URL;
md.normalizeLinkText = (s: string): string => s;

md.block.ruler.disable(["fence", "lheading", "reference", "html_block"]);
md.block.ruler.before("code", "zulip_fence", ruleZulipFence, { alt: ["paragraph", "reference", "blockquote", "list"] });
md.block.ruler.at("paragraph", ruleParagraph);

type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean;
function builtinBlockRule(name: string): BlockRule {
  const rule = md.block.ruler.__rules__.find((r) => r.name === name);
  if (!rule) throw new Error(`markdown-it block rule ${name} not found`);
  return rule.fn;
}

// Lists: Zulip (Python-Markdown) only knows "1." markers, and a marker needs a space after it.
const builtinList = builtinBlockRule("list");
md.block.ruler.at(
  "list",
  (state, startLine, endLine, silent) =>
    /^(?:\d{1,9}\)|(?:[*+-]|\d{1,9}\.)$)/.test(lineText(state, startLine))
      ? false
      : builtinList(state, startLine, endLine, silent),
  { alt: ["paragraph", "reference", "blockquote"] },
);

// Blockquotes: a quote made only of empty ">" lines stays plain text (`>` → `<p>&gt;</p>`).
const builtinBlockquote = builtinBlockRule("blockquote");
md.block.ruler.at(
  "blockquote",
  (state, startLine, endLine, silent) => {
    let onlyEmpty = true;
    for (let line = startLine; line < endLine && !state.isEmpty(line); line++) {
      if (!/^>[ \t]*$/.test(lineText(state, line))) {
        onlyEmpty = false;
        break;
      }
    }
    return onlyEmpty ? false : builtinBlockquote(state, startLine, endLine, silent);
  },
  { alt: ["paragraph", "reference", "blockquote", "list"] },
);

md.inline.ruler.disable(["linkify", "escape", "strikethrough", "emphasis", "image", "autolink", "html_inline"]);
md.inline.ruler2.disable(["strikethrough", "emphasis"]);
md.inline.ruler.at("newline", ruleNewline);
md.inline.ruler.at("backticks", ruleBackticks);
md.inline.ruler.at("entity", ruleEntity);
md.inline.ruler.after("backticks", "zulip_mention", ruleMention);
md.inline.ruler.after("zulip_mention", "zulip_channel_link", ruleChannelLink);
md.inline.ruler.after("zulip_channel_link", "zulip_star", ruleStar);
md.inline.ruler.after("zulip_star", "zulip_del", ruleDel);
md.inline.ruler.after("zulip_del", "zulip_timestamp", ruleTimestamp);

md.core.ruler.push("zulip", coreZulip);

const rules = md.renderer.rules;
rules.text = (tokens, idx) => escapeText(tokens[idx]!.content);
rules.code_inline = (tokens, idx) => `<code>${escapeText(tokens[idx]!.content)}</code>`;
rules.fence = (tokens, idx) => renderCode(tokens[idx]!.content, tokens[idx]!.info);
rules.code_block = (tokens, idx) => renderCode(tokens[idx]!.content, "");
rules.zulip_raw = (tokens, idx) => tokens[idx]!.content;
rules.zulip_math = (tokens, idx) => {
  // No TeX renderer bundled: use Zulip's own fallback markup for TeX it cannot render.
  const paragraphs = tokens[idx]!.content.replace(/\n+$/, "").split("\n\n");
  return paragraphs.map((p) => `<p><span class="tex-error">${escapeCode(p)}</span></p>\n`).join("");
};
const listOpen: NonNullable<(typeof rules)["bullet_list_open"]> = (tokens, idx, options, _env, self) =>
  // Python-Markdown puts a nested list right after the item's text: "<li>One<ul>".
  self.renderToken(tokens, idx, options).replace(/^\n/, "");
rules.bullet_list_open = listOpen;
rules.ordered_list_open = listOpen;
rules.zulip_spoiler_open = () => '<div class="spoiler-block"><div class="spoiler-header">\n';
rules.zulip_spoiler_content = () => '</div><div class="spoiler-content" aria-hidden="true">\n';
rules.zulip_spoiler_close = () => "</div></div>\n";
rules.zulip_user_mention = (tokens, idx) => {
  const meta = tokens[idx]!.meta as { kind: string; id?: number; name: string; silent: boolean };
  const text = escapeText(meta.silent ? meta.name : `@${meta.name}`);
  const silent = meta.silent ? " silent" : "";
  if (meta.kind === "topic_wildcard") return `<span class="topic-mention${silent}">${text}</span>`;
  const cls = meta.kind === "channel_wildcard" ? "user-mention channel-wildcard-mention" : "user-mention";
  const id = meta.kind === "channel_wildcard" ? "*" : String(meta.id);
  return `<span class="${cls}${silent}" data-user-id="${id}">${text}</span>`;
};
rules.zulip_group_mention = (tokens, idx) => {
  const meta = tokens[idx]!.meta as { id: number; name: string; silent: boolean };
  const text = escapeText(meta.silent ? meta.name : `@${meta.name}`);
  return `<span class="user-group-mention${meta.silent ? " silent" : ""}" data-user-group-id="${meta.id}">${text}</span>`;
};
rules.zulip_channel_link = (tokens, idx) => {
  const meta = tokens[idx]!.meta as { channelId: number; channelName: string };
  const href = `/#narrow/channel/${encodeChannel(meta.channelId, meta.channelName)}`;
  return `<a class="stream" data-stream-id="${meta.channelId}" href="${escapeAttr(href)}">${escapeText("#" + meta.channelName)}</a>`;
};
rules.zulip_topic_link = (tokens, idx) => {
  const meta = tokens[idx]!.meta as { channelId: number; channelName: string; topic: string };
  const href = `/#narrow/channel/${encodeChannel(meta.channelId, meta.channelName)}/topic/${hashUtilEncode(meta.topic)}`;
  return `<a class="stream-topic" data-stream-id="${meta.channelId}" href="${escapeAttr(href)}">${escapeText(`#${meta.channelName} > ${meta.topic}`)}</a>`;
};
rules.zulip_message_link = (tokens, idx) => {
  const meta = tokens[idx]!.meta as { channelId: number; channelName: string; topic: string; messageId: string };
  const href =
    `/#narrow/channel/${encodeChannel(meta.channelId, meta.channelName)}` +
    `/topic/${hashUtilEncode(meta.topic)}/near/${meta.messageId}`;
  return `<a class="message-link" href="${escapeAttr(href)}">${escapeText(`#${meta.channelName} > ${meta.topic} @ 💬`)}</a>`;
};
rules.zulip_emoji = (tokens, idx) => {
  const meta = tokens[idx]!.meta as { code?: string; name: string; src?: string };
  const title = escapeAttr(meta.name.replace(/_/g, " "));
  if (meta.src !== undefined) {
    return `<img alt=":${escapeAttr(meta.name)}:" class="emoji" src="${escapeAttr(meta.src)}" title="${title}">`;
  }
  return `<span aria-label="${title}" class="emoji emoji-${meta.code}" role="img" title="${title}">:${escapeText(meta.name)}:</span>`;
};
rules.zulip_time = (tokens, idx) => {
  const token = tokens[idx]!;
  const iso = (token.meta as { iso: string | null }).iso;
  if (iso === null) return `<span class="timestamp-error">Invalid time format: ${escapeText(token.content)}</span>`;
  return `<time datetime="${iso}">${escapeText(token.content)}</time>`;
};

// ---------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------

const CANDIDATE_USER_RE = /(?<![^\s'"({[/<])@_?\*\*([^*]+)\*\*/gu;
const CANDIDATE_GROUP_RE = /(?<![^\s'"({[/<])@_?\*([^*]+)\*/gu;
const CANDIDATE_CHANNEL_RE = /(?<![^\s'"({/<])#\*\*([^*]+)\*\*/gu;

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

/** Render message content to Zulip-compatible HTML and collect mention/link facts. */
export function renderMarkdown(content: string, ctx: Partial<MarkdownContext> = {}): RenderResult {
  const result: RenderResult = {
    html: "",
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    wildcardMention: null,
    isMeMessage: content.startsWith("/me "),
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    potentialAttachmentPathIds: [],
  };
  const env: ZulipEnv = { zulipCtx: ctx, zulipResult: result };
  const src = expandTabs(content.replace(/\r\n?/g, "\n"));
  const tokens = md.parse(src, env);
  result.html = md.renderer.render(tokens, md.options, env).replace(/\n+$/, "");
  backtickRunsSrc = null;
  backtickRuns = [];
  return result;
}
