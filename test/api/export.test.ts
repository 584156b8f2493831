/**
 * Data exports (zerver/tests/test_realm_export.py), answered as a server that cannot make them
 * yet: GET /export/realm's empty list, POST /export/realm's refusal, GET /export/realm/consents.
 */
import { describe, expect, it } from "vitest";
import { untyped } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer({ zulipAdministrator: "help@example.net" });
const user = (name: string) => server.creds.users[name]!;
const basic = (name: string) =>
  "Basic " + Buffer.from(`${user(name).email}:${user(name).api_key}`).toString("base64");

describe("GET /export/realm", () => {
  it("lists no exports, to administrators only", async () => {
    expect(await expectSuccess(server.as("iago").GET("/export/realm"))).toMatchObject({
      exports: [],
    });
    await expectError(
      server.as("hamlet").GET("/export/realm"),
      400,
      "Must be an organization administrator",
    );
  });
});

describe("POST /export/realm", () => {
  it("sends an administrator to the server's administrator, and records nothing", async () => {
    // Zulip answers this when the organization is too large to export on request. Of its
    // refusals it is the one that is true here: this server makes no export on request at all
    // (its rate-limit and owner-consent refusals would blame something else), and the
    // server's administrator (ZULIP_ADMINISTRATOR) is whom to ask.
    const manual = "Please request a manual export from help@example.net.";
    await expectError(server.as("iago").POST("/export/realm", {}), 400, manual);
    await expectError(
      server.as("desdemona").POST("/export/realm", { body: { export_type: 2 } }),
      400,
      manual,
    );
    expect(await expectSuccess(server.as("iago").GET("/export/realm"))).toMatchObject({
      exports: [],
    });
  });

  it("takes a form body with the type as JSON text, and refuses another type", async () => {
    const post = (body: string) =>
      fetch(`${server.baseUrl}/api/v1/export/realm`, {
        method: "POST",
        headers: {
          Authorization: basic("iago"),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body,
      });
    const public_ = await post("export_type=1");
    expect(public_.status).toBe(400);
    expect(await public_.json()).toMatchObject({
      msg: "Please request a manual export from help@example.net.",
    });
    await expectError(
      server.as("iago").POST("/export/realm", { body: { export_type: untyped(3) } }),
      400,
      "Invalid export_type: Value error, Not in the list of possible values",
    );
  });

  it("is for administrators only", async () => {
    await expectError(
      server.as("shiva").POST("/export/realm", { body: { export_type: 1 } }),
      400,
      "Must be an organization administrator",
    );
  });
});

describe("GET /export/realm/consents", () => {
  it("gives each active human user's allow_private_data_export, following the setting", async () => {
    await expectSuccess(
      server.as("hamlet").PATCH("/settings", { body: { allow_private_data_export: true } }),
    );
    const { export_consents } = await expectSuccess(
      server.as("iago").GET("/export/realm/consents"),
    );
    const consents = new Map(export_consents.map((c) => [c.user_id, c.consented]));
    expect(consents.get(user("hamlet").user_id)).toBe(true);
    expect(consents.get(user("othello").user_id)).toBe(false);
    const humans = await server.db.userProfile.count({
      where: { realmId: server.creds.realm.id, isActive: true, isBot: false },
    });
    expect(export_consents).toHaveLength(humans);
    const bot = await server.db.userProfile.findFirst({
      where: { realmId: server.creds.realm.id, isBot: true },
    });
    expect(consents.has(bot!.id)).toBe(false);
  });

  it("is for administrators only", async () => {
    await expectError(
      server.as("polonius").GET("/export/realm/consents"),
      400,
      "Must be an organization administrator",
    );
  });
});
