/**
 * Video calls (zerver/tests/test_create_video_call.py, reference op 22): POST
 * /calls/videoprovider/create for each video_chat_provider, the OAuth flow through the
 * browser-facing endpoints (driven by hand, following each redirect) against a fake provider on
 * loopback, the stored token and its `has_videoprovider_token` event, token refresh, every
 * refusal, and BigBlueButton's signed link and join page with its checksums.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { doCreateRealm } from "../../server/actions/realm/realm.ts";
import { configFromEnv } from "../../server/config.ts";
import { signObject } from "../../server/lib/realm/video-calls.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { fakeProviderConfig, startFakeVideoProvider } from "../helpers/video-provider.ts";

const fake = await startFakeVideoProvider();
afterAll(() => fake.close());
const BBB_SECRET = "bbb-shared-secret";

const server = useTestServer({
  videoProvider: fakeProviderConfig(fake, "Zoom"),
  bigBlueButtonUrl: `${fake.baseUrl}/bigbluebutton/`,
  bigBlueButtonSecret: BBB_SECRET,
});

const ZOOM = 3;
const BBB = 4;
const JITSI = 1;
const user = (name: string) => server.creds.users[name]!;
const basic = (name: string) =>
  "Basic " + Buffer.from(`${user(name).email}:${user(name).api_key}`).toString("base64");
const create = (as: string) => server.as(as).POST("/calls/videoprovider/create");
const setProvider = (videoChatProvider: number, jitsiServerUrl: string | null = null) =>
  server.db.realm.update({
    where: { id: server.creds.realm.id },
    data: { videoChatProvider, jitsiServerUrl },
  });
const storedToken = (name: string) =>
  server.db.videoCallProviderToken.findFirst({ where: { userProfileId: user(name).user_id } });

/** A queue for `as` receiving `has_videoprovider_token`, and a function reading what it got since. */
async function tokenEvents(as: string) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", { body: { event_types: ["has_videoprovider_token"] } }),
  );
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events
      .filter((e) => e.type !== "heartbeat")
      .map(({ id: _id, ...event }) => event);
}

async function registerState(as: string) {
  const state = await expectSuccess(
    server.as(as).POST("/register", {
      body: { fetch_event_types: ["has_videoprovider_token"] },
    }),
  );
  return (state as { has_videoprovider_token?: boolean }).has_videoprovider_token;
}

/** GET on the server (or the fake) without following redirects. */
const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(url.startsWith("http") ? url : server.baseUrl + url, { headers, redirect: "manual" });

/** The whole OAuth flow in a browser's place: register, the provider's authorize page, complete. */
async function connect(as: string) {
  const register = await get("/calls/videoprovider/register", { Authorization: basic(as) });
  expect(register.status).toBe(302);
  const cookie = register.headers.getSetCookie()[0]!.split(";")[0]!;
  const authorize = await get(register.headers.get("location")!);
  expect(authorize.status).toBe(302);
  const back = new URL(authorize.headers.get("location")!);
  const complete = await get(`/calls/videoprovider/complete${back.search}`, { Cookie: cookie });
  return { register, cookie, back, complete };
}

beforeEach(async () => {
  await server.db.videoCallProviderToken.deleteMany({});
  fake.reset();
});

describe("Jitsi Meet and no provider", () => {
  it("gives a new room on the server's Jitsi, or on the organization's own", async () => {
    await setProvider(JITSI);
    const { url } = await expectSuccess(create("hamlet"));
    expect(url).toMatch(/^https:\/\/meet\.jit\.si\/[1-9]\d{14}$/);
    expect((await expectSuccess(create("hamlet"))).url).not.toBe(url);
    await setProvider(JITSI, "https://jitsi.example.org/");
    expect((await expectSuccess(create("hamlet"))).url).toMatch(
      /^https:\/\/jitsi\.example\.org\/[1-9]\d{14}$/,
    );
  });

  it("refuses when no Jitsi server is configured, or video calls are disabled", async () => {
    await setProvider(JITSI);
    const saved = server.deps.config.jitsiServerUrl;
    server.deps.config.jitsiServerUrl = undefined;
    try {
      await expectError(create("hamlet"), 400, "Jitsi Meet credentials have not been configured");
    } finally {
      server.deps.config.jitsiServerUrl = saved;
    }
    await setProvider(0);
    await expectError(
      create("hamlet"),
      400,
      "Video call provider credentials have not been configured",
    );
    await setProvider(7);
    await expectError(create("hamlet"), 400, "Nextcloud Talk credentials have not been configured");
  });
});

describe("the OAuth provider (Zoom-style)", () => {
  beforeEach(() => setProvider(ZOOM));

  it("refuses a user with no token", async () => {
    await expectError(create("hamlet"), 400, "Invalid Zoom access token", {
      code: "INVALID_VIDEO_CALL_PROVIDER_TOKEN",
    });
    expect(fake.requests).toEqual([]);
  });

  it("sends the user to the provider with a signed state, stores the token, tells the clients", async () => {
    const events = await tokenEvents("hamlet");
    const othersEvents = await tokenEvents("othello");
    expect(await registerState("hamlet")).toBe(false);
    const { register, cookie, back, complete } = await connect("hamlet");

    const authorize = new URL(register.headers.get("location")!);
    expect(authorize.origin + authorize.pathname).toBe(`${fake.baseUrl}/oauth/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: "code",
      client_id: fake.clientId,
      redirect_uri: "http://zulip.testserver/calls/videoprovider/complete",
      scope: "meeting:write",
    });
    expect(register.headers.getSetCookie()[0]).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/^videoprovider_sid=/);
    expect(back.searchParams.get("state")).toBe(authorize.searchParams.get("state"));

    expect(complete.status).toBe(200);
    expect(await complete.text()).toContain("You may close this window");
    const [exchange] = fake.to("/oauth/token");
    expect(exchange!.headers.authorization).toBe(
      "Basic " + Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString("base64"),
    );
    expect(Object.fromEntries(new URLSearchParams(exchange!.body))).toEqual({
      grant_type: "authorization_code",
      code: back.searchParams.get("code"),
      redirect_uri: "http://zulip.testserver/calls/videoprovider/complete",
    });
    expect(await storedToken("hamlet")).toMatchObject({
      realmId: server.creds.realm.id,
      provider: "oauth",
      accessToken: "access-1",
      refreshToken: "refresh-1",
    });
    expect(await events()).toEqual([{ type: "has_videoprovider_token", value: true }]);
    expect(await othersEvents()).toEqual([]);
    expect(await registerState("hamlet")).toBe(true);
    expect(await registerState("othello")).toBe(false);

    // The meeting, created with the user's token and Zulip's Zoom payload.
    const { url } = await expectSuccess(create("hamlet"));
    const [meeting] = fake.to("/v2/users/me/meetings");
    expect(url).toBe(`https://meet.example/j/${fake.requests.indexOf(meeting!) + 1}`);
    expect(meeting!.headers.authorization).toBe("Bearer access-1");
    expect(JSON.parse(meeting!.body)).toEqual({
      settings: { host_video: true, participant_video: true },
      default_password: true,
    });
  });

  it("completes only in the browser that started, with a state nobody altered, and a code the provider takes", async () => {
    const register = await get("/calls/videoprovider/register", { Authorization: basic("hamlet") });
    const cookie = register.headers.getSetCookie()[0]!.split(";")[0]!;
    const authorize = await get(register.headers.get("location")!);
    const back = new URL(authorize.headers.get("location")!);
    const code = back.searchParams.get("code")!;
    const state = back.searchParams.get("state")!;
    const complete = async (query: Record<string, string>, headers: Record<string, string>) => {
      const response = await get(
        `/calls/videoprovider/complete?${new URLSearchParams(query)}`,
        headers,
      );
      return { status: response.status, ...((await response.json()) as object) };
    };
    const invalidSession = {
      status: 400,
      result: "error",
      msg: "Invalid Zoom session identifier",
      code: "BAD_REQUEST",
    };
    // Another browser (no cookie, or its own), or a state altered to name another user.
    expect(await complete({ code, state }, {})).toEqual(invalidSession);
    const other = await get("/calls/videoprovider/register", { Authorization: basic("othello") });
    const otherCookie = other.headers.getSetCookie()[0]!.split(";")[0]!;
    expect(await complete({ code, state }, { Cookie: otherCookie })).toEqual(invalidSession);
    const [body, mac] = state.split(".");
    const forged = JSON.parse(Buffer.from(body!, "base64url").toString());
    forged.user = user("othello").user_id;
    expect(
      await complete(
        { code, state: `${Buffer.from(JSON.stringify(forged)).toString("base64url")}.${mac}` },
        { Cookie: cookie },
      ),
    ).toEqual(invalidSession);
    expect(await complete({ code, state: "garbage" }, { Cookie: cookie })).toEqual(invalidSession);
    expect(await complete({ state }, { Cookie: cookie })).toMatchObject({
      status: 400,
      msg: "Missing 'code' argument",
      code: "REQUEST_VARIABLE_MISSING",
    });
    expect(fake.to("/oauth/token")).toEqual([]);
    // A code the provider refuses.
    expect(await complete({ code: "not-a-code", state }, { Cookie: cookie })).toMatchObject({
      status: 400,
      msg: "Invalid Zoom credentials",
    });
    expect(await storedToken("hamlet")).toBeNull();
    // The real one still works.
    expect(
      (await get(`/calls/videoprovider/complete${back.search}`, { Cookie: cookie })).status,
    ).toBe(200);
    expect(await storedToken("hamlet")).not.toBeNull();
  });

  it("sends the browser back to the organization that started the flow, where its cookie is", async () => {
    const other = await server.db.$transaction((tx) =>
      doCreateRealm(tx, { name: "Elsewhere", stringId: "elsewhere" }),
    );
    const state = await signObject(server.deps.db, "videoprovider-state", {
      realm: other.id,
      user: user("hamlet").user_id,
      sid: "x",
      exp: Math.floor(Date.now() / 1000) + 60,
    });
    const path = `/calls/videoprovider/complete?${new URLSearchParams({ code: "c", state })}`;
    const response = await get(path);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe(`http://elsewhere.zulip.testserver${path}`);
    expect(fake.to("/oauth/token")).toEqual([]);
    // An expired state is refused before anything else.
    const expired = await signObject(server.deps.db, "videoprovider-state", {
      realm: server.creds.realm.id,
      user: user("hamlet").user_id,
      sid: "x",
      exp: Math.floor(Date.now() / 1000) - 1,
    });
    const refused = await get(
      `/calls/videoprovider/complete?${new URLSearchParams({ code: "c", state: expired })}`,
    );
    expect({ status: refused.status, ...((await refused.json()) as object) }).toMatchObject({
      status: 400,
      msg: "Invalid Zoom session identifier",
    });
  });

  it("asks for credentials at register", async () => {
    const response = await get("/calls/videoprovider/register");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Basic realm="zulip"');
    const byKey = await get(`/calls/videoprovider/register?api_key=${user("hamlet").api_key}`);
    expect(byKey.status).toBe(302);
  });

  it("refreshes a refused token and tries again", async () => {
    await connect("hamlet");
    const events = await tokenEvents("hamlet");
    fake.validTokens.delete("access-1");
    const { url } = await expectSuccess(create("hamlet"));
    expect(url).toMatch(/^https:\/\/meet\.example\/j\/\d+$/);
    const refresh = fake.to("/oauth/token").at(-1)!;
    expect(Object.fromEntries(new URLSearchParams(refresh.body))).toEqual({
      grant_type: "refresh_token",
      refresh_token: "refresh-1",
    });
    expect(fake.to("/v2/users/me/meetings").map((r) => r.headers.authorization)).toEqual([
      "Bearer access-1",
      "Bearer access-2",
    ]);
    expect(await storedToken("hamlet")).toMatchObject({
      accessToken: "access-2",
      refreshToken: "refresh-2",
    });
    expect(await events()).toEqual([{ type: "has_videoprovider_token", value: true }]);
  });

  it("refreshes an expired token before using it", async () => {
    fake.issue = { refreshToken: true, expiresIn: 3600 };
    await connect("hamlet");
    expect((await storedToken("hamlet"))!.expiresAt!.getTime()).toBeGreaterThan(Date.now());
    await server.db.videoCallProviderToken.updateMany({
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    await expectSuccess(create("hamlet"));
    expect(fake.to("/v2/users/me/meetings").map((r) => r.headers.authorization)).toEqual([
      "Bearer access-2",
    ]);
  });

  it("forgets a refused token it cannot refresh, and tells the clients", async () => {
    fake.issue = { refreshToken: false };
    await connect("hamlet");
    const events = await tokenEvents("hamlet");
    fake.validTokens.delete("access-1");
    await expectError(create("hamlet"), 400, "Invalid Zoom access token", {
      code: "INVALID_VIDEO_CALL_PROVIDER_TOKEN",
    });
    expect(await storedToken("hamlet")).toBeNull();
    expect(await events()).toEqual([{ type: "has_videoprovider_token", value: false }]);
    expect(await registerState("hamlet")).toBe(false);
  });

  it("takes the token another request refreshed meanwhile rather than forgetting it", async () => {
    await connect("hamlet");
    fake.validTokens.delete("access-1");
    // The refresh is refused because a concurrent request used the refresh token first and
    // stored what it got.
    fake.failNext("/oauth/token", 400);
    fake.onRequest = async (request) => {
      if (request.path !== "/oauth/token") return;
      fake.validTokens.add("access-other");
      await server.db.videoCallProviderToken.updateMany({
        data: { accessToken: "access-other", refreshToken: "refresh-other" },
      });
    };
    await expectSuccess(create("hamlet"));
    expect(fake.to("/v2/users/me/meetings").map((r) => r.headers.authorization)).toEqual([
      "Bearer access-1",
      "Bearer access-other",
    ]);
    expect(await storedToken("hamlet")).toMatchObject({ accessToken: "access-other" });
  });

  it("forgets the token when the refresh is refused too", async () => {
    await connect("hamlet");
    fake.validTokens.delete("access-1");
    fake.failNext("/oauth/token", 400);
    await expectError(create("hamlet"), 400, "Invalid Zoom access token");
    expect(await storedToken("hamlet")).toBeNull();
  });

  it("says the call failed when the provider refuses it or cannot be reached, and keeps the token", async () => {
    await connect("hamlet");
    fake.failNext("/v2/users/me/meetings", 500);
    await expectError(create("hamlet"), 400, "Failed to create Zoom call");
    fake.failNext("/v2/users/me/meetings", 429);
    await expectError(create("hamlet"), 400, "Failed to create Zoom call");
    expect(await storedToken("hamlet")).not.toBeNull();
    const saved = server.deps.config.videoProvider.meetingUrl;
    server.deps.config.videoProvider.meetingUrl = "http://127.0.0.1:1/meetings";
    try {
      await expectError(create("hamlet"), 400, "Failed to create Zoom call");
    } finally {
      server.deps.config.videoProvider.meetingUrl = saved;
    }
  });

  it("refuses when the server has no credentials for the provider", async () => {
    const saved = server.deps.config.videoProvider.clientId;
    server.deps.config.videoProvider.clientId = undefined;
    try {
      await expectError(create("hamlet"), 400, "Zoom credentials have not been configured");
      const response = await get("/calls/videoprovider/register", {
        Authorization: basic("hamlet"),
      });
      expect({ status: response.status, ...((await response.json()) as object) }).toMatchObject({
        status: 400,
        msg: "Zoom credentials have not been configured",
      });
    } finally {
      server.deps.config.videoProvider.clientId = saved;
    }
  });

  it("answers the provider's deauthorization notice as Zulip does", async () => {
    const response = await fetch(`${server.baseUrl}/calls/videoprovider/deauthorize`, {
      method: "POST",
    });
    expect(await response.json()).toEqual({ result: "success", msg: "" });
  });
});

describe("BigBlueButton", () => {
  beforeEach(() => setProvider(BBB));

  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  /** The query of a BigBlueButton API call without its checksum, and whether the checksum is right. */
  function checked(call: string, search: string) {
    const query = search.replace(/^\?/, "");
    const at = query.lastIndexOf("&checksum=");
    const signed = query.slice(0, at);
    return {
      params: Object.fromEntries(new URLSearchParams(signed)),
      valid: query.slice(at + "&checksum=".length) === sha256(call + signed + BBB_SECRET),
    };
  }

  it("gives a signed link that creates the meeting and joins it, as moderator for its maker", async () => {
    const { url } = await expectSuccess(create("hamlet"));
    expect(url).toMatch(/^\/calls\/bigbluebutton\/join\?bigbluebutton=[\w-]+\.[\w-]+$/);
    expect(fake.requests).toEqual([]);

    const join = await get(url, { Authorization: basic("hamlet") });
    expect(join.status).toBe(302);
    const [created] = fake.to("/bigbluebutton/api/create");
    const createCall = checked("create", created!.search);
    expect(createCall.valid).toBe(true);
    expect(createCall.params).toMatchObject({
      name: `${server.creds.realm.name} meeting`,
      lockSettingsDisableCam: "false",
    });
    expect(createCall.params.meetingID).toMatch(/^zulip-\d{12}$/);

    const location = new URL(join.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(`${fake.baseUrl}/bigbluebutton/api/join`);
    const joinCall = checked("join", location.search);
    expect(joinCall.valid).toBe(true);
    expect(joinCall.params).toEqual({
      meetingID: createCall.params.meetingID,
      role: "MODERATOR",
      fullName: "King Hamlet",
      createTime: "1700000000000",
    });

    const asOther = await get(url, { Authorization: basic("othello") });
    const other = checked("join", new URL(asOther.headers.get("location")!).search);
    expect(other.valid).toBe(true);
    expect(other.params).toMatchObject({ role: "VIEWER", meetingID: createCall.params.meetingID });
  });

  it("refuses an altered link, and says what went wrong on the BigBlueButton server", async () => {
    const { url } = await expectSuccess(create("hamlet"));
    const error = async (path: string) => {
      const response = await get(path, { Authorization: basic("hamlet") });
      return { status: response.status, ...((await response.json()) as { msg: string }) };
    };
    const [body, mac] = url.split("=")[1]!.split(".");
    const data = JSON.parse(Buffer.from(body!, "base64url").toString());
    data.moderator = user("othello").user_id;
    const altered = `/calls/bigbluebutton/join?bigbluebutton=${Buffer.from(JSON.stringify(data)).toString("base64url")}.${mac}`;
    expect(await error(altered)).toMatchObject({ status: 400, msg: "Invalid signature." });
    expect(await error("/calls/bigbluebutton/join")).toMatchObject({
      msg: "Missing 'bigbluebutton' argument",
    });

    fake.bbbAnswer =
      "<response><returncode>FAILED</returncode><messageKey>checksumError</messageKey></response>";
    expect(await error(url)).toMatchObject({
      msg: "Error authenticating to the BigBlueButton server.",
    });
    fake.bbbAnswer = "<response><returncode>FAILED</returncode></response>";
    expect(await error(url)).toMatchObject({
      msg: "BigBlueButton server returned an unexpected error.",
    });
    fake.failNext("/bigbluebutton/api/create", 500);
    expect(await error(url)).toMatchObject({
      msg: "Error connecting to the BigBlueButton server.",
    });
  });

  it("refuses when BigBlueButton is not configured", async () => {
    const saved = server.deps.config.bigBlueButtonSecret;
    server.deps.config.bigBlueButtonSecret = undefined;
    try {
      await expectError(
        create("hamlet"),
        400,
        "BigBlueButton credentials have not been configured",
      );
    } finally {
      server.deps.config.bigBlueButtonSecret = saved;
    }
  });
});

describe("GET /calls/bigbluebutton/create", () => {
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  const params = (search: string) => Object.fromEntries(new URLSearchParams(search.slice(1)));

  it("gives a signed link to a meeting of that name, voice-only when asked, whatever the provider", async () => {
    await setProvider(JITSI);
    const { url } = await expectSuccess(
      server.as("hamlet").GET("/calls/bigbluebutton/create", {
        params: { query: { meeting_name: "Verona standup", voice_only: true } },
      }),
    );
    expect(url).toMatch(/^\/calls\/bigbluebutton\/join\?bigbluebutton=[\w-]+\.[\w-]+$/);
    const join = await get(url, { Authorization: basic("hamlet") });
    expect(join.status).toBe(302);
    const created = fake.to("/bigbluebutton/api/create").at(-1)!;
    const query = created.search.slice(1);
    const at = query.lastIndexOf("&checksum=");
    expect(query.slice(at + "&checksum=".length)).toBe(
      sha256("create" + query.slice(0, at) + BBB_SECRET),
    );
    expect(params(created.search)).toMatchObject({
      name: "Verona standup",
      lockSettingsDisableCam: "true",
    });
    const location = new URL(join.headers.get("location")!);
    expect(params(location.search)).toMatchObject({ role: "MODERATOR", fullName: "King Hamlet" });
  });

  it("takes what zulip-js sends: the query string, a boolean as JSON text, + for spaces", async () => {
    const response = await fetch(
      `${server.baseUrl}/api/v1/calls/bigbluebutton/create?meeting_name=Team+call&voice_only=false`,
      { headers: { Authorization: basic("othello") } },
    );
    expect(response.status).toBe(200);
    const { url } = (await response.json()) as { url: string };
    await get(url, { Authorization: basic("othello") });
    expect(params(fake.to("/bigbluebutton/api/create").at(-1)!.search)).toMatchObject({
      name: "Team call",
      lockSettingsDisableCam: "false",
    });
  });

  it("refuses without a meeting name, and when the server has no BigBlueButton", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/calls/bigbluebutton/create`, {
      headers: { Authorization: basic("hamlet") },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ msg: "Missing 'meeting_name' argument" });
    const saved = server.deps.config.bigBlueButtonUrl;
    server.deps.config.bigBlueButtonUrl = undefined;
    try {
      // Zulip's text, which its join page gives; Zulip's create signs a link regardless.
      await expectError(
        server.as("hamlet").GET("/calls/bigbluebutton/create", {
          params: { query: { meeting_name: "x" } },
        }),
        400,
        "BigBlueButton is not configured.",
      );
    } finally {
      server.deps.config.bigBlueButtonUrl = saved;
    }
  });
});

describe("settings", () => {
  it("default to Zoom's URLs with no credentials, the public Jitsi server, no BigBlueButton", () => {
    expect(configFromEnv({})).toMatchObject({
      videoProvider: {
        name: "Zoom",
        clientId: undefined,
        clientSecret: undefined,
        authorizeUrl: "https://zoom.us/oauth/authorize",
        tokenUrl: "https://zoom.us/oauth/token",
        meetingUrl: "https://api.zoom.us/v2/users/me/meetings",
        joinUrlField: "join_url",
      },
      bigBlueButtonUrl: undefined,
      bigBlueButtonSecret: undefined,
      jitsiServerUrl: "https://meet.jit.si",
    });
    expect(configFromEnv({ JITSI_SERVER_URL: "" }).jitsiServerUrl).toBeUndefined();
    expect(
      configFromEnv({
        BIG_BLUE_BUTTON_URL: "https://bbb.example/bigbluebutton",
        BIG_BLUE_BUTTON_SECRET: "s",
      }),
    ).toMatchObject({
      bigBlueButtonUrl: "https://bbb.example/bigbluebutton/",
      bigBlueButtonSecret: "s",
    });
  });

  it("refuse a URL that is not http(s), and half of BigBlueButton's pair", () => {
    expect(() => configFromEnv({ VIDEO_PROVIDER_TOKEN_URL: "ftp://x" })).toThrow(
      'VIDEO_PROVIDER_TOKEN_URL must be an http(s) URL, not "ftp://x"',
    );
    expect(() => configFromEnv({ BIG_BLUE_BUTTON_URL: "https://bbb.example/" })).toThrow(
      "BIG_BLUE_BUTTON_SECRET must be set together with BIG_BLUE_BUTTON_URL",
    );
    expect(() => configFromEnv({ BIG_BLUE_BUTTON_SECRET: "s" })).toThrow(
      "BIG_BLUE_BUTTON_URL must be set together with BIG_BLUE_BUTTON_SECRET",
    );
  });
});
