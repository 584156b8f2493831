/**
 * What `npm run gen` adds to the bundled spec for its readers (generated/openapi.json, which
 * the Redoc page at /api/docs is built from), derived from the spec, never written by hand:
 *
 * - `x-codeSamples`: a curl command per operation, as Zulip's API docs write them (`curl -sSX
 *   POST URL -u BOT_EMAIL_ADDRESS:BOT_API_KEY --data-urlencode name=value …`; GET parameters
 *   with `-G`; lists, objects and the parameters the spec encodes as JSON as JSON text; files
 *   with `-F`), from the operation's parameters and their example values.
 * - Descriptions unwrapped: the spec's Markdown is wrapped at 100 columns, and Redoc's search
 *   joins the words on either side of a soft line break without a space ("up tonum_after").
 *   Each paragraph's and list item's lines are joined with one space; the rendered HTML is the
 *   same (checked for every description with markdown-it, or the generation fails).
 */
import MarkdownIt from "markdown-it";

type Json = any;
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** The placeholders of Zulip's own curl examples. */
export const SAMPLE_CREDENTIALS = "BOT_EMAIL_ADDRESS:BOT_API_KEY";

function resolver(doc: Json) {
  return (x: Json): Json => {
    let seen = 0;
    while (x && typeof x === "object" && typeof x.$ref === "string" && seen++ < 20) {
      x = x.$ref
        .slice(2)
        .split("/")
        .map((k: string) => k.replace(/~1/g, "/").replace(/~0/g, "~"))
        .reduce((o: Json, k: string) => o?.[k], doc);
    }
    return x;
  };
}

/** A shell word: bare when it is safe, else single-quoted as Zulip's examples quote. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function parameterExample(p: Json): { value: Json; json: boolean } | undefined {
  const media = p.content?.["application/json"];
  const json = media !== undefined;
  const candidates = [
    p.example,
    p.examples && Object.values<Json>(p.examples)[0]?.value,
    media?.example,
    media?.examples && Object.values<Json>(media.examples)[0]?.value,
    p.schema?.example,
    p.schema?.examples?.[0],
  ];
  const value = candidates.find((v) => v !== undefined);
  return value === undefined ? undefined : { value, json };
}

/** The text a form field or query parameter carries: strings as they are, the rest as JSON. */
function fieldText(value: Json, json: boolean): string {
  if (!json && typeof value === "string") return value;
  return JSON.stringify(value);
}

/** A required value the spec gives no example for: its default, else something of its type. */
function placeholder(schema: Json): Json {
  if (schema?.default !== undefined) return schema.default;
  if (schema?.enum) return schema.enum[0];
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  return type === "integer" || type === "number"
    ? 1
    : type === "boolean"
      ? true
      : type === "array"
        ? []
        : type === "object"
          ? {}
          : "string";
}

export interface CurlSample {
  method: string;
  /** The URL, path parameters filled in. */
  url: string;
  /** What the command sends, in order: name and the text of its value. */
  fields: { name: string; value: string; file?: boolean }[];
  auth: boolean;
  source: string;
}

/** The curl command of one operation. */
export function curlSample(doc: Json, path: string, method: string, op: Json): CurlSample {
  const resolve = resolver(doc);
  // Zulip's x-curl-examples-parameters: the first of its lists of parameters to include in,
  // or exclude from, the example (parameters that cannot be sent together).
  const choice = op["x-curl-examples-parameters"]?.oneOf?.[0];
  const chosen: string[] = choice?.parameters?.enum ?? [];
  const wanted = (name: string) =>
    !choice ? true : choice.type === "include" ? chosen.includes(name) : !chosen.includes(name);
  const item = doc.paths[path];
  const params: Json[] = [...(item.parameters ?? []), ...(op.parameters ?? [])]
    .map(resolve)
    .filter((p: Json, i: number, all: Json[]) => {
      // An operation's parameter overrides the path item's of the same name and place.
      const last = all.findLastIndex((q: Json) => q.name === p.name && q.in === p.in);
      return last === i;
    });
  const base = String(doc.servers?.[0]?.url ?? "").replace(/\/$/, "");
  let urlPath = path;
  for (const p of params.filter((p: Json) => p.in === "path")) {
    const ex = parameterExample(p);
    const value = ex ? ex.value : placeholder(p.schema);
    urlPath = urlPath.replace(
      `{${p.name}}`,
      encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value)),
    );
  }
  const fields: CurlSample["fields"] = [];
  for (const p of params.filter((p: Json) => p.in === "query" && !p.deprecated)) {
    if (!wanted(p.name)) continue;
    const ex = parameterExample(p);
    if (!ex && !p.required) continue;
    fields.push({
      name: p.name,
      value: ex ? fieldText(ex.value, ex.json) : fieldText(placeholder(p.schema), false),
    });
  }
  const body = resolve(op.requestBody);
  let multipart = false;
  if (body?.content) {
    const form = body.content["multipart/form-data"];
    const formSchema = resolve(form?.schema);
    const withFile =
      formSchema?.properties &&
      Object.values<Json>(formSchema.properties).some((s) => resolve(s)?.format === "binary");
    const media = withFile ? form : body.content["application/x-www-form-urlencoded"];
    multipart = Boolean(withFile);
    const schema = resolve(media?.schema);
    const example = media?.example ?? {};
    const required: string[] = schema?.required ?? [];
    for (const [name, propRef] of Object.entries<Json>(schema?.properties ?? {})) {
      if (!wanted(name)) continue;
      const prop = resolve(propRef);
      if (prop?.format === "binary") {
        fields.push({ name, value: "@example.png", file: true });
        continue;
      }
      if (prop?.deprecated && !required.includes(name)) continue;
      let value = example[name] ?? prop?.example ?? prop?.examples?.[0];
      if (value === undefined) {
        if (!required.includes(name)) continue;
        value = placeholder(prop);
      }
      const json = media?.encoding?.[name]?.contentType === "application/json";
      fields.push({ name, value: fieldText(value, json) });
    }
  }
  const security = op.security ?? doc.security ?? [];
  const auth = security.length > 0 && !security.some((s: Json) => Object.keys(s).length === 0);
  const verb = method.toUpperCase();
  const url = `${base}${urlPath}`;
  const get = verb === "GET" || verb === "HEAD";
  const lines = [`curl -sSX ${verb}${get && fields.length ? " -G" : ""} ${shellQuote(url)}`];
  if (auth) lines.push(`-u ${SAMPLE_CREDENTIALS}`);
  for (const f of fields)
    lines.push(
      multipart
        ? `-F ${shellQuote(`${f.name}=${f.value}`)}`
        : `--data-urlencode ${shellQuote(`${f.name}=${f.value}`)}`,
    );
  return { method: verb, url, fields, auth, source: lines.join(" \\\n    ") };
}

/** Adds `x-codeSamples` (a curl command) to every operation of the bundled spec, in place. */
export function addCodeSamples(doc: Json): void {
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {}))
    for (const method of METHODS) {
      const op = item[method];
      if (!op?.operationId) continue;
      op["x-codeSamples"] = [
        { lang: "Shell", label: "curl", source: curlSample(doc, path, method, op).source },
      ];
    }
}

const VALUES = new Set(["example", "examples", "default", "enum", "const", "x-codeSamples"]);
const md = new MarkdownIt({ html: true });
const renderedText = (text: string) => md.render(text).replace(/\s+/g, " ").trim();
const fence = /^\s*(`{3,}|~{3,})/;
/** A line that starts a block of its own: a list item, heading, quote, table row, rule, fence. */
const blockStart = /^\s*([-*+]\s|\d+[.)]\s|#{1,6}\s|>|\||`{3,}|~{3,}|(-\s*){3,}$|(\*\s*){3,}$)/;

/**
 * The text with every soft line break (a line break inside a paragraph or list item) turned
 * into one space. Lines ending in a hard break (two spaces, a backslash) and fenced code keep
 * theirs.
 */
export function unwrapMarkdown(text: string): string {
  const out: string[] = [];
  let inFence: string | undefined;
  let joinable = false;
  for (const line of text.split("\n")) {
    const f = fence.exec(line);
    if (inFence) {
      out.push(line);
      if (f && f[1]!.startsWith(inFence)) inFence = undefined;
      joinable = false;
      continue;
    }
    if (f) {
      inFence = f[1]!;
      out.push(line);
      joinable = false;
      continue;
    }
    if (line.trim() === "") {
      out.push(line);
      joinable = false;
      continue;
    }
    if (joinable && !blockStart.test(line)) out[out.length - 1] = `${out.at(-1)} ${line.trim()}`;
    else out.push(line);
    const last = out.at(-1)!;
    joinable = !/( {2}|\\)$/.test(last) && !/^\s*(#{1,6}\s|\|)/.test(last);
  }
  return out.join("\n");
}

/**
 * Every `description` of the document unwrapped (unwrapMarkdown), in place; throws when one
 * would render differently.
 */
export function unwrapDescriptions(doc: Json): void {
  const walk = (node: Json, where: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
    if (!node || typeof node !== "object") return;
    for (const [k, v] of Object.entries<Json>(node)) {
      // Example values are data, not text to read.
      if (VALUES.has(k)) continue;
      if (k === "description" && typeof v === "string" && v.includes("\n")) {
        const unwrapped = unwrapMarkdown(v);
        if (renderedText(unwrapped) !== renderedText(v))
          throw new Error(`unwrapping the description at ${where} would change how it renders`);
        node[k] = unwrapped;
      } else walk(v, `${where}/${k}`);
    }
  };
  walk(doc, "#");
}
