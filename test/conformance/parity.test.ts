/**
 * Spec ↔ server parity (Zulip's test_openapi_arguments and check_for_non_existent_openapi_endpoints):
 * every operation has a handler, every handler an operation, and each operation's method and
 * path reach it.
 */
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createApp } from "../../server/app.ts";
import { configFromEnv } from "../../server/config.ts";
import { EventBus } from "../../server/events/index.ts";
import { createLogger } from "../../server/logger.ts";
import { HTTP_METHODS, loadSpec } from "../../server/http/spec.ts";
import { PUBLIC_OPERATIONS } from "../../server/http/types.ts";
import { handlers } from "../../server/routes.ts";
import { untyped } from "../helpers/builders.ts";

const spec = loadSpec();
const operationIds = [...spec.operations.keys()].sort();

describe("spec and server parity", () => {
  it("has exactly one handler per operationId", () => {
    expect(Object.keys(handlers).sort()).toEqual(operationIds);
  });

  it("lists as public exactly the operations with `security: []`", () => {
    const publicOps = [...spec.operations.values()]
      .filter((o) => !o.requiresAuth)
      .map((o) => o.operationId)
      .sort();
    expect([...PUBLIC_OPERATIONS].sort()).toEqual(publicOps);
  });

  it("dispatches every operation's method and path to an operation, and nothing else", async () => {
    // Building the app touches no database: handlers only run per request, and these requests
    // stop at authentication (or, for public operations, fail on the missing database).
    const app = createApp({
      // Stand-ins for a database the app never reaches here.
      db: untyped({}),
      events: new EventBus({ prisma: untyped({}), listen: async () => async () => {} }),
      log: createLogger("silent"),
      // No rate limits: there is no database to count in.
      config: { ...configFromEnv({}), rateLimiting: false },
      now: () => new Date(),
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${spec.basePath}`;
    try {
      for (const op of spec.operations.values()) {
        const path = op.routePath.replace(/\{(\w+)\}/g, (_m, name: string) =>
          op.pathParamTypes[op.pathParamRenames[name] ?? name] === "integer"
            ? "1"
            : "x@example.com",
        );
        const r = await fetch(base + path, { method: op.method.toUpperCase() });
        expect([404, 405], `${op.method} ${op.routePath}`).not.toContain(r.status);
        if (op.requiresAuth) expect(r.status, `${op.method} ${op.routePath}`).toBe(401);
      }
      expect((await fetch(`${base}/no_such_endpoint`)).status).toBe(404);
      expect((await fetch(`${base}/server_settings`, { method: "DELETE" })).status).toBe(405);
    } finally {
      server.close();
    }
  });

  it("merges only templates that differ in parameter names, and keeps every operation", () => {
    const specOps = Object.values<any>(spec.doc.paths).flatMap((item) =>
      HTTP_METHODS.filter((m) => item[m]).map((m) => item[m].operationId),
    );
    expect(specOps.sort()).toEqual(operationIds);
    expect(spec.operations.get("update-user")!.routePath).toBe("/users/{email}");
    expect(spec.operations.get("update-user")!.pathParamRenames).toEqual({ email: "user_id" });
  });
});
