/**
 * Node-only helpers (they read files and the environment), kept out of the main entry so that it
 * stays usable in browsers: `import { loadZuliprc } from "zulip-compatible-client/node"`.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseZuliprc, type Zuliprc } from "./zuliprc.js";

export interface LoadZuliprcOptions {
  /** The file; default `$ZULIP_CONFIG`, else `~/.zuliprc` (as python-zulip-api). */
  path?: string;
  env?: Record<string, string | undefined>;
}

/**
 * Reads a zuliprc file. As python-zulip-api's command-line options, `ZULIP_EMAIL`,
 * `ZULIP_API_KEY` and `ZULIP_SITE` override what the file says, and with all three set no file
 * is needed.
 */
export function loadZuliprc(options: LoadZuliprcOptions = {}): Zuliprc {
  const env = options.env ?? process.env;
  const path = options.path ?? env.ZULIP_CONFIG ?? join(homedir(), ".zuliprc");
  const overrides = [
    `email=${env.ZULIP_EMAIL ?? ""}`,
    `key=${env.ZULIP_API_KEY ?? ""}`,
    `site=${env.ZULIP_SITE ?? ""}`,
  ].filter((l) => !l.endsWith("="));
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (overrides.length === 3 && options.path === undefined) text = "[api]";
    else throw new Error(`zuliprc: cannot read ${path}: ${(err as Error).message}`);
  }
  // The overrides come last in the section, so they win.
  return parseZuliprc(`${text}\n[api]\n${overrides.join("\n")}\n`);
}

export { parseZuliprc, type Zuliprc };
