/**
 * Uploaded media in messages: Markdown image syntax (Zulip 12, feature levels 437 and 467),
 * thumbnail previews of linked uploaded images (Zulip 9) and inline video previews of uploaded
 * videos (feature level 495). Attributes are in the order Zulip's HTML has them (alphabetical:
 * its thumbnail pass re-serializes the message with BeautifulSoup).
 *
 * - `![alt](/user_uploads/…)` naming an uploaded image renders as an `img.inline-image`; any
 *   other target (a third-party URL, an upload that is no image) is left as the text it is, its
 *   bare URL linked as any other (Zulip's ImageInlineProcessor matches nothing then). With a
 *   thumbnail (the context's imagePreviews) its `src` is the thumbnail, with the original's
 *   dimensions and type; without one, the original (`src` and `data-original-src` alike), the
 *   form the API documents for images that are not thumbnails.
 * - A link to an uploaded image with a thumbnail gets Zulip's `message_inline_image` preview,
 *   and a link to an uploaded `.mp4`, `.mov` or `.webm` the `message_inline_video` one, after
 *   its paragraph (InlineInterestingLinkProcessor.add_a and add_video); the paragraph goes when
 *   it held only that link with the URL as its text. An uploaded image without a thumbnail (not
 *   decodable, too large, from before thumbnails) gets none, as in Zulip (is_image).
 */
import type { RendererRule, StateCore, StateInline, Token } from "markdown-it";
import { escapeAttr } from "./text.ts";
import { getCtx, type ImagePreview, type ZulipEnv } from "./types.ts";
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

/** An uploaded image's preview, when it has a thumbnail. */
function previewOf(env: unknown, href: string): (ImagePreview & { url: string }) | null {
  const path = uploadPath(href);
  if (path === null) return null;
  const preview = getCtx(env).imagePreviews?.get(path.slice("/user_uploads/".length));
  return preview?.url ? (preview as ImagePreview & { url: string }) : null;
}

/** A thumbnail's attributes, after those that sort before them (Zulip's rewrite_thumbnailed_images). */
function thumbnailAttrs(preview: ImagePreview & { url: string }, originalSrc: string | null) {
  return `${preview.animated ? ' data-animated="true"' : ""}${
    preview.contentType === null
      ? ""
      : ` data-original-content-type="${escapeAttr(preview.contentType)}"`
  } data-original-dimensions="${preview.width}x${preview.height}"${
    originalSrc === null ? "" : ` data-original-src="${escapeAttr(originalSrc)}"`
  } src="${escapeAttr(preview.url)}"`;
}

/**
 * `<img alt class="inline-image" data-original-content-type data-original-dimensions
 * data-original-src src>` with a thumbnail, else `<img alt class="inline-image"
 * data-original-src src>` (message-formatting.md, Images).
 */
export const renderInlineImage: RendererRule = (tokens, idx, _options, env) => {
  const token = tokens[idx]!;
  const href = String(token.attrGet("src") ?? "");
  const src = escapeAttr(href);
  const alt = escapeAttr(token.children?.map((c) => c.content).join("") ?? token.content);
  const title = token.attrGet("title");
  const preview = previewOf(env, href);
  const attrs = preview
    ? thumbnailAttrs(preview, href)
    : ` data-original-src="${src}" src="${src}"`;
  return `<img alt="${alt}" class="inline-image"${attrs}${
    title ? ` title="${escapeAttr(String(title))}"` : ""
  }>`;
};

/** Zulip's add_a for an uploaded image: its thumbnail, linking to the original. */
function imageHtml(href: string, title: string | null, preview: ImagePreview & { url: string }) {
  return `<div class="message_inline_image"><a href="${escapeAttr(href)}"${
    title === null ? "" : ` title="${escapeAttr(title)}"`
  }><img${thumbnailAttrs(preview, null)}></a></div>`;
}

/** Zulip's add_video: the preview element for an uploaded video. */
function videoHtml(href: string, title: string | null): string {
  const url = escapeAttr(href);
  return `<div class="message_inline_image message_inline_video"><a href="${url}"${
    title === null ? "" : ` title="${escapeAttr(title)}"`
  }><video preload="metadata" src="${url}"></video></a></div>`;
}

interface LinkedMedia {
  href: string;
  title: string | null;
  alone: boolean;
  /** The thumbnail of an image; none for a video. */
  image: (ImagePreview & { url: string }) | null;
}

/**
 * The uploaded videos and thumbnailed images an inline token links to, in order: href, and the
 * link's text unless it is the URL.
 */
function linkedMedia(inline: Token, env: unknown): LinkedMedia[] {
  const children = inline.children ?? [];
  const found: LinkedMedia[] = [];
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
    if (path === null) continue;
    // Zulip's is_video comes first, then is_image (the upload has a thumbnail).
    const image = endsWithAny(path, VIDEO_EXTENSIONS) ? null : previewOf(env, href);
    if (!image && !endsWithAny(path, VIDEO_EXTENSIONS)) continue;
    const title = text === href ? null : text;
    // The paragraph goes when the link is all it holds and shows its URL (get_inlining_information).
    const alone = title === null && i === 0 && j === children.length - 1;
    found.push({ href, title, alone, image });
  }
  return found;
}

/** Zulip's INLINE_PREVIEW_LIMIT_PER_MESSAGE: a message linking more distinct URLs previews none. */
const INLINE_PREVIEW_LIMIT_PER_MESSAGE = 24;

/** The distinct URLs linked outside quotes (Zulip's unique_previewable_urls). */
function previewableUrlCount(tokens: Token[]): number {
  const urls = new Set<string>();
  let quoteDepth = 0;
  for (const tok of tokens) {
    if (tok.type === "blockquote_open") quoteDepth++;
    else if (tok.type === "blockquote_close") quoteDepth--;
    if (tok.type !== "inline" || quoteDepth > 0) continue;
    for (const child of tok.children ?? [])
      if (child.type === "link_open") urls.add(String(child.attrGet("href") ?? ""));
  }
  return urls.size;
}

/**
 * After the links are final (coreZulip): a preview after each paragraph (at the top level or in
 * a list item; none in a quote) for each distinct uploaded video or thumbnailed image it links,
 * in order.
 */
export function addMediaPreviews(state: StateCore): void {
  if (!getCtx(state.env).mediaPreviews) return;
  const tokens = state.tokens;
  if (previewableUrlCount(tokens) > INLINE_PREVIEW_LIMIT_PER_MESSAGE) return;
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
    const media = linkedMedia(tok, state.env).filter((v) => !seen.has(v.href));
    if (!media.length) continue;
    for (const v of media) seen.add(v.href);
    const block = new state.Token("html_block", "", 0);
    block.content = media
      .map((v) => (v.image ? imageHtml(v.href, v.title, v.image) : videoHtml(v.href, v.title)))
      .join("");
    block.block = true;
    block.level = open.level;
    if (media.length === 1 && media[0]!.alone) {
      tokens.splice(i - 1, 3, block);
      i -= 1;
    } else {
      tokens.splice(i + 2, 0, block);
      i += 2;
    }
  }
}

/**
 * The path ids of uploads a content may show, to look up before rendering (Zulip's
 * get_user_upload_previews finds them by this same pattern): a superset, read from the source.
 */
export function uploadPathIds(content: string): string[] {
  if (!content.includes("/user_uploads/")) return [];
  return [...new Set(Array.from(content.matchAll(UPLOAD_PATH_ID), (m) => m[1]!))];
}
const UPLOAD_PATH_ID = /\/user_uploads\/(\d+\/[/\p{L}\p{N}_.-]+)/gu;
