/**
 * The core pass that runs after markdown-it has parsed: it splits plain text
 * at bare URLs and emoji, fixes up links, records mention/link facts in the
 * result (mentions inside quotes are silent, as in Zulip), and adjusts a few
 * block tokens Python-Markdown builds differently.
 */
import type { StateCore, Token } from "markdown-it";
import { splitEmoji } from "./emoji.ts";
import { linkifyText } from "./linkifiers.ts";
import type { GroupMentionMeta, UserMentionMeta } from "./mentions.ts";
import { getCtx, type ZulipEnv } from "./types.ts";
import { noteLink, rewriteLocalLink, sanitizeUrl, WEB_LINK_RE } from "./urls.ts";

function makeToken(
  state: StateCore,
  type: string,
  tag: string,
  nesting: -1 | 0 | 1,
  level: number,
): Token {
  const t = new state.Token(type, tag, nesting);
  t.level = level;
  return t;
}

/** Pushes a text token (none for ""); atomic text is never split again (URLs, link labels). */
function pushText(
  state: StateCore,
  out: Token[],
  content: string,
  level: number,
  atomic = false,
): void {
  if (!content) return;
  const t = makeToken(state, "text", "", 0, level);
  t.content = content;
  if (atomic) t.meta = { atomic: true };
  out.push(t);
}

/** Split a text token at :emoji: names and unicode emoji. */
function emojify(state: StateCore, text: string, level: number, out: Token[]): void {
  for (const part of splitEmoji(text, getCtx(state.env).realmEmoji)) {
    if (typeof part === "string") {
      pushText(state, out, part, level);
    } else {
      const t = makeToken(state, "zulip_emoji", "span", 0, level);
      t.meta = part;
      out.push(t);
    }
  }
}

/** Split a text token at bare URLs (Zulip's AutoLink pattern), then at emoji. */
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
    linkify(state, text.slice(last, start), level, last === 0 ? startOk : false, inQuote, out);
    pushAutoLink(state, href, url, level, inQuote, out);
    last = start + url.length;
  }
  linkify(state, text.slice(last), level, last === 0 ? startOk : false, inQuote, out);
}

/** An automatic link (a bare URL or a linkifier's match) to `href`, showing `shown`. */
function pushAutoLink(
  state: StateCore,
  href: string,
  shown: string,
  level: number,
  inQuote: boolean,
  out: Token[],
): void {
  const env = state.env as ZulipEnv;
  const localHref = rewriteLocalLink(href, env.zulipCtx.realmUrl);
  noteLink(localHref, inQuote, env.zulipResult);
  const open = makeToken(state, "link_open", "a", 1, level);
  open.attrs = [["href", localHref]];
  open.markup = "linkify";
  open.info = "auto";
  out.push(open);
  pushText(state, out, shown, level + 1, true);
  const close = makeToken(state, "link_close", "a", -1, level);
  close.markup = "linkify";
  close.info = "auto";
  out.push(close);
}

/**
 * The organization's linkifiers over text that is no bare URL, each in order over what the
 * earlier ones left (Zulip's inline patterns, after AutoLink), then emoji. A linkifier may not
 * match right after an earlier link (Zulip sees its placeholder there).
 */
function linkify(
  state: StateCore,
  text: string,
  level: number,
  startOk: boolean,
  inQuote: boolean,
  out: Token[],
): void {
  const env = state.env as ZulipEnv;
  linkifyText(env.zulipCtx.linkifiers ?? [], text, startOk, {
    text: (part) => emojify(state, part, level, out),
    link: (shown, url) => {
      const href = sanitizeUrl(url);
      if (href === null) return false;
      pushAutoLink(state, href, shown, level, inQuote, out);
      return true;
    },
  });
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
        // A bare URL must stand at a line's start/end or next to text (see autolink).
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
          while (
            j < children.length &&
            children[j]!.type === "text" &&
            !children[j]!.content.trim()
          )
            j++;
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
        const meta = tok.meta as UserMentionMeta;
        // Mentions inside quotes are always silent.
        if (inQuote) meta.silent = true;
        if (!meta.silent) {
          if (meta.kind === "user") result.mentionedUserIds.add(meta.id);
          else if (meta.kind === "channel_wildcard") result.wildcardMention = "channel";
          else if (result.wildcardMention === null) result.wildcardMention = "topic";
        }
        out.push(tok);
        break;
      }
      case "zulip_group_mention": {
        const meta = tok.meta as GroupMentionMeta;
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

export function coreZulip(state: StateCore): void {
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
        // Python-Markdown's table extension writes the style with a space and a semicolon.
        const style = tok.attrGet("style");
        if (typeof style === "string")
          tok.attrSet("style", style.replace(/^text-align:(\w+)$/, "text-align: $1;"));
        break;
      }
    }
  }
}
