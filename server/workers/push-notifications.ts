/**
 * Sending mobile push notifications (Zulip's PushNotificationsWorker, handle_push_notification and
 * handle_remove_push_notification), in every server process at once, from the rows the
 * transactions that cause them write (push_notification_queue): a new message's, decided in the
 * send (lib/notifications/missed-messages.ts), and a removal's, when messages notified are read
 * (actions/push/push-notifications.ts) or deleted (actions/messages/message-delete.ts).
 *
 * The claim protocol is the email outbox's (email-delivery.ts): one short statement claims a row
 * (FOR UPDATE SKIP LOCKED, stamped with a lease), the bouncer is called with no transaction open,
 * and the row is deleted if the claim is still ours. A process that dies mid-send loses nothing:
 * the row is claimed again once its lease has passed. A message read (or deleted) before its
 * turn is not pushed; one that is pushed gets its `active_mobile_push_notification` flag first,
 * so that reading it later sends the removal. The bouncer away or failing (network, 5xx): the row
 * is retried after an exponential backoff, up to MAX_ATTEMPTS; a refusal (4xx) cannot succeed
 * later and is dropped with an error logged. Devices the bouncer reports as gone are deregistered.
 */
import type { AppDeps } from "../context.ts";
import type { PushDevice } from "../db/index.ts";
import { inTransaction } from "../actions/transaction.ts";
import { pushToDevices } from "../actions/push/push-devices.ts";
import { FLAG_BITS } from "../lib/messages/flags.ts";
import { BouncerRefusedError } from "../lib/push/push-bouncer.ts";
import { registeredDevices } from "../lib/push/push-devices.ts";
import { messagePayload, removePayload } from "../lib/push/push-payloads.ts";
import { RecipientType } from "../lib/recipients.ts";
import { realmUrl } from "../lib/realm/realm.ts";
import { avatarUrl } from "../lib/users/users.ts";
import { DeliveryLoop, type DeliveryLoopOptions } from "./delivery-loop.ts";

/** How long a claim keeps other processes off a row: far longer than a bouncer request can take. */
export const PUSH_LEASE_MS = 5 * 60_000;
const MAX_ATTEMPTS = 8;
const RETRY_BASE_MS = 10_000;
const RETRY_MAX_MS = 30 * 60_000;
const MAX_ERROR_LENGTH = 1000;

type Deps = Pick<AppDeps, "db" | "log" | "config" | "now" | "events">;

export interface PushNotificationsOptions extends DeliveryLoopOptions {
  /** The first retry's wait (tests shorten it). */
  retryBaseMs?: number;
}

export interface PushNotificationsReport {
  /** Rows pushed. */
  sent: number[];
  /** Rows with nothing left to push (read, deleted, no device). */
  dropped: number[];
  /** Rows the bouncer failed: retried later, or given up. */
  failed: number[];
}

interface ClaimedRow {
  id: number;
  userId: number;
  type: "message" | "remove";
  messageIds: number[];
  mentionedUserGroupId: number | null;
  attempts: number;
}

/** What one row pushes: to whom, and the payload. */
interface Push {
  realm: { id: number; uuid: string };
  devices: PushDevice[];
  payload: object;
}

/** Rows were queued in this process: its loops look now. */
export function pushNotificationsQueued() {
  PushNotifications.wakeRunning();
}

export class PushNotifications extends DeliveryLoop<PushNotificationsReport> {
  constructor(
    protected override readonly deps: Deps,
    private readonly options: PushNotificationsOptions,
  ) {
    super(deps, { ...options, name: "push notifications" });
  }

  protected async nextDueAt(): Promise<Date | null> {
    const [row] = await this.deps.db.$queryRaw<{ next: Date | null }[]>`
      SELECT min(CASE WHEN claimed_at IS NULL THEN scheduled_at
                      ELSE greatest(scheduled_at, claimed_at + ${PUSH_LEASE_MS}::int * interval '1 millisecond') END) AS next
      FROM push_notification_queue WHERE attempts < ${MAX_ATTEMPTS}`;
    return row?.next ?? null;
  }

  protected async deliverAll(): Promise<PushNotificationsReport> {
    const report: PushNotificationsReport = { sent: [], dropped: [], failed: [] };
    while (!this.stopped) {
      const row = await this.claim();
      if (!row) break;
      report[await this.process(row)].push(row.id);
    }
    return report;
  }

  private async claim(): Promise<ClaimedRow | null> {
    const now = this.deps.now();
    const expired = new Date(now.getTime() - PUSH_LEASE_MS);
    const [row] = await this.deps.db.$queryRaw<ClaimedRow[]>`
      UPDATE push_notification_queue
      SET claimed_at = ${now}, claimed_by = ${this.processId}, attempts = attempts + 1
      WHERE id = (
        SELECT id FROM push_notification_queue
        WHERE scheduled_at <= ${now} AND attempts < ${MAX_ATTEMPTS}
          AND (claimed_at IS NULL OR claimed_at <= ${expired})
        ORDER BY scheduled_at, id LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING id, user_profile_id AS "userId", type, message_ids AS "messageIds",
        mentioned_user_group_id AS "mentionedUserGroupId", attempts`;
    return row ?? null;
  }

  private async process(row: ClaimedRow): Promise<"sent" | "dropped" | "failed"> {
    const about = { pushId: row.id, type: row.type, attempt: row.attempts };
    try {
      const push = await this.prepare(row);
      if (push) await pushToDevices(this.deps, push.realm, row.userId, push.devices, push.payload);
      await this.done(row);
      return push ? "sent" : "dropped";
    } catch (err) {
      if (err instanceof BouncerRefusedError) {
        // A refusal is the configuration's (credentials, plan): trying again cannot help.
        this.deps.log.error({ ...about, err }, "the push notification service refused a push");
        await this.done(row);
      } else await this.release(row, err, about);
      return "failed";
    }
  }

  /** The row's push, or null when nothing is left to push; marks a pushed message's flag. */
  private async prepare(row: ClaimedRow): Promise<Push | null> {
    const { db, config } = this.deps;
    const [user] = await db.$queryRaw<
      { realmId: number; uuid: string; name: string; stringId: string }[]
    >`
      SELECT r.id AS "realmId", r.uuid::text, r.name, r.string_id AS "stringId"
      FROM user_profile u JOIN realm r ON r.id = u.realm_id
      WHERE u.id = ${row.userId} AND u.is_active AND NOT r.deactivated`;
    if (!user) return null;
    const devices = (await registeredDevices(db, row.userId, undefined)).filter(
      (d) => d.bouncerDeviceId !== null && d.pushKey !== null,
    );
    if (devices.length === 0) return null;
    const url = await realmUrl(db, { id: user.realmId, stringId: user.stringId }, config);
    const realm = { id: user.realmId, uuid: user.uuid };
    const named = { name: user.name, url };
    if (row.type === "remove")
      return { realm, devices, payload: removePayload(named, row.userId, row.messageIds) };

    const messageId = row.messageIds[0]!;
    const message = await inTransaction(this.deps, user.realmId, async ({ tx }) => {
      // Still unread: marked pushed (again, on a retry), so that reading it sends the removal.
      const marked = await tx.$queryRaw<{ message_id: number }[]>`
        UPDATE user_message SET flags = flags | ${FLAG_BITS.active_mobile_push_notification}::bigint
        WHERE user_profile_id = ${row.userId} AND message_id = ${messageId}
          AND flags & ${FLAG_BITS.read}::bigint = 0
        RETURNING message_id`;
      if (marked.length === 0) return null;
      const [m] = await tx.$queryRaw<
        {
          senderId: number;
          fullName: string;
          realmId: number;
          deliveryEmail: string;
          avatarSource: string;
          avatarVersion: number;
          avatarHash: string | null;
          recipientId: number;
          recipientType: number;
          channelId: number | null;
          channelName: string | null;
          topic: string;
          renderedContent: string;
          dateSent: Date;
          participantIds: number[];
          groupName: string | null;
        }[]
      >`
        SELECT m.sender_id AS "senderId", s.full_name AS "fullName", s.realm_id AS "realmId",
          s.delivery_email AS "deliveryEmail", s.avatar_source AS "avatarSource",
          s.avatar_version AS "avatarVersion", s.avatar_hash AS "avatarHash",
          m.recipient_id AS "recipientId", r.type AS "recipientType", st.id AS "channelId",
          st.name AS "channelName", m.subject AS topic, m.rendered_content AS "renderedContent",
          m.date_sent AS "dateSent",
          CASE r.type WHEN ${RecipientType.PERSONAL} THEN ARRAY[m.sender_id, ${row.userId}]
            WHEN ${RecipientType.DIRECT_MESSAGE_GROUP} THEN ARRAY(
              SELECT sub.user_profile_id FROM subscription sub WHERE sub.recipient_id = m.recipient_id)
            ELSE '{}'::int[] END AS "participantIds",
          (SELECT g.name FROM named_user_group g WHERE g.id = ${row.mentionedUserGroupId}::int) AS "groupName"
        FROM message m JOIN user_profile s ON s.id = m.sender_id JOIN recipient r ON r.id = m.recipient_id
        LEFT JOIN stream st ON r.type = ${RecipientType.STREAM} AND st.id = r.type_id
        WHERE m.id = ${messageId}`;
      return m ?? null;
    });
    if (!message) return null;
    const avatar = avatarUrl(message);
    return {
      realm,
      devices,
      payload: messagePayload(
        named,
        row.userId,
        {
          id: messageId,
          senderId: message.senderId,
          senderFullName: message.fullName,
          senderAvatarUrl: avatar.startsWith("/") ? `${url}${avatar}` : avatar,
          recipientType: Number(message.recipientType),
          channelId: message.channelId,
          channelName: message.channelName,
          topic: message.topic,
          renderedContent: message.renderedContent,
          dateSent: message.dateSent,
          participantIds: message.participantIds.map(Number),
          // get_mentioned_user_group of the one message: the group the row recorded.
          mentionedGroup:
            row.mentionedUserGroupId !== null && message.groupName !== null
              ? { id: Number(row.mentionedUserGroupId), name: message.groupName }
              : null,
        },
        this.deps.config.pushNotificationRedactContent,
      ),
    };
  }

  /** The row is done: pushed, or nothing to push, or refused for good. */
  private async done(row: ClaimedRow) {
    await this.deps.db.$executeRaw`
      DELETE FROM push_notification_queue WHERE id = ${row.id} AND claimed_by = ${this.processId}`;
  }

  /** A failed push: released at once, due again after the backoff (or left, past MAX_ATTEMPTS). */
  private async release(row: ClaimedRow, err: unknown, about: object) {
    const base = this.options.retryBaseMs ?? RETRY_BASE_MS;
    const delay = Math.min(RETRY_MAX_MS, base * 2 ** (row.attempts - 1));
    const error = (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_LENGTH);
    if (row.attempts >= MAX_ATTEMPTS)
      this.deps.log.error({ ...about, err }, "push notification failed; giving up");
    else
      this.deps.log.warn({ ...about, err, retryInMs: delay }, "push notification failed; retrying");
    await this.deps.db.$executeRaw`
      UPDATE push_notification_queue
      SET claimed_at = NULL, claimed_by = NULL, last_error = ${error},
        scheduled_at = ${new Date(this.deps.now().getTime() + delay)}
      WHERE id = ${row.id} AND claimed_by = ${this.processId}`;
  }
}
