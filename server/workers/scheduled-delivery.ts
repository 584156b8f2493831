/**
 * Sending scheduled messages at their time (Zulip's deliver_scheduled_messages worker and
 * try_deliver_one_scheduled_message), in every server process at once.
 *
 * - Exactly once: each due row is claimed with `FOR UPDATE SKIP LOCKED` in the transaction that
 *   checks the message again as its sender, sends it (doSendMessage), marks the row delivered and
 *   logs the `scheduled_messages` remove event. Another process skips a row being sent; a
 *   process that dies before its commit loses nothing, as the rollback leaves the row due and
 *   unlocked.
 * - A message that can no longer be sent (JsonableError from the checks) is marked failed with
 *   that reason in the same transaction, which also tells its owner (an `update` event and a
 *   direct message from the notification bot), as Zulip does; if the notice cannot be sent, a
 *   following transaction fails the message without it. An unexpected error leaves the row due
 *   for the next round, and fails it with "Internal server error" after MAX_ATTEMPTS.
 * - On time: a timer wakes at the next due time; scheduling or rescheduling in this process wakes
 *   it earlier (scheduledMessageChanged), and it looks at least every `intervalMs` for rows other
 *   processes added (on the embedded database there are none, so that interval is long). Tests
 *   drive `deliverDue()` directly with their own clock.
 */
import type { Realm } from "../db/index.ts";
import type { AppDeps } from "../context.ts";
import type { UnitOfWork } from "../events/index.ts";
import { JsonableError } from "../errors.ts";
import { realmById } from "../lib/auth/identity.ts";
import { RecipientType } from "../lib/recipients.ts";
import {
  directRecipientUserIds,
  SCHEDULED_MESSAGE_COLUMNS,
  toApiScheduledMessage,
  type ScheduledMessageRow,
} from "../lib/messages/scheduled-messages.ts";
import {
  checkMessageWith,
  doSendMessage,
  type MessageTarget,
} from "../actions/messages/messages.ts";
import {
  internalSendMessage,
  notificationBot,
  type InternalSender,
} from "../actions/messages/internal-send.ts";
import { REMIND } from "../lib/messages/reminders.ts";
import { globalTimeSyntax } from "../lib/messages/message-links.ts";
import { inTransaction } from "../actions/transaction.ts";
import { DeliveryLoop, type DeliveryLoopOptions } from "./delivery-loop.ts";

/** SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES: a message this late is not sent at all. */
const LATE_CUTOFF_MS = 10 * 60 * 1000;
/** Rounds of unexpected errors a message gets before it is failed. */
const MAX_ATTEMPTS = 3;
/** Due rows read at a time. */
const BATCH = 100;

/** Failures of the sender's account or organization: Zulip tells nobody of these. */
class InactiveSenderError extends JsonableError {}

/** The owner of a failed message could not be told (the failure itself is known: `reason`). */
class NoticeError extends Error {
  constructor(
    readonly reason: string,
    override readonly cause: unknown,
  ) {
    super(`could not send the failure notice: ${reason}`);
  }
}

export interface DeliveryReport {
  delivered: number[];
  failed: number[];
}

export type ScheduledDeliveryOptions = DeliveryLoopOptions;

type Deps = Pick<AppDeps, "db" | "events" | "log" | "config" | "now">;

/** A message was scheduled (or rescheduled) for `at` in this process: its loops look then. */
export function scheduledMessageChanged(at: Date) {
  ScheduledDelivery.wakeRunning(at);
}

export class ScheduledDelivery extends DeliveryLoop<DeliveryReport> {
  private readonly bots = new Map<number, InternalSender>();

  constructor(
    protected override readonly deps: Deps,
    options: ScheduledDeliveryOptions,
  ) {
    super(deps, { ...options, name: "scheduled message delivery" });
  }

  protected async nextDueAt(): Promise<Date | null> {
    const [row] = await this.deps.db.$queryRaw<{ next: Date | null }[]>`
      SELECT min(scheduled_timestamp) AS next FROM scheduled_message WHERE NOT delivered AND NOT failed`;
    return row?.next ?? null;
  }

  protected async deliverAll(): Promise<DeliveryReport> {
    const report: DeliveryReport = { delivered: [], failed: [] };
    const tried: number[] = [];
    for (;;) {
      const now = this.deps.now();
      // The partial index on due rows serves this (scheduled_message_due_idx).
      const due = await this.deps.db.$queryRaw<{ id: number; realmId: number }[]>`
        SELECT id, realm_id AS "realmId" FROM scheduled_message
        WHERE NOT delivered AND NOT failed AND scheduled_timestamp <= ${now} AND id <> ALL (${tried}::int[])
        ORDER BY scheduled_timestamp, id LIMIT ${BATCH}`;
      for (const candidate of due) {
        if (this.stopped) return report;
        tried.push(candidate.id);
        const outcome = await this.deliverOne(candidate.id, candidate.realmId);
        if (outcome === "delivered" || outcome === "failed") report[outcome].push(candidate.id);
      }
      if (due.length < BATCH) return report;
    }
  }

  private async deliverOne(
    id: number,
    realmId: number,
  ): Promise<"delivered" | "failed" | "skipped" | "error"> {
    const now = this.deps.now();
    try {
      const realm = await realmById(this.deps.db, realmId);
      if (!realm) return "skipped";
      const bot = await this.notificationBotFor(realm);
      return await inTransaction(this.deps, realmId, async ({ tx, events }) => {
        const [row] = await tx.$queryRaw<(ScheduledMessageRow & { clientName: string })[]>`
          SELECT ${SCHEDULED_MESSAGE_COLUMNS}, c.name AS "clientName"
          FROM scheduled_message sm JOIN recipient r ON r.id = sm.recipient_id JOIN client c ON c.id = sm.sending_client_id
          WHERE sm.id = ${id} AND NOT sm.delivered AND NOT sm.failed AND sm.scheduled_timestamp <= ${now}
          FOR UPDATE OF sm SKIP LOCKED`;
        if (!row) return "skipped";
        try {
          if (row.deliveryType === REMIND) await this.remind({ tx, events }, realm, row, now, bot);
          else await this.send({ tx, events }, realm, row, now);
          return "delivered";
        } catch (err) {
          // The checks write nothing before they refuse, so the row (still locked) is failed here.
          if (!(err instanceof JsonableError)) throw err;
          await this.markFailed(
            { tx, events },
            realm,
            row,
            err.message,
            err instanceof InactiveSenderError ? null : bot,
          );
          return "failed";
        }
      });
    } catch (err) {
      if (err instanceof NoticeError) {
        // A notice that cannot be sent must not keep the message due for ever.
        this.deps.log.error(
          { err: err.cause, scheduledMessageId: id },
          "could not tell the owner of a failed scheduled message",
        );
        return (await this.fail(id, realmId, err.reason, false)) ? "failed" : "skipped";
      }
      this.deps.log.error(
        { err, scheduledMessageId: id },
        "unexpected error sending a scheduled message",
      );
      await this.countError(id, realmId).catch((e: unknown) =>
        this.deps.log.error({ err: e, scheduledMessageId: id }, "could not record the error"),
      );
      return "error";
    }
  }

  /**
   * The organization's notification bot, looked up once per process (and created if missing):
   * it must be known before a delivery's transaction opens, in case the message fails.
   */
  private async notificationBotFor(realm: Realm): Promise<InternalSender> {
    let bot = this.bots.get(realm.id);
    if (!bot) this.bots.set(realm.id, (bot = await notificationBot(this.deps, realm)));
    return bot;
  }

  /**
   * A reminder (delivery type REMIND): the notification bot sends its stored content to its
   * owner, and the owner's clients drop it from their reminders.
   */
  private async remind(
    { tx, events }: UnitOfWork,
    realm: Realm,
    row: ScheduledMessageRow,
    now: Date,
    bot: InternalSender,
  ) {
    await this.checkSender(tx, realm, row, now);
    const message = await internalSendMessage(
      { tx, events },
      {
        deps: this.deps,
        realm,
        sender: bot,
        target: { kind: "direct", userIds: [row.senderId] },
        content: row.content,
      },
    );
    await this.markDelivered(tx, row.id, message.id, now);
    events.add({ type: "reminders", op: "remove", reminder_id: row.id }, [row.senderId]);
  }

  /** What a delivery checks before the message: the organization, the owner, the time. */
  private async checkSender(
    tx: UnitOfWork["tx"],
    realm: Realm,
    row: ScheduledMessageRow,
    now: Date,
  ) {
    if (realm.deactivated) throw new InactiveSenderError("This organization has been deactivated");
    const sender = await tx.userProfile.findUniqueOrThrow({ where: { id: row.senderId } });
    if (!sender.isActive) throw new InactiveSenderError("Account is deactivated");
    if (now.getTime() > row.scheduledTimestamp.getTime() + LATE_CUTOFF_MS)
      throw new JsonableError("Message could not be sent at the scheduled time.");
    return sender;
  }

  private async markDelivered(tx: UnitOfWork["tx"], id: number, messageId: number, now: Date) {
    await tx.$executeRaw`
      UPDATE scheduled_message
      SET delivered = true, delivered_message_id = ${messageId}, attempts = attempts + 1, claimed_at = ${now}, claimed_by = ${this.processId}
      WHERE id = ${id}`;
  }

  /** send_scheduled_message: the message checked again as its sender at delivery time. */
  private async send(
    { tx, events }: UnitOfWork,
    realm: Realm,
    row: ScheduledMessageRow & { clientName: string },
    now: Date,
  ) {
    const sender = await this.checkSender(tx, realm, row, now);
    const target: MessageTarget =
      row.recipientType === RecipientType.STREAM
        ? { kind: "channel", streamId: row.recipientTypeId, topic: row.subject }
        : { kind: "direct", userIds: directRecipientUserIds(row) };
    const request = await checkMessageWith(
      {
        db: tx,
        cacheDb: this.deps.db,
        realm,
        user: sender,
        config: this.deps.config,
        now: () => now,
      },
      {
        target,
        content: row.content,
        clientName: row.clientName,
        readBySender: row.readBySender === true,
      },
      row.sendingClientId,
    );
    const message = await doSendMessage({ tx, events }, request);
    await this.markDelivered(tx, row.id, message.id, now);
    events.add({ type: "scheduled_messages", op: "remove", scheduled_message_id: row.id }, [
      row.senderId,
    ]);
  }

  /**
   * Marks a locked row failed; with a bot, tells its owner as Zulip does (an `update` event and
   * send_failed_scheduled_message_notification), unless the owner is that bot.
   */
  private async markFailed(
    { tx, events }: UnitOfWork,
    realm: Realm,
    row: ScheduledMessageRow,
    reason: string,
    bot: InternalSender | null,
  ) {
    await tx.$executeRaw`
      UPDATE scheduled_message
      SET failed = true, failure_message = ${reason}, attempts = attempts + 1, claimed_at = ${this.deps.now()}, claimed_by = ${this.processId}
      WHERE id = ${row.id}`;
    // A reminder that failed stays in its owner's list with `failed`; it has no notice.
    if (!bot || bot.bot.id === row.senderId || row.deliveryType === REMIND) return;
    events.add(
      {
        type: "scheduled_messages",
        op: "update",
        scheduled_message: toApiScheduledMessage({ ...row, failed: true }),
      },
      [row.senderId],
    );
    try {
      await internalSendMessage(
        { tx, events },
        {
          deps: this.deps,
          realm,
          sender: bot,
          target: { kind: "direct", userIds: [row.senderId] },
          content: failureNotice(row.scheduledTimestamp, reason),
        },
      );
    } catch (err) {
      throw new NoticeError(reason, err);
    }
  }

  /** Fails the message in a transaction of its own, unless it was sent or failed meanwhile. */
  private async fail(
    id: number,
    realmId: number,
    reason: string,
    notify: boolean,
  ): Promise<boolean> {
    const realm = await realmById(this.deps.db, realmId);
    if (!realm) return false;
    const bot = notify ? await this.notificationBotFor(realm) : null;
    try {
      return await inTransaction(this.deps, realmId, async ({ tx, events }) => {
        const [row] = await tx.$queryRaw<ScheduledMessageRow[]>`
          SELECT ${SCHEDULED_MESSAGE_COLUMNS} FROM scheduled_message sm JOIN recipient r ON r.id = sm.recipient_id
          WHERE sm.id = ${id} AND NOT sm.delivered AND NOT sm.failed
          FOR UPDATE OF sm`;
        if (!row) return false;
        await this.markFailed({ tx, events }, realm, row, reason, bot);
        return true;
      });
    } catch (err) {
      if (!(err instanceof NoticeError)) throw err;
      this.deps.log.error(
        { err: err.cause, scheduledMessageId: id },
        "could not tell the owner of a failed scheduled message",
      );
      return this.fail(id, realmId, reason, false);
    }
  }

  /** An unexpected error: counted; the message is failed once it has had MAX_ATTEMPTS. */
  private async countError(id: number, realmId: number) {
    const [row] = await this.deps.db.$queryRaw<{ attempts: number }[]>`
      UPDATE scheduled_message SET attempts = attempts + 1 WHERE id = ${id} AND NOT delivered AND NOT failed RETURNING attempts`;
    if (row && row.attempts >= MAX_ATTEMPTS)
      await this.fail(id, realmId, "Internal server error", true);
  }
}

function failureNotice(scheduledAt: Date, reason: string): string {
  return [
    `The message you scheduled for ${globalTimeSyntax(scheduledAt)} was not sent because of the following error:`,
    `> ${reason}`,
    "[View scheduled messages](#scheduled)",
  ].join("\n\n");
}
