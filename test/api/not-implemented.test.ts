/**
 * Contract operations whose issue has not landed answer 501 NOT_IMPLEMENTED. Each is called
 * with the request example its spec gives, which also proves every example passes validation.
 */
import { describe, expect, it } from "vitest";
import { encodeParam } from "../../client/src/index.ts";
import { deref, HTTP_METHODS, loadSpec } from "../../server/http/spec.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";

const spec = loadSpec();
const pending = Object.entries<any>(spec.doc.paths).flatMap(([path, item]) =>
  HTTP_METHODS.filter((m) => item[m]?.responses?.["501"]).map((method) => ({
    path,
    method,
    item,
    op: item[method],
  })),
);

const server = useTestServer();

describe("operations not implemented yet", () => {
  it("are the contract operations whose issues are still open", () => {
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.map((p) => p.op.operationId)).not.toContain("get-message");
  });

  it.each(pending.map((p) => [p.op.operationId, p] as const))(
    "%s answers 501 to its spec example",
    async (_id, { path, method, item, op }) => {
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) =>
        deref(spec.doc, p),
      );
      let url = path;
      const query = new URLSearchParams();
      for (const p of params) {
        const example = p.example ?? p.content?.["application/json"]?.example;
        if (example === undefined) continue;
        if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(String(example)));
        else if (p.in === "query") query.set(p.name, encodeParam(example));
      }
      const form = deref(spec.doc, op.requestBody)?.content?.["application/x-www-form-urlencoded"];
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries<unknown>(form?.example ?? {}))
        body.set(k, encodeParam(v));
      const iago = server.creds.users.iago!;
      const response = await fetch(
        `${server.baseUrl}/api/v1${url}${query.size ? `?${query}` : ""}`,
        {
          method: method.toUpperCase(),
          headers: {
            Authorization:
              "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
            "Content-Type": "application/x-www-form-urlencoded",
          },
          body: form ? body : undefined,
        },
      );
      const json: any = await response.json();
      expect(checkResponse(method.toUpperCase(), response.url, response.status, json)).toBeNull();
      expect({ status: response.status, ...json }).toEqual({
        status: 501,
        result: "error",
        msg: `Not implemented: ${op.operationId}`,
        code: "NOT_IMPLEMENTED",
      });
    },
  );
});
