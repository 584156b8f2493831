/**
 * The weekly digest (Zulip's enqueue_digest_emails cron, DigestWorker and bulk_handle_digest_email,
 * zerver/lib/digest.py), in every server process at once. On an organization's digest day
 * (Realm.digest_weekday, by the server's UTC clock, as Zulip's cron reads it), from DIGEST_HOUR
 * (Zulip's cron time) to midnight, each user who has digests on (the organization's
 * digest_emails_enabled and their enable_digest_emails, and the server's SEND_DIGEST_EMAILS) and
 * has not been active for DIGEST_CUTOFF_DAYS (no presence since) gets one digest of what happened
 * meanwhile, if anything did (lib/notifications/digest-email.ts).
 *
 * Once per user per digest day, whatever the number of processes: a user is claimed by moving
 * their digest_email_record forward (an upsert that only succeeds while the record is older than
 * the day's window), in the transaction that queues their email in the outbox, so two processes
 * racing for a user leave one claim and one email. A user with nothing to tell is claimed too, so
 * that later rounds of the day do not look again (Zulip's cron looks once).
 *
 * Where Zulip leaves out the channels whose subscription changed since the cutoff (so that every
 * subscriber sees the same history), this server has no such record: a channel with protected
 * history shows a user only the messages they received, and a public-history channel all of them.
 */
import type { AppDeps } from "../context.ts";
import { Prisma, type Tx } from "../db/index.ts";
import { queueEmails } from "../actions/email/outbox.ts";
import { inTransaction } from "../actions/transaction.ts";
import {
  DIGEST_CUTOFF_DAYS,
  digestEmail,
  enoughTraffic,
  hotTopics,
  type DigestMessage,
  type DigestTopic,
} from "../lib/notifications/digest-email.ts";
import { unsubscribeUrl } from "../lib/notifications/unsubscribe.ts";
import { realmUrl } from "../lib/realm/realm.ts";
import { signingKey } from "../lib/uploads/uploads.ts";
import { Role } from "../lib/users/users.ts";
import { DeliveryLoop, type DeliveryLoopOptions } from "./delivery-loop.ts";

/** The hour (UTC) Zulip's cron runs enqueue_digest_emails; digests go out from then. */
export const DIGEST_HOUR_UTC = 18;
/** How often the loop looks on a digest day, for organizations and users it has not done yet. */
export const DIGEST_INTERVAL_MS = 3_600_000;
/** AuditLogEventType.USER_DIGEST_EMAIL_CREATED: Zulip's record of each digest sent. */
const USER_DIGEST_EMAIL_CREATED = 133;
const DAY_MS = 86_400_000;

type Deps = Pick<AppDeps, "db" | "log" | "config" | "now" | "events">;

export interface DigestEmailsOptions extends DeliveryLoopOptions {
  /** The hour (UTC) digest days start at (tests start them at 0). */
  hourUtc?: number;
}

export interface DigestEmailsReport {
  /** Users this process claimed (each looked at once for the day). */
  claimed: number[];
  /** Of them, those emailed (the others had nothing new). */
  emailed: number[];
}

/** Zulip's weekday numbering (Python's datetime.weekday()): Monday 0 … Sunday 6. */
const weekday = (at: Date) => (at.getUTCDay() + 6) % 7;

export class DigestEmails extends DeliveryLoop<DigestEmailsReport> {
  private readonly hourUtc: number;

  constructor(
    protected override readonly deps: Deps,
    options: DigestEmailsOptions,
  ) {
    super(deps, { ...options, name: "digest emails" });
    this.hourUtc = options.hourUtc ?? DIGEST_HOUR_UTC;
  }

  /** When today's window opens (it may have): from then to midnight UTC, digests go out. */
  private windowStart(now: Date): Date {
    const start = new Date(now);
    start.setUTCHours(this.hourUtc, 0, 0, 0);
    return start;
  }

  /** The next window's start: nothing is due before it. */
  protected nextDueAt(): Promise<Date | null> {
    const now = this.deps.now();
    const today = this.windowStart(now);
    return Promise.resolve(now < today ? today : new Date(today.getTime() + DAY_MS));
  }

  protected async deliverAll(): Promise<DigestEmailsReport> {
    const report: DigestEmailsReport = { claimed: [], emailed: [] };
    const now = this.deps.now();
    const since = this.windowStart(now);
    if (!this.deps.config.sendDigestEmails || now < since) return report;
    const cutoff = new Date(now.getTime() - DIGEST_CUTOFF_DAYS * DAY_MS);
    const realms = await this.deps.db.$queryRaw<{ id: number; stringId: string; name: string }[]>`
      SELECT id, string_id AS "stringId", name FROM realm
      WHERE NOT deactivated AND digest_emails_enabled AND digest_weekday = ${weekday(now)}
      ORDER BY id`;
    // Before any transaction: the embedded database has one connection, which a transaction holds.
    const key = realms.length ? await signingKey(this.deps.db) : null;
    for (const realm of realms) {
      // _enqueue_emails_for_realm: digests on, not active since the cutoff, none yet today.
      const users = await this.deps.db.$queryRaw<{ id: number }[]>`
        SELECT u.id FROM user_profile u
        WHERE u.realm_id = ${realm.id} AND u.is_active AND NOT u.is_bot AND u.enable_digest_emails
          AND NOT EXISTS (SELECT 1 FROM user_presence p WHERE p.user_profile_id = u.id
                          AND p.last_active_time > ${cutoff})
          AND NOT EXISTS (SELECT 1 FROM digest_email_record d WHERE d.user_profile_id = u.id
                          AND d.last_digest_at >= ${since})
        ORDER BY u.id`;
      if (users.length === 0) continue;
      const url = await realmUrl(this.deps.db, realm, this.deps.config);
      for (const { id } of users) {
        if (this.stopped) return report;
        const outcome = await inTransaction(this.deps, realm.id, ({ tx }) =>
          this.digestUser(tx, { ...realm, url }, id, { now, since, cutoff, key: key! }),
        );
        if (outcome === "taken") continue;
        report.claimed.push(id);
        if (outcome === "emailed") report.emailed.push(id);
      }
    }
    if (report.emailed.length)
      this.deps.log.info({ emailed: report.emailed.length }, "digest emails queued");
    return report;
  }

  /**
   * Claims the user for today and, if there is anything to tell, queues their digest, in the
   * caller's transaction. "taken": another process (or an earlier round) has them.
   */
  private async digestUser(
    tx: Tx,
    realm: { id: number; name: string; url: string },
    userId: number,
    at: { now: Date; since: Date; cutoff: Date; key: Buffer },
  ): Promise<"taken" | "quiet" | "emailed"> {
    const claimed = await tx.$queryRaw<unknown[]>`
      INSERT INTO digest_email_record (user_profile_id, last_digest_at) VALUES (${userId}, ${at.now})
      ON CONFLICT (user_profile_id) DO UPDATE SET last_digest_at = EXCLUDED.last_digest_at
        WHERE digest_email_record.last_digest_at < ${at.since}
      RETURNING 1`;
    if (claimed.length === 0) return "taken";
    const [user] = await tx.$queryRaw<
      {
        deliveryEmail: string;
        role: number;
        byUser: boolean;
        byRealm: boolean;
        usable: boolean;
      }[]
    >`
      SELECT u.delivery_email AS "deliveryEmail", u.role,
        NOT u.message_content_in_email_notifications AS "byUser",
        NOT r.message_content_allowed_in_email_notifications AS "byRealm",
        (u.is_active AND u.enable_digest_emails AND NOT r.deactivated) AS usable
      FROM user_profile u JOIN realm r ON r.id = u.realm_id WHERE u.id = ${userId}`;
    // Turned off (or deactivated) since the list was read: claimed, not emailed.
    if (!user?.usable) return "quiet";
    const contentHiddenBy = user.byRealm ? "realm" : user.byUser ? "user" : null;

    // gather_new_streams: channels created since the cutoff that the user may see (a guest only
    // the web-public ones).
    const visible =
      Number(user.role) === Role.GUEST ? Prisma.sql`is_web_public` : Prisma.sql`NOT invite_only`;
    const newChannels = await tx.$queryRaw<{ id: number; name: string }[]>`
      SELECT id, name FROM stream
      WHERE realm_id = ${realm.id} AND NOT is_archived AND date_created > ${at.cutoff} AND ${visible}
      ORDER BY id`;

    let hot: (DigestTopic & { samples: DigestMessage[] })[] = [];
    let newMessages = 0;
    if (contentHiddenBy) {
      // get_new_messages_count: what people sent the user since the cutoff.
      const [row] = await tx.$queryRaw<{ count: number }[]>`
        SELECT count(*)::int AS count FROM user_message um
        JOIN message m ON m.id = um.message_id JOIN user_profile s ON s.id = m.sender_id
        WHERE um.user_profile_id = ${userId} AND m.date_sent >= ${at.cutoff} AND NOT s.is_bot`;
      newMessages = row?.count ?? 0;
    } else hot = await this.hotConversations(tx, realm.id, userId, at.cutoff);

    if (!enoughTraffic(hot.length, newChannels.length, newMessages, contentHiddenBy === null))
      return "quiet";
    await queueEmails(tx, [
      digestEmail({
        user,
        realm,
        hot,
        newChannels,
        newMessages,
        contentHiddenBy,
        unsubscribeUrl: unsubscribeUrl(at.key, realm.url, userId, "digest"),
        noreplyAddress: this.deps.config.noreplyEmailAddress,
      }),
    ]);
    // bulk_write_realm_audit_logs: Zulip's record of the digest, with the newest message then.
    await tx.$executeRaw`
      INSERT INTO realm_audit_log (realm_id, modified_user_id, event_type, event_time, event_last_message_id)
      VALUES (${realm.id}, ${userId}, ${USER_DIGEST_EMAIL_CREATED}, ${at.now}, (SELECT max(id) FROM message))`;
    return "emailed";
  }

  /**
   * get_recent_topics and get_hot_topics over the user's unmuted channels: each topic's people
   * and messages since the cutoff, the hot ones chosen, and their first two messages read.
   */
  private async hotConversations(
    tx: Tx,
    realmId: number,
    userId: number,
    cutoff: Date,
  ): Promise<(DigestTopic & { samples: DigestMessage[] })[]> {
    const topics = await tx.$queryRaw<DigestTopic[]>`
      WITH ch AS (
        SELECT s.id, s.name, s.recipient_id, s.history_public_to_subscribers AS public_history
        FROM subscription sub JOIN stream s ON s.recipient_id = sub.recipient_id
        WHERE sub.user_profile_id = ${userId} AND sub.active AND NOT sub.is_muted AND NOT s.is_archived),
      msgs AS (
        SELECT m.id, ch.id AS stream_id, ch.name AS stream_name, m.subject, u.full_name, u.is_bot
        FROM ch JOIN message m ON m.realm_id = ${realmId} AND m.recipient_id = ch.recipient_id
          AND m.date_sent > ${cutoff}
        JOIN user_profile u ON u.id = m.sender_id
        WHERE ch.public_history OR EXISTS (
          SELECT 1 FROM user_message um WHERE um.user_profile_id = ${userId} AND um.message_id = m.id))
      SELECT stream_id AS "streamId", stream_name AS "streamName", subject AS topic,
        (count(*) FILTER (WHERE NOT is_bot))::int AS length,
        COALESCE(array_agg(DISTINCT full_name) FILTER (WHERE NOT is_bot), '{}') AS participants,
        (array_agg(id ORDER BY id))[1:2] AS "sampleIds"
      FROM msgs GROUP BY stream_id, stream_name, subject
      ORDER BY stream_id, min(id)`;
    const hot = hotTopics(
      topics.map((t) => ({
        ...t,
        streamId: Number(t.streamId),
        // Python's sorted(): by code point.
        participants: [...t.participants].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        sampleIds: t.sampleIds.map(Number),
      })),
    );
    if (hot.length === 0) return [];
    const samples = await tx.$queryRaw<(DigestMessage & { id: number })[]>`
      SELECT m.id, u.full_name AS "senderName", m.content, m.rendered_content AS "renderedContent"
      FROM message m JOIN user_profile u ON u.id = m.sender_id
      WHERE m.id = ANY (${hot.flatMap((t) => t.sampleIds)}::int[])`;
    const byId = new Map(samples.map((m) => [Number(m.id), m]));
    return hot.map((t) => ({
      ...t,
      samples: t.sampleIds.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])),
    }));
  }
}
