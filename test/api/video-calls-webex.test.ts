/**
 * Video-call providers as Zulip 12 numbers them (levels 493): register's
 * `realm_available_video_chat_providers` lists what the server has credentials for (3 Zoom,
 * 4 BigBlueButton, 8 Webex), PATCH /realm `video_chat_provider` takes only those (with its
 * `realm` update event), and with Webex as the OAuth provider, POST /calls/webex/create and
 * `has_webex_token` (register and event) beside our provider-neutral names.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";
import { fakeProviderConfig, startFakeVideoProvider } from "../helpers/video-provider.ts";

const fake = await startFakeVideoProvider();
afterAll(() => fake.close());

const server = useTestServer({
  videoProvider: fakeProviderConfig(fake, "Webex"),
});

const user = (name: string) => server.creds.users[name]!;
const basic = (name: string) =>
  "Basic " + Buffer.from(`${user(name).email}:${user(name).api_key}`).toString("base64");
const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(url.startsWith("http") ? url : server.baseUrl + url, { headers, redirect: "manual" });
const register = async (as: string, types: string[]) =>
  (await expectSuccess(
    server.as(as).POST("/register", { body: { fetch_event_types: types } }),
  )) as Record<string, unknown>;
const setProvider = (as: string, value: unknown) =>
  server.as(as).PATCH("/realm", { body: { video_chat_provider: value as number } });

/** The OAuth flow in a browser's place: register, the provider's authorize page, complete. */
async function connect(as: string) {
  const start = await get("/calls/videoprovider/register", { Authorization: basic(as) });
  const cookie = start.headers.getSetCookie()[0]!.split(";")[0]!;
  const authorize = await get(start.headers.get("location")!);
  const back = new URL(authorize.headers.get("location")!);
  const complete = await get(`/calls/videoprovider/complete${back.search}`, { Cookie: cookie });
  expect(complete.status).toBe(200);
}

beforeEach(async () => {
  await server.db.videoCallProviderToken.deleteMany({});
  fake.reset();
});

describe("video_chat_provider", () => {
  it("lists the providers the server has credentials for, with Zulip's ids", async () => {
    const state = await register("hamlet", ["realm"]);
    expect(state.realm_available_video_chat_providers).toEqual({
      disabled: { name: "None", id: 0 },
      jitsi_meet: { name: "Jitsi Meet", id: 1 },
      webex: { name: "Webex", id: 8 },
    });
  });

  it("is set by administrators to an offered provider, with a realm update event", async () => {
    const events = await queueOf(server, "hamlet", ["realm"]);
    await expectError(setProvider("hamlet", 8), 400, "Must be an organization administrator");
    // Zoom (3) and BigBlueButton (4) have no credentials here; 2 and 5 are not offered either.
    for (const value of [3, 4, 2, 5, 99, -1])
      await expectError(setProvider("iago", value), 400, `Invalid video_chat_provider ${value}`);
    expect((await register("hamlet", ["realm"])).realm_video_chat_provider).toBe(1);
    expect(await expectSuccess(setProvider("iago", 8))).toMatchObject({ video_chat_provider: 8 });
    expect((await register("hamlet", ["realm"])).realm_video_chat_provider).toBe(8);
    // Unchanged: no echo, no event.
    expect(await expectSuccess(setProvider("iago", 8))).not.toHaveProperty("video_chat_provider");
    await expectSuccess(setProvider("iago", 0));
    expect((await events()).filter((e: any) => e.property === "video_chat_provider")).toEqual([
      { type: "realm", op: "update", property: "video_chat_provider", value: 8 },
      { type: "realm", op: "update", property: "video_chat_provider", value: 0 },
    ]);
  });

  it("takes zulip-js's encoding: the parameter in the query string", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/realm?video_chat_provider=8`, {
      method: "PATCH",
      headers: { Authorization: basic("iago") },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: "success", video_chat_provider: 8 });
    await expectSuccess(setProvider("iago", 1));
  });
});

describe("POST /calls/webex/create and has_webex_token", () => {
  it("refuses a user with no Webex token", async () => {
    await expectError(
      server.as("hamlet").POST("/calls/webex/create"),
      400,
      "Invalid Webex access token",
      {
        code: "INVALID_VIDEO_CALL_PROVIDER_TOKEN",
      },
    );
    expect((await register("hamlet", ["has_webex_token"])).has_webex_token).toBe(false);
  });

  it("tells the user's clients once the OAuth flow is done, then creates the meeting", async () => {
    const events = await queueOf(server, "hamlet", ["has_webex_token", "has_videoprovider_token"]);
    const others = await queueOf(server, "othello", ["has_webex_token"]);
    await connect("hamlet");
    expect(await events()).toEqual([
      { type: "has_videoprovider_token", value: true },
      { type: "has_webex_token", value: true },
    ]);
    expect(await others()).toEqual([]);
    expect((await register("hamlet", ["has_webex_token"])).has_webex_token).toBe(true);
    expect((await register("othello", ["has_webex_token"])).has_webex_token).toBe(false);
    // Whatever the organization's provider (here Jitsi Meet).
    const { url } = await expectSuccess(server.as("hamlet").POST("/calls/webex/create"));
    expect(url).toMatch(/^https:\/\/meet\.example\/j\//);
    expect(fake.to("/v2/users/me/meetings")[0]!.headers.authorization).toBe("Bearer access-1");
  });
});
