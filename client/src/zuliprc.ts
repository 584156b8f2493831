/**
 * The `zuliprc` file Zulip's own clients read (python-zulip-api, zulip-js, zulip-terminal): an
 * INI file whose `[api]` section holds `email`, `key` and `site`. This parser works anywhere;
 * reading the file from disk is in `zulip-compatible-client/node` (loadZuliprc).
 *
 *   [api]
 *   email=hamlet@zulip.com
 *   key=abcd1234…
 *   site=https://chat.example.com
 */

export interface Zuliprc {
  email: string;
  apiKey: string;
  /** The site as written, made absolute as python-zulip-api does (`https://` unless it starts with `localhost`). */
  baseUrl: string;
  /** Every key of the `[api]` section, as written (e.g. `insecure`, `cert_bundle`). */
  api: Record<string, string>;
}

/** The sections of an INI text as Python's configparser reads them (`=` or `:`, `#`/`;` comments, indented continuation lines). */
function parseIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  let lastKey: string | undefined;
  for (const raw of text.replace(/^\uFEFF/, "").split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) {
      lastKey = undefined;
      continue;
    }
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      const name = header[1]!.trim();
      current = sections.get(name) ?? new Map();
      sections.set(name, current);
      lastKey = undefined;
    } else if (/^\s/.test(raw) && current && lastKey !== undefined) {
      current.set(lastKey, `${current.get(lastKey)}\n${line}`);
    } else {
      const at = line.search(/[=:]/);
      if (at <= 0 || !current)
        throw new Error(`zuliprc: cannot read the line ${JSON.stringify(line)}`);
      lastKey = line.slice(0, at).trim().toLowerCase();
      current.set(lastKey, line.slice(at + 1).trim());
    }
  }
  return sections;
}

/** Reads a zuliprc text; throws an Error naming what is missing. */
export function parseZuliprc(text: string): Zuliprc {
  const api = parseIni(text).get("api");
  if (!api) throw new Error("zuliprc: no [api] section");
  const need = (key: string) => {
    const value = api.get(key);
    if (!value) throw new Error(`zuliprc: the [api] section has no ${key}`);
    return value;
  };
  const email = need("email");
  const apiKey = need("key");
  const site = need("site").replace(/\/+$/, "");
  const baseUrl = /^https?:\/\//i.test(site)
    ? site
    : site.startsWith("localhost")
      ? `http://${site}`
      : `https://${site}`;
  return { email, apiKey, baseUrl, api: Object.fromEntries(api) };
}
