/**
 * The simple inline rules that replace markdown-it's: newlines, code spans,
 * mentions and channel links, entities and `<time:…>` timestamps. Emphasis
 * has its own module (emphasis.ts).
 */
import type { RendererRule, StateInline } from "markdown-it";
import { matchChannelLinkAt, matchMentionAt, type InlineMatch } from "./mentions.ts";
import { escapeText, matchSticky } from "./text.ts";
import { getCtx, type MarkdownContext } from "./types.ts";

type InlineRule = (state: StateInline, silent: boolean) => boolean;

export const ruleNewline: InlineRule = (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x0a) return false;
  // nl2br: every newline is a <br>; surrounding spaces are kept.
  if (!silent) state.push("softbreak", "br", 0);
  state.pos++;
  return true;
};

// ---------------------------------------------------------------------------
// Code spans (Zulip: `(`+)(.+?)(?<!`)\2(?!`)`, content kept verbatim)
// ---------------------------------------------------------------------------

// The maximal backtick runs of the source being rendered, computed once per
// source: the emphasis scanner asks for code spans at every backtick, and
// rescanning for the closing run each time would be quadratic.
let backtickRunsSrc: string | null = null;
let backtickRuns: Array<[number, number]> = []; // [start, length]

function getBacktickRuns(src: string): Array<[number, number]> {
  if (backtickRunsSrc === src) return backtickRuns;
  const runs: Array<[number, number]> = [];
  for (let i = src.indexOf("`"); i >= 0;) {
    let j = i;
    while (src.charCodeAt(j) === 0x60) j++;
    runs.push([i, j - i]);
    i = src.indexOf("`", j);
  }
  backtickRunsSrc = src;
  backtickRuns = runs;
  return runs;
}

/** Drops the cached runs once a render is done (so the source can be freed). */
export function resetCodeSpanCache(): void {
  backtickRunsSrc = null;
  backtickRuns = [];
}

/** If a code span starts at pos: [contentStart, contentEnd, end]. */
export function matchCodeSpanAt(
  src: string,
  pos: number,
  max: number,
): [number, number, number] | null {
  if (src.charCodeAt(pos) !== 0x60) return null;
  if (pos > 0 && src.charCodeAt(pos - 1) === 0x5c /* \ */) return null;
  let runLen = 0;
  while (pos + runLen < max && src.charCodeAt(pos + runLen) === 0x60) runLen++;
  const runs = getBacktickRuns(src);
  // First run starting after this one (binary search; runs are sorted).
  let lo = 0;
  let hi = runs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid]![0] < pos + runLen) lo = mid + 1;
    else hi = mid;
  }
  // As the regex backtracks: the whole opening run first, a shorter opener
  // (the rest becoming content) only when no closing run of that length exists.
  for (let n = runLen; n >= 1; n--) {
    for (let k = lo; k < runs.length; k++) {
      const [start, len] = runs[k]!;
      if (start + len > max) break;
      if (len === n) return [pos + n, start, start + len];
    }
  }
  return null;
}

export const ruleBackticks: InlineRule = (state, silent) => {
  const m = matchCodeSpanAt(state.src, state.pos, state.posMax);
  if (!m) return false;
  if (!silent) {
    const token = state.push("code_inline", "code", 0);
    token.content = state.src.slice(m[0], m[1]);
  }
  state.pos = m[2];
  return true;
};

// ---------------------------------------------------------------------------
// Mentions and channel links (matching lives in mentions.ts)
// ---------------------------------------------------------------------------

type Matcher = (
  src: string,
  pos: number,
  max: number,
  ctx: Partial<MarkdownContext>,
) => InlineMatch | null;

function singleTokenRule(match: Matcher, tag: string): InlineRule {
  return (state, silent) => {
    const m = match(state.src, state.pos, state.posMax, getCtx(state.env));
    if (!m) return false;
    if (!silent) state.push(m.type, tag, 0).meta = m.meta;
    state.pos = m.end;
    return true;
  };
}

export const ruleMention = singleTokenRule(matchMentionAt, "span");
export const ruleChannelLink = singleTokenRule(matchChannelLinkAt, "a");

// ---------------------------------------------------------------------------
// Entities and timestamps
// ---------------------------------------------------------------------------

const ENTITY_RE = /&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);/y;

/** HTML entities pass through verbatim (Python-Markdown keeps `&nbsp;` as is). */
export const ruleEntity: InlineRule = (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x26) return false;
  const m = matchSticky(ENTITY_RE, state.src, state.pos, state.posMax);
  if (!m) return false;
  if (!silent) state.push("zulip_raw", "", 0).content = m[0];
  state.pos += m[0].length;
  return true;
};

const TIME_RE = /<time:([^>]*?)>/y;

/** `<time:…>` content → ISO string as Zulip writes it, or null if unparseable. */
function parseTimestamp(input: string): string | null {
  const s = input.trim();
  let ms: number;
  if (/^-?\d+(?:\.\d+)?$/.test(s)) {
    ms = Number(s) * 1000;
  } else {
    const iso =
      /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(
        s,
      );
    if (iso) {
      const tz = iso[3]
        ? iso[3].toUpperCase() === "Z"
          ? "Z"
          : iso[3].replace(/^([+-]\d{2})(\d{2})$/, "$1:$2")
        : "Z";
      ms = Date.parse(`${iso[1]}T${iso[2] ?? "00:00:00"}${tz}`);
    } else {
      // Other human formats: interpret without zone as UTC, like Zulip.
      ms = Date.parse(`${s} UTC`);
      if (Number.isNaN(ms)) ms = Date.parse(s);
    }
  }
  if (!Number.isFinite(ms)) return null;
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return null;
  // Python's isoformat: no fraction when zero, else microseconds.
  const millis = d.getUTCMilliseconds();
  return d
    .toISOString()
    .replace(/\.\d{3}Z$/, millis ? `.${String(millis).padStart(3, "0")}000Z` : "Z");
}

export const ruleTimestamp: InlineRule = (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x3c) return false;
  const m = matchSticky(TIME_RE, state.src, state.pos, state.posMax);
  if (!m) return false;
  if (!silent) {
    const token = state.push("zulip_time", "time", 0);
    token.content = m[1]!;
    token.meta = { iso: parseTimestamp(m[1]!) };
  }
  state.pos += m[0].length;
  return true;
};

export const renderTimestamp: RendererRule = (tokens, idx) => {
  const token = tokens[idx]!;
  const iso = (token.meta as { iso: string | null }).iso;
  // An invalid time stays the text it was, escaped (level 451; a `timestamp-error` span before).
  if (iso === null) return escapeText(`<time:${token.content}>`);
  return `<time datetime="${iso}">${escapeText(token.content)}</time>`;
};
