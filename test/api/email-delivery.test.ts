/**
 * The email outbox delivered: by SMTP to a real SMTP server on loopback, or as .eml files in
 * DATA_DIR/emails by default; woken by the commit that queued the mail, retried with backoff
 * when the SMTP server refuses, given up after its attempts, and taken over from a process whose
 * claim ran out. (Across two processes: test/cli/email-delivery.test.ts.)
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEASE_MS } from "../../server/workers/email-delivery.ts";
import { queueEmail, type OutgoingEmail } from "../../server/actions/email/outbox.ts";
import { inTransaction } from "../../server/actions/transaction.ts";
import { sleep } from "../helpers/processes.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.ts";

const mail = (n: string, extra: Partial<OutgoingEmail> = {}): OutgoingEmail => ({
  realmId: null,
  to: `invitee-${n}@example.com`,
  subject: `Message ${n}`,
  text: `Plain text of ${n}.\n`,
  html: `<p>HTML of <b>${n}</b>.</p>`,
  template: "zerver/emails/test",
  ...extra,
});

async function queue(server: TestServer, ...mails: OutgoingEmail[]): Promise<number[]> {
  const realm = await server.db.realm.findFirstOrThrow({ select: { id: true } });
  return inTransaction(server.deps, realm.id, async ({ tx }) => {
    const ids: number[] = [];
    for (const m of mails) ids.push(await queueEmail(tx, m));
    return ids;
  });
}

const outbox = (server: TestServer, id: number) =>
  server.db.emailOutbox.findUniqueOrThrow({ where: { id } });

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not done in ${timeoutMs} ms: ${String(value)}`);
    await sleep(20);
  }
}

describe("email by SMTP", () => {
  let smtp: SmtpSink;
  let server: TestServer;
  /** Recipient commands the sink refuses (451) from now on, counted down per refusal. */
  let refusals = 0;
  beforeAll(async () => {
    smtp = await startSmtpSink({
      refuse: () => (refusals > 0 && refusals-- > 0 ? "Try again later" : undefined),
    });
    // The embedded database: the loop looks only every 60 s by itself, so mail that arrives
    // sooner was sent because its commit woke the loop.
    server = await startTestServer(
      { emailHost: "127.0.0.1", emailPort: smtp.port },
      { emailRetryBaseMs: 200 },
    );
    expect(server.deps.config.emailDeliveryIntervalMs).toBe(60_000);
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it("sends a queued message once its transaction commits: from Zulip's noreply address, to the recipient, subject, text and HTML", async () => {
    const started = Date.now();
    const [id] = await queue(server, mail("one", { replyTo: "hamlet@zulip.com" }));
    const [received] = await smtp.waitFor(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(received!.from?.value).toEqual([{ name: "Zulip", address: "noreply@zulip.testserver" }]);
    expect(received!.to).toMatchObject({ value: [{ address: "invitee-one@example.com" }] });
    expect(received!.replyTo?.value).toMatchObject([{ address: "hamlet@zulip.com" }]);
    expect(received!.subject).toBe("Message one");
    expect(received!.text).toBe("Plain text of one.\n");
    expect(received!.html).toBe("<p>HTML of <b>one</b>.</p>");
    expect(received!.messageId).toMatch(new RegExp(`^<outbox-${id}\\.\\d+@zulip\\.testserver>$`));

    const row = await until(
      () => outbox(server, id!),
      (r) => r.sentAt !== null,
    );
    expect(row).toMatchObject({
      attempts: 1,
      lastError: null,
      claimedBy: server.emailDelivery.processId,
    });
    // Once: nothing more arrives, and the loop finds nothing left to send.
    await sleep(300);
    expect(await server.emailDelivery.deliverDue()).toEqual({ sent: [], failed: [] });
    expect(smtp.messages).toHaveLength(1);
  });

  it("a message the SMTP server refuses (451) is retried after a backoff and arrives once, its attempts and last error recorded", async () => {
    smtp.messages.length = 0;
    refusals = 1;
    const seen = smtp.recipientsSeen;
    const [id] = await queue(
      server,
      mail("retried", { from: '"Hamlet via Zulip" <noreply@zulip.testserver>' }),
    );
    const refused = await until(
      () => outbox(server, id!),
      (r) => r.attempts === 1 && r.lastError !== null,
    );
    expect(refused.sentAt).toBeNull();
    expect(refused.lastError).toContain("451 Try again later");
    // Released (not claimed) and due again after the first backoff (200 ms).
    expect(refused.claimedBy).toBeNull();
    expect(refused.scheduledAt.getTime()).toBeGreaterThan(refused.createdAt.getTime() + 150);

    const [received] = await smtp.waitFor(1);
    expect(received!.subject).toBe("Message retried");
    expect(received!.from?.value).toEqual([
      { name: "Hamlet via Zulip", address: "noreply@zulip.testserver" },
    ]);
    const sent = await until(
      () => outbox(server, id!),
      (r) => r.sentAt !== null,
    );
    expect(sent.attempts).toBe(2);
    expect(sent.lastError).toContain("451");
    await sleep(500);
    expect(smtp.messages).toHaveLength(1);
    // Two tries in all: the refused one and the accepted one.
    expect(smtp.recipientsSeen - seen).toBe(2);
  });

  it("gives up after 10 attempts: the message stays unsent with its last error, and is not tried again", async () => {
    smtp.messages.length = 0;
    refusals = 1000;
    const manual = await startTestServer(
      { emailHost: "127.0.0.1", emailPort: smtp.port },
      { emailRetryBaseMs: 1 },
    );
    try {
      const [id] = await queue(manual, mail("refused"));
      // Backoffs of 1, 2, 4 … 256 ms between the ten attempts.
      const row = await until(
        () => outbox(manual, id!),
        (r) => r.attempts === 10 && r.claimedBy === null,
      );
      expect(row.sentAt).toBeNull();
      expect(row.lastError).toContain("451");
      await sleep(1_000);
      expect((await outbox(manual, id!)).attempts).toBe(10);
      expect(await manual.emailDelivery.deliverDue()).toEqual({ sent: [], failed: [] });
    } finally {
      refusals = 0;
      await manual.close();
    }
    expect(smtp.messages).toHaveLength(0);
  });
});

describe("email claims", () => {
  let smtp: SmtpSink;
  let server: TestServer;
  beforeAll(async () => {
    smtp = await startSmtpSink();
    server = await startTestServer(
      { emailHost: "127.0.0.1", emailPort: smtp.port },
      { emailDelivery: "manual" },
    );
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it("a message claimed by a process that died is sent once its claim runs out; one claimed by a live process is left to it", async () => {
    const [dead, live, later] = await queue(
      server,
      mail("dead"),
      mail("live"),
      mail("later", { scheduledAt: new Date(Date.now() + 60_000) }),
    );
    const now = Date.now();
    await server.db.emailOutbox.update({
      where: { id: dead! },
      data: { claimedBy: "gone:1", claimedAt: new Date(now - LEASE_MS - 1000), attempts: 1 },
    });
    await server.db.emailOutbox.update({
      where: { id: live! },
      data: { claimedBy: "busy:2", claimedAt: new Date(now - 1000), attempts: 1 },
    });

    expect(await server.emailDelivery.deliverDue()).toEqual({ sent: [dead], failed: [] });
    expect(smtp.messages.map((m) => m.subject)).toEqual(["Message dead"]);
    expect(await outbox(server, dead!)).toMatchObject({
      attempts: 2,
      claimedBy: server.emailDelivery.processId,
    });
    expect(await outbox(server, live!)).toMatchObject({ sentAt: null, claimedBy: "busy:2" });
    expect(await outbox(server, later!)).toMatchObject({ sentAt: null, attempts: 0 });
  });

  it("a rolled-back transaction sends nothing", async () => {
    smtp.messages.length = 0;
    const realm = await server.db.realm.findFirstOrThrow({ select: { id: true } });
    const before = await server.db.emailOutbox.count();
    await expect(
      inTransaction(server.deps, realm.id, async ({ tx }) => {
        await queueEmail(tx, mail("rolled back"));
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    expect(await server.db.emailOutbox.count()).toBe(before);
    expect((await server.emailDelivery.deliverDue()).sent).toEqual([]);
    expect(smtp.messages).toHaveLength(0);
  });
});

describe("email as .eml files (the default)", () => {
  let server: TestServer;
  const logged: { msg: string; emailDirectory?: string }[] = [];
  beforeAll(async () => {
    const log = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
    server = await startTestServer({}, { log });
  });
  afterAll(() => server?.close());

  it("writes each message to DATA_DIR/emails as an RFC 822 file, and says so once at start-up", async () => {
    const directory = join(server.deps.config.dataDir, "emails");
    expect(logged.filter((l) => l.emailDirectory)).toEqual([
      expect.objectContaining({
        emailDirectory: directory,
        msg: `email is not sent: each message is written to ${directory} as an .eml file (set EMAIL_HOST to send it by SMTP)`,
      }),
    ]);
    const [id] = await queue(server, mail("file"));
    expect(
      await until(
        () => outbox(server, id!),
        (r) => r.sentAt !== null,
      ),
    ).toMatchObject({ attempts: 1 });
    const files = readdirSync(directory);
    expect(files).toEqual([expect.stringMatching(new RegExp(`^\\d{8}T\\d{6}Z-${id}\\.eml$`))]);
    const parsed = await simpleParser(readFileSync(join(directory, files[0]!)));
    expect(parsed.from?.text).toBe('"Zulip" <noreply@zulip.testserver>');
    expect(parsed.to).toMatchObject({ text: "invitee-file@example.com" });
    expect(parsed.subject).toBe("Message file");
    expect(parsed.text).toBe("Plain text of file.\n");
    expect(parsed.html).toBe("<p>HTML of <b>file</b>.</p>");
  });
});
