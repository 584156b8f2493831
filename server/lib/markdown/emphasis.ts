/**
 * Emphasis-like spans: `***x***`, `**x**`, `*x*` and `~~x~~`, following
 * Zulip's regexes rather than CommonMark's delimiter algorithm (single line,
 * `_` is never emphasis, no emphasis inside link text).
 *
 * Closers are found by scanning forward. Protected spans — code spans and
 * resolvable mentions/channel links — are jumped over, as Zulip's earlier,
 * higher-priority patterns would already have consumed them: `*a `*` b*` is
 * one emphasis, not two.
 */
import type { StateInline } from "markdown-it";
import { matchCodeSpanAt } from "./inline.ts";
import { matchChannelLinkAt, matchMentionAt } from "./mentions.ts";
import { isWhitespaceChar } from "./text.ts";
import { getCtx, type MarkdownContext } from "./types.ts";

type Ctx = Partial<MarkdownContext>;

/** End of the protected span starting at i, or -1 if none starts there. */
function skipProtected(src: string, i: number, max: number, ctx: Ctx): number {
  const c = src.charCodeAt(i);
  if (c === 0x60) {
    const code = matchCodeSpanAt(src, i, max);
    return code ? code[2] : -1;
  }
  if (c === 0x40) return matchMentionAt(src, i, max, ctx)?.end ?? -1;
  if (c === 0x23) return matchChannelLinkAt(src, i, max, ctx)?.end ?? -1;
  return -1;
}

/**
 * The loop every closer search shares: walk from `start` towards `max`,
 * jumping over protected spans (and over the spans `skipAlso` reports, if
 * given), and fail at a newline (Zulip's patterns are single-line). At every
 * other character `at` decides: undefined to keep going, or the search's
 * result (the closer's index, or -1).
 */
function scanForClose(
  src: string,
  start: number,
  max: number,
  ctx: Ctx,
  at: (ch: string, i: number) => number | undefined,
  skipAlso?: (i: number) => number,
): number {
  for (let i = start; i < max;) {
    let skip = skipProtected(src, i, max, ctx);
    if (skip <= 0 && skipAlso) skip = skipAlso(i);
    if (skip > 0) {
      i = skip;
      continue;
    }
    const ch = src[i]!;
    if (ch === "\n") return -1;
    const result = at(ch, i);
    if (result !== undefined) return result;
    i++;
  }
  return -1;
}

/** `***x***`: returns index of the closing `***` or -1. */
function findStrongEmClose(src: string, pos: number, max: number, ctx: Ctx): number {
  const start = pos + 3;
  if (start >= max || isWhitespaceChar(src[start])) return -1;
  return scanForClose(src, start, max, ctx, (ch, i) => {
    if (ch === "^") return -1;
    if (ch !== "*") return undefined;
    return i > start && i + 3 <= max && src.startsWith("***", i) && !isWhitespaceChar(src[i - 1])
      ? i
      : -1;
  });
}

/** `**x**` (single line, lazy): returns index of the closing `**` or -1. */
function findStrongClose(src: string, pos: number, max: number, ctx: Ctx): number {
  const start = pos + 2;
  return scanForClose(src, start, max, ctx, (_ch, i) =>
    i > start && i + 2 <= max && src.charCodeAt(i) === 0x2a && src.charCodeAt(i + 1) === 0x2a
      ? i
      : undefined,
  );
}

/** `*x*` (no `*`, `^` or newline inside; no whitespace just inside): closing `*` or -1. */
function findEmClose(src: string, pos: number, max: number, ctx: Ctx): number {
  const start = pos + 1;
  if (start >= max || isWhitespaceChar(src[start]) || src[start] === "*") return -1;
  // A complete `**strong**` inside is fine (`*a **b** c*`): jump over it.
  const skipStrong = (i: number): number => {
    if (src[i] !== "*" || src[i + 1] !== "*") return -1;
    const strongEnd = findStrongClose(src, i, max, ctx);
    return strongEnd >= 0 ? strongEnd + 2 : -1;
  };
  return scanForClose(
    src,
    start,
    max,
    ctx,
    (ch, i) => {
      if (ch === "^") return -1;
      if (ch !== "*") return undefined;
      return i > start && !isWhitespaceChar(src[i - 1]) ? i : -1;
    },
    skipStrong,
  );
}

/** `~~x~~` (no `~` or newline inside): closing `~~` or -1. */
function findDelClose(src: string, pos: number, max: number, ctx: Ctx): number {
  const start = pos + 2;
  return scanForClose(src, start, max, ctx, (ch, i) => {
    if (ch !== "~") return undefined;
    return i > start && src[i + 1] === "~" && src[i + 2] !== "~" && i + 2 <= max ? i : -1;
  });
}

// ---------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------

interface Wrapper {
  /** Token type prefix: `${type}_open` / `${type}_close`. */
  type: string;
  tag: string;
  markup: string;
}
const STRONG: Wrapper = { type: "strong", tag: "strong", markup: "**" };
const EM: Wrapper = { type: "em", tag: "em", markup: "*" };
const DEL: Wrapper = { type: "s", tag: "del", markup: "~~" };

/**
 * Emits `wrappers` (outermost first) around the inline content between the
 * opening delimiter at `open` and the closing one at `close` (both `delimLen`
 * long), and moves past the closer.
 */
function wrapSpan(
  state: StateInline,
  silent: boolean,
  wrappers: Wrapper[],
  open: number,
  close: number,
  delimLen: number,
): true {
  if (!silent) {
    for (const w of wrappers) state.push(`${w.type}_open`, w.tag, 1).markup = w.markup;
    const oldMax = state.posMax;
    state.pos = open + delimLen;
    state.posMax = close;
    state.md.inline.tokenize(state);
    state.posMax = oldMax;
    for (const w of [...wrappers].reverse())
      state.push(`${w.type}_close`, w.tag, -1).markup = w.markup;
  }
  state.pos = close + delimLen;
  return true;
}

export function ruleStar(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const pos = state.pos;
  const max = state.posMax;
  if (src.charCodeAt(pos) !== 0x2a) return false;
  const ctx = getCtx(state.env);
  if (src.startsWith("***", pos)) {
    const close = findStrongEmClose(src, pos, max, ctx);
    if (close >= 0) return wrapSpan(state, silent, [STRONG, EM], pos, close, 3);
  }
  // Link text is literal in Zulip: no strong/emphasis inside it.
  if (state.linkLevel > 0) return false;
  if (src.charCodeAt(pos + 1) === 0x2a) {
    const close = findStrongClose(src, pos, max, ctx);
    return close >= 0 && wrapSpan(state, silent, [STRONG], pos, close, 2);
  }
  const close = findEmClose(src, pos, max, ctx);
  return close >= 0 && wrapSpan(state, silent, [EM], pos, close, 1);
}

export function ruleDel(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const pos = state.pos;
  if (src.charCodeAt(pos) !== 0x7e || src.charCodeAt(pos + 1) !== 0x7e) return false;
  if (pos > 0 && src.charCodeAt(pos - 1) === 0x7e) return false;
  if (state.linkLevel > 0) return false;
  const close = findDelClose(src, pos, state.posMax, getCtx(state.env));
  return close >= 0 && wrapSpan(state, silent, [DEL], pos, close, 2);
}
