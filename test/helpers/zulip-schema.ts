/**
 * Zulip's own OpenAPI document (/work/shared/reference/zulip-openapi.yaml, copied into
 * test/fixtures): validates what we return against Zulip's schemas, which are stricter than
 * ours in places (additionalProperties: false). OpenAPI 3.0: `nullable`, draft-07 otherwise.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject } from "ajv";
import { parse } from "yaml";

const path = fileURLToPath(new URL("../fixtures/zulip-openapi.yaml", import.meta.url));
export const zulipDoc = parse(readFileSync(path, "utf8")) as {
  components: { schemas: Record<string, Record<string, unknown>> };
  paths: Record<string, Record<string, Record<string, unknown>>>;
};

/** OpenAPI 3.0's `nullable: true` as JSON Schema (a null type, or a null alternative). */
function withoutNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNullable);
  if (node === null || typeof node !== "object") return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, withoutNullable(v)]));
  if (nullable !== true) return out;
  if (typeof out.type === "string") {
    out.type = [out.type, "null"];
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

/**
 * `allOf` of object parts merged into one object schema, as Zulip's own test suite reads its
 * document (openapi.py validate_against_openapi_schema): otherwise a part's
 * `additionalProperties: false` rejects every property of the other parts.
 */
function mergeAllOf(node: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((n) => mergeAllOf(n, schemas));
  if (node === null || typeof node !== "object") return node;
  const obj = Object.fromEntries(
    Object.entries(node as Record<string, unknown>).map(([k, v]) => [k, mergeAllOf(v, schemas)]),
  );
  if (!Array.isArray(obj.allOf)) return obj;
  const deref = (s: Record<string, unknown>): Record<string, unknown> =>
    typeof s.$ref === "string"
      ? deref(mergeAllOf(schemas[s.$ref.split("/").pop()!], schemas) as Record<string, unknown>)
      : s;
  const { allOf, ...rest } = obj as { allOf: Record<string, unknown>[] } & Record<string, unknown>;
  const merged: Record<string, unknown> = { ...rest, properties: {}, required: [] };
  for (const part of [...allOf.map(deref), rest as Record<string, unknown>]) {
    Object.assign(merged.properties as object, part.properties ?? {});
    (merged.required as string[]).push(...((part.required as string[]) ?? []));
    if (part.additionalProperties !== undefined)
      merged.additionalProperties = part.additionalProperties;
    if (part.type !== undefined) merged.type = part.type;
  }
  return merged;
}

const schemas = withoutNullable(zulipDoc.components.schemas) as Record<string, unknown>;
const ajv = new Ajv({
  strict: false,
  allErrors: true,
  validateFormats: false,
  validateSchema: false,
});
ajv.addSchema({ components: { schemas: mergeAllOf(schemas, schemas) } }, "zulip");

/** Every violation of Zulip's schema `name` (a components/schemas entry) by `value`, as readable lines. */
export function zulipViolations(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`zulip#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name} in Zulip's document`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (e: ErrorObject) =>
      `${e.instancePath || "/"} ${e.message}${e.params && "additionalProperty" in e.params ? `: ${String(e.params.additionalProperty)}` : ""}`,
  );
}

/** The top-level properties of a Zulip object schema, allOf parts included. */
export function zulipProperties(name: string): Record<string, { description?: string }> {
  const deref = (s: Record<string, unknown>): Record<string, unknown> => {
    while (typeof s.$ref === "string") s = zulipDoc.components.schemas[s.$ref.split("/").pop()!]!;
    return s;
  };
  const out: Record<string, { description?: string }> = {};
  const walk = (s: Record<string, unknown>) => {
    s = deref(s);
    for (const part of (s.allOf as Record<string, unknown>[] | undefined) ?? []) walk(part);
    Object.assign(out, s.properties ?? {});
  };
  walk(zulipDoc.components.schemas[name]!);
  return out;
}
