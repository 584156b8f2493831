/**
 * HTML escaping and small string helpers shared by the renderer's modules.
 * The three escapers differ only in which characters they touch, because each
 * mimics a different piece of Zulip's pipeline (Python-Markdown text nodes,
 * attributes, Pygments code output).
 */

const HTML_ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function replaceWithEntities(s: string, chars: RegExp): string {
  return s.replace(chars, (c) => HTML_ENTITIES[c]!);
}

/** Text-node escaping as Python-Markdown does it: only & < >. */
export function escapeText(s: string): string {
  return replaceWithEntities(s, /[&<>]/g);
}

/** Attribute escaping: & < > ". */
export function escapeAttr(s: string): string {
  return replaceWithEntities(s, /[&<>"]/g);
}

/** Code-block escaping as Pygments' HTML formatter does it: & < > " '. */
export function escapeCode(s: string): string {
  return replaceWithEntities(s, /[&<>"']/g);
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function isWhitespaceChar(ch: string | undefined): boolean {
  return ch !== undefined && /\s/u.test(ch);
}

/**
 * Runs a sticky (`y`) regex at `pos`; a match running past `max` (the end of
 * the inline range markdown-it is tokenizing) does not count.
 */
export function matchSticky(
  re: RegExp,
  src: string,
  pos: number,
  max: number,
): RegExpExecArray | null {
  re.lastIndex = pos;
  const m = re.exec(src);
  if (!m || m.index + m[0].length > max) return null;
  return m;
}

/** Python's str.expandtabs(4), line by line (Zulip expands tabs before parsing). */
export function expandTabs(src: string): string {
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
