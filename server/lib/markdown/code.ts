/**
 * Code and math blocks as Zulip renders them: `<div class="codehilite">` with
 * Pygments' escaping and whitespace normalization but no highlighting, and
 * Zulip's fallback markup for TeX (no TeX renderer is bundled).
 */
import type { RendererRule } from "markdown-it";
import { escapeAttr, escapeCode } from "./text.ts";

/** Pygments lexer names for common aliases (Zulip's data-code-language). */
const PYGMENTS_NAMES: Record<string, string> = (() => {
  const table: Array<[string, string[]]> = [
    ["Python", ["python", "py", "sage", "python3", "py3", "bazel", "starlark", "pyi"]],
    ["Python 2.x", ["python2", "py2"]],
    ["Python console session", ["pycon", "python-console"]],
    ["Python Traceback", ["pytb", "py3tb"]],
    ["JavaScript", ["javascript", "js"]],
    ["TypeScript", ["typescript", "ts"]],
    ["JSX", ["jsx", "react"]],
    ["TSX", ["tsx"]],
    ["Java", ["java"]],
    ["C", ["c"]],
    ["C++", ["cpp", "c++"]],
    ["C#", ["csharp", "c#", "cs"]],
    ["Go", ["go", "golang"]],
    ["Rust", ["rust", "rs"]],
    ["Ruby", ["ruby", "rb", "duby"]],
    ["PHP", ["php", "php3", "php4", "php5"]],
    ["Bash", ["bash", "sh", "ksh", "zsh", "shell", "openrc"]],
    ["Bash Session", ["console", "shell-session"]],
    ["PowerShell", ["powershell", "pwsh", "posh", "ps1", "psm1"]],
    ["Batchfile", ["batch", "bat", "dosbatch", "winbatch"]],
    ["JSON", ["json", "json-object"]],
    ["YAML", ["yaml"]],
    ["TOML", ["toml"]],
    ["INI", ["ini", "cfg", "dosini"]],
    ["XML", ["xml"]],
    ["HTML", ["html"]],
    ["CSS", ["css"]],
    ["SCSS", ["scss"]],
    ["Sass", ["sass"]],
    ["LESS", ["less"]],
    ["SQL", ["sql"]],
    ["PostgreSQL SQL dialect", ["postgresql", "postgres"]],
    ["MySQL", ["mysql"]],
    ["Kotlin", ["kotlin"]],
    ["Swift", ["swift"]],
    ["Scala", ["scala"]],
    ["Haskell", ["haskell", "hs"]],
    ["Lua", ["lua"]],
    ["Perl", ["perl", "pl"]],
    ["S", ["splus", "s", "r"]],
    ["TeX", ["tex", "latex"]],
    ["Markdown", ["markdown", "md"]],
    ["Diff", ["diff", "udiff"]],
    ["Docker", ["docker", "dockerfile"]],
    ["Makefile", ["make", "makefile", "mf", "bsdmake"]],
    ["Elixir", ["elixir", "ex", "exs"]],
    ["Erlang", ["erlang"]],
    ["Clojure", ["clojure", "clj"]],
    ["Dart", ["dart"]],
    ["Objective-C", ["objective-c", "objectivec", "obj-c", "objc"]],
    ["OCaml", ["ocaml"]],
    ["F#", ["fsharp", "f#"]],
    ["Julia", ["julia", "jl"]],
    ["Matlab", ["matlab"]],
    ["Groovy", ["groovy"]],
    ["CoffeeScript", ["coffeescript", "coffee-script", "coffee"]],
    ["Elm", ["elm"]],
    ["Nim", ["nimrod", "nim"]],
    ["Zig", ["zig"]],
    ["Protocol Buffer", ["protobuf", "proto"]],
    ["Terraform", ["terraform", "tf", "hcl"]],
    ["GraphQL", ["graphql"]],
    ["Nginx configuration file", ["nginx"]],
    ["VimL", ["vim"]],
    ["Text only", ["text"]],
    ["Handlebars", ["handlebars"]],
    ["Emacs Lisp", ["emacs-lisp", "elisp", "emacs"]],
    ["Common Lisp", ["common-lisp", "cl", "lisp"]],
    ["Scheme", ["scheme", "scm"]],
    ["Racket", ["racket", "rkt"]],
    ["Fortran", ["fortran", "f90"]],
    ["Verilog", ["verilog", "v"]],
    ["Solidity", ["solidity"]],
    ["Vue", ["vue"]],
  ];
  const out: Record<string, string> = {};
  for (const [name, aliases] of table) for (const a of aliases) out[a] = name;
  return out;
})();

function codeLanguageName(lang: string): string {
  const l = lang.toLowerCase();
  return Object.prototype.hasOwnProperty.call(PYGMENTS_NAMES, l) ? PYGMENTS_NAMES[l]! : l;
}

/** Zulip/Pygments normalization: rstrip lines, drop leading/trailing blank lines, end with "\n". */
function normalizeCode(code: string): string {
  const text = code
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
    .replace(/^\n+|\n+$/g, "");
  return text + "\n";
}

function renderCode(code: string, lang: string): string {
  const attr = lang ? ` data-code-language="${escapeAttr(codeLanguageName(lang))}"` : "";
  return `<div class="codehilite"${attr}><pre><span></span><code>${escapeCode(normalizeCode(code))}</code></pre></div>\n`;
}

export const renderFence: RendererRule = (tokens, idx) =>
  renderCode(tokens[idx]!.content, tokens[idx]!.info);

/** Indented code: no language. */
export const renderCodeBlock: RendererRule = (tokens, idx) => renderCode(tokens[idx]!.content, "");

export const renderMath: RendererRule = (tokens, idx) => {
  // No TeX renderer bundled: use Zulip's own fallback markup for TeX it cannot render.
  const paragraphs = tokens[idx]!.content.replace(/\n+$/, "").split("\n\n");
  return paragraphs.map((p) => `<p><span class="tex-error">${escapeCode(p)}</span></p>\n`).join("");
};
