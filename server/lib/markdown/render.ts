/**
 * The one markdown-it instance, configured for Zulip's dialect. All rule
 * registration happens here so that the order — which markdown-it applies
 * rule by rule — can be read in one place; the rules themselves live in
 * their feature modules.
 */
import MarkdownIt from "markdown-it";
import type { RendererRule } from "markdown-it";
import {
  renderSpoilerClose,
  renderSpoilerContent,
  renderSpoilerOpen,
  ruleParagraph,
  ruleZulipFence,
  zulipBlockquoteRule,
  zulipListRule,
  type BlockRule,
} from "./blocks.ts";
import { renderCodeBlock, renderFence, renderMath } from "./code.ts";
import { coreZulip } from "./core.ts";
import { addMediaPreviews, renderInlineImage, zulipImageRule } from "./media.ts";
import { renderEmoji } from "./emoji.ts";
import { ruleDel, ruleStar } from "./emphasis.ts";
import {
  ruleBackticks,
  ruleChannelLink,
  ruleEntity,
  ruleMention,
  ruleNewline,
  ruleTimestamp,
  renderTimestamp,
} from "./inline.ts";
import { renderChannelLink, renderGroupMention, renderUserMention } from "./mentions.ts";
import { escapeText } from "./text.ts";
import { REJECTED_URL, sanitizeUrl } from "./urls.ts";

export const md = new MarkdownIt("default", {
  html: false,
  xhtmlOut: false,
  breaks: true,
  linkify: false,
  typographer: false,
});

md.normalizeLink = (url: string): string => sanitizeUrl(url) ?? REJECTED_URL;
md.validateLink = (url: string): boolean => url !== REJECTED_URL;
md.normalizeLinkText = (s: string): string => s;

// ---------------------------------------------------------------------------
// Block rules
// ---------------------------------------------------------------------------

function builtinBlockRule(name: string): BlockRule {
  const rule = md.block.ruler.__rules__.find((r) => r.name === name);
  if (!rule) throw new Error(`markdown-it block rule ${name} not found`);
  return rule.fn;
}

md.block.ruler.disable(["fence", "lheading", "reference", "html_block"]);
md.block.ruler.before("code", "zulip_fence", ruleZulipFence, {
  alt: ["paragraph", "reference", "blockquote", "list"],
});
md.block.ruler.at("paragraph", ruleParagraph);
md.block.ruler.at("list", zulipListRule(builtinBlockRule("list")), {
  alt: ["paragraph", "reference", "blockquote"],
});
md.block.ruler.at("blockquote", zulipBlockquoteRule(builtinBlockRule("blockquote")), {
  alt: ["paragraph", "reference", "blockquote", "list"],
});

// ---------------------------------------------------------------------------
// Inline and core rules (code spans and mentions first: emphasis must not
// start inside them)
// ---------------------------------------------------------------------------

md.inline.ruler.disable([
  "linkify",
  "escape",
  "strikethrough",
  "emphasis",
  "autolink",
  "html_inline",
]);
md.inline.ruler2.disable(["strikethrough", "emphasis"]);
md.inline.ruler.at("newline", ruleNewline);
md.inline.ruler.at("backticks", ruleBackticks);
md.inline.ruler.at("entity", ruleEntity);
md.inline.ruler.after("backticks", "zulip_mention", ruleMention);
md.inline.ruler.after("zulip_mention", "zulip_channel_link", ruleChannelLink);
md.inline.ruler.after("zulip_channel_link", "zulip_star", ruleStar);
md.inline.ruler.after("zulip_star", "zulip_del", ruleDel);
md.inline.ruler.after("zulip_del", "zulip_timestamp", ruleTimestamp);

md.inline.ruler.at(
  "image",
  zulipImageRule(md.inline.ruler.__rules__.find((r) => r.name === "image")!.fn),
);

md.core.ruler.push("zulip", coreZulip);
md.core.ruler.push("zulip_media", addMediaPreviews);

// ---------------------------------------------------------------------------
// Renderer rules
// ---------------------------------------------------------------------------

const listOpen: RendererRule = (tokens, idx, options, _env, self) =>
  // Python-Markdown puts a nested list right after the item's text: "<li>One<ul>".
  self.renderToken(tokens, idx, options).replace(/^\n/, "");

const renderRules: Record<string, RendererRule> = {
  text: (tokens, idx) => escapeText(tokens[idx]!.content),
  code_inline: (tokens, idx) => `<code>${escapeText(tokens[idx]!.content)}</code>`,
  zulip_raw: (tokens, idx) => tokens[idx]!.content,
  fence: renderFence,
  code_block: renderCodeBlock,
  zulip_math: renderMath,
  bullet_list_open: listOpen,
  ordered_list_open: listOpen,
  zulip_spoiler_open: renderSpoilerOpen,
  zulip_spoiler_content: renderSpoilerContent,
  zulip_spoiler_close: renderSpoilerClose,
  zulip_user_mention: renderUserMention,
  zulip_group_mention: renderGroupMention,
  zulip_channel_link: renderChannelLink,
  zulip_topic_link: renderChannelLink,
  zulip_message_link: renderChannelLink,
  zulip_emoji: renderEmoji,
  zulip_time: renderTimestamp,
  image: renderInlineImage,
};
Object.assign(md.renderer.rules, renderRules);
