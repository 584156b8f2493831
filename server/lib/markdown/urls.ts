/**
 * URLs: Zulip's sanitize_url, its bare-URL regex, and the bookkeeping every
 * link goes through (realm-relative rewriting, has_link/has_image/attachment
 * flags), shared by written links and autolinked bare URLs.
 */
import { createRequire } from "node:module";
import { escapeRegExp } from "./text.ts";
import type { RenderResult } from "./types.ts";

const require = createRequire(import.meta.url);

const ALLOWED_SCHEMES = new Set([
  "http",
  "https",
  "ftp",
  "file",
  // https://html.spec.whatwg.org/multipage/system-state.html#safelisted-scheme
  "bitcoin",
  "geo",
  "im",
  "irc",
  "ircs",
  "magnet",
  "mailto",
  "matrix",
  "mms",
  "news",
  "nntp",
  "openpgp4fpr",
  "sip",
  "sms",
  "smsto",
  "ssh",
  "tel",
  "urn",
  "webcal",
  "wtai",
  "xmpp",
]);

/**
 * What md.normalizeLink returns for a URL sanitizeUrl refused, so that
 * md.validateLink can reject it (markdown-it gives validateLink the normalized URL).
 */
export const REJECTED_URL = "\u0000rejected";

/**
 * Returns the href to use, or null if the URL must not become a link
 * (unknown/dangerous scheme such as javascript:).
 */
export function sanitizeUrl(rawUrl: string): string | null {
  // urllib strips leading/trailing C0 controls + space and drops tab/CR/LF anywhere.
  const url = rawUrl
    .replace(/ /g, "%20")
    .replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "")
    .replace(/[\t\r\n]/g, "");
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
export const WEB_LINK_RE: RegExp = (() => {
  // TLDs that are mostly file extensions: Zulip leaves "foo.py" unlinked.
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
  return new RegExp(String.raw`(?<![^\s'"(,:<])(?:${url})(?=[!:;?),.'">]*(?:$|\s))`, "gu");
})();

/** The extensions Zulip counts as images (has_image, image syntax). */
export const IMAGE_EXTENSIONS = [".bmp", ".gif", ".jpe", ".jpeg", ".jpg", ".png", ".webp"];

/** Zulip makes links into the realm itself (narrows, uploads) relative. */
export function rewriteLocalLink(href: string, realmUrl: string | undefined): string {
  if (!realmUrl) return href;
  const prefix = realmUrl.replace(/\/+$/, "") + "/";
  if (href.startsWith(prefix + "#") || href.startsWith(prefix + "user_uploads/"))
    return href.slice(prefix.length);
  return href;
}

/** Records what a link means for the message's flags (link, image, attachment). */
export function noteLink(href: string, inQuote: boolean, result: RenderResult): void {
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
  // Zulip ignores quoted images (it would not preview them either).
  if (!inQuote && path !== null) {
    const lower = path.toLowerCase();
    if (IMAGE_EXTENSIONS.some((ext) => lower.endsWith(ext))) result.hasImage = true;
  }
}
