/**
 * `npm run i18n:extract`: writes web/src/i18n/messages.json, the one catalogue of the app's words:
 * every string literal passed to `t()` in web/src (its English text is its key, as in
 * web/src/i18n.ts), sorted, each with the files that use it (what a translator needs to see).
 * `--check` exits 1 when the file is stale (test/web/i18n.test.ts runs the same check).
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const WEB = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.join(WEB, "src");
export const CATALOGUE = path.join(SRC, "i18n", "messages.json");

/** `t("…")`, `t('…')` or t(`…`) without substitutions, the literal being the first argument. */
const CALL = /\bt\(\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`((?:[^`\\$]|\\.)*)`)/g;

export function extract() {
  const found = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (/\.tsx?$/.test(name)) {
        const text = readFileSync(file, "utf8");
        for (const m of text.matchAll(CALL)) {
          const message =
            m[1] !== undefined ? JSON.parse(`"${m[1]}"`) : (m[2] ?? m[3]).replace(/\\(.)/g, "$1");
          const files = found.get(message) ?? new Set();
          files.add(path.relative(SRC, file));
          found.set(message, files);
        }
      }
    }
  };
  walk(SRC);
  const out = {};
  for (const key of [...found.keys()].sort()) out[key] = [...found.get(key)].sort();
  return JSON.stringify(out, null, 2) + "\n";
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = extract();
  if (process.argv.includes("--check")) {
    let old = "";
    try {
      old = readFileSync(CATALOGUE, "utf8");
    } catch {
      // none yet
    }
    if (old !== text) {
      console.error("web/src/i18n/messages.json is stale: run `npm run i18n:extract`");
      process.exit(1);
    }
  } else {
    writeFileSync(CATALOGUE, text);
    console.log(
      `${Object.keys(JSON.parse(text)).length} messages in ${path.relative(process.cwd(), CATALOGUE)}`,
    );
  }
}
