/**
 * Emailing users about the messages they missed (Zulip's MissedMessageWorker and
 * handle_missedmessage_emails), in every server process at once. The send's transaction wrote a
 * row per user and message (scheduled_message_notification_email, lib/notifications/
 * missed-messages.ts), all of a user's pending rows due together; when they are due, one process
 * takes a user's due rows and, in one transaction, deletes them and queues the emails in the
 * outbox (actions/email/outbox.ts), which sends them. So each row is emailed exactly once: by the
 * transaction that deleted it, and only if it committed.
 *
 * Of the rows, only the messages still unread get into an email (read in the meantime, or
 * deleted, nothing is sent); one email per conversation, the least recently active first, each
 * with the channel topic's messages of the 15 minutes before for context. A direct message or
 * mention's row is dropped if the user has since turned offline email notifications off.
 */
import type { AppDeps } from "../context.ts";
import type { Tx } from "../db/index.ts";
import { queueEmails, type OutgoingEmail } from "../actions/email/outbox.ts";
import { inTransaction } from "../actions/transaction.ts";
import { FLAG_BITS } from "../lib/messages/flags.ts";
import { RecipientType } from "../lib/recipients.ts";
import { realmUrl } from "../lib/realm/realm.ts";
import {
  conversationEmail,
  conversationKey,
  type MissedMessage,
} from "../lib/notifications/missed-message-email.ts";
import { Trigger } from "../lib/notifications/missed-messages.ts";
import { mentionedGroups } from "../lib/notifications/group-mentions.ts";
import { unsubscribeUrl } from "../lib/notifications/unsubscribe.ts";
import { signingKey } from "../lib/uploads/uploads.ts";
import { DeliveryLoop, type DeliveryLoopOptions } from "./delivery-loop.ts";

/** Users emailed per round at most; the next round follows at once while more are due. */
const USERS_PER_ROUND = 200;
/** Context before a channel message: Zulip's get_context_for_message (15 minutes, 10 messages). */
const CONTEXT_MINUTES = 15;
const CONTEXT_MESSAGES = 10;
/** Triggers that enable_offline_email_notifications governs (DMs and mentions). */
const OFFLINE_SETTING_TRIGGERS = [
  Trigger.DIRECT_MESSAGE,
  Trigger.MENTION,
  Trigger.TOPIC_WILDCARD_MENTION,
  Trigger.STREAM_WILDCARD_MENTION,
];

type Deps = Pick<AppDeps, "db" | "log" | "config" | "now" | "events">;

export interface MissedMessageEmailsReport {
  /** Users whose due rows this round took. */
  users: number[];
  /** Emails queued in the outbox. */
  emails: number;
}

/** A send committed here scheduled a missed-message email due at `at`. */
export function missedMessageEmailScheduled(at: Date) {
  MissedMessageEmails.wakeRunning(at);
}

export class MissedMessageEmails extends DeliveryLoop<MissedMessageEmailsReport> {
  constructor(
    protected override readonly deps: Deps,
    options: DeliveryLoopOptions,
  ) {
    super(deps, { ...options, name: "missed-message emails" });
  }

  protected async nextDueAt(): Promise<Date | null> {
    const [row] = await this.deps.db.$queryRaw<{ next: Date | null }[]>`
      SELECT min(scheduled_timestamp) AS next FROM scheduled_message_notification_email`;
    return row?.next ?? null;
  }

  protected async deliverAll(): Promise<MissedMessageEmailsReport> {
    const report: MissedMessageEmailsReport = { users: [], emails: 0 };
    for (let i = 0; i < USERS_PER_ROUND && !this.stopped; i++) {
      const now = this.deps.now();
      // A user with a due row no other process is taking (their rows are locked while it does).
      // The poll reads this table alone: most rounds find nothing due.
      const [due] = await this.deps.db.$queryRaw<{ userId: number }[]>`
        SELECT user_profile_id AS "userId" FROM scheduled_message_notification_email
        WHERE scheduled_timestamp <= ${now}
        ORDER BY scheduled_timestamp, id LIMIT 1
        FOR UPDATE SKIP LOCKED`;
      if (!due) break;
      const [user] = await this.deps.db.$queryRaw<{ realmId: number }[]>`
        SELECT realm_id AS "realmId" FROM user_profile WHERE id = ${due.userId}`;
      if (!user) break;
      // Before the transaction: the embedded database has one connection, which it holds.
      const key = await signingKey(this.deps.db);
      const mails = await inTransaction(this.deps, user.realmId, ({ tx }) =>
        this.emailUser(tx, due.userId, now, key),
      );
      report.users.push(due.userId);
      report.emails += mails;
    }
    return report;
  }

  /** Takes the user's due rows and queues their emails, in the caller's transaction; how many. */
  private async emailUser(tx: Tx, userId: number, now: Date, key: Buffer): Promise<number> {
    const rows = await tx.$queryRaw<
      { messageId: number; trigger: string; mentionedUserGroupId: number | null }[]
    >`
      DELETE FROM scheduled_message_notification_email
      WHERE id IN (SELECT id FROM scheduled_message_notification_email
                   WHERE user_profile_id = ${userId} AND scheduled_timestamp <= ${now}
                   FOR UPDATE SKIP LOCKED)
      RETURNING message_id AS "messageId", trigger, mentioned_user_group_id AS "mentionedUserGroupId"`;
    if (rows.length === 0) return 0;
    const [user] = await tx.$queryRaw<
      {
        id: number;
        fullName: string;
        deliveryEmail: string;
        offline: boolean;
        showContent: boolean;
        realmNameInSubject: boolean;
        realmId: number;
        realmName: string;
        stringId: string;
        usable: boolean;
      }[]
    >`
      SELECT u.id, u.full_name AS "fullName", u.delivery_email AS "deliveryEmail",
        u.enable_offline_email_notifications AS offline,
        (u.message_content_in_email_notifications AND r.message_content_allowed_in_email_notifications) AS "showContent",
        CASE u.realm_name_in_email_notifications_policy
          WHEN 2 THEN TRUE WHEN 3 THEN FALSE
          ELSE EXISTS (SELECT 1 FROM user_profile o WHERE lower(o.delivery_email) = lower(u.delivery_email)
                       AND o.id <> u.id AND o.is_active) END AS "realmNameInSubject",
        r.id AS "realmId", r.name AS "realmName", r.string_id AS "stringId",
        (u.is_active AND NOT u.is_bot AND NOT r.deactivated) AS usable
      FROM user_profile u JOIN realm r ON r.id = u.realm_id WHERE u.id = ${userId}`;
    if (!user?.usable) return 0;
    const triggers = new Map(
      rows
        .filter(
          (r) =>
            user.offline || !(OFFLINE_SETTING_TRIGGERS as readonly string[]).includes(r.trigger),
        )
        .map((r) => [
          Number(r.messageId),
          {
            trigger: r.trigger,
            mentionedUserGroupId:
              r.mentionedUserGroupId === null ? null : Number(r.mentionedUserGroupId),
          },
        ]),
    );
    if (triggers.size === 0) return 0;

    // The messages still unread, and a channel topic's context before each conversation's first.
    const messages = await tx.$queryRaw<
      (Omit<MissedMessage, "trigger" | "mentionedUserGroupId"> & { missed: boolean })[]
    >`
      WITH missed AS (
        SELECT m.id, m.realm_id, m.recipient_id, m.subject, m.date_sent, m.is_channel_message
        FROM message m JOIN user_message um ON um.message_id = m.id AND um.user_profile_id = ${userId}
        WHERE m.id = ANY (${[...triggers.keys()]}::int[]) AND um.flags & ${FLAG_BITS.read} = 0),
      firsts AS (
        SELECT DISTINCT ON (recipient_id, lower(subject)) * FROM missed WHERE is_channel_message
        ORDER BY recipient_id, lower(subject), id),
      context AS (
        SELECT c.id FROM firsts f CROSS JOIN LATERAL (
          SELECT o.id FROM message o JOIN user_message um ON um.message_id = o.id AND um.user_profile_id = ${userId}
          WHERE o.realm_id = f.realm_id AND o.recipient_id = f.recipient_id AND lower(o.subject) = lower(f.subject)
            AND o.id < f.id AND o.date_sent > f.date_sent - make_interval(mins => ${CONTEXT_MINUTES})
          ORDER BY o.id DESC LIMIT ${CONTEXT_MESSAGES}) c)
      SELECT m.id, m.sender_id AS "senderId", s.full_name AS "senderName", m.recipient_id AS "recipientId",
        r.type AS "recipientType", st.id AS "streamId", st.name AS "streamName", m.subject AS topic,
        m.content, m.rendered_content AS "renderedContent", m.date_sent AS "dateSent",
        m.id IN (SELECT id FROM missed) AS missed
      FROM message m JOIN user_profile s ON s.id = m.sender_id JOIN recipient r ON r.id = m.recipient_id
      LEFT JOIN stream st ON r.type = ${RecipientType.STREAM} AND st.id = r.type_id
      WHERE m.id IN (SELECT id FROM missed UNION SELECT id FROM context)
      ORDER BY m.id`;
    const byConversation = new Map<string, MissedMessage[]>();
    for (const m of messages) {
      const message: MissedMessage = {
        ...m,
        recipientType: Number(m.recipientType),
        trigger: m.missed ? triggers.get(m.id)!.trigger : null,
        mentionedUserGroupId: m.missed ? triggers.get(m.id)!.mentionedUserGroupId : null,
      };
      const key = conversationKey(message);
      byConversation.set(key, [...(byConversation.get(key) ?? []), message]);
    }
    // Conversations without a missed message (context only) are none: context joins a missed one.
    const conversations = [...byConversation.values()].filter((ms) =>
      ms.some((m) => m.trigger !== null),
    );
    if (conversations.length === 0) return 0;

    const groups = conversations
      .map((ms) => ms[0]!)
      .filter((m) => m.recipientType === RecipientType.DIRECT_MESSAGE_GROUP)
      .map((m) => m.recipientId);
    const members = groups.length
      ? await tx.$queryRaw<{ recipientId: number; id: number; fullName: string }[]>`
          SELECT sub.recipient_id AS "recipientId", up.id, up.full_name AS "fullName"
          FROM subscription sub JOIN user_profile up ON up.id = sub.user_profile_id
          WHERE sub.recipient_id = ANY (${groups}::int[]) AND up.id <> ${userId}
          ORDER BY up.id`
      : [];
    // The groups whose mentions the rows record, named in the footer (get_mentioned_user_group).
    const mentioned = await mentionedGroups(tx, [
      ...new Set(
        [...triggers.values()].flatMap((t) =>
          t.mentionedUserGroupId === null ? [] : [t.mentionedUserGroupId],
        ),
      ),
    ]);
    const realm = {
      id: user.realmId,
      name: user.realmName,
      url: await realmUrl(tx, { id: user.realmId, stringId: user.stringId }, this.deps.config),
    };
    const unsubscribe = unsubscribeUrl(key, realm.url, userId, "missed_messages");
    // The least recently active conversation first (Zulip sorts its buckets so).
    conversations.sort((a, b) => a.at(-1)!.id - b.at(-1)!.id);
    const mails: OutgoingEmail[] = conversations.map((ms) =>
      conversationEmail({
        user,
        realm,
        messages: ms,
        others: members.filter((x) => x.recipientId === ms[0]!.recipientId),
        groups: mentioned,
        unsubscribeUrl: unsubscribe,
        noreplyAddress: this.deps.config.noreplyEmailAddress,
      }),
    );
    await queueEmails(tx, mails);
    return mails.length;
  }
}
