/**
 * Spec ↔ server parity (Zulip's test_openapi_arguments and check_for_non_existent_openapi_endpoints):
 * every operation has a handler, every handler an operation, and the router serves exactly the
 * spec's paths and methods.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../server/app.ts";
import { configFromEnv } from "../../server/config.ts";
import { EventBus } from "../../server/events.ts";
import { createLogger } from "../../server/logger.ts";
import { HTTP_METHODS, loadSpec } from "../../server/http/spec.ts";
import { PUBLIC_OPERATIONS } from "../../server/http/types.ts";
import { handlers } from "../../server/routes.ts";

const spec = loadSpec();
const operationIds = [...spec.operations.keys()].sort();

describe("spec and server parity", () => {
  it("has exactly one handler per operationId", () => {
    expect(Object.keys(handlers).sort()).toEqual(operationIds);
  });

  it("lists as public exactly the operations with `security: []`", () => {
    const publicOps = [...spec.operations.values()].filter((o) => !o.requiresAuth).map((o) => o.operationId).sort();
    expect([...PUBLIC_OPERATIONS].sort()).toEqual(publicOps);
  });

  it("registers a route for every operation and none besides", () => {
    // Building the app touches no database: handlers only run per request.
    const app = createApp({ db: {} as never, events: new EventBus(), log: createLogger("silent"), config: configFromEnv({}), now: () => new Date() });
    const routes = (app as any).router.stack
      .filter((layer: any) => layer.route?.path?.startsWith(spec.basePath))
      .flatMap((layer: any) => Object.keys(layer.route.methods).map((m) => `${m} ${layer.route.path}`))
      .sort();
    const expected = [...spec.operations.values()].map((o) => `${o.method} ${spec.basePath}${o.routePath.replace(/\{(\w+)\}/g, ":$1")}`).sort();
    expect(routes).toEqual(expected);
  });

  it("merges only templates that differ in parameter names, and keeps every operation", () => {
    const specOps = Object.values<any>(spec.doc.paths).flatMap((item) => HTTP_METHODS.filter((m) => item[m]).map((m) => item[m].operationId));
    expect(specOps.sort()).toEqual(operationIds);
    expect(spec.operations.get("update-user")!.routePath).toBe("/users/{email}");
    expect(spec.operations.get("update-user")!.pathParamRenames).toEqual({ email: "user_id" });
  });
});
