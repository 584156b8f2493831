/**
 * The bundled spec (generated/openapi.json) is the single source the server runs from: the
 * validator, route registration, the JSON-in-form decoder and the list of unsupported
 * parameters are all derived here, once, at start-up.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const SPEC_PATH = fileURLToPath(new URL("../../generated/openapi.json", import.meta.url));
export const HTTP_METHODS = [
  "get",
  "put",
  "post",
  "delete",
  "options",
  "head",
  "patch",
  "trace",
] as const;

export interface OperationInfo {
  operationId: string;
  method: string;
  /** The path template as written in the spec, e.g. `/users/{user_id}`. */
  specPath: string;
  /** The template the router and validator use (differs only for merged templates). */
  routePath: string;
  /** Routing parameter name → the operation's own name (see mergeIdenticalTemplates). */
  pathParamRenames: Record<string, string>;
  pathParamTypes: Record<string, string>;
  /** Query and body parameter names: anything else a client sends is reported as ignored. */
  knownParams: Set<string>;
  /**
   * Query parameters sent as JSON text (`content: application/json`) → the JSON pointer of their
   * schema. They are decoded and validated strictly by http/json-params.ts, not by the validator.
   */
  jsonQueryParams: Map<string, string>;
  /**
   * Query parameters whose integer text is clamped into a range before validation
   * (`x-zulip-clamp`, Zulip's parse_anchor_value), with the other strings they take.
   */
  clampedParams: Map<string, ClampedParam>;
  /** Form fields sent as JSON text: the properties with `encoding.contentType: application/json`. */
  jsonBodyFields: Map<string, { allowsString: boolean }>;
  /** Parameters whose enum errors use Zulip's check_string_in wording. */
  inListParams: Set<string>;
  /** Parameters whose enum errors have their own text (`x-zulip-enum-error`), `{value}` the value sent. */
  enumErrors: Map<string, string>;
  hasRequestBody: boolean;
  requiresAuth: boolean;
  /**
   * The role Zulip's view decorator demands (`x-zulip-requires-role: administrator` for
   * `require_realm_admin`), checked right after authentication and so before any parameter, as
   * the decorator wraps the view's parameter parsing.
   */
  requiresRole: "administrator" | null;
}

export interface ClampedParam {
  minimum: bigint;
  maximum: bigint;
  /** The string values of the parameter's union (`newest`, …), taken as they are. */
  strings: Set<string>;
}

export interface LoadedSpec {
  doc: any;
  /** `/api/v1`: the path of the spec's first server URL. */
  basePath: string;
  /** The document given to express-openapi-validator (identical templates merged). */
  validatorDoc: any;
  operations: Map<string, OperationInfo>;
  byRoute: Map<string, OperationInfo>;
}

let cached: LoadedSpec | undefined;

export function loadSpec(path = SPEC_PATH): LoadedSpec {
  if (cached && path === SPEC_PATH) return cached;
  const doc = JSON.parse(readFileSync(path, "utf8"));
  const validatorDoc = structuredClone(doc);
  // The validator matches paths under its servers' paths: only `/api/v1` (http/json-prefix.ts
  // rewrites `/json` to it before the validator sees the request).
  validatorDoc.servers = doc.servers.slice(0, 1);
  prepareQueryParams(validatorDoc);
  const { renames, servedBy } = mergeIdenticalTemplates(validatorDoc);
  const operations = new Map<string, OperationInfo>();
  const byRoute = new Map<string, OperationInfo>();
  for (const [routePath, item] of Object.entries<any>(validatorDoc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const specPath = renames.get(op.operationId)?.specPath ?? routePath;
      const info = describeOperation(
        doc,
        doc.paths[specPath],
        doc.paths[specPath][method],
        method,
        specPath,
        routePath,
      );
      info.pathParamRenames = renames.get(op.operationId)?.names ?? {};
      operations.set(info.operationId, info);
      byRoute.set(`${method.toUpperCase()} ${routePath}`, info);
    }
  }
  for (const [operationId, { method, target }] of servedBy) {
    const { specPath, names } = renames.get(operationId)!;
    const info = describeOperation(
      doc,
      doc.paths[specPath],
      doc.paths[specPath][method],
      method,
      specPath,
      target,
    );
    info.pathParamRenames = names;
    operations.set(operationId, info);
  }
  const basePath = new URL(doc.servers[0].url).pathname.replace(/\/$/, "");
  const loaded = { doc, basePath, validatorDoc, operations, byRoute };
  if (path === SPEC_PATH) cached = loaded;
  return loaded;
}

/** The operation the validator matched for this request (its `req.openapi`), if any. */
export function operationFor(spec: LoadedSpec, req: { method: string }): OperationInfo | undefined {
  const route: string | undefined = (req as { openapi?: { openApiRoute?: string } }).openapi
    ?.openApiRoute;
  return route === undefined
    ? undefined
    : spec.byRoute.get(`${req.method} ${route.slice(spec.basePath.length)}`);
}

/** Follows a local `$ref` (the bundle only has refs into #/components). */
export function deref(doc: any, obj: any): any {
  let cur = obj;
  while (cur && typeof cur === "object" && typeof cur.$ref === "string") {
    cur = cur.$ref
      .slice(2)
      .split("/")
      .reduce((o: any, k: string) => o?.[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  }
  return cur;
}

function schemaAllowsOnlyString(doc: any, schema: any): boolean {
  const s = deref(doc, schema);
  if (!s) return true;
  if (s.type === "string") return true;
  if (Array.isArray(s.type)) return s.type.length === 1 && s.type[0] === "string";
  return false;
}

function schemaAllowsString(doc: any, schema: any): boolean {
  const s = deref(doc, schema);
  if (!s) return true;
  if (s.type === "string") return true;
  if (Array.isArray(s.type)) return s.type.includes("string");
  for (const key of ["oneOf", "anyOf"])
    if (Array.isArray(s[key])) return s[key].some((b: any) => schemaAllowsString(doc, b));
  return false;
}

function describeOperation(
  doc: any,
  item: any,
  op: any,
  method: string,
  specPath: string,
  routePath: string,
): OperationInfo {
  // Each parameter with the JSON pointer of where it is written (a $ref's target, or in place).
  const pointer = (...tokens: string[]) =>
    "#/" + tokens.map((t) => t.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
  const located = [
    ...(item.parameters ?? []).map((p: any, i: number) => ({
      raw: p,
      at: pointer("paths", specPath, "parameters", String(i)),
    })),
    ...(op.parameters ?? []).map((p: any, i: number) => ({
      raw: p,
      at: pointer("paths", specPath, method, "parameters", String(i)),
    })),
  ];
  const knownParams = new Set<string>();
  const jsonQueryParams = new Map<string, string>();
  const pathParamTypes: Record<string, string> = {};
  const clampedParams = new Map<string, ClampedParam>();
  for (const { raw, at } of located) {
    const p = deref(doc, raw);
    const clamp = p["x-zulip-clamp"];
    if (p.in === "query" && clamp) {
      const branches: any[] = (deref(doc, p.schema)?.oneOf ?? []).map((b: any) => deref(doc, b));
      const strings = new Set<string>(
        branches.flatMap((b) => (b.type === "string" ? (b.enum ?? []) : [])),
      );
      clampedParams.set(p.name, {
        minimum: BigInt(clamp.minimum),
        maximum: BigInt(clamp.maximum),
        strings,
      });
    }
    if (p.in === "path") pathParamTypes[p.name] = deref(doc, p.schema)?.type ?? "string";
    else knownParams.add(p.name);
    if (p.in === "query" && p.content?.["application/json"])
      jsonQueryParams.set(p.name, `${raw.$ref ?? at}/content/application~1json/schema`);
  }
  const jsonBodyFields = new Map<string, { allowsString: boolean }>();
  const body = deref(doc, op.requestBody);
  const form = body?.content?.["application/x-www-form-urlencoded"];
  if (form) {
    const schema = deref(doc, form.schema);
    for (const [name, propSchema] of Object.entries<any>(schema?.properties ?? {})) {
      knownParams.add(name);
      const encoded = form.encoding?.[name]?.contentType === "application/json";
      // A non-string field without an `encoding` entry is still JSON text on the wire
      // (Zulip's Json[int], Json[bool]); spec.test.ts insists the entry is written.
      if (encoded || !schemaAllowsOnlyString(doc, propSchema))
        jsonBodyFields.set(name, { allowsString: schemaAllowsString(doc, propSchema) });
    }
  }
  const security = op.security ?? doc.security ?? [];
  return {
    operationId: op.operationId,
    method,
    specPath,
    routePath,
    pathParamRenames: {},
    pathParamTypes,
    knownParams,
    jsonQueryParams,
    clampedParams,
    jsonBodyFields,
    inListParams: new Set(op["x-zulip-in-list"] ?? []),
    enumErrors: new Map(Object.entries<string>(op["x-zulip-enum-error"] ?? {})),
    hasRequestBody: Boolean(body),
    requiresAuth: security.length > 0,
    requiresRole: op["x-zulip-requires-role"] ?? null,
  };
}

/**
 * Query parameters as the validator sees them. It refuses RFC 3986 reserved characters
 * (`+ [ ] : "` …) in a raw query value unless its parameter says `allowReserved`, yet real
 * clients send them unencoded: `URLSearchParams`, python-zulip-api and `curl --data-urlencode`
 * write spaces as `+`, JSON narrows keep their brackets, queue ids their colon. Zulip reads any
 * percent- or plus-encoded text, so every query parameter is read that way; the published spec
 * keeps the default serialization.
 */
function prepareQueryParams(doc: any) {
  const mark = (p: any) => {
    if (!p || typeof p !== "object" || p.in !== "query") return;
    p.allowReserved = true;
    // The validator would coerce inside a decoded JSON value (`true` passing as the string
    // "true"), which Zulip's Json[...] never does: http/json-params.ts decodes and checks these
    // strictly before the validator runs, and the validator takes the decoded value as it is.
    if (p.content?.["application/json"]) {
      delete p.content;
      p.schema = {};
    }
  };
  for (const p of Object.values<any>(doc.components?.parameters ?? {})) mark(p);
  for (const item of Object.values<any>(doc.paths)) {
    for (const p of item.parameters ?? []) mark(p);
    for (const method of HTTP_METHODS) for (const p of item[method]?.parameters ?? []) mark(p);
  }
}

/**
 * Zulip serves `GET /users/{email}` and `PATCH /users/{user_id}`, telling them apart by whether
 * the segment is numeric. OpenAPI calls such templates identical and the validator matches
 * only the first, so the validator gets one path item holding every method, each operation's
 * path parameters renamed to the shared template's names. The route wrapper renames them back.
 * When both have the same method, the email operation must name the ID one in
 * `x-numeric-segment-operation` and answer numeric segments as it does.
 */
function mergeIdenticalTemplates(doc: any) {
  const renames = new Map<string, { specPath: string; names: Record<string, string> }>();
  /** Operations without a route: the operation of the same method at `target` serves them. */
  const servedBy = new Map<string, { method: string; target: string }>();
  const shapeOf = (p: string) => p.replace(/\{[^}]+\}/g, "{}");
  const paramNames = (p: string) => [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const firstByShape = new Map<string, string>();
  for (const path of Object.keys(doc.paths)) {
    const target = firstByShape.get(shapeOf(path));
    if (!target) {
      firstByShape.set(shapeOf(path), path);
      continue;
    }
    const from = paramNames(path);
    const to = paramNames(target);
    const item = doc.paths[path];
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const served = doc.paths[target][method]?.["x-numeric-segment-operation"] === op.operationId;
      if (doc.paths[target][method] && !served)
        throw new Error(`${method} ${path} clashes with ${method} ${target}`);
      const names: Record<string, string> = {};
      const rename = (p: any) => {
        const param = structuredClone(deref(doc, p));
        const i = param.in === "path" ? from.indexOf(param.name) : -1;
        if (i >= 0) {
          names[to[i]!] = param.name;
          param.name = to[i];
        }
        return param;
      };
      const merged = {
        ...op,
        parameters: [...(item.parameters ?? []), ...(op.parameters ?? [])].map(rename),
      };
      // An operation on an email segment that names the ID operation it also serves (Zulip's
      // PATCH /users/{email} beside /users/{user_id}) takes every segment: its handler treats a
      // numeric one as the ID, with the same body, so the ID operation keeps no route of its own.
      if (served) servedBy.set(op.operationId, { method, target });
      else doc.paths[target][method] = merged;
      renames.set(op.operationId, { specPath: path, names });
    }
    // Path-level parameters of the target apply to every method; move them onto its own operations.
    const targetItem = doc.paths[target];
    if (targetItem.parameters) {
      for (const method of HTTP_METHODS) {
        const op = targetItem[method];
        if (op && !renames.has(op.operationId))
          op.parameters = [...targetItem.parameters, ...(op.parameters ?? [])];
      }
      delete targetItem.parameters;
    }
    delete doc.paths[path];
  }
  return { renames, servedBy };
}
