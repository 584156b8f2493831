import { describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

describe("GET /server_settings", () => {
  it("answers without authentication with the feature level, version and organization", async () => {
    const data = await expectSuccess(server.client().GET("/server_settings"));
    expect(data).toMatchObject({
      zulip_feature_level: 496,
      realm_name: "Zulip Dev",
      realm_url: "http://zulip.testserver",
      // The deprecated alias Zulip still sends for clients older than feature level 257.
      realm_uri: "http://zulip.testserver",
      email_auth_enabled: true,
      require_email_format_usernames: true,
      authentication_methods: { password: true, email: true, ldap: false },
    });
    expect(data.realm_description).toBe("<p>The Zulip development environment.</p>");
  });

  it("lists Discord among the authentication methods, disabled (feature level 488)", async () => {
    const data = await expectSuccess(server.client().GET("/server_settings"));
    expect(data.authentication_methods.discord).toBe(false);
    expect(data.external_authentication_methods).toEqual([]);
  });
});
