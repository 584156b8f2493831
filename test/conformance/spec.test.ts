/**
 * The spec itself: lint-clean under the committed ruleset, every operation complete, every
 * example valid against its schema, and the Zulip wire conventions written down consistently.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { deref, HTTP_METHODS, loadSpec } from "../../server/http/spec.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const spec = loadSpec();
const doc = spec.doc;
const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
  HTTP_METHODS.filter((m) => item[m]).map((method) => ({ path, method, item, op: item[method] })),
);

describe("the OpenAPI document", () => {
  it("passes `redocly lint` with no errors or warnings", () => {
    const out = execFileSync(
      `${root}/node_modules/.bin/redocly`,
      ["lint", "--config", "openapi/redocly.yaml", "openapi/openapi.yaml", "--format", "json"],
      {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    const report = JSON.parse(out.slice(out.indexOf("{")));
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("describes all 22 operations of the contract", () => {
    const contract = [
      "post /scheduled_messages",
      "patch /messages/{message_id}",
      "post /typing",
      "post /channels/create",
      "patch /user_groups/{user_group_id}",
      "post /user_topics",
      "patch /users/me/subscriptions/muted_topics",
      "get /messages/matches_narrow",
      "get /messages/{message_id}",
      "get /users/{email}",
      "post /channel_folders/create",
      "post /invites",
      "post /realm/profile_fields",
      "post /users/{user_id}/status",
      "post /fetch_api_key",
      "patch /users/{user_id}",
      "patch /drafts/{draft_id}",
      "post /messages/{message_id}/report",
      "patch /users/me/subscriptions/{stream_id}",
      "patch /users/me/profile_data",
      "post /mobile_push/e2ee/test_notification",
      "post /calls/videoprovider/create",
    ];
    const present = new Set(operations.map((o) => `${o.method} ${o.path}`));
    expect(contract.filter((c) => !present.has(c))).toEqual([]);
  });

  it.each(operations.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o] as const))(
    "%s is complete",
    (_name, { op }) => {
      expect(op.operationId).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(op.summary).toBeTruthy();
      expect(op.tags?.length).toBe(1);
      expect(op.responses["200"]).toBeDefined();
      expect(Object.keys(op.responses).some((s) => /^4\d\d$/.test(s))).toBe(true);
      // Authenticated operations can always fail authentication (401) or its header's form (400).
      if ((op.security ?? doc.security).length > 0)
        expect([op.responses["400"], op.responses["401"]]).not.toContain(undefined);
      for (const status of Object.keys(op.responses))
        expect(
          deref(doc, op.responses[status]).content?.["application/json"],
          status,
        ).toBeDefined();
    },
  );

  it("keeps request schemas open (unknown parameters are reported, not refused) and encodes non-string form fields as JSON", () => {
    const problems: string[] = [];
    for (const { path, method, op } of operations) {
      const form = deref(doc, op.requestBody)?.content?.["application/x-www-form-urlencoded"];
      if (!form) continue;
      const schema = deref(doc, form.schema);
      if (schema.additionalProperties === false)
        problems.push(`${method} ${path}: additionalProperties: false`);
      for (const [name, prop] of Object.entries<any>(schema.properties ?? {})) {
        const p = deref(doc, prop);
        const stringOnly =
          p.type === "string" ||
          (Array.isArray(p.type) && p.type.length === 1 && p.type[0] === "string");
        if (!stringOnly && form.encoding?.[name]?.contentType !== "application/json")
          problems.push(`${method} ${path}: ${name} lacks encoding`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("has examples that validate against their schemas", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(doc, "spec");
    const failures: string[] = [];
    const check = (schema: any, example: unknown, where: string) => {
      if (example === undefined || !schema) return;
      const validate = ajv.compile(inlineRefs(schema));
      if (!validate(example)) failures.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    };
    const inlineRefs = (s: any): any =>
      JSON.parse(JSON.stringify(s).replace(/"\$ref":"#\//g, '"$ref":"spec#/'));
    let count = 0;
    for (const { path, method, item, op } of operations) {
      const where = `${method} ${path}`;
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x: any) =>
        deref(doc, x),
      )) {
        const schema = p.schema ?? p.content?.["application/json"]?.schema;
        const example = p.example ?? p.content?.["application/json"]?.example;
        if (example !== undefined) count++;
        check(schema, example, `${where} parameter ${p.name}`);
      }
      const body = deref(doc, op.requestBody)?.content?.["application/x-www-form-urlencoded"];
      if (body?.example !== undefined) count++;
      check(body?.schema, body?.example, `${where} request body`);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const media = deref(doc, response).content?.["application/json"];
        if (!media) continue;
        const examples = [
          media.example,
          ...Object.values<any>(media.examples ?? {}).map((e) => e.value),
        ].filter((e) => e !== undefined);
        count += examples.length;
        for (const e of examples) check(media.schema, e, `${where} ${status}`);
      }
    }
    expect(failures).toEqual([]);
    expect(count).toBeGreaterThan(100);
  });

  it("gives every operation a request example", () => {
    const missing = operations.filter(({ item, op }) => {
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x: any) =>
        deref(doc, x),
      );
      const body = deref(doc, op.requestBody)?.content?.["application/x-www-form-urlencoded"];
      const required = params.filter((p: any) => p.required);
      const paramsOk = required.every(
        (p: any) =>
          p.example !== undefined || p.content?.["application/json"]?.example !== undefined,
      );
      return !paramsOk || (body && body.example === undefined);
    });
    expect(missing.map((o) => `${o.method} ${o.path}`)).toEqual([]);
  });
});
