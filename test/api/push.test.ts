/**
 * Client devices and E2EE mobile push (reference op 21; zerver/tests/test_e2ee_push_notifications.py,
 * test_push_registration.py, test_devices.py): POST /register_client_device, POST
 * /mobile_push/register with the token's registration at the bouncer, register's `devices` and
 * `device` events, and POST /mobile_push/e2ee/test_notification through a push relay of the
 * tests' own (test/helpers/push-relay.ts), whose recorded payloads must decrypt with each
 * device's key, generated here as a phone generates it.
 */
import sodium from "libsodium-wrappers";
import type { RequestInfo } from "../../server/context.ts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { queueOf as queueOfServer } from "../helpers/event-queue.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { decryptPush, startPushRelay, type PushRelay } from "../helpers/push-relay.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
let relay: PushRelay;

beforeAll(async () => {
  await sodium.ready;
  relay = await startPushRelay();
});
afterAll(() => relay.close());
beforeEach(() => {
  Object.assign(server.deps.config, {
    pushNotificationBouncerUrl: relay.url,
    zulipOrgId: relay.orgId,
    zulipOrgKey: relay.orgKey,
    pushBouncerTimeoutMs: 15_000,
  });
  relay.mode = { kind: "ok" };
  relay.goneDeviceIds = [];
  relay.requests.length = 0;
});

const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;

/** A phone's side of a device: its secretbox key, as `push_key` sends it, and its token id. */
function phoneKeys(tokenId: number) {
  const key = sodium.crypto_secretbox_keygen();
  const token = Buffer.alloc(8);
  token.writeBigInt64BE(BigInt(tokenId));
  return {
    key,
    pushKey: Buffer.concat([Buffer.from([0x31]), key]).toString("base64"),
    tokenId: token.toString("base64"),
  };
}

const newDevice = async (as: string) =>
  (await expectSuccess(server.as(as).POST("/register_client_device", {}))).device_id;

const register = (as: string, body: Body<"/mobile_push/register", "post">) =>
  server.as(as).POST("/mobile_push/register", { body: body });

const testNotify = (as: string, body: Body<"/mobile_push/e2ee/test_notification", "post"> = {}) =>
  server.as(as).POST("/mobile_push/e2ee/test_notification", { body: body });

/** A device registered for push, through both endpoints, as a phone sets itself up. */
async function pushDevice(as: string, tokenKind: "fcm" | "apns", tokenId: number, pushKeyId = 7) {
  const deviceId = await newDevice(as);
  const keys = phoneKeys(tokenId);
  await expectSuccess(
    register(as, {
      device_id: deviceId,
      token_kind: tokenKind,
      push_key: keys.pushKey,
      push_key_id: pushKeyId,
      bouncer_public_key: "bouncer-public-key",
      encrypted_push_registration: `encrypted-${tokenId}`,
      token_id: keys.tokenId,
    }),
  );
  return { deviceId, pushKeyId, ...keys };
}

const queueOf = (as: string, types: string[]) => queueOfServer(server, as, types);

async function devicesOf(as: string) {
  const state = await expectSuccess(
    server.as(as).POST("/register", { body: { fetch_event_types: ["device"] } }),
  );
  return (state as unknown as { devices: Record<string, Record<string, unknown>> }).devices;
}

describe("POST /register_client_device", () => {
  it("creates a device of the caller, listed in register's devices with no push registration", async () => {
    const first = await newDevice("cordelia");
    const second = await newDevice("cordelia");
    expect(second).toBeGreaterThan(first);
    const devices = await devicesOf("cordelia");
    expect(devices[String(first)]).toEqual({
      push_key_id: null,
      push_token_id: null,
      pending_push_token_id: null,
      push_token_last_updated_timestamp: null,
      push_registration_error_code: null,
    });
    expect(Object.keys(devices)).toEqual([String(first), String(second)]);
    // Another user's devices are not listed.
    expect(await devicesOf("othello")).toEqual({});
  });
});

describe("POST /remove_client_device", () => {
  it("removes the caller's device with its push key and token, and tells the user's clients", async () => {
    const device = await pushDevice("prospero", "fcm", 4242);
    const events = await queueOf("prospero", ["device"]);
    // zulip-flutter's encoding: a form body, the id as JSON text.
    const sent = await fetch(`${server.baseUrl}/api/v1/remove_client_device`, {
      method: "POST",
      headers: {
        Authorization:
          "Basic " +
          Buffer.from(
            `${server.creds.users.prospero!.email}:${server.creds.users.prospero!.api_key}`,
          ).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: `device_id=${device.deviceId}`,
    });
    expect(await sent.json()).toEqual({ result: "success", msg: "" });
    expect(await events()).toEqual([{ type: "device", op: "remove", device_id: device.deviceId }]);
    expect(await devicesOf("prospero")).toEqual({});
    expect(await server.db.pushDevice.count({ where: { id: device.deviceId } })).toBe(0);
    // A notification has nowhere to go.
    await expectError(testNotify("prospero"), 400, "No active registered push device");
  });

  it("refuses a device that is not the caller's, or is gone, with check_device_id's text", async () => {
    const othellos = await newDevice("othello");
    const remove = (as: string, device_id: number) =>
      server.as(as).POST("/remove_client_device", { body: { device_id } });
    await expectError(remove("hamlet", othellos), 400, "Invalid `device_id`");
    await expectError(remove("hamlet", 2 ** 40), 400, "Invalid `device_id`");
    await expectSuccess(remove("othello", othellos));
    await expectError(remove("othello", othellos), 400, "Invalid `device_id`");
    await expectError(
      server.as("hamlet").POST("/remove_client_device", { body: untyped({}) }),
      400,
      "Missing 'device_id' argument",
    );
  });
});

describe("POST /mobile_push/register", () => {
  it("refuses bots, a server without push service, another user's device and incomplete fields", async () => {
    const deviceId = await newDevice("hamlet");
    const keys = phoneKeys(1);
    await expectError(
      register("default-bot", { device_id: deviceId, push_key: keys.pushKey, push_key_id: 1 }),
      400,
      "This endpoint does not accept bot requests.",
    );
    server.deps.config.pushNotificationBouncerUrl = undefined;
    await expectError(
      register("hamlet", { device_id: deviceId, push_key: keys.pushKey, push_key_id: 1 }),
      400,
      "Server is not configured to use push notification service.",
      { code: "PUSH_SERVICE_NOT_CONFIGURED" },
    );
    server.deps.config.pushNotificationBouncerUrl = relay.url;
    await expectError(
      register("othello", { device_id: deviceId, push_key: keys.pushKey, push_key_id: 1 }),
      400,
      "Invalid `device_id`",
    );
    await expectError(
      register("hamlet", { device_id: 2 ** 40, push_key: keys.pushKey, push_key_id: 1 }),
      400,
      "Invalid `device_id`",
    );
    await expectError(
      register("hamlet", { device_id: deviceId, push_key: keys.pushKey }),
      400,
      "Missing parameters: must provide either all push key fields, all token fields, or both.",
    );
    await expectError(
      register("hamlet", { device_id: deviceId, push_key: keys.pushKey, push_key_id: 1 }),
      400,
      "No push registration exists to rotate key for.",
    );
    await expectError(
      register("hamlet", {
        device_id: deviceId,
        token_kind: "fcm",
        token_id: keys.tokenId,
        bouncer_public_key: "k",
        encrypted_push_registration: "e",
      }),
      400,
      "No push registration exists to rotate token for.",
    );
    const full: Body<"/mobile_push/register", "post"> = {
      device_id: deviceId,
      token_kind: "fcm",
      push_key: keys.pushKey,
      push_key_id: 1,
      bouncer_public_key: "k",
      encrypted_push_registration: "e",
      token_id: keys.tokenId,
    };
    for (const pushKey of ["not base64!", Buffer.alloc(33).toString("base64"), "MTIz"])
      await expectError(
        register("hamlet", { ...full, push_key: pushKey }),
        400,
        "Invalid `push_key`",
      );
    await expectError(
      register("hamlet", { ...full, token_id: "%%%" }),
      400,
      "`token_id` is not Base64 encoded",
    );
    expect(relay.requests).toEqual([]);
  });

  it("stores the key and the pending token, registers the token at the bouncer, and tells the user's clients", async () => {
    const events = await queueOf("hamlet", ["device"]);
    const device = await pushDevice("hamlet", "fcm", 4242, 2408);
    expect(relay.requests).toEqual([
      {
        endpoint: "push/e2ee/register",
        orgId: relay.orgId,
        orgKey: relay.orgKey,
        userAgent: expect.stringMatching(/^ZulipServer\//),
        body: {
          realm_uuid: (
            await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } })
          ).uuid,
          token_id: device.tokenId,
          encrypted_push_registration: "encrypted-4242",
          bouncer_public_key: "bouncer-public-key",
        },
      },
    ]);
    const got = await events();
    const first = got[0];
    expect(got).toEqual([
      {
        type: "device",
        op: "update",
        device_id: device.deviceId,
        push_key_id: 2408,
        pending_push_token_id: device.tokenId,
        push_token_last_updated_timestamp: expect.any(Number),
        push_registration_error_code: null,
      },
      {
        type: "device",
        op: "update",
        device_id: device.deviceId,
        push_token_id: device.tokenId,
        pending_push_token_id: null,
      },
    ]);
    expect((await devicesOf("hamlet"))[String(device.deviceId)]).toEqual({
      push_key_id: 2408,
      push_token_id: device.tokenId,
      pending_push_token_id: null,
      push_token_last_updated_timestamp:
        first?.type === "device" && first.op === "update"
          ? first.push_token_last_updated_timestamp
          : undefined,
      push_registration_error_code: null,
    });

    // The same registration again changes nothing and asks the bouncer nothing.
    relay.requests.length = 0;
    await expectSuccess(
      register("hamlet", {
        device_id: device.deviceId,
        token_kind: "fcm",
        push_key: device.pushKey,
        push_key_id: 2408,
        bouncer_public_key: "bouncer-public-key",
        encrypted_push_registration: "encrypted-4242",
        token_id: device.tokenId,
      }),
    );
    expect(relay.requests).toEqual([]);

    // Rotating the key alone: one event with the new key id, no bouncer request.
    const rotated = phoneKeys(4242);
    await expectSuccess(
      register("hamlet", { device_id: device.deviceId, push_key: rotated.pushKey, push_key_id: 9 }),
    );
    expect(relay.requests).toEqual([]);
    expect((await events()).slice(2)).toEqual([
      { type: "device", op: "update", device_id: device.deviceId, push_key_id: 9 },
    ]);
  });

  it("keeps the bouncer's refusal as the device's push_registration_error_code", async () => {
    const events = await queueOf("iago", ["device"]);
    relay.mode = {
      kind: "refuse",
      status: 400,
      code: "INVALID_BOUNCER_PUBLIC_KEY",
      msg: "Invalid bouncer_public_key",
    };
    const device = await pushDevice("iago", "apns", 77);
    expect((await events()).at(-1)).toEqual({
      type: "device",
      op: "update",
      device_id: device.deviceId,
      push_registration_error_code: "INVALID_BOUNCER_PUBLIC_KEY",
    });
    expect((await devicesOf("iago"))[String(device.deviceId)]).toMatchObject({
      push_token_id: null,
      pending_push_token_id: device.tokenId,
      push_registration_error_code: "INVALID_BOUNCER_PUBLIC_KEY",
    });
    // Not registered at the bouncer: no test notification can reach it.
    await expectError(testNotify("iago"), 400, "No active registered push device", {
      code: "NO_ACTIVE_PUSH_DEVICE",
    });
  });

  it("leaves the registration pending when the bouncer is away or refuses this server, until the attempt is over", async () => {
    server.deps.config.zulipOrgKey = "wrong-key";
    server.deps.config.pushBouncerTimeoutMs = 1_500;
    const device = await pushDevice("cordelia", "fcm", 5150);
    expect(relay.requests.map((r) => [r.endpoint, r.orgKey])).toEqual([
      ["push/e2ee/register", "wrong-key"],
    ]);
    expect((await devicesOf("cordelia"))[String(device.deviceId)]).toMatchObject({
      push_token_id: null,
      pending_push_token_id: device.tokenId,
      push_registration_error_code: null,
    });
    const again: Body<"/mobile_push/register", "post"> = {
      device_id: device.deviceId,
      token_kind: "fcm",
      token_id: device.tokenId,
      bouncer_public_key: "bouncer-public-key",
      encrypted_push_registration: "encrypted-5150",
    };
    await expectError(
      register("cordelia", again),
      400,
      "A registration for the device already in progress.",
    );
    server.deps.config.zulipOrgKey = relay.orgKey;
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    await expectSuccess(register("cordelia", again));
    expect((await devicesOf("cordelia"))[String(device.deviceId)]).toMatchObject({
      push_token_id: device.tokenId,
      pending_push_token_id: null,
    });
    // Registered now; the same token again is a no-op.
    relay.requests.length = 0;
    await expectSuccess(register("cordelia", again));
    expect(relay.requests).toEqual([]);
    server.deps.config.pushBouncerTimeoutMs = 15_000;
  });
});

describe("POST /mobile_push/e2ee/test_notification", () => {
  let fcm: Awaited<ReturnType<typeof pushDevice>>;
  let apns: Awaited<ReturnType<typeof pushDevice>>;
  let unregistered: number;
  beforeAll(async () => {
    await sodium.ready;
    relay.mode = { kind: "ok" };
    Object.assign(server.deps.config, {
      pushNotificationBouncerUrl: relay.url,
      zulipOrgId: relay.orgId,
      zulipOrgKey: relay.orgKey,
    });
    fcm = await pushDevice("desdemona", "fcm", 11, 101);
    apns = await pushDevice("desdemona", "apns", 12, 102);
    unregistered = await newDevice("desdemona");
  });

  /** The payloads of the one notify request the relay got, decrypted with each device's key. */
  function notified() {
    const notifies = relay.requests.filter((r) => r.endpoint === "push/e2ee/notify");
    expect(notifies).toHaveLength(1);
    const [request] = notifies;
    expect(request).toMatchObject({ orgId: relay.orgId, orgKey: relay.orgKey });
    return request!.body.push_requests as Record<string, unknown>[];
  }

  it("encrypts a test notification to each registered device of the caller, in one request to the bouncer", async () => {
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
    const before = Math.floor(Date.now() / 1000);
    await expectSuccess(testNotify("desdemona"));
    const requests = notified();
    expect(relay.requests[0]!.body.realm_uuid).toBe(realm.uuid);
    expect(requests).toHaveLength(2);
    const rows = await server.db.pushDevice.findMany({
      where: { id: { in: [fcm.deviceId, apns.deviceId] } },
      orderBy: { id: "asc" },
    });
    const [fcmRequest, apnsRequest] = requests;
    expect(fcmRequest).toEqual({
      device_id: Number(rows[0]!.bouncerDeviceId),
      fcm_priority: "high",
      payload: { push_key_id: 101, encrypted_data: expect.any(String) },
    });
    expect(apnsRequest).toEqual({
      device_id: Number(rows[1]!.bouncerDeviceId),
      http_headers: { apns_priority: 10, apns_push_type: "alert" },
      payload: { push_key_id: 102, encrypted_data: expect.any(String) },
    });
    for (const [request, device] of [
      [fcmRequest, fcm],
      [apnsRequest, apns],
    ] as const) {
      const payload = decryptPush(
        device.key,
        (request!.payload as { encrypted_data: string }).encrypted_data,
      );
      expect(payload).toEqual({
        realm_name: realm.name,
        realm_url: "http://zulip.testserver",
        time: expect.any(Number),
        type: "test",
        user_id: id("desdemona"),
      });
      expect(payload.time).toBeGreaterThanOrEqual(before);
    }
    // Each payload opens only with its own device's key.
    expect(() =>
      decryptPush(apns.key, (fcmRequest!.payload as { encrypted_data: string }).encrypted_data),
    ).toThrow();
  });

  it("sends to the one device named by device_id", async () => {
    await expectSuccess(testNotify("desdemona", { device_id: apns.deviceId }));
    const requests = notified();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.payload).toMatchObject({ push_key_id: 102 });
    const payload = decryptPush(
      apns.key,
      (requests[0]!.payload as { encrypted_data: string }).encrypted_data,
    );
    expect(payload.type).toBe("test");
  });

  it("reads the devices in one statement, whatever their number", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      await expectSuccess(testNotify("desdemona", { device_id: fcm.deviceId }));
      await expectSuccess(testNotify("desdemona"));
    } finally {
      server.deps.observe = undefined;
    }
    const [one, all] = seen.map((info) => info.statements);
    expect(all).toBe(one);
    // Authentication, the devices, the organization's host (its root-realm check).
    expect(all).toBeLessThanOrEqual(3);
  });

  it("refuses bots, callers without registered devices, and a device that is not registered or not theirs", async () => {
    await expectError(
      testNotify("default-bot"),
      400,
      "This endpoint does not accept bot requests.",
    );
    const none = { code: "NO_ACTIVE_PUSH_DEVICE" };
    await expectError(testNotify("othello"), 400, "No active registered push device", none);
    await expectError(
      testNotify("desdemona", { device_id: unregistered }),
      400,
      "No active registered push device",
      none,
    );
    await expectError(
      testNotify("othello", { device_id: fcm.deviceId }),
      400,
      "No active registered push device",
      none,
    );
    for (const deviceId of [2 ** 31 - 1, 2 ** 40, -1])
      await expectError(
        testNotify("desdemona", { device_id: deviceId }),
        400,
        "No active registered push device",
        none,
      );
    expect(relay.requests).toEqual([]);
  });

  it("asks for the administrator when no bouncer is configured or the bouncer refuses the server", async () => {
    const msg =
      "Push notification configuration issue on server, contact the server administrator or retry later.";
    server.deps.config.pushNotificationBouncerUrl = undefined;
    await expectError(testNotify("desdemona"), 403, msg, { code: "ADMIN_ACTION_REQUIRED" });
    server.deps.config.pushNotificationBouncerUrl = relay.url;
    server.deps.config.zulipOrgKey = "wrong-key";
    await expectError(testNotify("desdemona"), 403, msg, { code: "ADMIN_ACTION_REQUIRED" });
    expect(relay.requests.map((r) => r.orgKey)).toEqual(["wrong-key"]);
  });

  it("answers 502 when the bouncer cannot be reached, does not answer in time, or fails", async () => {
    const connect = {
      msg: "Network error while connecting to Zulip push notification service.",
      code: "FAILED_TO_CONNECT_BOUNCER",
    };
    server.deps.config.pushNotificationBouncerUrl = relay.deadUrl;
    await expectError(testNotify("desdemona"), 502, connect.msg, { code: connect.code });

    server.deps.config.pushNotificationBouncerUrl = relay.url;
    server.deps.config.pushBouncerTimeoutMs = 300;
    relay.mode = { kind: "hang" };
    const started = Date.now();
    await expectError(testNotify("desdemona"), 502, connect.msg, { code: connect.code });
    expect(Date.now() - started).toBeLessThan(5_000);

    for (const status of [500, 503]) {
      relay.mode = { kind: "server-error", status };
      await expectError(
        testNotify("desdemona"),
        502,
        "Internal server error on Zulip push notification service, retry later.",
        { code: "INTERNAL_SERVER_ERROR_ON_BOUNCER" },
      );
    }
  });

  it("makes the bouncer call outside any transaction: the device's row stays writable meanwhile", async () => {
    server.deps.config.pushBouncerTimeoutMs = 3_000;
    relay.mode = { kind: "hang" };
    const pending = testNotify("desdemona", { device_id: fcm.deviceId });
    while (!relay.requests.some((r) => r.endpoint === "push/e2ee/notify"))
      await new Promise((resolve) => setTimeout(resolve, 10));
    // While the bouncer is being waited for, the same device's key is rotated (an UPDATE of its row).
    const started = Date.now();
    await expectSuccess(
      register("desdemona", {
        device_id: fcm.deviceId,
        push_key: phoneKeys(11).pushKey,
        push_key_id: 103,
      }),
    );
    expect(Date.now() - started).toBeLessThan(1_500);
    await expectError(
      pending,
      502,
      "Network error while connecting to Zulip push notification service.",
    );
  });

  it("forgets a device's registration when the bouncer reports its token gone", async () => {
    const events = await queueOf("desdemona", ["device"]);
    const row = await server.db.pushDevice.findUniqueOrThrow({ where: { id: apns.deviceId } });
    relay.goneDeviceIds = [Number(row.bouncerDeviceId)];
    await expectSuccess(testNotify("desdemona"));
    expect(await events()).toEqual([
      { type: "device", op: "update", device_id: apns.deviceId, push_token_id: null },
    ]);
    expect((await devicesOf("desdemona"))[String(apns.deviceId)]).toMatchObject({
      push_token_id: null,
    });
    await expectError(
      testNotify("desdemona", { device_id: apns.deviceId }),
      400,
      "No active registered push device",
    );
  });
});

/**
 * Legacy (non-E2EE) push tokens. This server has no push bouncer for them (and no APNs or FCM
 * credentials), so it answers as a Zulip server without push notifications configured:
 * add_push_device_token stores the token, remove_push_device_token refuses an unknown one
 * ("Token does not exist"), and a test notification succeeds with nothing sent (Zulip drops it:
 * "APNs: Dropping a notification because nothing configured").
 */
describe("legacy push tokens (no push notifications configured)", () => {
  beforeEach(() => {
    server.deps.config.pushNotificationBouncerUrl = undefined;
  });
  const tokens = (who: string) =>
    server.db.pushDeviceToken.findMany({
      where: { userProfileId: id(who) },
      orderBy: { id: "asc" },
      select: { kind: true, token: true, iosAppId: true },
    });
  const addApns = (who: string, token: string, appid = "org.zulip.Zulip") =>
    server.as(who).POST("/users/me/apns_device_token", { body: { token, appid } });
  const addFcm = (who: string, token: string) =>
    server.as(who).POST("/users/me/android_gcm_reg_id", { body: { token } });

  it("stores APNs and FCM tokens once each, with the app ID; removes them", async () => {
    await expectSuccess(addApns("cordelia", "c0ffee"));
    await expectSuccess(addApns("cordelia", "c0ffee"));
    await expectSuccess(addFcm("cordelia", "fcm-token-1"));
    expect(await tokens("cordelia")).toEqual([
      { kind: 1, token: "c0ffee", iosAppId: "org.zulip.Zulip" },
      { kind: 2, token: "fcm-token-1", iosAppId: null },
    ]);
    // The kind counts: an FCM token is not removed as an APNs one.
    await expectError(
      server.as("cordelia").DELETE("/users/me/apns_device_token", { body: { token: "fcm" } }),
      400,
      "Invalid APNS token",
    );
    await expectSuccess(
      server.as("cordelia").DELETE("/users/me/apns_device_token", { body: { token: "c0ffee" } }),
    );
    await expectError(
      server.as("cordelia").DELETE("/users/me/apns_device_token", { body: { token: "c0ffee" } }),
      400,
      "Token does not exist",
    );
    await expectSuccess(
      server.as("cordelia").DELETE("/users/me/android_gcm_reg_id", {
        body: { token: "fcm-token-1" },
      }),
    );
    await expectError(
      server.as("cordelia").DELETE("/users/me/android_gcm_reg_id", {
        body: { token: "fcm-token-1" },
      }),
      400,
      "Token does not exist",
    );
    expect(await tokens("cordelia")).toEqual([]);
    expect(relay.requests).toEqual([]);
  });

  it("refuses Zulip's bad tokens, app IDs and bots", async () => {
    await expectError(addApns("hamlet", ""), 400, "Empty or invalid length token");
    await expectError(addFcm("hamlet", "x".repeat(4097)), 400, "Empty or invalid length token");
    await expectError(addApns("hamlet", "not hex"), 400, "Invalid APNS token");
    await expectError(addApns("hamlet", "c0ffee", "org.zulip/evil"), 400, "Invalid app ID");
    await expectError(
      server.as("hamlet").POST("/users/me/apns_device_token", {
        body: untyped({ token: "c0ffee" }),
      }),
      400,
      "Missing 'appid' argument",
    );
    const bot = Object.keys(server.creds.bots)[0]!;
    await expectError(addFcm(bot, "t"), 400, "This endpoint does not accept bot requests.");
    expect(await tokens("hamlet")).toEqual([]);
  });

  it("test notification: succeeds with nothing sent; an unknown token is not recognized", async () => {
    await expectSuccess(server.as("othello").POST("/mobile_push/test_notification", {}));
    await expectSuccess(addFcm("othello", "fcm-othello"));
    await expectSuccess(
      server.as("othello").POST("/mobile_push/test_notification", {
        body: { token: "fcm-othello" },
      }),
    );
    await expectError(
      server.as("othello").POST("/mobile_push/test_notification", { body: { token: "nope" } }),
      400,
      "Device not recognized",
    );
    expect(relay.requests).toEqual([]);
  });

  it("as zulip-flutter and zulip-mobile send them: form bodies", async () => {
    const { email, api_key } = server.creds.users.iago!;
    const call = (method: string, path: string, body: Record<string, string>) =>
      fetch(`${server.baseUrl}/api/v1${path}`, {
        method,
        headers: {
          Authorization: `Basic ${Buffer.from(`${email}:${api_key}`).toString("base64")}`,
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams(body).toString(),
      });
    const token = "fcm token:with+plus";
    expect((await call("POST", "/users/me/android_gcm_reg_id", { token })).status).toBe(200);
    expect(await tokens("iago")).toEqual([{ kind: 2, token, iosAppId: null }]);
    const apns = { token: "ab cd", appid: "org.zulip.Zulip" };
    expect((await call("POST", "/users/me/apns_device_token", apns)).status).toBe(200);
    expect((await call("DELETE", "/users/me/android_gcm_reg_id", { token })).status).toBe(200);
    expect(await tokens("iago")).toEqual([
      { kind: 1, token: "ab cd", iosAppId: "org.zulip.Zulip" },
    ]);
  });
});
