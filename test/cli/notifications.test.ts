/**
 * Two server processes on one PostgreSQL database, both running the missed-message email and push
 * loops against one SMTP server and one push relay: every message a user missed is emailed once
 * and pushed once, whichever process sent it and whichever loop took it.
 * PostgreSQL only: the embedded database belongs to a single process.
 */
import sodium from "libsodium-wrappers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { sleep, useProcessPair } from "../helpers/processes.ts";
import { decryptPush, startPushRelay, type PushRelay } from "../helpers/push-relay.ts";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.ts";

const N = 12;

describe.skipIf(!process.env.DATABASE_URL)("notifications across server processes", () => {
  let smtp: SmtpSink;
  let relay: PushRelay;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    await sodium.ready;
    smtp = await startSmtpSink();
    relay = await startPushRelay();
    Object.assign(env, {
      EMAIL_HOST: "127.0.0.1",
      EMAIL_PORT: String(smtp.port),
      PUSH_NOTIFICATION_BOUNCER_URL: relay.url,
      ZULIP_ORG_ID: relay.orgId,
      ZULIP_ORG_KEY: relay.orgKey,
    });
  });
  const pair = useProcessPair(env);
  afterAll(async () => {
    await smtp?.close();
    await relay?.close();
  });

  it(`${N} direct messages sent through both processes: each emailed once and pushed once`, async () => {
    const othello = pair.a.as("othello");
    await expectSuccess(
      othello.PATCH("/settings", { body: { email_notifications_batching_period_seconds: 1 } }),
    );
    const { device_id } = await expectSuccess(othello.POST("/register_client_device", {}));
    const key = sodium.crypto_secretbox_keygen();
    await expectSuccess(
      othello.POST("/mobile_push/register", {
        body: {
          device_id: device_id,
          token_kind: "apns",
          push_key: Buffer.concat([Buffer.from([0x31]), key]).toString("base64"),
          push_key_id: 1,
          bouncer_public_key: "bouncer-public-key",
          encrypted_push_registration: "encrypted-1",
          token_id: Buffer.alloc(8, 1).toString("base64"),
        },
      }),
    );
    const othelloId = (await expectSuccess(othello.GET("/users/me"))).user_id;
    const sent: number[] = [];
    for (let i = 0; i < N; i++) {
      const via = i % 2 === 0 ? pair.a : pair.b;
      const { id } = await expectSuccess(
        via.as("hamlet").POST("/messages", {
          body: { type: "direct", to: JSON.stringify([othelloId]), content: `Missed number ${i}.` },
        }),
      );
      sent.push(id);
    }

    // Pushes: one per message, each decrypting to its message.
    const deadline = Date.now() + 20_000;
    const pushes = () => relay.requests.filter((r) => r.endpoint === "push/e2ee/notify");
    while (pushes().length < N && Date.now() < deadline) await sleep(50);
    const pushed = pushes().map((r) => {
      const [push] = r.body.push_requests as { payload: { encrypted_data: string } }[];
      return Number(decryptPush(key, push!.payload.encrypted_data).message_id);
    });
    expect(pushed.sort((a, b) => a - b)).toEqual(sent);

    // Emails: every message's text in exactly one of them.
    const text = () => smtp.messages.map((m) => m.text ?? "").join("\n");
    while (!text().includes(`Missed number ${N - 1}.`) && Date.now() < deadline) await sleep(50);
    await sleep(2_500);
    const all = text();
    for (let i = 0; i < N; i++) expect(all.split(`> Missed number ${i}.`)).toHaveLength(2);
    expect(pushes()).toHaveLength(N);
    console.log(
      `${N} messages: ${smtp.messages.length} email(s), ${pushes().length} pushes, across two processes`,
    );
  });
});
