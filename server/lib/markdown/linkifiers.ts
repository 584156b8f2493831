/**
 * Linkifiers (zerver/lib/markdown/__init__.py LinkifierPattern, topic_links; zerver/models/
 * linkifiers.py): an organization's patterns, each turned into links through an RFC 6570 URL
 * template. Pure: the caller loads and caches the organization's linkifiers (lib/realm/linkifiers.ts).
 *
 * Zulip compiles the patterns with re2; here they are JavaScript regular expressions, with
 * re2's spellings that JavaScript lacks translated (`(?P<name>`, `\pL`) and what re2 refuses
 * (look-arounds, back-references) refused the same way at creation.
 */

/** A linkifier ready to match: `re` finds the pattern where Zulip's wrapper lets it. */
export interface CompiledLinkifier {
  id: number;
  re: RegExp;
  template: string;
}

/** re2's syntax as JavaScript's (`u` flag), or an re2-style error message. */
export function translatePattern(pattern: string): { source: string } | { error: string } {
  const refused = /\(\?<?[=!]|\(\?P=|\\[1-9]/.exec(pattern);
  if (refused) {
    const what = refused[0];
    return {
      error: what.startsWith("\\")
        ? `invalid escape sequence: ${what}`
        : `invalid perl operator: ${what}`,
    };
  }
  const source = pattern
    .replace(/\(\?P</g, "(?<")
    .replace(/\\([pP])([A-Za-z])(?![A-Za-z{])/g, "\\$1{$2}")
    .replace(/\\A/g, "^")
    .replace(/\\z/g, "$");
  try {
    new RegExp(source, "u");
  } catch (e) {
    return { error: (e as Error).message.replace(/^Invalid regular expression: /, "") };
  }
  return { source };
}

/** The named groups of a valid pattern, in order. */
export function groupNames(source: string): string[] {
  return [...source.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]!);
}

/**
 * prepare_linkifier_pattern: the match must follow the start, whitespace or an opening
 * delimiter, and must not be followed by a letter or digit.
 */
export function compileLinkifier(l: {
  id: number;
  pattern: string;
  urlTemplate: string;
}): CompiledLinkifier | null {
  const translated = translatePattern(l.pattern);
  if ("error" in translated) return null;
  try {
    const re = new RegExp(
      `(?<=^|[\\s\\u0085\\p{Z}'"(,:<])(?:${translated.source})(?=$|[^\\p{L}\\p{N}])`,
      "gu",
    );
    return { id: l.id, re, template: l.urlTemplate };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// RFC 6570 URL templates (what Python's uri_template validates and expands)
// ---------------------------------------------------------------------------

const VARSPEC =
  /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9][0-9]{0,3}|\*)?$/;
// Literal characters: anything but controls, space, " ' % < > \ ^ ` { | } (a % only as %XX).
const LITERALS = /^(?:[^\x00-\x20\x7f"'%<>\\^`{|}]|%[0-9A-Fa-f]{2})*$/u;

/** Whether the template is a valid RFC 6570 template (levels 1 to 4). */
export function isValidUrlTemplate(template: string): boolean {
  let rest = template;
  for (;;) {
    const open = rest.indexOf("{");
    const literal = open === -1 ? rest : rest.slice(0, open);
    if (!LITERALS.test(literal)) return false;
    if (open === -1) return true;
    const close = rest.indexOf("}", open);
    if (close === -1) return false;
    let expr = rest.slice(open + 1, close);
    if (/^[+#./;?&]/.test(expr)) expr = expr.slice(1);
    if (!expr || !expr.split(",").every((v) => VARSPEC.test(v))) return false;
    rest = rest.slice(close + 1);
  }
}

/** The variable names a (valid) template uses. */
export function templateVariables(template: string): Set<string> {
  const names = new Set<string>();
  for (const m of template.matchAll(/\{[+#./;?&]?([^}]*)\}/g))
    for (const spec of m[1]!.split(",")) names.add(spec.replace(/(:\d+|\*)$/, ""));
  return names;
}

const OPERATORS: Record<
  string,
  { first: string; sep: string; named: boolean; ifEmpty: string; reserved: boolean }
> = {
  "": { first: "", sep: ",", named: false, ifEmpty: "", reserved: false },
  "+": { first: "", sep: ",", named: false, ifEmpty: "", reserved: true },
  "#": { first: "#", sep: ",", named: false, ifEmpty: "", reserved: true },
  ".": { first: ".", sep: ".", named: false, ifEmpty: "", reserved: false },
  "/": { first: "/", sep: "/", named: false, ifEmpty: "", reserved: false },
  ";": { first: ";", sep: ";", named: true, ifEmpty: "", reserved: false },
  "?": { first: "?", sep: "&", named: true, ifEmpty: "=", reserved: false },
  "&": { first: "&", sep: "&", named: true, ifEmpty: "=", reserved: false },
};

/** Percent-encodes UTF-8, keeping unreserved characters (and reserved ones and %XX for `+`/`#`). */
function encode(value: string, reserved: boolean): string {
  const keep = reserved ? /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]/ : /[A-Za-z0-9\-._~]/;
  let out = "";
  for (let i = 0; i < value.length;) {
    if (reserved && /^%[0-9A-Fa-f]{2}/.test(value.slice(i, i + 3))) {
      out += value.slice(i, i + 3);
      i += 3;
      continue;
    }
    const ch = String.fromCodePoint(value.codePointAt(i)!);
    out += keep.test(ch)
      ? ch
      : encodeURIComponent(ch).replace(
          /[!'()*]/g,
          (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
        );
    i += ch.length;
  }
  return out;
}

/** Expands a template with string values (undefined variables are left out, as RFC 6570 says). */
export function expandUrlTemplate(
  template: string,
  values: Record<string, string | undefined>,
): string {
  return template.replace(/\{([+#./;?&]?)([^}]*)\}/g, (_all, op: string, list: string) => {
    const o = OPERATORS[op]!;
    const parts: string[] = [];
    for (const spec of list.split(",")) {
      const m = /^(.*?)(?::(\d+)|\*)?$/.exec(spec)!;
      const name = m[1]!;
      let value = values[name];
      if (value === undefined) continue;
      if (m[2]) value = [...value].slice(0, Number(m[2])).join("");
      const encoded = encode(value, o.reserved);
      parts.push(o.named ? (value === "" ? name + o.ifEmpty : `${name}=${encoded}`) : encoded);
    }
    return parts.length ? o.first + parts.join(o.sep) : "";
  });
}

/** One linkifier match in a text: where, what it shows and where it points. */
export interface LinkifierMatch {
  index: number;
  text: string;
  url: string;
}

/** The matches of one linkifier in a text, left to right, never overlapping. */
export function matchesOf(l: CompiledLinkifier, text: string): LinkifierMatch[] {
  const out: LinkifierMatch[] = [];
  l.re.lastIndex = 0;
  for (let m = l.re.exec(text); m; m = l.re.exec(text)) {
    if (m[0] === "") {
      l.re.lastIndex++;
      continue;
    }
    out.push({ index: m.index, text: m[0], url: expandUrlTemplate(l.template, m.groups ?? {}) });
  }
  return out;
}

/**
 * topic_links: the linkifiers' matches in a topic, earlier linkifiers first and then earlier
 * matches winning where they overlap, then the topic's bare URLs where no match is; by position.
 */
export function topicLinks(
  linkifiers: readonly CompiledLinkifier[],
  topic: string,
  webLinks: (topic: string) => LinkifierMatch[],
): { text: string; url: string }[] {
  if (topic === "") return [];
  const candidates = [...linkifiers.flatMap((l) => matchesOf(l, topic)), ...webLinks(topic)];
  const applied: LinkifierMatch[] = [];
  const overlaps = (a: LinkifierMatch, b: LinkifierMatch) =>
    (b.index <= a.index && a.index < b.index + b.text.length) ||
    (a.index <= b.index && b.index < a.index + a.text.length);
  for (const c of candidates) if (applied.every((a) => !overlaps(a, c))) applied.push(c);
  return applied.sort((a, b) => a.index - b.index).map((m) => ({ text: m.text, url: m.url }));
}

/**
 * Runs the linkifiers over a text, the first over all of it, each next one over the pieces
 * between the earlier ones' links; `sink.link` returns false when the URL is refused (the text
 * then stays text, as url_to_a leaves it).
 */
export function linkifyText(
  linkifiers: readonly CompiledLinkifier[],
  text: string,
  startOk: boolean,
  sink: { text: (part: string) => void; link: (shown: string, url: string) => boolean },
  from = 0,
): void {
  if (!text) return;
  const l = linkifiers[from];
  if (!l) return sink.text(text);
  // A sentinel where a match may not start (next to an earlier link).
  const prefix = startOk ? "" : "\u0002";
  let last = 0;
  for (const m of matchesOf(l, prefix + text)) {
    const start = m.index - prefix.length;
    const before = text.slice(last, start);
    linkifyText(linkifiers, before, last === 0 ? startOk : false, sink, from + 1);
    if (!sink.link(m.text, m.url)) sink.text(m.text);
    last = start + m.text.length;
  }
  linkifyText(linkifiers, text.slice(last), last === 0 ? startOk : false, sink, from + 1);
}
