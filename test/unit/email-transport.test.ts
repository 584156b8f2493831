/**
 * Outgoing email's settings and transport, as Zulip's (Django's): the defaults, the sender, the
 * SMTP login, and the refusal of EMAIL_USE_TLS with EMAIL_USE_SSL.
 */
import { describe, expect, it } from "vitest";
import { configFromEnv } from "../../server/config.ts";
import { createEmailTransport, type EmailMessage } from "../../server/lib/email/transport.ts";
import { startSmtpSink } from "../helpers/smtp.ts";

const message: EmailMessage = {
  outboxId: 7,
  createdAt: new Date("2026-11-27T00:00:00Z"),
  from: null,
  to: "someone@example.com",
  replyTo: null,
  subject: "Hello",
  text: "Hi.",
  html: null,
  headers: null,
};

describe("email settings", () => {
  it("default to Django's: no SMTP server (files), port 25, no TLS, the noreply address on EXTERNAL_HOST's domain", () => {
    const config = configFromEnv({ EXTERNAL_HOST: "chat.example.com:9991" });
    expect(config).toMatchObject({
      emailHost: undefined,
      emailPort: 25,
      emailHostUser: "",
      emailHostPassword: "",
      emailUseTls: false,
      emailUseSsl: false,
      noreplyEmailAddress: "noreply@chat.example.com",
      emailDeliveryIntervalMs: 60_000,
    });
    expect(configFromEnv({ DATABASE_URL: "postgresql://x@h/d" }).emailDeliveryIntervalMs).toBe(
      1000,
    );
    expect(
      configFromEnv({
        NOREPLY_EMAIL_ADDRESS: "bounces@example.org",
        EMAIL_HOST: "smtp.example.org",
      }),
    ).toMatchObject({ noreplyEmailAddress: "bounces@example.org", emailHost: "smtp.example.org" });
  });

  it("refuse EMAIL_USE_TLS with EMAIL_USE_SSL, and a bad port", () => {
    expect(() => configFromEnv({ EMAIL_USE_TLS: "true", EMAIL_USE_SSL: "true" })).toThrow(
      'EMAIL_USE_SSL must be "false" when EMAIL_USE_TLS is set, not "true"',
    );
    expect(() => configFromEnv({ EMAIL_PORT: "0" })).toThrow(
      'EMAIL_PORT must be a port number (1 to 65535), not "0"',
    );
  });
});

describe("the SMTP transport", () => {
  it('logs in with EMAIL_HOST_USER and EMAIL_HOST_PASSWORD, and sends from "Zulip" <NOREPLY_EMAIL_ADDRESS>', async () => {
    const smtp = await startSmtpSink({ login: { user: "zulip", pass: "s3cret" } });
    const base = {
      ...configFromEnv({}),
      emailHost: "127.0.0.1",
      emailPort: smtp.port,
      noreplyEmailAddress: "noreply@chat.example.com",
    };
    try {
      // Django logs in only when both are set: the server, which requires a login, refuses.
      const userOnly = createEmailTransport({ ...base, emailHostUser: "zulip" });
      await expect(userOnly.send(message)).rejects.toThrow(/530|Authentication Required/i);
      userOnly.close();

      const transport = createEmailTransport({
        ...base,
        emailHostUser: "zulip",
        emailHostPassword: "s3cret",
      });
      expect(transport.destination).toEqual({ smtp: `127.0.0.1:${smtp.port}` });
      await transport.send(message);
      transport.close();
      expect(smtp.logins).toEqual(["zulip"]);
      const [received] = await smtp.waitFor(1);
      expect(received!.from?.text).toBe('"Zulip" <noreply@chat.example.com>');
      expect(received!.messageId).toBe(
        `<outbox-7.${message.createdAt.getTime()}@chat.example.com>`,
      );
    } finally {
      await smtp.close();
    }
  });
});
