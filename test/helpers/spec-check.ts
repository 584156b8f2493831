/**
 * Client-side conformance: every response a test receives, errors included, is validated
 * against the spec's declared response for its operation and status (Zulip's
 * ZulipClientHandler, Backstage's wrapServer). A response with an undeclared status fails too.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Middleware } from "openapi-fetch";
import { deref, loadSpec } from "../../server/http/spec.ts";

const spec = loadSpec();
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(spec.doc, "spec");

const pointer = (...tokens: string[]) =>
  "spec#/" +
  tokens.map((t) => encodeURIComponent(t.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/");

const routes = Object.keys(spec.doc.paths)
  .map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    regexp: new RegExp("^" + spec.basePath + template.replace(/\{[^}]+\}/g, "[^/]+") + "$"),
  }))
  .sort((a, b) => a.params - b.params);

const validators = new Map<string, ReturnType<typeof ajv.getSchema>>();
function validatorFor(ref: string) {
  if (!validators.has(ref)) validators.set(ref, ajv.compile({ $ref: ref }));
  return validators.get(ref)!;
}

/** Returns the schema pointer for a response, or a reason it has none. */
export function responseSchemaRef(
  method: string,
  urlPath: string,
  status: number,
): { ref?: string; problem?: string } {
  const m = method.toLowerCase();
  const route = routes.find((r) => r.regexp.test(urlPath) && spec.doc.paths[r.template][m]);
  if (!route) {
    const pathExists = routes.some((r) => r.regexp.test(urlPath));
    if (status === 405 && pathExists)
      return { ref: pointer("components", "schemas", "MethodNotAllowedError") };
    if (status === 404 && !pathExists)
      return { ref: pointer("components", "schemas", "JsonError") };
    return { problem: `no operation for ${method} ${urlPath}` };
  }
  const responses = spec.doc.paths[route.template][m].responses;
  const declared = responses[String(status)];
  if (!declared)
    return { problem: `${method} ${route.template} does not declare status ${status}` };
  if (declared.$ref) return { ref: `spec${declared.$ref}/content/application~1json/schema` };
  if (!deref(spec.doc, declared).content?.["application/json"])
    return { problem: `${method} ${route.template} ${status} has no JSON body` };
  return {
    ref: pointer(
      "paths",
      route.template,
      m,
      "responses",
      String(status),
      "content",
      "application/json",
      "schema",
    ),
  };
}

export function checkResponse(
  method: string,
  url: string,
  status: number,
  body: unknown,
): string | null {
  // `/json/…` is the same operation as `/api/v1/…` (the web app's mount, session-authenticated).
  const pathname = new URL(url).pathname.replace(/^\/json(?=\/|$)/, spec.basePath);
  const { ref, problem } = responseSchemaRef(method, pathname, status);
  if (problem) return problem;
  const validate = validatorFor(ref!);
  if (validate(body)) return null;
  const errors = eventErrors(body) ?? ajv.errorsText(validate.errors);
  return `${method} ${pathname} → ${status} breaks the spec: ${errors}\n${JSON.stringify(body).slice(0, 2000)}`;
}

/** The Event union's members, by the `type` and `op` they take. */
const eventSchemas = (spec.doc.components.schemas.Event.anyOf as { $ref: string }[]).map(
  ({ $ref }) => {
    const name = $ref.split("/").pop()!;
    const props = spec.doc.components.schemas[name].properties;
    return { name, type: props.type.enum as string[], op: props.op?.enum as string[] | undefined };
  },
);

/**
 * For GET /events: each event that breaks the spec, with the errors of its own type's schema
 * (ajv's errors for the whole union would list every member's).
 */
function eventErrors(body: unknown): string | undefined {
  const events = (body as { events?: unknown })?.events;
  if (!Array.isArray(events)) return undefined;
  const problems: string[] = [];
  for (const event of events as { type?: string; op?: string }[]) {
    const member = eventSchemas.find(
      (m) => m.type.includes(event.type!) && (!m.op || m.op.includes(event.op!)),
    );
    if (!member) {
      problems.push(`no Event schema for type ${event.type} op ${event.op}`);
      continue;
    }
    const validate = validatorFor(pointer("components", "schemas", member.name));
    if (!validate(event)) problems.push(`${member.name}: ${ajv.errorsText(validate.errors)}`);
  }
  return problems.length ? problems.join("; ") : undefined;
}

export const specCheckMiddleware: Middleware = {
  async onResponse({ request, response }) {
    const body = await response
      .clone()
      .json()
      .catch(() => "<not JSON>");
    const problem = checkResponse(request.method, request.url, response.status, body);
    // Throwing fails the request, and so the test, even if it expected an error status.
    if (problem) throw new Error(problem);
    return undefined;
  },
};
