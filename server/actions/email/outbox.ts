/**
 * Sending email: the message is written to the durable outbox (email_outbox) in the caller's
 * transaction, so it goes out if and only if the change that caused it commits. The delivery
 * loop (email-delivery.ts) sends it afterwards, from whichever process claims it first.
 */
import type { Tx } from "../../db/index.ts";
import { emailQueued } from "../../workers/email-delivery.ts";
import { afterCommit } from "../transaction.ts";

export interface OutgoingEmail {
  realmId: number | null;
  to: string;
  /** Defaults to the server's noreply address (NOREPLY_EMAIL_ADDRESS) when absent. */
  from?: string | null;
  replyTo?: string | null;
  subject: string;
  text: string;
  html?: string | null;
  /** The template it was made from (e.g. `zerver/emails/invitation`), for logs and tests. */
  template: string;
  /** Extra headers, as they are (List-Unsubscribe). */
  headers?: Record<string, string>;
  /** Not sent before this time (Zulip's ScheduledEmail); now when absent. */
  scheduledAt?: Date;
}

/** The outbox row of one email. */
function outboxRow(mail: OutgoingEmail) {
  return {
    realmId: mail.realmId,
    toAddress: mail.to,
    fromAddress: mail.from ?? null,
    replyTo: mail.replyTo ?? null,
    subject: mail.subject,
    textBody: mail.text,
    htmlBody: mail.html ?? null,
    templateName: mail.template,
    ...(mail.headers ? { headers: mail.headers } : {}),
    ...(mail.scheduledAt ? { scheduledAt: mail.scheduledAt } : {}),
  };
}

/** Queues one email in the caller's transaction (sent once it commits); returns its outbox id. */
export async function queueEmail(tx: Tx, mail: OutgoingEmail): Promise<number> {
  const row = await tx.emailOutbox.create({
    data: outboxRow(mail),
    select: { id: true, scheduledAt: true },
  });
  afterCommit(tx, () => emailQueued(row.scheduledAt));
  return row.id;
}

/** Queues any number of emails in the caller's transaction, in one statement. */
export async function queueEmails(tx: Tx, mails: OutgoingEmail[]): Promise<void> {
  if (!mails.length) return;
  await tx.emailOutbox.createMany({ data: mails.map(outboxRow) });
  // The earliest of them wakes this process's loop; it sends every due one in that round.
  const first = Math.min(...mails.map((m) => (m.scheduledAt ?? new Date(0)).getTime()));
  afterCommit(tx, () => emailQueued(new Date(first)));
}
