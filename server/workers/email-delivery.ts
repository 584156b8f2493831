/**
 * Sending the email outbox (the rows queueEmail writes in the transactions that cause mail), in
 * every server process at once: Zulip's email_senders queue worker, on a durable table.
 *
 * The claim protocol: a lease, not a transaction held across the send. Each message is claimed
 * by one short autocommitted statement (`FOR UPDATE SKIP LOCKED` picks a row no other process
 * is claiming, and the row is stamped `claimed_at`/`claimed_by` and `attempts + 1`), then sent
 * with no transaction open, then marked `sent_at` if the claim is still ours. So:
 * - a slow SMTP server holds no row lock or connection: the database sees two statements of
 *   microseconds per message, however long the send takes;
 * - another process skips a claimed row until its lease (LEASE_MS) runs out, so a process that
 *   dies mid-send loses nothing: the row is claimed again once the lease has passed. The lease is
 *   many times the longest a send can take (the transport's timeouts, EMAIL_TIMEOUT_MS), so a
 *   live process always marks its row before anyone else may claim it;
 * - "exactly once" holds as far as it can for any mail system: a process killed after the SMTP
 *   server accepted a message but before its row was marked sends it again after the lease;
 *   the message keeps its Message-ID (lib/email/transport.ts), so mail clients show it once.
 *   Holding a transaction across the send would not close that window either (the commit can
 *   fail after the acceptance), only hold a lock for as long as the SMTP server is slow.
 * A failed send is released at once: `last_error` says why, and `scheduled_at` moves on by an
 * exponential backoff; after MAX_ATTEMPTS claims the message is left unsent (an error is logged;
 * the row keeps `sent_at` null and its last error).
 *
 * On time: committing a transaction that queued mail wakes this process's loop (emailQueued,
 * through afterCommit); it looks at least every `intervalMs` for mail other processes queued,
 * and otherwise sleeps until the next due or retry time.
 */
import type { AppDeps } from "../context.ts";
import {
  createEmailTransport,
  EMAIL_TIMEOUT_MS,
  type EmailMessage,
  type EmailTransport,
} from "../lib/email/transport.ts";
import { DeliveryLoop, type DeliveryLoopOptions } from "./delivery-loop.ts";

/** How long a claim keeps other processes off a message: far longer than a send can take. */
export const LEASE_MS = Math.max(10 * 60_000, 10 * EMAIL_TIMEOUT_MS);
/** Claims a message gets before it is given up. */
const MAX_ATTEMPTS = 10;
/** The wait after the first failure, doubled after each next one, up to RETRY_MAX_MS. */
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 60 * 60_000;
/** Longest error text kept in `last_error`. */
const MAX_ERROR_LENGTH = 1000;

export interface EmailDeliveryOptions extends DeliveryLoopOptions {
  /** The first retry's wait (tests shorten it). */
  retryBaseMs?: number;
  /** Where mail goes; by default as the configuration says (lib/email/transport.ts). */
  transport?: EmailTransport;
}

export interface EmailDeliveryReport {
  sent: number[];
  /** Not sent this time: retried later, or given up after MAX_ATTEMPTS. */
  failed: number[];
}

type Deps = Pick<AppDeps, "db" | "log" | "config" | "now">;

interface ClaimedRow {
  id: number;
  createdAt: Date;
  toAddress: string;
  fromAddress: string | null;
  replyTo: string | null;
  subject: string;
  textBody: string;
  htmlBody: string | null;
  headers: Record<string, string> | null;
  templateName: string | null;
  attempts: number;
}

/** Mail due at `at` was committed in this process: its loops look then. */
export function emailQueued(at: Date) {
  EmailDelivery.wakeRunning(at);
}

export class EmailDelivery extends DeliveryLoop<EmailDeliveryReport> {
  readonly transport: EmailTransport;

  constructor(
    protected override readonly deps: Deps,
    private readonly options: EmailDeliveryOptions,
  ) {
    super(deps, { ...options, name: "email delivery" });
    this.transport = options.transport ?? createEmailTransport(deps.config);
  }

  /** Says where mail goes, then starts the timer: a round now, then at each next due time. */
  override start(): this {
    const to = this.transport.destination;
    if ("smtp" in to) this.deps.log.info({ smtp: to.smtp }, `email is sent by SMTP to ${to.smtp}`);
    else
      this.deps.log.info(
        { emailDirectory: to.directory },
        `email is not sent: each message is written to ${to.directory} as an .eml file (set EMAIL_HOST to send it by SMTP)`,
      );
    return super.start();
  }

  /** Stops the timer, waits for a send in progress, and closes the transport. */
  override async stop(): Promise<void> {
    await super.stop();
    this.transport.close();
  }

  /** When a message may next be claimed: its time, or its claim's end while another sends it. */
  protected async nextDueAt(): Promise<Date | null> {
    const [row] = await this.deps.db.$queryRaw<{ next: Date | null }[]>`
      SELECT min(CASE WHEN claimed_at IS NULL THEN scheduled_at
                      ELSE greatest(scheduled_at, claimed_at + ${LEASE_MS}::int * interval '1 millisecond') END) AS next
      FROM email_outbox WHERE sent_at IS NULL AND attempts < ${MAX_ATTEMPTS}`;
    return row?.next ?? null;
  }

  protected async deliverAll(): Promise<EmailDeliveryReport> {
    const report: EmailDeliveryReport = { sent: [], failed: [] };
    while (!this.stopped) {
      const row = await this.claim();
      if (!row) break;
      if (await this.send(row)) report.sent.push(row.id);
      else report.failed.push(row.id);
    }
    return report;
  }

  /** Claims the next due message, unclaimed or with its claim run out (see the file's comment). */
  private async claim(): Promise<ClaimedRow | null> {
    const now = this.deps.now();
    const expired = new Date(now.getTime() - LEASE_MS);
    const [row] = await this.deps.db.$queryRaw<ClaimedRow[]>`
      UPDATE email_outbox
      SET claimed_at = ${now}, claimed_by = ${this.processId}, attempts = attempts + 1
      WHERE id = (
        SELECT id FROM email_outbox
        WHERE sent_at IS NULL AND scheduled_at <= ${now} AND attempts < ${MAX_ATTEMPTS}
          AND (claimed_at IS NULL OR claimed_at <= ${expired})
        ORDER BY scheduled_at, id LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING id, created_at AS "createdAt", to_address AS "toAddress", from_address AS "fromAddress",
        reply_to AS "replyTo", subject, text_body AS "textBody", html_body AS "htmlBody", headers,
        template_name AS "templateName", attempts`;
    return row ?? null;
  }

  /** Sends one claimed message and records the outcome; whether it went out. */
  private async send(row: ClaimedRow): Promise<boolean> {
    // Ids, template and attempt only: addresses, subjects and the SMTP password stay out of logs.
    const about = { outboxId: row.id, template: row.templateName, attempt: row.attempts };
    const message: EmailMessage = {
      outboxId: row.id,
      createdAt: row.createdAt,
      from: row.fromAddress,
      to: row.toAddress,
      replyTo: row.replyTo,
      subject: row.subject,
      text: row.textBody,
      html: row.htmlBody,
      headers: row.headers,
    };
    try {
      await this.transport.send(message);
    } catch (err) {
      await this.release(row, err, about);
      return false;
    }
    const marked = await this.deps.db.$executeRaw`
      UPDATE email_outbox SET sent_at = ${this.deps.now()}
      WHERE id = ${row.id} AND claimed_by = ${this.processId} AND sent_at IS NULL`;
    if (marked === 0)
      this.deps.log.warn(about, "email sent after its claim ran out: it may have gone out twice");
    else this.deps.log.info(about, "email sent");
    return true;
  }

  /** A failed send: the claim released, the error kept, the next attempt after a backoff. */
  private async release(row: ClaimedRow, err: unknown, about: Record<string, unknown>) {
    const error = (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_LENGTH);
    const base = this.options.retryBaseMs ?? RETRY_BASE_MS;
    const retryAt = new Date(
      this.deps.now().getTime() + Math.min(RETRY_MAX_MS, base * 2 ** (row.attempts - 1)),
    );
    await this.deps.db.$executeRaw`
      UPDATE email_outbox SET last_error = ${error}, scheduled_at = ${retryAt}, claimed_at = NULL, claimed_by = NULL
      WHERE id = ${row.id} AND claimed_by = ${this.processId} AND sent_at IS NULL`;
    if (row.attempts >= MAX_ATTEMPTS)
      this.deps.log.error(
        { ...about, error },
        `email not sent after ${row.attempts} attempts: giving up`,
      );
    else this.deps.log.warn({ ...about, error, retryAt }, "email not sent; it will be retried");
  }
}
