import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

describe("POST /fetch_api_key", () => {
  it("exchanges an email and password for the API key, email and user id", async () => {
    const hamlet = server.creds.users.hamlet!;
    const data = await expectSuccess(
      server
        .client()
        .POST("/fetch_api_key", { body: { username: hamlet.email, password: hamlet.password! } }),
    );
    expect(data).toMatchObject({
      api_key: hamlet.api_key,
      email: "hamlet@zulip.com",
      user_id: hamlet.user_id,
    });
    // The key works for API calls.
    const me = await expectSuccess(server.client(data.email, data.api_key).GET("/users/me"));
    expect(me.user_id).toBe(hamlet.user_id);
  });

  it("matches the email case-insensitively and ignores surrounding spaces", async () => {
    const hamlet = server.creds.users.hamlet!;
    const data = await expectSuccess(
      server.client().POST("/fetch_api_key", {
        body: { username: "  HAMLET@zulip.COM ", password: hamlet.password! },
      }),
    );
    expect(data.user_id).toBe(hamlet.user_id);
  });

  it("refuses a wrong password with 401 AUTHENTICATION_FAILED", async () => {
    await expectError(
      server
        .client()
        .POST("/fetch_api_key", { body: { username: "hamlet@zulip.com", password: "wrong" } }),
      401,
      "Your username or password is incorrect",
      {
        code: "AUTHENTICATION_FAILED",
      },
    );
  });

  it("answers an unknown user exactly like a wrong password", async () => {
    await expectError(
      server
        .client()
        .POST("/fetch_api_key", { body: { username: "nobody@zulip.com", password: "x" } }),
      401,
      "Your username or password is incorrect",
      {
        code: "AUTHENTICATION_FAILED",
      },
    );
  });

  it("refuses a username that is not an email address", async () => {
    await expectError(
      server.client().POST("/fetch_api_key", { body: { username: "hamlet", password: "x" } }),
      400,
      "Enter a valid email address.",
      { code: "BAD_REQUEST" },
    );
  });

  it("names a missing argument", async () => {
    await expectError(
      server.client().POST("/fetch_api_key", { body: { username: "hamlet@zulip.com" } as never }),
      400,
      "Missing 'password' argument",
      {
        code: "REQUEST_VARIABLE_MISSING",
        var_name: "password",
      },
    );
  });

  it("refuses a deactivated user with USER_DEACTIVATED", async () => {
    const aaron = server.creds.users.aaron!;
    await server.db.userProfile.update({ where: { id: aaron.user_id }, data: { isActive: false } });
    try {
      await expectError(
        server
          .client()
          .POST("/fetch_api_key", { body: { username: aaron.email, password: aaron.password! } }),
        401,
        "Account is deactivated",
        {
          code: "USER_DEACTIVATED",
        },
      );
    } finally {
      await server.db.userProfile.update({
        where: { id: aaron.user_id },
        data: { isActive: true },
      });
    }
  });

  it("refuses everyone when password authentication is disabled", async () => {
    const hamlet = server.creds.users.hamlet!;
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { passwordAuthEnabled: false },
    });
    try {
      await expectError(
        server
          .client()
          .POST("/fetch_api_key", { body: { username: hamlet.email, password: hamlet.password! } }),
        401,
        "Password authentication is disabled in this organization",
        { code: "PASSWORD_AUTH_DISABLED" },
      );
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { passwordAuthEnabled: true },
      });
    }
  });

  it("stores passwords only as memory-hard hashes", async () => {
    const row = await server.db.userProfile.findUniqueOrThrow({
      where: { id: server.creds.users.hamlet!.user_id },
    });
    expect(row.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(row.passwordHash).not.toContain(server.creds.users.hamlet!.password!);
  });
});
