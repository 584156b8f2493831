/**
 * The published spec (generated/openapi.json, from which the Redoc page is built) for its
 * readers: every operation has a curl sample (`x-codeSamples`, server/tools/spec-docs.ts) whose
 * method, path and parameters are the operation's, and no description has a soft line break
 * left (Redoc's search joins the words around one: "up tonum_after").
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { SAMPLE_CREDENTIALS, unwrapMarkdown } from "../../server/tools/spec-docs.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const doc = JSON.parse(readFileSync(`${root}/generated/openapi.json`, "utf8"));
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
const resolve = (x: any): any => {
  while (x?.$ref)
    x = x.$ref
      .slice(2)
      .split("/")
      .reduce((o: any, k: string) => o[k], doc);
  return x;
};
const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => ({ path, method, item, op: item[method] })),
);

/** The words of a command as a POSIX shell splits them: quotes, `'\''`, line continuations. */
function shellWords(source: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\" && source[i + 1] === "\n") {
      i++;
      continue;
    }
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = source.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in ${source}`);
      word = (word ?? "") + source.slice(i + 1, end);
      i = end;
    } else if (c === "\\") {
      word = (word ?? "") + source[++i];
    } else if (c === '"' || c === "$" || c === "`" || c === ";" || c === "|" || c === "&") {
      throw new Error(`unquoted ${c} in ${source}`);
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

interface Parsed {
  method: string;
  get: boolean;
  url: string;
  user?: string;
  fields: Map<string, string>;
  files: string[];
}

function parseCurl(source: string): Parsed {
  const words = shellWords(source);
  expect(words.slice(0, 3)).toEqual(["curl", "-sSX", expect.stringMatching(/^[A-Z]+$/)]);
  const parsed: Parsed = {
    method: words[2]!,
    get: false,
    url: "",
    fields: new Map(),
    files: [],
  };
  for (let i = 3; i < words.length; i++) {
    const w = words[i]!;
    if (w === "-G") parsed.get = true;
    else if (w === "-u") parsed.user = words[++i];
    else if (w === "--data-urlencode" || w === "-F") {
      const arg = words[++i]!;
      const eq = arg.indexOf("=");
      expect(eq, arg).toBeGreaterThan(0);
      const name = arg.slice(0, eq);
      expect(parsed.fields.has(name), `${name} sent twice`).toBe(false);
      parsed.fields.set(name, arg.slice(eq + 1));
      if (w === "-F" && arg[eq + 1] === "@") parsed.files.push(name);
    } else if (!w.startsWith("-") && !parsed.url) parsed.url = w;
    else throw new Error(`unexpected word ${w} in ${source}`);
  }
  return parsed;
}

function parametersOf(item: any, op: any): any[] {
  const all = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve);
  return all.filter((p, i) => all.findLastIndex((q) => q.name === p.name && q.in === p.in) === i);
}

describe("curl samples of the API docs", () => {
  it.each(operations.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o] as const))(
    "%s has one whose method, path and parameters are the operation's",
    (_name, { path, method, item, op }) => {
      const samples = op["x-codeSamples"];
      expect(samples).toEqual([{ lang: "Shell", label: "curl", source: expect.any(String) }]);
      const sample = parseCurl(samples[0].source);
      expect(sample.method).toBe(method.toUpperCase());

      // The URL: the first server's, then the path with each path parameter filled in.
      const base = doc.servers[0].url;
      expect(sample.url.startsWith(`${base}/`), sample.url).toBe(true);
      const params = parametersOf(item, op);
      const pattern = new RegExp(
        `^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{([^}]+)\\?\}/g, "([^/?]+)")}$`,
      );
      const match = pattern.exec(decodeURI(sample.url.slice(base.length)));
      expect(match, `${sample.url} is not ${path}`).not.toBeNull();
      expect(match!.slice(1).every((v) => v !== "" && !v.includes("{"))).toBe(true);

      // Credentials exactly when the operation needs them.
      const security = op.security ?? doc.security;
      const open = security.length === 0 || security.some((s: any) => !Object.keys(s).length);
      expect(sample.user).toBe(open ? undefined : SAMPLE_CREDENTIALS);

      // Parameters: GET's in the query string (-G), the others' in the form body, each one the
      // operation's, every required one present.
      const names = [...sample.fields.keys()];
      const query = params.filter((p) => p.in === "query");
      if (method === "get") {
        expect(sample.get).toBe(names.length > 0);
        expect(names.filter((n) => !query.some((p) => p.name === n))).toEqual([]);
        for (const p of query.filter((p) => p.required)) expect(names).toContain(p.name);
      } else {
        expect(sample.get).toBe(false);
        const body = resolve(op.requestBody);
        const media =
          body?.content?.[
            sample.files.length ? "multipart/form-data" : "application/x-www-form-urlencoded"
          ];
        const schema = resolve(media?.schema);
        const properties = Object.keys(schema?.properties ?? {});
        expect(names.filter((n) => !properties.includes(n))).toEqual([]);
        for (const name of schema?.required ?? []) expect(names).toContain(name);
        // A list, an object or a parameter the spec encodes as JSON is sent as JSON text.
        for (const [name, value] of sample.fields) {
          const prop = resolve(schema.properties[name]);
          if (media.encoding?.[name]?.contentType === "application/json")
            expect(() => JSON.parse(value), `${name}=${value}`).not.toThrow();
          if (prop?.type === "array" || prop?.type === "object")
            expect(() => JSON.parse(value), `${name}=${value}`).not.toThrow();
        }
      }
    },
  );

  it("are those of Zulip's docs in form", () => {
    const send = doc.paths["/messages"].post["x-codeSamples"][0].source;
    expect(send).toMatch(
      /^curl -sSX POST http:\/\/\S+\/api\/v1\/messages \\\n {4}-u BOT_EMAIL_ADDRESS:BOT_API_KEY \\\n {4}--data-urlencode type=/,
    );
    const fetch = doc.paths["/messages"].get["x-codeSamples"][0].source;
    expect(fetch).toMatch(/^curl -sSX GET -G http:\/\/\S+\/api\/v1\/messages \\\n/);
    expect(fetch).toContain(
      `--data-urlencode 'narrow=[{"operator":"channel","operand":"Verona"}]'`,
    );
    // The range's sample leaves out what cannot be sent with a range (x-curl-examples-parameters).
    expect(fetch).not.toContain("message_ids");
  });
});

describe("descriptions of the published spec", () => {
  const md = new MarkdownIt({ html: true });
  it("have no soft line break left (Redoc's search would glue the words around it)", () => {
    const glued: string[] = [];
    const walk = (node: any, where: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
      if (!node || typeof node !== "object") return;
      for (const [k, v] of Object.entries<any>(node)) {
        if (["example", "examples", "default", "enum", "const", "x-codeSamples"].includes(k))
          continue;
        if (k === "description" && typeof v === "string") {
          const tokens = md.parse(v, {});
          const soft = tokens.some((t) => t.children?.some((c) => c.type === "softbreak"));
          if (soft) glued.push(where);
        } else walk(v, `${where}/${k}`);
      }
    };
    walk(doc, "#");
    expect(glued).toEqual([]);
  });

  it("are unwrapped without changing blocks, hard breaks or code", () => {
    expect(unwrapMarkdown("one\ntwo\n\n- a\n  b\n- c\n\n```\nx\ny\n```\nend  \nnext")).toBe(
      "one two\n\n- a b\n- c\n\n```\nx\ny\n```\nend  \nnext",
    );
    expect(unwrapMarkdown("| a | b |\n| - | - |\n| 1 | 2 |")).toBe(
      "| a | b |\n| - | - |\n| 1 | 2 |",
    );
    expect(unwrapMarkdown("text:\n1. one\n2. two")).toBe("text:\n1. one\n2. two");
  });
});
