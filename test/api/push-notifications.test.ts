/**
 * Mobile push notifications of new messages (zerver/tests/test_push_notifications.py,
 * test_e2ee_push_notifications.py, test_notification_data.py): decided in the send, pushed through
 * the push relay of the tests' own (test/helpers/push-relay.ts) to each E2EE device, whose key
 * decrypts the payload as a phone does; removed when read elsewhere; retried with a backoff when
 * the relay fails; and a device the relay reports gone deregistered.
 */
import sodium from "libsodium-wrappers";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { sleep } from "../helpers/processes.ts";
import {
  decryptPush,
  startPushRelay,
  type PushRelay,
  type RelayRequest,
} from "../helpers/push-relay.ts";
import { useTestServer } from "../helpers/server.ts";
import { MessageRetention } from "../../server/workers/retention.ts";

let relay: PushRelay;
const server = useTestServer({}, { pushRetryBaseMs: 200 });

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

const user = (name: string) => server.creds.users[name]!;

/** A device registered for E2EE push as a phone registers it; its secretbox key. */
async function phone(as: string, tokenId: number) {
  const { device_id } = await expectSuccess(server.as(as).POST("/register_client_device", {}));
  const key = sodium.crypto_secretbox_keygen();
  const token = Buffer.alloc(8);
  token.writeBigInt64BE(BigInt(tokenId));
  await expectSuccess(
    server.as(as).POST("/mobile_push/register", {
      body: {
        device_id: device_id,
        token_kind: "fcm",
        push_key: Buffer.concat([Buffer.from([0x31]), key]).toString("base64"),
        push_key_id: 3,
        bouncer_public_key: "bouncer-public-key",
        encrypted_push_registration: `encrypted-${tokenId}`,
        token_id: token.toString("base64"),
      },
    }),
  );
  const row = await server.db.pushDevice.findUniqueOrThrow({ where: { id: device_id } });
  return { deviceId: device_id, bouncerDeviceId: Number(row.bouncerDeviceId), key };
}

/** Waits for the relay's next push/e2ee/notify requests past `seen`. */
async function notified(count: number, seen = 0, timeoutMs = 10_000): Promise<RelayRequest[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sent = relay.requests.filter((r) => r.endpoint === "push/e2ee/notify").slice(seen);
    if (sent.length >= count) return sent;
    if (Date.now() > deadline)
      throw new Error(`${sent.length} of ${count} pushes in ${timeoutMs} ms`);
    await sleep(20);
  }
}
const payloadOf = (request: RelayRequest, key: Uint8Array) => {
  const [push] = request.body.push_requests as {
    device_id: number;
    payload: { push_key_id: number; encrypted_data: string };
  }[];
  return {
    deviceId: push!.device_id,
    keyId: push!.payload.push_key_id,
    data: decryptPush(key, push!.payload.encrypted_data),
  };
};
const send = (from: string, body: Record<string, unknown>) =>
  expectSuccess(server.as(from).POST("/messages", { body: body as never }));

describe("push notifications", () => {
  it("a direct message to a user who is away is pushed to their device, encrypted with its key, in Zulip's payload shape; reading it elsewhere sends `remove`", async () => {
    const device = await phone("othello", 5001);
    const { id } = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([user("othello").user_id]),
      content: "Hello <b>phone</b> & **friends**",
    });
    const [request] = await notified(1);
    expect(request!.body.realm_uuid).toEqual(expect.any(String));
    const pushed = payloadOf(request!, device.key);
    expect(pushed.deviceId).toBe(device.bouncerDeviceId);
    expect(pushed.keyId).toBe(3);
    expect(pushed.data).toEqual({
      content: "Hello <b>phone</b> & friends",
      message_id: id,
      realm_name: expect.any(String),
      realm_url: "http://zulip.testserver",
      recipient_type: "direct",
      recipient_user_ids: [user("hamlet").user_id, user("othello").user_id].sort((a, b) => a - b),
      sender_avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\//),
      sender_full_name: "King Hamlet",
      sender_id: user("hamlet").user_id,
      time: expect.any(Number),
      type: "message",
      user_id: user("othello").user_id,
    });
    expect(await server.db.pushNotificationQueue.count()).toBe(0);

    await expectSuccess(
      server.as("othello").POST("/messages/flags", {
        body: { messages: [id], op: "add", flag: "read" },
      }),
    );
    const [removal] = await notified(1, 1);
    expect(payloadOf(removal!, device.key).data).toEqual({
      message_ids: [id],
      realm_name: expect.any(String),
      realm_url: "http://zulip.testserver",
      type: "remove",
      user_id: user("othello").user_id,
    });
    // Read again: nothing more to remove.
    await server.as("othello").POST("/messages/flags", {
      body: { messages: [id], op: "add", flag: "read" },
    });
    await sleep(300);
    expect(relay.requests.filter((r) => r.endpoint === "push/e2ee/notify")).toHaveLength(2);
  });

  it("a mention in a channel names the channel and topic; an unmentioned message is not pushed; a message read before its turn is not pushed", async () => {
    const device = await phone("cordelia", 5002);
    await send("hamlet", {
      type: "stream",
      to: "Verona",
      topic: "quiet",
      content: "Nothing for you",
    });
    const { id } = await send("hamlet", {
      type: "stream",
      to: "Verona",
      topic: "news",
      content: "@**Cordelia, Lear's daughter** look",
    });
    const [request] = await notified(1);
    const { data } = payloadOf(request!, device.key);
    expect(data).toMatchObject({
      channel_id: server.creds.channels.Verona!.stream_id,
      channel_name: "Verona",
      topic: "news",
      recipient_type: "channel",
      message_id: id,
      content: "@Cordelia, Lear's daughter look",
    });
    expect(data).not.toHaveProperty("recipient_user_ids");

    // Queued, but read before the loop takes it: dropped, not pushed.
    await server.pushNotifications.stop();
    const { id: second } = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([user("cordelia").user_id]),
      content: "Read me first",
    });
    expect(await server.db.pushNotificationQueue.count()).toBe(1);
    await expectSuccess(
      server.as("cordelia").POST("/messages/flags", {
        body: { messages: [second], op: "add", flag: "read" },
      }),
    );
    server.pushNotifications.start();
    for (let i = 0; i < 100 && (await server.db.pushNotificationQueue.count()) > 0; i++)
      await sleep(20);
    expect(await server.db.pushNotificationQueue.count()).toBe(0);
    await sleep(200);
    expect(relay.requests.filter((r) => r.endpoint === "push/e2ee/notify")).toHaveLength(1);
  });

  it("a push the relay fails is retried after a backoff and arrives once; a device the relay reports gone is deregistered", async () => {
    const device = await phone("iago", 5003);
    relay.mode = { kind: "server-error" };
    const { id } = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([user("iago").user_id]),
      content: "Through a storm",
    });
    await notified(1);
    // The loop records the failure once the relay's answer is in: wait for it.
    const failed = () =>
      server.db.pushNotificationQueue.findFirst({
        where: { userProfileId: user("iago").user_id, lastError: { not: null } },
      });
    let row = await failed();
    for (let i = 0; i < 250 && !row; i++) {
      await sleep(20);
      row = await failed();
    }
    expect(row?.lastError).toContain("500");
    relay.mode = { kind: "ok" };
    const requests = await notified(2);
    expect(payloadOf(requests[1]!, device.key).data.message_id).toBe(id);
    await sleep(500);
    expect(relay.requests.filter((r) => r.endpoint === "push/e2ee/notify")).toHaveLength(2);
    expect(await server.db.pushNotificationQueue.count()).toBe(0);

    relay.goneDeviceIds = [device.bouncerDeviceId];
    await send("hamlet", {
      type: "direct",
      to: JSON.stringify([user("iago").user_id]),
      content: "Anyone there?",
    });
    await notified(3);
    for (let i = 0; i < 50; i++) {
      const d = await server.db.pushDevice.findUniqueOrThrow({ where: { id: device.deviceId } });
      if (d.pushTokenId === null) return;
      await sleep(20);
    }
    throw new Error("the gone device kept its registration");
  });

  it("a message deleted after its push is removed from the phone, by a deletion or by the retention policy; one never pushed sends nothing", async () => {
    const device = await phone("aaron", 5004);
    const pushes = () => relay.requests.filter((r) => r.endpoint === "push/e2ee/notify").length;
    const dm = (content: string) =>
      send("hamlet", { type: "direct", to: JSON.stringify([user("aaron").user_id]), content });
    const { id: deleted } = await dm("Deleted soon");
    await notified(1);
    // Its sender deletes it (DELETE /messages/{id}): Zulip's do_delete_messages.
    await expectSuccess(
      server
        .as("hamlet")
        .DELETE("/messages/{message_id}", { params: { path: { message_id: deleted } } }),
    );
    const [, removal] = await notified(2);
    expect(payloadOf(removal!, device.key).data).toEqual({
      message_ids: [deleted],
      realm_name: expect.any(String),
      realm_url: "http://zulip.testserver",
      type: "remove",
      user_id: user("aaron").user_id,
    });

    // The retention policy archives a pushed message and one never pushed (a channel message
    // aaron was not told of): the removal names only the pushed one.
    const { id: expired } = await dm("Expires");
    await notified(3);
    const { id: quiet } = await send("hamlet", {
      type: "stream",
      to: "Verona",
      topic: "retention",
      content: "Nothing to push",
    });
    await server.db.message.updateMany({
      where: { id: { in: [expired, quiet] } },
      data: { dateSent: new Date(Date.now() - 400 * 86_400_000) },
    });
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { messageRetentionDays: 365 },
    });
    const retention = new MessageRetention(server.deps, { intervalMs: 3_600_000 });
    try {
      expect((await retention.deliverDue()).archived).toBeGreaterThanOrEqual(2);
    } finally {
      await retention.stop();
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { messageRetentionDays: null },
      });
    }
    const [, , , retained] = await notified(4);
    expect(payloadOf(retained!, device.key).data).toMatchObject({
      message_ids: [expired],
      type: "remove",
    });
    await sleep(300);
    expect(pushes()).toBe(4);
    expect(await server.db.pushNotificationQueue.count()).toBe(0);
  });

  it("a mention through user groups names the smallest group the user is in (mentioned_user_group_id, _name); a personal mention names none", async () => {
    const device = await phone("shiva", 5005);
    // Others in the groups have phones too: only the pushes to this device are read.
    const toDevice = async (count: number) => {
      for (let seen = 0; ;) {
        const sent = await notified(seen + 1);
        seen = sent.length;
        const mine = sent.filter((r) =>
          (r.body.push_requests as { device_id: number }[]).some(
            (p) => p.device_id === device.bouncerDeviceId,
          ),
        );
        if (mine.length >= count) return mine.map((r) => payloadOf(r, device.key).data);
      }
    };
    const group = async (name: string, members: string[]) => {
      const { group_id } = await expectSuccess(
        server.as("hamlet").POST("/user_groups/create", {
          body: { name, description: "", members: members.map((m) => user(m).user_id) },
        }),
      );
      return group_id;
    };
    const watch = await group("night watch", ["shiva", "othello"]);
    await group("the court", ["shiva", "othello", "iago", "cordelia", "aaron"]);
    const { id } = await send("hamlet", {
      type: "stream",
      to: "Verona",
      topic: "castle",
      content: "@*the court* and @*night watch*: to the walls",
    });
    const [data] = await toDevice(1);
    expect(data).toMatchObject({
      message_id: id,
      mentioned_user_group_id: watch,
      mentioned_user_group_name: "night watch",
      recipient_type: "channel",
    });

    // Named as well as through the group: a personal mention, which has precedence.
    const { id: personal } = await send("hamlet", {
      type: "stream",
      to: "Verona",
      topic: "castle",
      content: "@**Shiva** and @*night watch*: stay",
    });
    const [, pushed] = await toDevice(2);
    expect(pushed!.message_id).toBe(personal);
    expect(pushed).not.toHaveProperty("mentioned_user_group_id");
    expect(pushed).not.toHaveProperty("mentioned_user_group_name");
    // The other members' pushes go out before the next test counts requests.
    for (let i = 0; i < 250 && (await server.db.pushNotificationQueue.count()) > 0; i++)
      await sleep(20);
  });

  it("with PUSH_NOTIFICATION_REDACT_CONTENT the content is Zulip's redacted text, the rest of the payload as it was", async () => {
    const device = await phone("desdemona", 5006);
    server.deps.config.pushNotificationRedactContent = true;
    try {
      const { id } = await send("hamlet", {
        type: "direct",
        to: JSON.stringify([user("desdemona").user_id]),
        content: "The **secret** plan",
      });
      const [request] = await notified(1);
      const { data } = payloadOf(request!, device.key);
      expect(data).toMatchObject({
        content: "New message",
        message_id: id,
        recipient_type: "direct",
        sender_full_name: "King Hamlet",
        type: "message",
      });
      // Nothing of the message's text anywhere in the payload.
      expect(JSON.stringify(data)).not.toContain("secret");
    } finally {
      server.deps.config.pushNotificationRedactContent = false;
    }
    const { id: plain } = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([user("desdemona").user_id]),
      content: "The open plan",
    });
    const [, request] = await notified(2);
    expect(payloadOf(request!, device.key).data).toMatchObject({
      content: "The open plan",
      message_id: plain,
    });
  });

  it("nothing is queued without a bouncer, nor for a user without a registered device", async () => {
    const before = relay.requests.length;
    await send("hamlet", {
      type: "direct",
      to: JSON.stringify([user("prospero").user_id]),
      content: "No phone here",
    });
    server.deps.config.pushNotificationBouncerUrl = undefined;
    await send("hamlet", {
      type: "direct",
      to: JSON.stringify([user("othello").user_id]),
      content: "No bouncer",
    });
    expect(await server.db.pushNotificationQueue.count()).toBe(0);
    await sleep(300);
    expect(relay.requests.length).toBe(before);
  });
});
