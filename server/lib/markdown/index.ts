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
 *   no reference links, no raw HTML, no backslash escapes; `![img](...)` only for
 *   uploaded images (media.ts, with the inline previews of uploaded videos);
 * - `*x*`, `**x**`, `***x***`, `~~x~~` follow Zulip's regexes (single-line,
 *   `_` is never emphasis); link text is literal (no emphasis inside);
 * - fenced blocks (``` / ~~~) start at column 0, are closed by the identical
 *   fence, and may interrupt a paragraph; ```quote / ```spoiler nest;
 * - code renders as `<div class="codehilite">…` (no Pygments highlighting);
 * - bare URLs are linked with Zulip's own URL regex (not linkify-it);
 * - mentions, channel/topic links, `:emoji:`, unicode emoji, `<time:…>`.
 *
 * Modules: render.ts builds the markdown-it instance from blocks.ts, code.ts,
 * inline.ts, emphasis.ts, mentions.ts, emoji.ts and core.ts (the pass after
 * parsing); urls.ts and text.ts are shared helpers; types.ts the data shapes.
 */
import { resetCodeSpanCache } from "./inline.ts";
import { md } from "./render.ts";
import { expandTabs } from "./text.ts";
import type { MarkdownContext, RenderResult, ZulipEnv } from "./types.ts";

export type {
  ImagePreview,
  MarkdownContext,
  MentionCandidates,
  MentionUser,
  RenderResult,
} from "./types.ts";
export { emojiCodeForName, emojiNameForCode } from "./emoji.ts";
export { extractMentionCandidates } from "./mentions.ts";
export { uploadPathIds } from "./media.ts";
export { sanitizeUrl } from "./urls.ts";

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
  resetCodeSpanCache();
  return result;
}
