/**
 * Emoji: the name ↔ codepoint tables (from emojibase, with Zulip's own names
 * on top), finding `:name:` and unicode emoji in text, and their HTML.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { RendererRule } from "markdown-it";
import { escapeAttr, escapeText } from "./text.ts";
import type { MarkdownContext } from "./types.ts";

const require = createRequire(import.meta.url);

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

/**
 * Emoji name → code and code → name, built on first use: reading and indexing emojibase's data
 * costs some 80 ms, which the server's start-up does not wait for (the first rendering does).
 */
let maps: { nameToCode: Map<string, string>; codeToName: Map<string, string> } | undefined;
const emojiMaps = () => (maps ??= loadEmojiData());

/** emojibase hexcode → Zulip codepoint: lower case, without variation selectors. */
function codeFromHex(hexcode: string): string {
  return hexcode
    .toLowerCase()
    .split("-")
    .filter((c) => c !== "fe0f")
    .join("-");
}

// Read rather than require()d: require's cache would keep the parsed files (megabytes) alive
// after the two maps are built from them.
const readJson = (id: string): unknown => JSON.parse(readFileSync(require.resolve(id), "utf8"));

function loadEmojiData() {
  const emojiNameToCode = new Map<string, string>();
  const emojiCodeToName = new Map<string, string>();
  const compact = readJson("emojibase-data/en/compact.json") as CompactEmoji[];
  const presets = [
    readJson("emojibase-data/en/shortcodes/emojibase.json") as ShortcodeMap,
    readJson("emojibase-data/en/shortcodes/cldr.json") as ShortcodeMap,
    readJson("emojibase-data/en/shortcodes/github.json") as ShortcodeMap,
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
      const name =
        first === undefined
          ? e.label.toLowerCase().replace(/[^a-z0-9]+/g, "_")
          : Array.isArray(first)
            ? first[0]!
            : first;
      emojiCodeToName.set(code, name);
    }
  }
  for (let p = 0; p < presets.length; p++) {
    for (const [code, names] of entries) {
      for (const name of names[p]!) if (!emojiNameToCode.has(name)) emojiNameToCode.set(name, code);
    }
  }
  return { nameToCode: emojiNameToCode, codeToName: emojiCodeToName };
}

/** Emoji name → Zulip-style codepoint ("1f642", "1f937-200d-2640"); undefined if unknown. */
export function emojiCodeForName(name: string): string | undefined {
  return emojiMaps().nameToCode.get(name);
}

/** Codepoint ("1f642") → canonical emoji name; undefined if unknown. */
export function emojiNameForCode(code: string): string | undefined {
  return emojiMaps().codeToName.get(code);
}

/**
 * Every Unicode emoji by code with the names that name it (Zulip's emoji_api.json
 * `code_to_names`): the canonical name first, then its aliases. Only names `emojiCodeForName`
 * answers with that code, so a client offers exactly what reactions and Markdown accept.
 */
export function emojiCodeToNames(): Map<string, string[]> {
  const { nameToCode, codeToName } = emojiMaps();
  const byCode = new Map<string, string[]>();
  for (const [name, code] of nameToCode) {
    const names = byCode.get(code);
    if (names) names.push(name);
    else byCode.set(code, [name]);
  }
  for (const [code, names] of byCode) {
    const canonical = codeToName.get(code);
    const at = canonical === undefined ? -1 : names.indexOf(canonical);
    if (at > 0) names.unshift(...names.splice(at, 1));
  }
  return byCode;
}

const EMOJI_NAME_RE = /:([\p{L}\p{N}_+-]+):/gu;
const EMOJI_ELEMENT = String.raw`(?:\p{Regional_Indicator}\p{Regional_Indicator}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?)`;
const POSSIBLE_EMOJI_RE = new RegExp(`${EMOJI_ELEMENT}(?:\\u200D${EMOJI_ELEMENT})*`, "gu");
/** Digits, #, © etc. are \p{Emoji} too, but only count when written with emoji presentation. */
const TEXT_PRESENTATION_RE = /^\P{Emoji_Presentation}\u20E3?$/u;

const ZULIP_EMOJI_SRC = "/static/generated/emoji/images/emoji/unicode/zulip.png";

/**
 * A found emoji: unicode ones have a code, image ones (realm emoji, :zulip:) a
 * src. (A type, not an interface: token metas are typed as records.)
 */
export type EmojiMeta = {
  code?: string;
  name: string;
  src?: string;
};

/**
 * Splits text at `:name:` emoji (realm emoji first, as Zulip) and unicode
 * emoji. Strings in the result are plain text (possibly empty).
 */
export function splitEmoji(
  text: string,
  realmEmoji: MarkdownContext["realmEmoji"],
): Array<string | EmojiMeta> {
  const out: Array<string | EmojiMeta> = [];
  let last = 0;
  if (text.includes(":")) {
    EMOJI_NAME_RE.lastIndex = 0;
    for (let m = EMOJI_NAME_RE.exec(text); m; m = EMOJI_NAME_RE.exec(text)) {
      const name = m[1]!;
      const realm = realmEmoji?.get(name);
      const code = realm ? undefined : emojiMaps().nameToCode.get(name);
      if (!realm && code === undefined && name !== "zulip") continue;
      splitUnicodeEmoji(text.slice(last, m.index), out);
      out.push(
        realm
          ? { name, src: realm.sourceUrl }
          : name === "zulip"
            ? { name, src: ZULIP_EMOJI_SRC }
            : { code, name },
      );
      last = m.index + m[0].length;
    }
  }
  splitUnicodeEmoji(text.slice(last), out);
  return out;
}

function splitUnicodeEmoji(segment: string, out: Array<string | EmojiMeta>): void {
  // Only non-ASCII text can contain emoji (keycaps need U+20E3).
  if (!/[^\x00-\x7f]/.test(segment)) {
    out.push(segment);
    return;
  }
  let prev = 0;
  POSSIBLE_EMOJI_RE.lastIndex = 0;
  for (let m = POSSIBLE_EMOJI_RE.exec(segment); m; m = POSSIBLE_EMOJI_RE.exec(segment)) {
    const seq = m[0];
    if (TEXT_PRESENTATION_RE.test(seq)) continue;
    const code = Array.from(seq.replace(/\uFE0F/g, ""), (ch) =>
      ch.codePointAt(0)!.toString(16).padStart(4, "0"),
    ).join("-");
    const name = emojiMaps().codeToName.get(code);
    if (name === undefined) continue;
    out.push(segment.slice(prev, m.index), { code, name });
    prev = m.index + seq.length;
  }
  out.push(segment.slice(prev));
}

export const renderEmoji: RendererRule = (tokens, idx) => {
  const meta = tokens[idx]!.meta as EmojiMeta;
  const title = escapeAttr(meta.name.replace(/_/g, " "));
  if (meta.src !== undefined) {
    return `<img alt=":${escapeAttr(meta.name)}:" class="emoji" src="${escapeAttr(meta.src)}" title="${title}">`;
  }
  return `<span aria-label="${title}" class="emoji emoji-${meta.code}" role="img" title="${title}">:${escapeText(meta.name)}:</span>`;
};
