/**
 * Two server processes on one PostgreSQL database, both running the email delivery loop against
 * one SMTP server: every queued message arrives exactly once, and both processes take part.
 * PostgreSQL only: the embedded database belongs to a single process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queueEmail } from "../../server/actions/email/outbox.ts";
import { openDatabase, type Database } from "../../server/db/index.ts";
import { useProcessPair } from "../helpers/processes.ts";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.ts";

const N = 40;

describe.skipIf(!process.env.DATABASE_URL)("email delivery across server processes", () => {
  let smtp: SmtpSink;
  let db: Database;
  const env: Record<string, string> = {};
  // Before the pair starts (hooks run in order): the processes are told the SMTP server's port.
  beforeAll(async () => {
    // Each message takes a while to be accepted, so one process cannot send them all before the
    // other's next look at the outbox (every second on PostgreSQL).
    smtp = await startSmtpSink({ acceptDelayMs: 50 });
    Object.assign(env, { EMAIL_HOST: "127.0.0.1", EMAIL_PORT: String(smtp.port) });
  });
  const pair = useProcessPair(env);
  beforeAll(async () => {
    db = await openDatabase({ databaseUrl: pair.cluster.url, migrate: false });
  });
  afterAll(async () => {
    await db?.close();
    await smtp?.close();
  });

  it(`${N} messages queued in four transactions arrive exactly once each, sent by both processes`, async () => {
    for (let t = 0; t < 4; t++)
      await db.prisma.$transaction(async (tx) => {
        for (let i = t * (N / 4); i < (t + 1) * (N / 4); i++)
          await queueEmail(tx, {
            realmId: null,
            to: `person-${i}@example.com`,
            subject: `Message ${i}`,
            text: `Text ${i}`,
            template: "zerver/emails/test",
          });
      });
    const started = Date.now();
    await smtp.waitFor(N, 30_000);
    const elapsed = Date.now() - started;

    // The SMTP server has the last message a moment before its sender records it as sent.
    const outbox = () => db.prisma.emailOutbox.findMany({ orderBy: { id: "asc" } });
    let rows = await outbox();
    for (let i = 0; i < 50 && rows.some((r) => r.sentAt === null); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = await outbox();
    }
    expect(rows).toHaveLength(N);
    expect(rows.every((r) => r.sentAt !== null && r.attempts === 1 && r.lastError === null)).toBe(
      true,
    );
    const senders = new Map<string, number>();
    for (const r of rows) {
      const pid = r.claimedBy!.split(":")[1]!;
      senders.set(pid, (senders.get(pid) ?? 0) + 1);
    }
    expect([...senders.keys()].sort()).toEqual(
      [String(pair.a.child.pid), String(pair.b.child.pid)].sort(),
    );

    // Nothing arrives twice, even after both processes have looked again.
    await new Promise((r) => setTimeout(r, 2_500));
    const subjects = smtp.messages.map((m) => m.subject);
    expect(subjects).toHaveLength(N);
    expect(smtp.recipientsSeen).toBe(N);
    expect(new Set(subjects).size).toBe(N);
    expect(new Set(smtp.messages.map((m) => m.messageId)).size).toBe(N);
    console.log(
      `${N} messages delivered in ${elapsed} ms by two processes: ${[...senders.values()].join(" + ")}`,
    );
  });
});
