/**
 * Operations whose Zulip view is wrapped in `@require_realm_admin` (marked
 * `x-zulip-requires-role: administrator` in the spec) refuse a non-administrator before looking at
 * a single parameter, as the decorator runs before the view's parameter parsing: a member's
 * request with its parameters missing or wrong gets "Must be an organization administrator", not
 * a complaint about the parameters. An administrator's same request is answered about them.
 */
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/server.ts";
import { realClient } from "../helpers/real-client.ts";
import { loadSpec } from "../../server/http/spec.ts";

const server = useTestServer();
const marked = [...loadSpec().operations.values()].filter((op) => op.requiresRole !== null);
/** A path with each parameter given a number that names nothing. */
const pathOf = (specPath: string) => specPath.replace(/\{[^}]+\}/g, "999999");

describe("x-zulip-requires-role: administrator", () => {
  it("marks the operations Zulip decorates with require_realm_admin", () => {
    expect(marked.map((op) => op.operationId).sort()).toEqual(
      expect.arrayContaining([
        "create-custom-profile-field",
        "create-channel-folder",
        "add-code-playground",
        "export-realm",
        "update-realm-user-settings-defaults",
      ]),
    );
  });

  it.each(marked.map((op) => [op.operationId, op] as const))(
    "%s refuses a member before reading its parameters",
    async (_id, op) => {
      const params = { name: 7, bogus: "[" };
      const member = await realClient(
        server,
        "hamlet",
        op.method.toUpperCase(),
        pathOf(op.specPath),
        params,
      );
      expect(member).toMatchObject({
        status: 400,
        body: { msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" },
      });
      const admin = await realClient(
        server,
        "iago",
        op.method.toUpperCase(),
        pathOf(op.specPath),
        params,
      );
      expect(admin.body.msg).not.toBe("Must be an organization administrator");
    },
  );
});
