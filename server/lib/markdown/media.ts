/**
 * Uploaded media in messages: Markdown image syntax (Zulip 12, feature levels 437 and 467) and
 * inline video previews of uploaded videos (feature level 495).
 *
 * - `![alt](/user_uploads/…)` naming an uploaded image renders as an `img.inline-image`; any
 *   other target (a third-party URL, an upload that is no image) is left as the text it is, its
 *   bare URL linked as any other (Zulip's ImageInlineProcessor matches nothing then). There is
 *   no thumbnailing here, so the image is the original (`src` and `data-original-src` alike),
 *   the form the API documents for images that are not thumbnails.
 * - A link to an uploaded `.mp4`, `.mov` or `.webm` gets Zulip's `message_inline_video`
 *   preview after its paragraph (InlineInterestingLinkProcessor.add_video); the paragraph goes
 *   when it held only that link with the URL as its text.
 */
import type { RendererRule, StateCore, StateInline, Token } from "markdown-it";
import { escapeAttr } from "./text.ts";
import { getCtx, type ZulipEnv } from "./types.ts";
import { IMAGE_EXTENSIONS, rewriteLocalLink } from "./urls.ts";

type InlineRule = (state: StateInline, silent: boolean) => boolean;

/** Zulip's is_video: the types its guess_type gives video/mp4, video/quicktime, video/webm. */
const VIDEO_EXTENSIONS = [".mp4", ".m4v", ".mov", ".qt", ".webm"];

/** The path of an upload of this organization that `href` (already made relative) names. */
function uploadPath(href: string): string | null {
  if (!href.startsWith("/user_uploads/")) return null;
  return href.replace(/[?#].*$/, "");
}
const endsWithAny = (path: string, exts: string[]) =>
  exts.some((ext) => path.toLowerCase().endsWith(ext));

/**
 * markdown-it's image rule, kept only for uploaded images; otherwise the source stays text
 * (Zulip's link syntax never matches after a `!`).
 */
export function zulipImageRule(builtin: InlineRule): InlineRule {
  return (state, silent) => {
    if (state.src.charCodeAt(state.pos) !== 0x21 /* ! */) return false;
    const start = state.pos;
    const before = state.tokens.length;
    if (!builtin(state, silent)) return false;
    if (silent) return true;
    const token = state.tokens[state.tokens.length - 1]!;
    const href = rewriteLocalLink(String(token.attrGet("src") ?? ""), getCtx(state.env).realmUrl);
    const path = uploadPath(href);
    if (path !== null && endsWithAny(path, IMAGE_EXTENSIONS)) {
      token.attrSet("src", href);
      // The message claims the upload and has an image (maybe_add_attachment_path_id, has_image).
      const result = (state.env as ZulipEnv).zulipResult;
      result.hasImage = true;
      result.hasAttachment = true;
      result.potentialAttachmentPathIds.push(path.slice("/user_uploads/".length));
      return true;
    }
    state.tokens.length = before;
    state.pending += state.src.slice(start, state.pos);
    return true;
  };
}

/** `<img alt class="inline-image" data-original-src src>` (message-formatting.md, Images). */
export const renderInlineImage: RendererRule = (tokens, idx) => {
  const token = tokens[idx]!;
  const src = escapeAttr(String(token.attrGet("src") ?? ""));
  const alt = escapeAttr(token.children?.map((c) => c.content).join("") ?? token.content);
  const title = token.attrGet("title");
  return `<img alt="${alt}" class="inline-image" data-original-src="${src}" src="${src}"${
    title ? ` title="${escapeAttr(String(title))}"` : ""
  }>`;
};

/** Zulip's add_video: the preview element for an uploaded video. */
function videoHtml(href: string, title: string | null): string {
  const url = escapeAttr(href);
  return `<div class="message_inline_image message_inline_video"><a href="${url}"${
    title === null ? "" : ` title="${escapeAttr(title)}"`
  }><video preload="metadata" src="${url}"></video></a></div>`;
}

/** The uploaded videos an inline token links to: href, and the link's text unless it is the URL. */
function linkedVideos(inline: Token): { href: string; title: string | null; alone: boolean }[] {
  const children = inline.children ?? [];
  const found: { href: string; title: string | null; alone: boolean }[] = [];
  for (let i = 0; i < children.length; i++) {
    const open = children[i]!;
    if (open.type !== "link_open") continue;
    const href = String(open.attrGet("href") ?? "");
    // A link to this organization's own URL is relative without its slash (rewriteLocalLink).
    const path = uploadPath(href.startsWith("user_uploads/") ? `/${href}` : href);
    let j = i + 1;
    let text = "";
    while (j < children.length && children[j]!.type !== "link_close")
      text += children[j++]!.content;
    if (path === null || !endsWithAny(path, VIDEO_EXTENSIONS)) continue;
    const title = text === href ? null : text;
    // The paragraph goes when the link is all it holds and shows its URL (get_inlining_information).
    const alone = title === null && i === 0 && j === children.length - 1;
    found.push({ href, title, alone });
  }
  return found;
}

/**
 * After the links are final (coreZulip): a preview after each paragraph (at the top level or in
 * a list item; none in a quote) for each distinct uploaded video it links, in order.
 */
export function addVideoPreviews(state: StateCore): void {
  if (!getCtx(state.env).mediaPreviews) return;
  const tokens = state.tokens;
  const seen = new Set<string>();
  let quoteDepth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.type === "blockquote_open") quoteDepth++;
    else if (tok.type === "blockquote_close") quoteDepth--;
    if (tok.type !== "inline" || quoteDepth > 0) continue;
    const open = tokens[i - 1];
    const close = tokens[i + 1];
    if (open?.type !== "paragraph_open" || close?.type !== "paragraph_close") continue;
    const videos = linkedVideos(tok).filter((v) => !seen.has(v.href));
    if (!videos.length) continue;
    for (const v of videos) seen.add(v.href);
    const block = new state.Token("html_block", "", 0);
    block.content = videos.map((v) => videoHtml(v.href, v.title)).join("");
    block.block = true;
    block.level = open.level;
    if (videos.length === 1 && videos[0]!.alone) {
      tokens.splice(i - 1, 3, block);
      i -= 1;
    } else {
      tokens.splice(i + 2, 0, block);
      i += 2;
    }
  }
}
