/**
 * GET /users/{user_id} (get_members_backend for one user) and GET
 * /users/{user_id}/subscriptions/{stream_id} (get_subscription_backend, zerver/tests/test_subs.py
 * test_get_subscription / test_users.py test_get_user_by_id): Zulip's answers and texts, in
 * Zulip's order of checks, through the typed client and a python-zulip-api style request.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const userId = (name: string) => server.creds.users[name]!.user_id;
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const status = (as: string, user_id: number, stream_id: number) =>
  server.as(as).GET("/users/{user_id}/subscriptions/{stream_id}", {
    params: { path: { user_id, stream_id } },
  });

describe("GET /users/{user_id}", () => {
  it("returns the user by id, with profile data when asked, and 'No such user' for an unknown id", async () => {
    const { user } = await expectSuccess(
      server.as("hamlet").GET("/users/{email}", {
        params: {
          path: { email: String(userId("othello")) },
          query: { include_custom_profile_fields: true, client_gravatar: false },
        },
      }),
    );
    expect(user).toMatchObject({
      user_id: userId("othello"),
      full_name: "Othello, the Moor of Venice",
      is_bot: false,
      role: 400,
    });
    expect(user.profile_data).toBeDefined();
    const plain = await expectSuccess(
      server.as("hamlet").GET("/users/{email}", {
        params: { path: { email: String(userId("othello")) } },
      }),
    );
    expect(plain.user.profile_data).toBeUndefined();
    await expectError(
      server.as("hamlet").GET("/users/{email}", { params: { path: { email: "987654" } } }),
      400,
      "No such user",
      { code: "BAD_REQUEST" },
    );
  });
});

describe("GET /users/{user_id}/subscriptions/{stream_id}", () => {
  it("says whether the user is subscribed", async () => {
    const verona = channel("Verona");
    const subscribedIds = (
      await expectSuccess(
        server.as("iago").GET("/streams/{stream_id}/members", {
          params: { path: { stream_id: verona } },
        }),
      )
    ).subscribers;
    for (const who of ["hamlet", "polonius"]) {
      const { is_subscribed } = await expectSuccess(status("othello", userId(who), verona));
      expect(is_subscribed).toBe(subscribedIds.includes(userId(who)));
    }
    await expectSuccess(
      server.as("cordelia").DELETE("/users/me/subscriptions", {
        body: { subscriptions: ["Verona"] },
      }),
    );
    expect((await expectSuccess(status("hamlet", userId("cordelia"), verona))).is_subscribed).toBe(
      false,
    );
  });

  it("checks the user first, then the channel, with Zulip's texts", async () => {
    await expectError(status("hamlet", 987654, 987654), 400, "No such user");
    // A bot is answered for since feature level 458 (subscriptions.test.ts).
    await expectSuccess(
      status("hamlet", server.creds.bots["default-bot"]!.user_id, channel("Verona")),
    );
    await expectError(status("hamlet", userId("othello"), 987654), 400, "Invalid channel ID");
    // A private channel the caller cannot see; an administrator sees it.
    const { id: secret } = await expectSuccess(
      server.as("desdemona").POST("/channels/create", {
        body: {
          name: "lookup secret",
          subscribers: [userId("othello")],
          invite_only: true,
        },
      }),
    );
    await expectError(status("hamlet", userId("othello"), secret), 400, "Invalid channel ID");
    expect((await expectSuccess(status("iago", userId("othello"), secret))).is_subscribed).toBe(
      true,
    );
    expect((await expectSuccess(status("othello", userId("othello"), secret))).is_subscribed).toBe(
      true,
    );
  });

  it("answers a python-zulip-api style request", async () => {
    const { email, api_key } = server.creds.users["hamlet"]!;
    const response = await fetch(
      `${server.baseUrl}/api/v1/users/${userId("hamlet")}/subscriptions/${channel("Denmark")}`,
      {
        headers: {
          Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
          "User-Agent": "ZulipPython/0.9.0",
        },
      },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: "success", msg: "", is_subscribed: true });
  });
});
