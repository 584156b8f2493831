/**
 * Zulip's own OpenAPI document (test/fixtures/zulip-openapi.yaml, a copy of the reference's,
 * feature level 420, read by zulip-schema.ts), its event schemas compiled with ajv so tests can check what we send against Zulip's schemas, not only ours.
 *
 * The document is OpenAPI 3.0 as a Go generator left it: `nullable: true` (not JSON Schema), and
 * Zulip's `allOf: [Base, {additionalProperties: false, properties: {…}}]` extensions, which Zulip
 * itself reads as one closed object with the union of the fields (zerver/openapi/openapi.py,
 * naively_merge_allOf_dict). Both are rewritten here into plain JSON Schema before compiling.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { zulipDoc } from "./zulip-schema.ts";

type Schema = Record<string, unknown> & {
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  type?: string | string[];
  enum?: unknown[];
  nullable?: boolean;
};

let compiled: { ajv: Ajv; schemas: Record<string, Schema> } | undefined;

function load() {
  if (compiled) return compiled;
  const raw = zulipDoc.components.schemas as Record<string, Schema>;
  const deref = (s: Schema): Schema => {
    while (s.$ref) s = raw[s.$ref.split("/").pop()!]!;
    return s;
  };
  const fix = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(fix);
    if (!node || typeof node !== "object") return node;
    let s = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, fix(v)])) as Schema;
    if (s.allOf) {
      // naively_merge_allOf_dict: properties and required united, other keywords last wins.
      const { allOf, ...rest } = s;
      const merged: Schema = {};
      for (const part of [...allOf.map((p) => fix(deref(p)) as Schema), rest]) {
        for (const [k, v] of Object.entries(part)) {
          if (k === "properties") merged.properties = { ...merged.properties, ...(v as object) };
          else if (k === "required")
            merged.required = [...new Set([...(merged.required ?? []), ...(v as string[])])];
          else merged[k] = v;
        }
      }
      s = merged;
    }
    if (s.nullable) {
      const { nullable: _, ...rest } = s;
      if (typeof rest.type === "string")
        s = {
          ...rest,
          type: [rest.type, "null"],
          ...(rest.enum ? { enum: [...rest.enum, null] } : {}),
        };
      else s = { anyOf: [rest, { type: "null" }] };
    }
    return s;
  };
  const schemas = fix(raw) as Record<string, Schema>;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: "zulip", components: { schemas } });
  compiled = { ajv, schemas };
  return compiled;
}

const eventValidators = new Map<string, ValidateFunction | null>();

/**
 * The validator of Zulip's GET /events schema for one event's `type` (and `op`), or null when
 * Zulip documents no such event.
 */
export function zulipEventValidator(type: string, op?: string): ValidateFunction | null {
  const key = `${type} ${op ?? ""}`;
  if (eventValidators.has(key)) return eventValidators.get(key)!;
  const { ajv, schemas } = load();
  const union = schemas.get_events_200_response_allOf_events_inner as { oneOf: Schema[] };
  const name = union.oneOf
    .map((ref) => ref.$ref!.split("/").pop()!)
    .find((n) => {
      const props = schemas[n]!.properties ?? {};
      // Some events name their type through a $ref (reaction's `…_allOf_type`).
      const enumOf = (p?: Schema) => (p?.$ref ? schemas[p.$ref.split("/").pop()!] : p)?.enum;
      const types = enumOf(props.type);
      const ops = enumOf(props.op);
      return types?.includes(type) && (ops === undefined || ops.includes(op));
    });
  const validate = name ? ajv.compile({ $ref: `zulip#/components/schemas/${name}` }) : null;
  eventValidators.set(key, validate);
  return validate;
}

/** Zulip's schema errors for an event, as one readable line each (none when it conforms). */
export function zulipEventErrors(event: { type: string; op?: unknown; id?: number }): string[] {
  const validate = zulipEventValidator(
    event.type,
    typeof event.op === "string" ? event.op : undefined,
  );
  if (!validate) return [`Zulip documents no "${event.type}" event with op ${String(event.op)}`];
  if (validate(event)) return [];
  return (validate.errors ?? []).map(
    (e) => `${e.instancePath || "/"} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  );
}
