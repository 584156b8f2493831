/**
 * Block-level differences from CommonMark: Zulip's fenced blocks (code,
 * ```quote, ```spoiler, ```math — the last three nest), paragraphs that keep
 * trailing spaces, and the narrower list/blockquote starts of Python-Markdown.
 */
import type { RendererRule, StateBlock } from "markdown-it";

export type BlockRule = (
  state: StateBlock,
  startLine: number,
  endLine: number,
  silent: boolean,
) => boolean;

/** Zulip's FENCE_RE: fence at column 0, optional `{.lang header}`. */
const FENCE_RE = /^(~{3,}|`{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+\-./#]+)[ ]*([^ ~`][^~`]*)?\}?)?$/;

/** The line's text after its indentation. */
function lineText(state: StateBlock, line: number): string {
  return state.src.slice(state.bMarks[line]! + state.tShift[line]!, state.eMarks[line]);
}

type FenceKind = "code" | "quote" | "spoiler" | "math";

function fenceKind(lang: string | undefined): FenceKind {
  const l = lang?.toLowerCase();
  if (l === "quote" || l === "quoted") return "quote";
  if (l === "spoiler") return "spoiler";
  if (l === "math") return "math";
  return "code";
}

/** Quote and spoiler blocks hold Markdown, so fences inside them open nested blocks. */
function isContainer(kind: FenceKind): boolean {
  return kind === "quote" || kind === "spoiler";
}

/**
 * The closing line of the fence opened at startLine, or -1 if it is never
 * closed (then it runs to `stoppedAt`, where the enclosing block ends). Tracks
 * nesting the way Zulip's fenced-block preprocessor does: inside quote/spoiler
 * blocks new fences nest; inside code only the identical fence closes.
 */
function findFenceClose(
  state: StateBlock,
  startLine: number,
  endLine: number,
  fence: string,
  kind: FenceKind,
): { closeLine: number; stoppedAt: number } {
  const stack: Array<{ fence: string; container: boolean }> = [
    { fence, container: isContainer(kind) },
  ];
  let line = startLine + 1;
  for (; line < endLine; line++) {
    if (state.sCount[line]! < state.blkIndent && !state.isEmpty(line)) break;
    const text = state.sCount[line] === state.blkIndent ? lineText(state, line).trimEnd() : null;
    const top = stack[stack.length - 1]!;
    if (text !== null && text === top.fence) {
      stack.pop();
      if (stack.length === 0) return { closeLine: line, stoppedAt: line };
      continue;
    }
    if (top.container && text !== null) {
      const nested = FENCE_RE.exec(text);
      if (nested) stack.push({ fence: nested[1]!, container: isContainer(fenceKind(nested[2])) });
    }
  }
  return { closeLine: -1, stoppedAt: line };
}

export function ruleZulipFence(
  state: StateBlock,
  startLine: number,
  endLine: number,
  silent: boolean,
): boolean {
  if (state.sCount[startLine] !== state.blkIndent) return false;
  const first = lineText(state, startLine);
  const c = first.charCodeAt(0);
  if (c !== 0x60 && c !== 0x7e) return false;
  const m = FENCE_RE.exec(first);
  if (!m) return false;
  if (silent) return true;

  const fence = m[1]!;
  const lang = m[2];
  const header = m[3];
  const kind = fenceKind(lang);

  const { closeLine, stoppedAt } = findFenceClose(state, startLine, endLine, fence, kind);
  const contentEnd = closeLine >= 0 ? closeLine : stoppedAt;
  const nextLine = closeLine >= 0 ? closeLine + 1 : stoppedAt;

  // Zulip emits nothing for a block without any content lines.
  if (contentEnd <= startLine + 1) {
    state.line = nextLine;
    return true;
  }

  if (kind === "code" || kind === "math") {
    const token = state.push(
      kind === "math" ? "zulip_math" : "fence",
      kind === "math" ? "" : "code",
      0,
    );
    token.info = lang ?? "";
    token.markup = fence;
    token.content = state.getLines(startLine + 1, contentEnd, state.blkIndent, true);
    token.map = [startLine, nextLine];
    state.line = nextLine;
    return true;
  }

  // Containers: parse the content lines as blocks of their own.
  const oldParent = state.parentType;
  const oldLineMax = state.lineMax;
  state.parentType = "zulip_fence";
  state.lineMax = contentEnd;
  if (kind === "quote") {
    const open = state.push("blockquote_open", "blockquote", 1);
    open.markup = fence;
    open.map = [startLine, nextLine];
    state.md.block.tokenize(state, startLine + 1, contentEnd);
    state.push("blockquote_close", "blockquote", -1).markup = fence;
  } else {
    const open = state.push("zulip_spoiler_open", "div", 1);
    open.map = [startLine, nextLine];
    const headerText = (header ?? "").trim();
    if (headerText) {
      state.push("paragraph_open", "p", 1);
      const inline = state.push("inline", "", 0);
      inline.content = headerText;
      inline.children = [];
      state.push("paragraph_close", "p", -1);
    }
    state.push("zulip_spoiler_content", "div", 0);
    state.md.block.tokenize(state, startLine + 1, contentEnd);
    state.push("zulip_spoiler_close", "div", -1);
  }
  state.parentType = oldParent;
  state.lineMax = oldLineMax;
  state.line = nextLine;
  return true;
}

/** markdown-it's paragraph rule, but only leading whitespace is stripped (Zulip keeps trailing spaces). */
export function ruleParagraph(state: StateBlock, startLine: number, endLine: number): boolean {
  const terminatorRules = state.md.block.ruler.getRules("paragraph");
  const oldParentType = state.parentType;
  let nextLine = startLine + 1;
  state.parentType = "paragraph";
  for (; nextLine < endLine && !state.isEmpty(nextLine); nextLine++) {
    if (state.sCount[nextLine]! - state.blkIndent > 3) continue;
    if (state.sCount[nextLine]! < 0) continue;
    let terminate = false;
    for (const rule of terminatorRules) {
      if (rule(state, nextLine, endLine, true)) {
        terminate = true;
        break;
      }
    }
    if (terminate) break;
  }
  const content = state.getLines(startLine, nextLine, state.blkIndent, false).replace(/^\s+/, "");
  state.line = nextLine;
  state.push("paragraph_open", "p", 1).map = [startLine, state.line];
  const inline = state.push("inline", "", 0);
  inline.content = content;
  inline.map = [startLine, state.line];
  inline.children = [];
  state.push("paragraph_close", "p", -1);
  state.parentType = oldParentType;
  return true;
}

/** Lists: Zulip (Python-Markdown) only knows "1." markers, and a marker needs a space after it. */
export function zulipListRule(builtinList: BlockRule): BlockRule {
  return (state, startLine, endLine, silent) =>
    /^(?:\d{1,9}\)|(?:[*+-]|\d{1,9}\.)$)/.test(lineText(state, startLine))
      ? false
      : builtinList(state, startLine, endLine, silent);
}

/** Blockquotes: a quote made only of empty ">" lines stays plain text (`>` → `<p>&gt;</p>`). */
export function zulipBlockquoteRule(builtinBlockquote: BlockRule): BlockRule {
  return (state, startLine, endLine, silent) => {
    for (let line = startLine; line < endLine && !state.isEmpty(line); line++) {
      if (!/^>[ \t]*$/.test(lineText(state, line)))
        return builtinBlockquote(state, startLine, endLine, silent);
    }
    return false;
  };
}

export const renderSpoilerOpen: RendererRule = () =>
  '<div class="spoiler-block"><div class="spoiler-header">\n';
export const renderSpoilerContent: RendererRule = () =>
  '</div><div class="spoiler-content" aria-hidden="true">\n';
export const renderSpoilerClose: RendererRule = () => "</div></div>\n";
