/**
 * Sending email: the message is written to the durable outbox (email_outbox) in the caller's
 * transaction, so it goes out if and only if the change that caused it commits. The delivery
 * loop (email-delivery.ts) sends it afterwards, from whichever process claims it first.
 */
import type { Tx } from "../db.ts";
import { emailQueued } from "./email-delivery.ts";
import { afterCommit } from "./transaction.ts";

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
  /** Not sent before this time (Zulip's ScheduledEmail); now when absent. */
  scheduledAt?: Date;
}

/** Queues one email in the caller's transaction (sent once it commits); returns its outbox id. */
export async function queueEmail(tx: Tx, mail: OutgoingEmail): Promise<number> {
  const row = await tx.emailOutbox.create({
    data: {
      realmId: mail.realmId,
      toAddress: mail.to,
      fromAddress: mail.from ?? null,
      replyTo: mail.replyTo ?? null,
      subject: mail.subject,
      textBody: mail.text,
      htmlBody: mail.html ?? null,
      templateName: mail.template,
      ...(mail.scheduledAt ? { scheduledAt: mail.scheduledAt } : {}),
    },
    select: { id: true, scheduledAt: true },
  });
  afterCommit(tx, () => emailQueued(row.scheduledAt));
  return row.id;
}
