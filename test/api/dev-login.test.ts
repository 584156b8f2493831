/**
 * POST /dev_fetch_api_key (zerver/tests/test_auth_backends.py DevFetchAPIKeyTest): off unless
 * the server is started with DEV_LOGIN=true, then any active user's API key by email alone.
 */
import { describe, expect, it } from "vitest";
import { configFromEnv } from "../../server/config.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const user = (name: string) => server.creds.users[name]!;

/** What python-zulip-api and zulip-js send: a form body, no credentials. */
const form = (body: string) =>
  fetch(`${server.baseUrl}/api/v1/dev_fetch_api_key`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body,
  });

/** Development login on for the duration of `run`. */
async function withDevLogin(run: () => Promise<void>) {
  server.deps.config.devLogin = true;
  try {
    await run();
  } finally {
    server.deps.config.devLogin = false;
  }
}

describe("off (the default)", () => {
  it("is off unless DEV_LOGIN is set", () => {
    expect(configFromEnv({}).devLogin).toBe(false);
    expect(configFromEnv({ DEV_LOGIN: "true" }).devLogin).toBe(true);
  });

  it("answers Zulip's DevAuthBackend refusal, before looking at the username", async () => {
    await expectError(
      server.client().POST("/dev_fetch_api_key", { body: { username: user("iago").email } }),
      400,
      "DevAuthBackend not enabled.",
    );
    const response = await form("username=not+an+email");
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ msg: "DevAuthBackend not enabled." });
  });
});

describe("on", () => {
  it("gives any active user's key without a password", async () => {
    await withDevLogin(async () => {
      const iago = user("iago");
      expect(
        await expectSuccess(
          server.client().POST("/dev_fetch_api_key", { body: { username: iago.email } }),
        ),
      ).toMatchObject({ api_key: iago.api_key, email: iago.email, user_id: iago.user_id });
      // The key works.
      const me = await fetch(`${server.baseUrl}/api/v1/users/me`, {
        headers: {
          Authorization: "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
        },
      });
      expect(me.status).toBe(200);
    });
  });

  it("takes a form body, the address's case aside", async () => {
    await withDevLogin(async () => {
      const hamlet = user("hamlet");
      const response = await form(`username=${encodeURIComponent(hamlet.email.toUpperCase())}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ api_key: hamlet.api_key });
    });
  });

  it("refuses what is not an address, an unknown one and a deactivated user", async () => {
    await withDevLogin(async () => {
      const anon = server.client();
      await expectError(
        anon.POST("/dev_fetch_api_key", { body: { username: "nobody" } }),
        400,
        "Enter a valid email address.",
      );
      await expectError(
        anon.POST("/dev_fetch_api_key", { body: { username: "nobody@zulip.com" } }),
        401,
        "Your username or password is incorrect",
      );
      await server.db.userProfile.update({
        where: { id: user("cordelia").user_id },
        data: { isActive: false },
      });
      await expectError(
        anon.POST("/dev_fetch_api_key", { body: { username: user("cordelia").email } }),
        401,
        "Account is deactivated",
      );
    });
  });
});
