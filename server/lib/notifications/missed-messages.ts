/**
 * Who is to be notified of a message while away, and why: Zulip's UserMessageNotificationsData
 * (zerver/lib/notification_data.py) over the sets get_recipient_info computes
 * (zerver/actions/message_send.py), decided in SQL inside the statement that sends the message,
 * so the decision commits with it (doSendMessage's `ne` step writes the email rows, `np` the
 * pushes).
 *
 * A recipient is notified by email when all of these hold (and by push alike, with the push
 * settings, where away may also be enable_online_push_notifications, and only with a device
 * registered at a configured bouncer):
 * - they are not the sender, not a bot, and have not muted the sender;
 * - they are away: no event queue that takes messages (Zulip's receiver_is_off_zulip), or not
 *   active in the last OFFLINE_THRESHOLD_SECS (its presence_idle_user_ids);
 * - a trigger applies, the first of Zulip's order: a direct message, a personal or group mention
 *   (or an alert word), a wildcard mention in a followed topic, a wildcard mention, a followed
 *   topic, the channel's email notifications; each under its setting, and the channel and topic
 *   triggers only where the user has not muted the topic (or the channel, unless the topic is
 *   unmuted or followed).
 */
import { Prisma } from "../../db/index.ts";
import { FLAG_BITS } from "../messages/flags.ts";
import { TopicVisibility } from "../messages/topics.ts";
// Zulip's OFFLINE_THRESHOLD_SECS: a user last active longer ago than this is idle.
import { OFFLINE_THRESHOLD_SECS } from "../users/presence.ts";

/** Zulip's NotificationTriggers, as stored in scheduled_message_notification_email.trigger. */
export const Trigger = {
  DIRECT_MESSAGE: "private_message",
  MENTION: "mentioned",
  TOPIC_WILDCARD_MENTION: "topic_wildcard_mentioned",
  STREAM_WILDCARD_MENTION: "stream_wildcard_mentioned",
  TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC: "topic_wildcard_mentioned_in_followed_topic",
  STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC: "stream_wildcard_mentioned_in_followed_topic",
  FOLLOWED_TOPIC_EMAIL: "followed_topic_email_notify",
  STREAM_EMAIL: "stream_email_notify",
  FOLLOWED_TOPIC_PUSH: "followed_topic_push_notify",
  STREAM_PUSH: "stream_push_notify",
} as const;
export type TriggerName = (typeof Trigger)[keyof typeof Trigger];

/** The triggers an email counts as mentions ("You were mentioned"). */
export const MENTION_TRIGGERS: ReadonlySet<string> = new Set([
  Trigger.MENTION,
  Trigger.TOPIC_WILDCARD_MENTION,
  Trigger.STREAM_WILDCARD_MENTION,
  Trigger.TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC,
  Trigger.STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC,
]);

const PERSONAL = FLAG_BITS.mentioned | FLAG_BITS.has_alert_word;
const TOPIC_WILDCARD = FLAG_BITS.topic_wildcard_mentioned;
const STREAM_WILDCARD = FLAG_BITS.stream_wildcard_mentioned;

export interface NotifiedMessage {
  realmId: number;
  senderId: number;
  sentAt: Date;
  /** Whether push notifications are sent (a bouncer is configured). */
  push: boolean;
  /** The channel's message: its channel, recipient and topic; null for a direct message. */
  channel: { streamId: number; recipientId: number; topic: string } | null;
}

/** One channel's trigger kind, for email or push: its setting names differ, the rule does not. */
interface Medium {
  /** enable_offline_{email,push}_notifications: DMs and mentions. */
  offline: Prisma.Sql;
  /** enable_followed_topic_{email,push}_notifications. */
  followedTopic: Prisma.Sql;
  /** The subscription's {email,push}_notifications, else the user's enable_stream_… setting. */
  channel: Prisma.Sql;
  followedTopicTrigger: string;
  channelTrigger: string;
}

const EMAIL: Medium = {
  offline: Prisma.sql`up.enable_offline_email_notifications`,
  followedTopic: Prisma.sql`up.enable_followed_topic_email_notifications`,
  channel: Prisma.sql`COALESCE(s.email_notifications, up.enable_stream_email_notifications)`,
  followedTopicTrigger: Trigger.FOLLOWED_TOPIC_EMAIL,
  channelTrigger: Trigger.STREAM_EMAIL,
};
const PUSH: Medium = {
  offline: Prisma.sql`up.enable_offline_push_notifications`,
  followedTopic: Prisma.sql`up.enable_followed_topic_push_notifications`,
  channel: Prisma.sql`COALESCE(s.push_notifications, up.enable_stream_push_notifications)`,
  followedTopicTrigger: Trigger.FOLLOWED_TOPIC_PUSH,
  channelTrigger: Trigger.STREAM_PUSH,
};

/**
 * The CTEs `nc` (the recipients a trigger may apply to) and `nd` (each one's `email` and `push`
 * trigger, or null, their batching period, and `g`, the group a mention through a group names),
 * over `rcp(u, f, g)`: the message's recipients, their flags and mentioned group. The muting users of the sender are in `mu` (user_profile_id), as the send statement
 * already has them. Email needs the user away; push needs them away or
 * enable_online_push_notifications (get_push_notification_trigger).
 */
export function notificationDecisionSql(msg: NotifiedMessage): Prisma.Sql {
  const { FOLLOWED, MUTED, UNMUTED } = TopicVisibility;
  const away = Prisma.sql`(
      NOT EXISTS (SELECT 1 FROM event_queue q WHERE q.user_profile_id = c.u
                  AND (q.event_types IS NULL OR 'message' = ANY (q.event_types)))
      OR NOT EXISTS (SELECT 1 FROM user_presence p WHERE p.user_profile_id = c.u
                     AND p.last_active_time >= ${msg.sentAt}::timestamptz - make_interval(secs => ${OFFLINE_THRESHOLD_SECS})))`;
  const push = msg.push ? Prisma.sql`TRUE` : Prisma.sql`FALSE`;
  const when = (medium: Medium, triggers: Prisma.Sql) =>
    medium === EMAIL
      ? Prisma.sql`CASE WHEN ${away} THEN ${triggers} END`
      : Prisma.sql`CASE WHEN ${push} AND (up.enable_online_push_notifications OR ${away}) THEN ${triggers} END`;
  const base = Prisma.sql`c.u <> ${msg.senderId} AND c.u NOT IN (SELECT user_profile_id FROM mu)`;
  const users = Prisma.sql`JOIN user_profile up ON up.id = c.u AND NOT up.is_bot AND up.is_active`;
  if (!msg.channel) {
    const dm = (medium: Medium) =>
      when(medium, Prisma.sql`CASE WHEN ${medium.offline} THEN ${Trigger.DIRECT_MESSAGE} END`);
    return Prisma.sql`
    nc AS (SELECT c.u, c.f, c.g FROM rcp c WHERE ${base}),
    nd AS (
      SELECT c.u, c.g, up.email_notifications_batching_period_seconds AS period,
        ${dm(EMAIL)} AS email, ${dm(PUSH)} AS push
      FROM nc c ${users})`;
  }

  const { streamId, recipientId, topic } = msg.channel;
  const lower = topic.toLowerCase();
  // user_allows_notifications_in_StreamTopic: a muted topic never; a muted channel only where
  // the topic is unmuted or followed; then the subscription's setting, else the user's.
  const allows = (setting: Prisma.Sql) => Prisma.sql`(
      ut.visibility_policy IS DISTINCT FROM ${MUTED}
      AND (NOT COALESCE(s.is_muted, FALSE) OR ut.visibility_policy IN (${UNMUTED}, ${FOLLOWED}))
      AND ${setting})`;
  const followed = Prisma.sql`ut.visibility_policy = ${FOLLOWED}`;
  const wildcardAllowed = allows(
    Prisma.sql`COALESCE(s.wildcard_mentions_notify, up.wildcard_mentions_notify)`,
  );
  // get_{email,push}_notification_trigger's order: the first that applies.
  const triggers = (medium: Medium) => {
    const followedWildcard = Prisma.sql`${followed} AND ${medium.followedTopic}
      AND up.enable_followed_topic_wildcard_mentions_notify`;
    return when(
      medium,
      Prisma.sql`CASE
          WHEN c.f & ${PERSONAL} <> 0 AND ${medium.offline} THEN ${Trigger.MENTION}
          WHEN c.f & ${TOPIC_WILDCARD} <> 0 AND ${followedWildcard}
            THEN ${Trigger.TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC}
          WHEN c.f & ${STREAM_WILDCARD} <> 0 AND ${followedWildcard}
            THEN ${Trigger.STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC}
          WHEN c.f & ${TOPIC_WILDCARD} <> 0 AND ${medium.offline} AND ${wildcardAllowed}
            THEN ${Trigger.TOPIC_WILDCARD_MENTION}
          WHEN c.f & ${STREAM_WILDCARD} <> 0 AND ${medium.offline} AND ${wildcardAllowed}
            THEN ${Trigger.STREAM_WILDCARD_MENTION}
          WHEN ${followed} AND ${medium.followedTopic} THEN ${medium.followedTopicTrigger}
          WHEN ${allows(medium.channel)} THEN ${medium.channelTrigger}
        END`,
    );
  };
  // Candidates first, so that a channel of thousands joins only the few a trigger may apply to:
  // the mentioned, the topic's followers, and those with the channel's notifications on.
  const channelOn = msg.push
    ? Prisma.sql`(email_notifications OR push_notifications)`
    : Prisma.sql`email_notifications`;
  const userOn = msg.push
    ? Prisma.sql`(enable_stream_email_notifications OR enable_stream_push_notifications)`
    : Prisma.sql`enable_stream_email_notifications`;
  return Prisma.sql`
    nc AS (
      SELECT c.u, c.f, c.g FROM rcp c
      WHERE ${base} AND (
        c.f & ${PERSONAL | TOPIC_WILDCARD | STREAM_WILDCARD} <> 0
        OR c.u IN (SELECT user_profile_id FROM user_topic WHERE stream_id = ${streamId}
                   AND topic_name_lower = ${lower} AND visibility_policy = ${FOLLOWED})
        OR c.u IN (SELECT user_profile_id FROM subscription WHERE recipient_id = ${recipientId}
                   AND active AND ${channelOn})
        OR c.u IN (SELECT id FROM user_profile WHERE realm_id = ${msg.realmId} AND ${userOn}))),
    nd AS (
      SELECT c.u, c.g, up.email_notifications_batching_period_seconds AS period,
        ${triggers(EMAIL)} AS email, ${triggers(PUSH)} AS push
      FROM nc c ${users}
      LEFT JOIN subscription s ON s.user_profile_id = c.u AND s.recipient_id = ${recipientId}
      LEFT JOIN user_topic ut ON ut.user_profile_id = c.u AND ut.stream_id = ${streamId}
        AND ut.topic_name_lower = ${lower})`;
}

/**
 * The group a row records: only where the trigger is the mention (what Zulip's API documents of
 * `mentioned_user_group_id`: present when the notification is due to that group's mention).
 */
const groupOf = (trigger: Prisma.Sql) =>
  Prisma.sql`CASE WHEN ${trigger} = ${Trigger.MENTION} THEN d.g END`;

/**
 * The step that writes the email rows, after `m` (the new message) and `nd`: each row due with
 * the user's earliest pending one, or a batching period after the message (Zulip's
 * MissedMessageWorker gives a new row the scheduled_timestamp of the user's pending ones).
 * `(SELECT min(scheduled_timestamp) FROM ne)` is when the first of them is due.
 */
export function emailRowsSql(sentAt: Date): Prisma.Sql {
  return Prisma.sql`
    ne AS (
      INSERT INTO scheduled_message_notification_email (user_profile_id, message_id, trigger, mentioned_user_group_id, scheduled_timestamp)
      SELECT d.u, m.id, d.email, ${groupOf(Prisma.sql`d.email`)},
        COALESCE((SELECT min(e.scheduled_timestamp) FROM scheduled_message_notification_email e
                  WHERE e.user_profile_id = d.u),
                 ${sentAt}::timestamptz + make_interval(secs => d.period))
      FROM m, nd d WHERE d.email IS NOT NULL
      RETURNING scheduled_timestamp)`;
}

/**
 * The step that queues the pushes (workers/push-notifications.ts), after `m` and `nd`: for users
 * with a device registered at the bouncer. `(SELECT count(*) FROM np)` is how many.
 */
export function pushRowsSql(): Prisma.Sql {
  return Prisma.sql`
    np AS (
      INSERT INTO push_notification_queue (user_profile_id, type, message_ids, trigger, mentioned_user_group_id)
      SELECT d.u, 'message', ARRAY[m.id], d.push, ${groupOf(Prisma.sql`d.push`)} FROM m, nd d
      WHERE d.push IS NOT NULL
        AND EXISTS (SELECT 1 FROM push_device pd WHERE pd.user_profile_id = d.u AND pd.push_token_id IS NOT NULL)
      RETURNING 1)`;
}
