/**
 * The pieces of test/api/fuzz.test.ts: the operations read from the spec, fast-check
 * arbitraries for requests to them (valid-ish values from each parameter's schema and hostile
 * ones), the compilation of a request plan into exact bytes on the wire, a raw HTTP sender and
 * the checks every answer must pass.
 *
 * A plan is small, printable data (hostile values are descriptors such as
 * `{k: "deep", depth: 12000, shape: "array"}`, materialized only when the request is built), so
 * that fast-check's counterexample and its shrinking stay readable.
 */
import fc from "fast-check";
import http from "node:http";
import { deflateSync, gzipSync } from "node:zlib";
import { deref, HTTP_METHODS, loadSpec } from "../../server/http/spec.ts";
import { checkResponse } from "./spec-check.ts";

export const spec = loadSpec();
const doc = spec.doc;

// ---------------------------------------------------------------------------------------------
// Operations, from the spec

export interface Field {
  name: string;
  schema: any;
  /** Sent as JSON text on the wire (a query parameter with `content: application/json`, a form
   * field with an `encoding` entry, or any non-string form field, as Zulip clients do). */
  json: boolean;
  required: boolean;
  example?: unknown;
  in: "path" | "query" | "body";
}

export interface Operation {
  id: string;
  /** Upper case, as on the wire. */
  method: string;
  template: string;
  path: Field[];
  /** Query parameters and form fields alike: Zulip reads both from either place. */
  params: Field[];
  /** Whether the operation has a form body (its natural placement is the body, else the query). */
  hasBody: boolean;
}

function isStringOnly(schema: any): boolean {
  const s = deref(doc, schema);
  return (
    !s ||
    s.type === "string" ||
    (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === "string")
  );
}

export function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries<any>(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) =>
        deref(doc, p),
      );
      const path: Field[] = [];
      const params: Field[] = [];
      for (const p of parameters) {
        const jsonSchema = p.content?.["application/json"]?.schema;
        const field: Field = {
          name: p.name,
          schema: deref(doc, p.schema ?? jsonSchema),
          json: Boolean(jsonSchema),
          required: Boolean(p.required),
          example: p.example ?? p.content?.["application/json"]?.example,
          in: p.in,
        };
        if (p.in === "path") path.push(field);
        else if (p.in === "query") params.push(field);
      }
      const form = deref(doc, op.requestBody)?.content?.["application/x-www-form-urlencoded"];
      const formSchema = deref(doc, form?.schema);
      for (const [name, schema] of Object.entries<any>(formSchema?.properties ?? {})) {
        params.push({
          name,
          schema: deref(doc, schema),
          json: form.encoding?.[name]?.contentType === "application/json" || !isStringOnly(schema),
          required: (formSchema.required ?? []).includes(name),
          example: form.example?.[name] ?? deref(doc, schema)?.example,
          in: "body",
        });
      }
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        template,
        path,
        params,
        hasBody: Boolean(form),
      });
    }
  }
  return out;
}

/** Whether the spec declares `status` for this method on this path template. */
export function declares(template: string | undefined, method: string, status: number): boolean {
  if (!template) return false;
  return Boolean(doc.paths[template]?.[method.toLowerCase()]?.responses?.[String(status)]);
}

// ---------------------------------------------------------------------------------------------
// Values

/**
 * A parameter value, as data:
 * - `v`: a JavaScript value, sent as JSON text (a string as it is), or typed in a JSON body;
 * - `text`: exact text, percent-encoded on the wire;
 * - `wire`: exact bytes (latin1) put on the wire unencoded: malformed escapes and invalid UTF-8;
 * - `deep`: JSON nested `depth` levels; `long`: `unit` repeated `n` times.
 */
export type Val =
  | { k: "v"; v: unknown }
  | { k: "text"; s: string }
  | { k: "wire"; s: string }
  | { k: "deep"; depth: number; shape: "array" | "object" | "narrow" | "mixed" }
  | { k: "long"; n: number; unit: string };

const DEEP_CACHE = new Map<string, string>();
function deepJson(depth: number, shape: string): string {
  const key = `${shape}:${depth}`;
  let s = DEEP_CACHE.get(key);
  if (s === undefined) {
    if (shape === "array") s = "[".repeat(depth) + "]".repeat(depth);
    else if (shape === "object") s = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
    else if (shape === "mixed") s = '[{"a":'.repeat(depth) + "1" + "}]".repeat(depth);
    // A narrow term whose operand nests: valid at the top, hostile deep inside.
    else s = '[{"operator":"id","operand":' + "[".repeat(depth) + "]".repeat(depth) + "}]";
    DEEP_CACHE.set(key, s);
  }
  return s;
}

/** The decoded text of a value, as the server should see it after form/query decoding. */
export function textOf(v: Val): string {
  switch (v.k) {
    case "v":
      return typeof v.v === "string" ? v.v : JSON.stringify(v.v);
    case "text":
    case "wire":
      return v.s;
    case "deep":
      return deepJson(v.depth, v.shape);
    case "long":
      return v.unit.repeat(v.n);
  }
}

function isJsonText(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** The value as JSON text inside a JSON object body. */
function jsonOf(field: Field | undefined, v: Val): string {
  if (v.k === "v") return JSON.stringify(v.v);
  if (v.k === "deep") return deepJson(v.depth, v.shape);
  const s = textOf(v);
  if (v.k === "text" && field?.json && s.length < 100_000 && isJsonText(s)) return s;
  return JSON.stringify(s);
}

// ---------------------------------------------------------------------------------------------
// Percent-encoding styles

export type Style = "component" | "form" | "raw";

const HEX = (c: string) => "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** Reserved characters a careless client leaves unencoded; they decode to themselves. */
const RAW_KEPT = /%(5B|5D|7B|7D|3A|22|2C|2F|3F|40|24|3B|7C|5E|60|5C|3C|3E)/g;

/**
 * Percent-encodes UTF-8 text (lone surrogates become U+FFFD, as a UTF-8 encoder does):
 * `component` as encodeURIComponent, `form` as URLSearchParams (spaces as `+`), `raw` as a
 * careless client, leaving `[ ] { } : " , / ? @ $ ; | ^ \` < >` unencoded.
 */
export function encode(text: string, style: Style): string {
  const out = encodeURIComponent(text.replace(LONE_SURROGATE, "\ufffd"));
  if (style === "component") return out;
  if (style === "form") return out.replace(/[!~'()]/g, HEX).replace(/%20/g, "+");
  return out.replace(RAW_KEPT, (m) => decodeURIComponent(m)).replace(/%20/g, "+");
}

function encodeVal(v: Val, style: Style): string {
  return v.k === "wire" ? v.s : encode(textOf(v), style);
}

// ---------------------------------------------------------------------------------------------
// The world the valid-ish values come from

export interface World {
  userIds: number[];
  emails: string[];
  streamIds: number[];
  streamNames: string[];
  messageIds: number[];
  groupIds: number[];
  queueIds: string[];
}

const NARROW_OPERATORS = [
  "channel",
  "stream",
  "topic",
  "subject",
  "sender",
  "id",
  "search",
  "has",
  "is",
  "dm",
  "pm-with",
  "dm-including",
  "group-pm-with",
  "near",
  "with",
  "channels",
  "streams",
  "in",
  "nonsense",
];
const SUBSCRIPTION_PROPERTIES = [
  "color",
  "is_muted",
  "in_home_view",
  "pin_to_top",
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
  "nonsense",
];
const TOPICS = ["greetings", "plans", "", " ", "(no topic)", "a/b", "ünïcödé", "💬"];

function intArb(name: string, s: any, world: World): fc.Arbitrary<number> {
  const generic = fc.integer({ min: s.minimum ?? -3, max: s.maximum ?? 300 });
  const pool = /message|msg|anchor/.test(name)
    ? world.messageIds
    : /stream|channel|moderation/.test(name)
      ? world.streamIds
      : /group/.test(name)
        ? world.groupIds
        : /user|to$|subscribers|members|sender/.test(name)
          ? world.userIds
          : [];
  if (/timestamp/.test(name)) return fc.integer({ min: 1_600_000_000, max: 2_000_000_000 });
  return pool.length
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...pool) },
        { weight: 1, arbitrary: generic },
      )
    : generic;
}

function stringArb(name: string, s: any, world: World): fc.Arbitrary<string> {
  const max = Math.min(20, s.maxLength ?? 20);
  const free = fc.oneof(
    fc.string({ maxLength: max }),
    fc.string({ unit: "grapheme", maxLength: Math.min(8, max) }),
    fc.constantFrom("hello **world**", "", " ", "@**Iago**", "#**Verona**"),
  );
  let arb: fc.Arbitrary<string>;
  if (/^(to|stream)$/.test(name)) arb = fc.constantFrom(...world.streamNames, ...world.emails);
  else if (/topic|subject/.test(name)) arb = fc.oneof(fc.constantFrom(...TOPICS), free);
  else if (/email|username/.test(name)) arb = fc.constantFrom(...world.emails, "nobody@zulip.com");
  else if (name === "queue_id")
    arb = world.queueIds.length
      ? fc.oneof(
          { weight: 1, arbitrary: fc.constantFrom(...world.queueIds) },
          { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
        )
      : fc.string({ maxLength: 12 });
  else if (name === "property") arb = fc.constantFrom(...SUBSCRIPTION_PROPERTIES);
  else if (name === "operator") arb = fc.constantFrom(...NARROW_OPERATORS);
  else if (name === "emoji_name") arb = fc.constantFrom("smile", "heart", "octopus", "nonsense");
  else arb = free;
  return arb;
}

/** Narrow terms: every operator with every kind of operand (so `id` gets "abc" and `sender`
 * gets [4]), and the legacy `[operator, operand]` pairs. */
function narrowTermArb(world: World): fc.Arbitrary<unknown> {
  const operand = fc.oneof(
    fc.constantFrom(
      ...world.streamNames,
      ...world.emails,
      ...TOPICS,
      "abc",
      "alert",
      "link",
      "starred",
      "unread",
      "dm",
      "9223372036854775808",
    ),
    fc.constantFrom(
      ...world.messageIds,
      ...world.userIds,
      ...world.streamIds,
      0,
      -1,
      2 ** 31,
      2 ** 53 - 1,
    ),
    fc.array(fc.constantFrom(...world.userIds, 0, -5, 2 ** 31), { maxLength: 3 }),
  );
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        { operator: fc.constantFrom(...NARROW_OPERATORS), operand, negated: fc.boolean() },
        { requiredKeys: ["operator", "operand"] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom(...NARROW_OPERATORS),
        fc.constantFrom("Verona", "abc", "42", ""),
      ),
    },
  );
}

const NARROW_TERM = doc.components?.schemas?.NarrowTerm;

/** A JavaScript value fitting (roughly) the schema, with the development organization's ids. */
export function validArb(
  name: string,
  schema: any,
  world: World,
  depth = 0,
): fc.Arbitrary<unknown> {
  const s = deref(doc, schema);
  if (!s || depth > 4) return fc.constant(null);
  if (s === NARROW_TERM) return narrowTermArb(world);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  for (const key of ["oneOf", "anyOf"])
    if (Array.isArray(s[key]))
      return fc.oneof(
        ...s[key].map((b: any) =>
          validArb(name, { ...s, [key]: undefined, ...deref(doc, b) }, world, depth + 1),
        ),
      );
  if (Array.isArray(s.allOf))
    return validArb(
      name,
      Object.assign({}, ...s.allOf.map((b: any) => deref(doc, b))),
      world,
      depth + 1,
    );
  const types: string[] = Array.isArray(s.type)
    ? s.type
    : s.type
      ? [s.type]
      : s.properties
        ? ["object"]
        : ["string", "integer"];
  return fc.oneof(
    ...types.map((t): fc.Arbitrary<unknown> => {
      switch (t) {
        case "integer":
          return intArb(name, s, world);
        case "number":
          return fc.oneof(
            intArb(name, s, world),
            fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
          );
        case "boolean":
          return fc.boolean();
        case "null":
          return fc.constant(null);
        case "string":
          return stringArb(name, s, world);
        case "array":
          return fc.array(validArb(name, s.items ?? {}, world, depth + 1), {
            maxLength: 4,
            minLength: Math.min(s.minItems ?? 0, 4),
          });
        case "object": {
          const props = Object.entries<any>(s.properties ?? {});
          if (!props.length)
            return fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), {
              maxKeys: 3,
            });
          return fc.record(
            Object.fromEntries(props.map(([k, p]) => [k, validArb(k, p, world, depth + 1)])),
            { requiredKeys: (s.required ?? []).filter((k: string) => s.properties?.[k]) },
          );
        }
        default:
          return fc.constant(null);
      }
    }),
  );
}

// Hostile values. Each list is small and printable; most are exactly what the issue names.
export const WRONG_TYPES = [
  "",
  "null",
  "true",
  "false",
  "[]",
  "{}",
  '"x"',
  "abc",
  "[1,",
  '{"a":',
  "[[[]]]",
  "1.5",
  '["a"]',
  "[{}]",
  "[null]",
  '{"new":{}}',
  "[1,2,3]",
  '[["a","b","c"]]',
];
export const NUMBERS = [
  "1e999",
  "-1e999",
  "Infinity",
  "-Infinity",
  "NaN",
  "9223372036854775807",
  "9223372036854775808",
  "-9223372036854775809",
  "18446744073709551616",
  "9.2e18",
  "-0",
  "0x10",
  "1e-999",
  "2147483648",
  "-2147483649",
  "9007199254740993",
  "01",
  "+1",
  " 1",
  "1 ",
  "1.0",
  "[9223372036854775808]",
  '{"new":9223372036854775808}',
];
export const NULS = [
  "\u0000",
  "a\u0000b",
  '"\\u0000"',
  '["\\u0000"]',
  '"\\ud800"',
  "\ud800",
  "\u202e",
  "\ufeff1",
];
export const WIRE = [
  "%",
  "%zz",
  "%C3%28",
  "%FF",
  "%00",
  "%ED%A0%80",
  "%C0%AF",
  "%E2%82",
  "%%",
  "%2",
  "a%",
  "%u0041",
  "%C3",
  "%F4%90%80%80",
];
/** Narrow texts the issue names: operands of the wrong type for their operator. */
export const HOSTILE_NARROWS = [
  '[{"operator":"id","operand":"abc"}]',
  '[{"operator":"sender","operand":[4]}]',
  '[{"operator":"channel","operand":99999999999}]',
  '[{"operator":"id","operand":9223372036854775808}]',
  '[["id","abc"]]',
  '[{"operator":"near","operand":"x"}]',
  '[{"operator":"dm","operand":"x"}]',
  '[{"operator":"search","operand":"\\u0000"}]',
  '[{"operator":"dm","operand":[2147483648]}]',
  '[{"operator":"is","operand":5}]',
  '[{"operator":"has","operand":[]}]',
  '[{"operator":"id","operand":-1}]',
  '{"operator":"id","operand":"abc"}',
];

export function hostileArb(): fc.Arbitrary<Val> {
  return fc.oneof(
    // Records rather than .map(): fast-check can then shrink the catalog's examples too.
    ...[WRONG_TYPES, NUMBERS, NULS, HOSTILE_NARROWS].map((list) =>
      fc.record({ k: fc.constant("text" as const), s: fc.constantFrom(...list) }),
    ),
    fc.record({ k: fc.constant("wire" as const), s: fc.constantFrom(...WIRE) }),
    fc.record({
      k: fc.constant("deep" as const),
      depth: fc.constantFrom(12_000, 30_000),
      shape: fc.constantFrom(
        "array" as const,
        "object" as const,
        "narrow" as const,
        "mixed" as const,
      ),
    }),
    fc.record({
      k: fc.constant("long" as const),
      n: fc.constantFrom(20_000, 100_000),
      unit: fc.constantFrom("x", "é", "\u0000", "😀", "["),
    }),
    fc.record({ k: fc.constant("v" as const), v: fc.jsonValue({ maxDepth: 2 }) }),
  );
}

// ---------------------------------------------------------------------------------------------
// Transport variants: each list starts with the ordinary choice, so shrinking goes back to it.

export const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "HEAD"];
export const USERS = ["iago", "hamlet", "polonius"] as const;
export type UserName = (typeof USERS)[number];

export const AUTHS = [
  "valid",
  "missing",
  "bearer",
  "not-base64",
  "no-colon",
  "wrong-key",
  "other-users-key",
  "very-long",
  "scheme-only",
  "lowercase-scheme",
  "uppercase-email",
  "nul-in-email",
  "empty-email",
  "extra-colon",
  "non-ascii-email",
  "other-org-user",
  "trailing-garbage",
  "double-space",
  "digest",
  "bot",
  "latin1-bytes",
  "twice",
] as const;
export const HOSTS = [
  "dev",
  "other-org",
  "other-org-uppercase",
  "other-org-port",
  "unknown-subdomain",
  "empty",
  "percent",
  "very-long",
  "bad-port",
  "ipv6",
  "dots",
  "two-hosts",
  "latin1",
  "loopback",
] as const;
export const UAS = [
  "normal",
  "none",
  "long-token",
  "long-words",
  "empty",
  "latin1",
  "slash",
  "mobile",
] as const;
export const CONTENT_TYPES = [
  "natural",
  "none",
  "text/plain",
  "multipart/form-data",
  "multipart/form-data; boundary=",
  "application/json",
  "application/x-www-form-urlencoded; charset=xyz",
  "application/x-www-form-urlencoded; charset=ISO-8859-1",
  "application/json; charset=utf-16",
  "application/json; charset=xyz",
  "application/x-www-form-urlencoded, application/json",
  "application/octet-stream",
  "garbage",
  "",
  "APPLICATION/X-WWW-FORM-URLENCODED",
  "application/x-www-form-urlencoded;;;",
  "application/*",
  "text/json",
  "multipart/mixed; boundary=x",
  'application/x-www-form-urlencoded; charset=utf-8; q="',
] as const;
export const CONTENT_ENCODINGS = [
  "none",
  "gzip",
  "deflate",
  "gzip-uncompressed",
  "xyz",
  "gzip, gzip",
  "deflate-uncompressed",
  "br-uncompressed",
  "identity",
  "GZIP",
  "gzip-truncated",
  "empty",
  "chunked",
] as const;
export const SUFFIXES = ["", "/", "#frag", "#", "?", "?&", "?=", "?#a", "/#/../users/me"] as const;
export const PLACEMENTS = ["natural", "query", "form", "json", "multipart", "split"] as const;
export const BODIES = [
  "fields",
  "json-array",
  "json-string",
  "json-null",
  "json-deep-array",
  "json-deep-object",
  "json-1e999",
  "json-truncated",
  "json-proto",
  "json-bom",
  "json-invalid-utf8",
  "empty",
  "ampersands",
  "lone-percent",
  "binary",
  "utf16",
  "huge-key",
  "many-keys",
  "multipart-unterminated",
  "multipart-file",
] as const;
export const PATH_VALUES = [
  "-1",
  "0",
  "-0",
  "+1",
  "1.5",
  "1e3",
  "0x10",
  "99999999999",
  "2147483648",
  "9223372036854775807",
  "9223372036854775808",
  "18446744073709551616",
  "1e999",
  "abc",
  "%2F",
  "a%2Fb",
  "%00",
  "%zz",
  "%",
  "%C3%28",
  "%20",
  "..",
  ".",
  "1;a=b",
  "1%23frag",
  "1#frag",
  "%E2%80%AE",
  "x".repeat(3000),
];

export interface Plan {
  method: string;
  user: UserName;
  auth: (typeof AUTHS)[number];
  host: (typeof HOSTS)[number];
  ua: (typeof UAS)[number];
  contentType: (typeof CONTENT_TYPES)[number];
  encoding: (typeof CONTENT_ENCODINGS)[number];
  suffix: (typeof SUFFIXES)[number];
  placement: (typeof PLACEMENTS)[number];
  body: (typeof BODIES)[number];
  style: Style;
  path: Val[];
  /** Declared parameters by name; absent = not sent. */
  params: Record<string, Val | undefined>;
  /** Sent after the declared ones: undeclared names, and declared ones again (duplicate keys). */
  extras: [string, Val][];
}

/** Mostly the first choice; otherwise any of the others. Shrinks back to the first. */
function usually<T>(choices: readonly T[], weight = 8): fc.Arbitrary<T> {
  return fc.oneof(
    { withCrossShrink: true },
    { weight, arbitrary: fc.constant(choices[0]!) },
    { weight: 2, arbitrary: fc.constantFrom(...choices.slice(1)) },
  );
}

function valArb(field: Field, world: World): fc.Arbitrary<Val> {
  return fc.oneof(
    { withCrossShrink: true },
    {
      weight: 10,
      arbitrary: fc.record({
        k: fc.constant("v" as const),
        v: validArb(field.name, field.schema, world),
      }),
    },
    { weight: 2, arbitrary: hostileArb() },
  );
}

function pathValArb(field: Field, world: World): fc.Arbitrary<Val> {
  const valid = validArb(field.name, field.schema, world).map((v): Val => ({
    k: "text",
    s: String(v),
  }));
  return fc.oneof(
    { withCrossShrink: true },
    { weight: 4, arbitrary: valid },
    {
      weight: 1,
      arbitrary: fc.record({ k: fc.constant("wire" as const), s: fc.constantFrom(...PATH_VALUES) }),
    },
  );
}

const EXTRA_NAMES = [
  "zzz",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "a[b]",
  "",
  "x".repeat(300),
  "\u0000",
  "é",
  "a b",
  "narrow",
  "anchor",
  "to",
  "content",
];

export function planArb(op: Operation, world: World): fc.Arbitrary<Plan> {
  // Required parameters are sent 9 times in 10, optional ones every other time; shrinking
  // drops them (fc.option shrinks to "not sent").
  const params = Object.fromEntries(
    op.params.map((f) => [
      f.name,
      fc.option(valArb(f, world), { nil: undefined, freq: f.required ? 10 : 2 }),
    ]),
  );
  const names = op.params.length ? op.params.map((f) => f.name) : ["zzz"];
  return fc.record({
    method: usually([op.method, ...METHODS.filter((m) => m !== op.method)]),
    user: usually(USERS, 6),
    auth: usually(AUTHS),
    host: usually(HOSTS),
    ua: usually(UAS),
    contentType: usually(CONTENT_TYPES),
    encoding: usually(CONTENT_ENCODINGS),
    suffix: usually(SUFFIXES, 12),
    placement: usually(PLACEMENTS, 4),
    body: usually(BODIES, 12),
    style: fc.constantFrom<Style>("component", "form", "raw"),
    path: fc.tuple<Val[]>(...op.path.map((f) => pathValArb(f, world))),
    params: fc.record(params),
    extras: fc.array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...EXTRA_NAMES), fc.constantFrom(...names)),
        fc.oneof(
          hostileArb(),
          fc.record({ k: fc.constant("v" as const), v: fc.jsonValue({ maxDepth: 1 }) }),
        ),
      ),
      { maxLength: 2 },
    ),
  });
}

// ---------------------------------------------------------------------------------------------
// From a plan to bytes on the wire

export interface Cred {
  email: string;
  api_key: string;
}

export interface Ctx {
  baseUrl: string;
  /** The development organization's host (its subdomain `zulip` names it). */
  devHost: string;
  users: Record<UserName, Cred>;
  bot: Cred;
  /** The owner of a second organization, served on `otherorg.<devHost>`. */
  otherOrg: Cred & { host: string };
}

export interface WireRequest {
  method: string;
  /** The request target exactly as sent: path, query and (on purpose, sometimes) a fragment. */
  target: string;
  headers: [string, string][];
  body?: Buffer;
  /** Which names were sent, and where (for the missing-parameter check). */
  sent: { query: string[]; body: string[] };
}

const BOUNDARY = "fuzzBoundary7MA4YWxkTrZu0gW";
const HEAD_LIMIT = 15_000; // Node refuses a head over 16 KiB itself, with a bare 431.

/** A fixed pseudo-random token: a long User-Agent that compresses badly (as real ones do not). */
function noise(n: number, seed = 12345): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let x = seed;
  let out = "";
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += chars[(x >>> 16) % chars.length];
  }
  return out;
}
const LONG_TOKEN_UA = noise(3200) + "/1.0";

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

function authHeader(plan: Plan, ctx: Ctx): string | undefined {
  const me = ctx.users[plan.user];
  const other = plan.user === "iago" ? ctx.users.hamlet : ctx.users.iago;
  const valid = b64(`${me.email}:${me.api_key}`);
  switch (plan.auth) {
    case "valid":
      return `Basic ${valid}`;
    case "missing":
      return undefined;
    case "bearer":
      return `Bearer ${me.api_key}`;
    case "not-base64":
      return "Basic !!!***###";
    case "no-colon":
      return `Basic ${b64(me.email + me.api_key)}`;
    case "wrong-key":
      return `Basic ${b64(`${me.email}:${"a".repeat(32)}`)}`;
    case "other-users-key":
      return `Basic ${b64(`${me.email}:${other.api_key}`)}`;
    case "very-long":
      return `Basic ${"QUFB".repeat(1000)}`;
    case "scheme-only":
      return "Basic";
    case "lowercase-scheme":
      return `basic ${valid}`;
    case "uppercase-email":
      return `Basic ${b64(`${me.email.toUpperCase()}:${me.api_key}`)}`;
    case "nul-in-email":
      return `Basic ${b64(`${me.email.replace("@", "\u0000@")}:${me.api_key}`)}`;
    case "empty-email":
      return `Basic ${b64(`:${me.api_key}`)}`;
    case "extra-colon":
      return `Basic ${b64(`${me.email}:${me.api_key}:x`)}`;
    case "non-ascii-email":
      return `Basic ${b64(`ïago\u202e@zulip.com:${me.api_key}`)}`;
    case "other-org-user":
      return `Basic ${b64(`${ctx.otherOrg.email}:${ctx.otherOrg.api_key}`)}`;
    case "trailing-garbage":
      return `Basic ${valid} x`;
    case "double-space":
      return `Basic  ${valid}`;
    case "digest":
      return `Digest username="${me.email}", realm="zulip", nonce="x"`;
    case "bot":
      return `Basic ${b64(`${ctx.bot.email}:${ctx.bot.api_key}`)}`;
    case "latin1-bytes":
      return "Basic \xe9\xff\xe9";
    case "twice":
      return `Basic ${valid}`; // and a second, wrong one (see compile)
  }
}

function hostHeader(plan: Plan, ctx: Ctx): string {
  const dev = ctx.devHost;
  switch (plan.host) {
    case "dev":
      return dev;
    case "other-org":
      return ctx.otherOrg.host;
    case "other-org-uppercase":
      return ctx.otherOrg.host.toUpperCase();
    case "other-org-port":
      return `${ctx.otherOrg.host}:9991`;
    case "unknown-subdomain":
      return `nosuchorg.${dev}`;
    case "empty":
      return "";
    case "percent":
      return "%%%";
    case "very-long":
      return `${"a".repeat(2000)}.${dev}`;
    case "bad-port":
      return `${dev}:notaport`;
    case "ipv6":
      return "[::1]:80";
    case "dots":
      return "...";
    case "two-hosts":
      return `${dev}, ${ctx.otherOrg.host}`;
    case "latin1":
      return `\xe9t\xe9.${dev}`;
    case "loopback":
      return "127.0.0.1";
  }
}

function userAgent(plan: Plan): string | undefined {
  switch (plan.ua) {
    case "normal":
      return "ZulipFuzz/1.0 (fast-check)";
    case "none":
      return undefined;
    case "long-token":
      return LONG_TOKEN_UA;
    case "long-words":
      return "ZulipMobile/27.0 " + "(word) ".repeat(500);
    case "empty":
      return "";
    case "latin1":
      return "\xe9\xff/1.0";
    case "slash":
      return "/";
    case "mobile":
      return "ZulipMobile/27.192 (Android 14)";
  }
}

/** Shortens a value so that its encoded form fits `budget` bytes (query strings only). The
 * same for every style, so that requests differing only in style carry the same value. */
function clampForQuery(v: Val, budget: number): Val {
  if (v.k === "wire") return v;
  const size = Math.max(encodeVal(v, "component").length, encodeVal(v, "form").length);
  if (size <= budget) return v;
  const factor = budget / size;
  if (v.k === "deep") return { ...v, depth: Math.max(1, Math.floor(v.depth * factor)) };
  if (v.k === "long") return { ...v, n: Math.max(1, Math.floor(v.n * factor)) };
  const text = textOf(v);
  return { k: "text", s: text.slice(0, Math.floor(text.length * factor)) };
}

function formBody(pairs: [string, Val][], style: Style): Buffer {
  return Buffer.from(
    pairs.map(([k, v]) => `${encode(k, style)}=${encodeVal(v, style)}`).join("&"),
    "latin1",
  );
}

function jsonBody(pairs: [string, Val][], op: Operation, more = ""): string {
  const fields = new Map(op.params.map((f) => [f.name, f]));
  const entries = pairs.map(([k, v]) => `${JSON.stringify(k)}:${jsonOf(fields.get(k), v)}`);
  if (more) entries.push(more);
  return `{${entries.join(",")}}`;
}

function multipartBody(pairs: [string, Val][]): Buffer {
  const chunks: Buffer[] = [];
  for (const [k, v] of pairs) {
    const name = k.replace(/"/g, "%22").replace(/[\r\n]/g, " ");
    chunks.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`,
        "utf8",
      ),
    );
    // Multipart values are not percent-decoded: a wire value goes as the bytes its escapes name.
    chunks.push(
      v.k === "wire"
        ? Buffer.from(
            v.s.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) =>
              String.fromCharCode(parseInt(h, 16)),
            ),
            "latin1",
          )
        : Buffer.from(textOf(v), "utf8"),
    );
    chunks.push(Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

const SUFFIX_PARTS: Record<Plan["suffix"], { slash: boolean; query: string; fragment: string }> = {
  "": { slash: false, query: "", fragment: "" },
  "/": { slash: true, query: "", fragment: "" },
  "#frag": { slash: false, query: "", fragment: "#frag" },
  "#": { slash: false, query: "", fragment: "#" },
  "?": { slash: false, query: "?", fragment: "" },
  "?&": { slash: false, query: "?&", fragment: "" },
  "?=": { slash: false, query: "?=", fragment: "" },
  "?#a": { slash: false, query: "?", fragment: "#a" },
  "/#/../users/me": { slash: true, query: "", fragment: "#/../users/me" },
};

export function compile(op: Operation, plan: Plan, ctx: Ctx): WireRequest {
  const headers: [string, string][] = [["Host", hostHeader(plan, ctx)]];
  const auth = authHeader(plan, ctx);
  if (auth !== undefined) headers.push(["Authorization", auth]);
  if (plan.auth === "twice")
    headers.push([
      "Authorization",
      `Basic ${b64(`${ctx.users[plan.user].email}:${"a".repeat(32)}`)}`,
    ]);
  const ua = userAgent(plan);
  if (ua !== undefined) headers.push(["User-Agent", ua]);

  let i = 0;
  const path =
    spec.basePath +
    op.template.replace(/\{\w+\}/g, () => {
      const v = plan.path[i++]!;
      return v.k === "wire" ? v.s : encode(textOf(v), "component");
    });
  const suffix = SUFFIX_PARTS[plan.suffix];

  // Where the parameters go.
  const pairs: [string, Val][] = [
    ...Object.entries(plan.params).filter((e): e is [string, Val] => e[1] !== undefined),
    ...plan.extras,
  ];
  const placement = plan.placement === "natural" ? (op.hasBody ? "form" : "query") : plan.placement;
  const inQuery = pairs.filter(
    (_, n) => placement === "query" || (placement === "split" && n % 2 === 0),
  );
  const inBody = pairs.filter((p) => !inQuery.includes(p));
  const bodyFormat = placement === "json" || placement === "multipart" ? placement : "form";

  // The body, and the content type that goes with it.
  let body: Buffer | undefined;
  let naturalType: string | undefined;
  const jsonType = "application/json";
  const formType = "application/x-www-form-urlencoded";
  switch (plan.body) {
    case "fields":
      if (
        inBody.length ||
        (placement !== "query" && plan.method !== "GET" && plan.method !== "HEAD")
      ) {
        if (bodyFormat === "json")
          [body, naturalType] = [Buffer.from(jsonBody(inBody, op), "utf8"), jsonType];
        else if (bodyFormat === "multipart")
          [body, naturalType] = [
            multipartBody(inBody),
            `multipart/form-data; boundary=${BOUNDARY}`,
          ];
        else [body, naturalType] = [formBody(inBody, plan.style), formType];
      }
      break;
    case "json-array":
      [body, naturalType] = [Buffer.from("[1,2]"), jsonType];
      break;
    case "json-string":
      [body, naturalType] = [Buffer.from('"type=stream"'), jsonType];
      break;
    case "json-null":
      [body, naturalType] = [Buffer.from("null"), jsonType];
      break;
    case "json-deep-array":
      [body, naturalType] = [Buffer.from(deepJson(20_000, "array")), jsonType];
      break;
    case "json-deep-object":
      [body, naturalType] = [
        Buffer.from(jsonBody(inBody, op, `"zzz":${deepJson(20_000, "object")}`)),
        jsonType,
      ];
      break;
    case "json-1e999":
      [body, naturalType] = [
        Buffer.from(jsonBody(inBody, op, '"zzz":1e999,"yyy":-1e999')),
        jsonType,
      ];
      break;
    case "json-truncated":
      [body, naturalType] = [Buffer.from('{"a":'), jsonType];
      break;
    case "json-proto":
      [body, naturalType] = [
        Buffer.from(
          jsonBody(inBody, op, '"__proto__":{"is_admin":true},"constructor":{"prototype":{"x":1}}'),
        ),
        jsonType,
      ];
      break;
    case "json-bom":
      [body, naturalType] = [Buffer.from("\ufeff" + jsonBody(inBody, op), "utf8"), jsonType];
      break;
    case "json-invalid-utf8":
      [body, naturalType] = [
        Buffer.concat([
          Buffer.from(jsonBody(inBody, op, '"zzz":"').slice(0, -1)),
          Buffer.from('\xc3\x28\xff"}', "latin1"),
        ]),
        jsonType,
      ];
      break;
    case "empty":
      [body, naturalType] = [Buffer.alloc(0), formType];
      break;
    case "ampersands":
      [body, naturalType] = [Buffer.from("&&&=&==&"), formType];
      break;
    case "lone-percent":
      [body, naturalType] = [Buffer.from("%&a=%zz&%C3%28=%FF&=%"), formType];
      break;
    case "binary":
      [body, naturalType] = [Buffer.from("1f8b0800000000000003ffff00c3280000ff", "hex"), formType];
      break;
    case "utf16":
      [body, naturalType] = [
        Buffer.from(formBody(inBody, plan.style).toString("latin1"), "utf16le"),
        formType,
      ];
      break;
    case "huge-key":
      [body, naturalType] = [Buffer.from("k".repeat(200_000) + "=1"), formType];
      break;
    case "many-keys":
      [body, naturalType] = [
        Buffer.from(Array.from({ length: 20_000 }, (_, n) => `k${n}=${n}`).join("&")),
        formType,
      ];
      break;
    case "multipart-unterminated":
      [body, naturalType] = [
        multipartBody(inBody).subarray(0, -`--${BOUNDARY}--\r\n`.length - 2),
        `multipart/form-data; boundary=${BOUNDARY}`,
      ];
      break;
    case "multipart-file":
      [body, naturalType] = [
        Buffer.concat([
          Buffer.from(
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n`,
          ),
          multipartBody(inBody),
        ]),
        `multipart/form-data; boundary=${BOUNDARY}`,
      ];
      break;
  }

  const contentType =
    plan.contentType === "natural"
      ? naturalType
      : plan.contentType === "none"
        ? undefined
        : plan.contentType;
  if (contentType !== undefined) headers.push(["Content-Type", contentType]);

  if (plan.encoding === "chunked")
    headers.push(["Transfer-Encoding", "chunked"]); // Node chunks the body; no Content-Length
  else if (plan.encoding !== "none") {
    const raw = body ?? Buffer.alloc(0);
    const [header, bytes]: [string, Buffer] =
      plan.encoding === "gzip"
        ? ["gzip", gzipSync(raw)]
        : plan.encoding === "deflate"
          ? ["deflate", deflateSync(raw)]
          : plan.encoding === "gzip-uncompressed"
            ? ["gzip", raw]
            : plan.encoding === "gzip, gzip"
              ? ["gzip, gzip", gzipSync(gzipSync(raw))]
              : plan.encoding === "deflate-uncompressed"
                ? ["deflate", raw]
                : plan.encoding === "br-uncompressed"
                  ? ["br", raw]
                  : plan.encoding === "GZIP"
                    ? ["GZIP", gzipSync(raw)]
                    : plan.encoding === "gzip-truncated"
                      ? ["gzip", gzipSync(raw).subarray(0, Math.max(4, raw.length >> 1))]
                      : plan.encoding === "empty"
                        ? ["", raw]
                        : [plan.encoding, raw];
    headers.push(["Content-Encoding", header]);
    body = bytes;
  }
  if (body === undefined && plan.method !== "GET" && plan.method !== "HEAD") body = Buffer.alloc(0);
  if (body !== undefined && plan.encoding !== "chunked")
    headers.push(["Content-Length", String(body.length)]);

  // The query string gets what is left of Node's header limit.
  const headBytes =
    headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0) + path.length + 64;
  const budget = Math.max(200, HEAD_LIMIT - headBytes - 200);
  const big = inQuery.filter(([, v]) => v.k !== "wire" && textOf(v).length > 500).length || 1;
  const query = inQuery
    .map(
      ([k, v]) =>
        `${encode(k, plan.style)}=${encodeVal(clampForQuery(v, Math.max(50, budget / big - 100)), plan.style)}`,
    )
    .join("&");
  let target = path + (suffix.slash ? "/" : "");
  if (suffix.query || query)
    target += (suffix.query || "?") + (suffix.query.length > 1 && query ? "&" : "") + query;
  target += suffix.fragment;

  return {
    method: plan.method,
    target,
    headers,
    body,
    sent: { query: inQuery.map(([k]) => k), body: inBody.map(([k]) => k) },
  };
}

// ---------------------------------------------------------------------------------------------
// Sending and judging

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Set when there was no HTTP answer (connection reset, timeout). */
  error?: string;
}

export function send(baseUrl: string, req: WireRequest, timeoutMs = 15_000): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const r = http.request(
      {
        host: hostname,
        port,
        method: req.method,
        path: req.target,
        headers: req.headers.flat(),
        setHost: false,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on("error", (e) =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            error: `response aborted: ${e.message}`,
          }),
        );
      },
    );
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on("error", (e) =>
      resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: e.message }),
    );
    r.end(req.body);
  });
}

export function parseJson(a: Answer): any {
  try {
    return JSON.parse(a.body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/**
 * The checks every answer must pass: an HTTP answer; no 5xx;
 * a JSON envelope `{result, msg}` whose result agrees with the status; and, where the request
 * names a path the checker can map to an operation, the spec's declared response.
 */
export function judge(op: Operation, req: WireRequest, a: Answer, baseUrl: string): string[] {
  if (a.error) return [`no HTTP answer: ${a.error}`];
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`server error ${a.status}`);
  const type = String(a.headers["content-type"] ?? "");
  if (!/^application\/json\b/i.test(type))
    problems.push(`Content-Type is ${JSON.stringify(type)}, not JSON`);
  if (req.method === "HEAD") return problems;
  const body = parseJson(a);
  if (body === undefined) return [...problems, "body is not JSON"];
  if (
    typeof body !== "object" ||
    body === null ||
    Array.isArray(body) ||
    (body.result !== "success" && body.result !== "error") ||
    typeof body.msg !== "string"
  )
    return [...problems, "body is not a {result, msg} envelope"];
  if (a.status < 300 !== (body.result === "success"))
    problems.push(`result "${body.result}" with status ${a.status}`);
  if (problems.length || req.method === "OPTIONS") return problems;
  const beforeFragment = req.target.split("#")[0]!;
  const pathOnly = beforeFragment.split("?")[0]!;
  // Checked against the spec: answers to the operation itself, and 405s to a method its path
  // does not have, on a path the checker maps as the server does (no trailing slash, no dot
  // segments; the fragment is dropped, as the URL parser does).
  const matched = Boolean(doc.paths[op.template]?.[req.method.toLowerCase()]);
  const fits = !pathOnly.endsWith("/") && !pathOnly.split("/").some((s) => s === "." || s === "..");
  if (fits && (matched || a.status === 405)) {
    // The checker maps `PATCH /messages/matches_narrow` to `PATCH /messages/{message_id}`; a 405
    // is checked as an answer to a method no path has (the MethodNotAllowedError body).
    const problem = checkResponse(
      matched ? req.method : "TRACE",
      baseUrl + beforeFragment,
      a.status,
      body,
    );
    if (problem)
      problems.push(
        `spec: ${problem.slice(0, 600)}${req.target.includes("#") ? " (checked without the #fragment, which is no part of the path)" : ""}`,
      );
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Failure reports

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);
const printable = (s: string) =>
  s.replace(/[\x00-\x1f\x7f-\uffff]/g, (c) =>
    c.charCodeAt(0) < 0x100 ? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}` : c,
  );

/** A shell-quoted `$'…'` string of bytes. */
function shellBytes(b: Buffer): string {
  let out = "";
  for (const x of b)
    out +=
      x >= 0x20 && x < 0x7f && x !== 0x27 && x !== 0x5c
        ? String.fromCharCode(x)
        : `\\x${x.toString(16).padStart(2, "0")}`;
  return `$'${out}'`;
}

export function describeExchange(req: WireRequest, a: Answer | undefined, baseUrl: string): string {
  const lines = [`> ${req.method} ${printable(clip(req.target, 400))}`];
  for (const [k, v] of req.headers) lines.push(`> ${k}: ${printable(clip(v, 200))}`);
  if (req.body?.length)
    lines.push(
      `> (body, ${req.body.length} bytes) ${printable(clip(req.body.toString("latin1"), 400))}`,
    );
  if (a) {
    lines.push(
      a.error
        ? `< no answer: ${a.error}`
        : `< ${a.status} ${a.headers["content-type"] ?? "(no Content-Type)"}`,
    );
    if (a.body.length) lines.push(`< ${printable(clip(a.body.toString("utf8"), 600))}`);
  }
  const small =
    req.target.length < 2000 &&
    (req.body?.length ?? 0) < 2000 &&
    req.headers.every(([, v]) => v.length < 2000);
  if (small) {
    // (`-H 'Name;'` sends an empty header; `-H 'Name:'` removes one curl would add.)
    const curlHeaders = req.headers
      .filter(([k]) => k !== "Content-Length")
      .map(
        ([k, v]) => `-H ${shellBytes(Buffer.from(v === "" ? `${k};` : `${k}: ${v}`, "latin1"))}`,
      );
    if (!req.headers.some(([k]) => k === "Content-Type") && req.body)
      curlHeaders.push("-H 'Content-Type:'");
    if (!req.headers.some(([k]) => k === "User-Agent")) curlHeaders.push("-H 'User-Agent:'");
    // --request-target sends the target as it is (curl itself would drop a fragment).
    lines.push(
      `curl -sS -i ${req.method === "HEAD" ? "-I" : `-X ${req.method}`} --request-target ${shellBytes(Buffer.from(req.target, "latin1"))} ${baseUrl} ${curlHeaders.join(" ")}${req.body ? ` --data-binary ${shellBytes(req.body)}` : ""}`,
    );
  }
  return lines.join("\n");
}
