/**
 * Message HTML as the server rendered it, post-processed as Zulip's web app does
 * (web/src/postprocess_content.ts), parsed in an inert <template> (no script runs, nothing loads):
 * links open in a new tab with `noopener noreferrer`, except links to a narrow of this
 * organization, which open here; `javascript:`, `data:` and `vbscript:` links and sources lose
 * them; and, in depth beside the page's Content-Security-Policy, anything that could run script
 * (script, iframe, object, embed, form elements, event-handler attributes) is dropped.
 * Search results show the server's highlighting of their matches as <mark>.
 */
import { isSearch } from "../narrow.ts";
import { view } from "../state/view.ts";
import type { Msg } from "../types.ts";

const UNSAFE_PROTOCOL = /^(javascript|data|vbscript):/i;
const DROPPED = "script,iframe,frame,object,embed,form,base,meta,link,style";

const cache = new Map<string, string>();
const CACHE_SIZE = 1000;

function safeUrl(value: string): URL | undefined {
  // Browsers ignore whitespace and control characters inside a scheme: check the cleaned text.
  const cleaned = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  if (UNSAFE_PROTOCOL.test(cleaned)) return undefined;
  try {
    return new URL(value, location.href);
  } catch {
    return undefined;
  }
}

/** A link to a view of this app: `#narrow/…` here or at the organization's root. */
export function internalHash(href: string): string | undefined {
  if (href.startsWith("#narrow")) return href;
  const url = safeUrl(href);
  if (!url || !url.hash.startsWith("#narrow")) return undefined;
  if (url.origin === location.origin || url.pathname === "/") return url.hash;
  return undefined;
}

/** The box message images are shown in (ComposeActions.css: `[role="feed"] img.inline-image`). */
const IMAGE_BOX = { width: 300, height: 200 };

/**
 * A thumbnail's size before it loads, from the original's `data-original-dimensions` (`WxH`, as
 * shown), scaled into the image box as Zulip's web app sizes previews: the feed does not move
 * when it arrives.
 */
function reserveSpace(img: Element): void {
  const m = /^(\d+)x(\d+)$/.exec(img.getAttribute("data-original-dimensions") ?? "");
  if (!m) return;
  const [width, height] = [Number(m[1]), Number(m[2])];
  if (!width || !height) return;
  const scale = Math.min(1, IMAGE_BOX.width / width, IMAGE_BOX.height / height);
  img.setAttribute("width", String(Math.max(1, Math.round(width * scale))));
  img.setAttribute("height", String(Math.max(1, Math.round(height * scale))));
}

export function postprocess(html: string): string {
  const known = cache.get(html);
  if (known !== undefined) return known;
  const template = document.createElement("template");
  template.innerHTML = html;
  const root = template.content;
  for (const el of root.querySelectorAll(DROPPED)) el.remove();
  for (const el of root.querySelectorAll("*")) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on") || name === "srcdoc" || name === "formaction")
        el.removeAttribute(attr.name);
      else if (
        (name === "src" || name === "href" || name === "xlink:href" || name === "action") &&
        !safeUrl(attr.value)
      )
        el.removeAttribute(attr.name);
    }
  }
  // A preview's image is named by its link's title, the file's name (before that title becomes
  // "Download …" below), so that it is announced and found as what it shows.
  for (const img of root.querySelectorAll(".message_inline_image > a[title] > img:not([alt])"))
    img.setAttribute("alt", img.parentElement!.getAttribute("title")!);
  for (const a of root.querySelectorAll("a")) {
    const href = a.getAttribute("href");
    if (href === null) {
      a.removeAttribute("title");
      continue;
    }
    const hash = internalHash(href);
    if (hash !== undefined) {
      a.setAttribute("href", hash);
      a.removeAttribute("target");
    } else if (!href.startsWith("#")) {
      a.setAttribute("target", "_blank");
      a.setAttribute("rel", "noopener noreferrer");
      const path = safeUrl(href)?.pathname ?? "";
      if (path.startsWith("/user_uploads/"))
        a.setAttribute("title", `Download ${decodeURIComponent(path.split("/").pop() ?? "")}`);
    }
  }
  for (const img of root.querySelectorAll("img")) {
    img.setAttribute("loading", "lazy");
    reserveSpace(img);
  }
  // Zulip's emoji spans (`<span class="emoji emoji-1f44b" …>:wave:</span>`) show the emoji itself.
  for (const span of root.querySelectorAll("span.emoji")) {
    const code = /(?:^|\s)emoji-([0-9a-f]+(?:-[0-9a-f]+)*)(?:\s|$)/.exec(span.className)?.[1];
    if (!code) continue;
    try {
      span.textContent = String.fromCodePoint(
        ...code.split("-").map((h) => Number.parseInt(h, 16)),
      );
    } catch {
      // not a code point: the name stays
    }
  }
  const out = template.innerHTML;
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(html, out);
  return out;
}

/**
 * A search result's HTML: the server's `match_content` (its matches in
 * `<span class="highlight">`), post-processed, each match a <mark>. Shown only while the view is
 * a search (a message keeps the `match_content` of the last search that fetched it).
 */
export function highlighted(html: string): string {
  const template = document.createElement("template");
  template.innerHTML = postprocess(html);
  for (const span of template.content.querySelectorAll("span.highlight")) {
    const mark = document.createElement("mark");
    mark.append(...span.childNodes);
    span.replaceWith(mark);
  }
  return template.innerHTML;
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * A search result's topic with its matches marked: the server's `match_subject` (the escaped
 * topic, its matches in `<span class="highlight">`), parsed inertly and written again as text
 * and <mark> only, so nothing else it might hold becomes markup.
 */
export function highlightedTopic(html: string): string {
  const template = document.createElement("template");
  template.innerHTML = html;
  let out = "";
  for (const node of template.content.childNodes) {
    const text = escapeHtml(node.textContent ?? "");
    out +=
      node instanceof HTMLElement && node.matches("span.highlight") ? `<mark>${text}</mark>` : text;
  }
  return out;
}

/** A search result's topic HTML while the view is a search, else undefined (the plain topic). */
export function topicMatchHtml(m: Msg): string | undefined {
  return m.match_subject !== undefined && isSearch(view.peek().narrow)
    ? highlightedTopic(m.match_subject)
    : undefined;
}

/** A message's HTML as the feed shows it: highlighted in search results. */
export function messageHtml(m: Msg): string {
  return m.match_content !== undefined && isSearch(view.peek().narrow)
    ? highlighted(m.match_content)
    : postprocess(m.content);
}
