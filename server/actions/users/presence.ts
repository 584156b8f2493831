/**
 * Presence reports (zerver/actions/presence.py do_update_user_presence). Every open client
 * reports once a minute, so the usual report is one statement that locks nothing but the
 * user's own row: a conditional UPDATE that moves the times forward only past Zulip's
 * thresholds. Update ids come from a sequence, not from a counter row per organization that
 * every report would queue on. Only a user's first report, or an `active` one after being
 * offline, is announced with a `presence` event: that one runs in a transaction with its event.
 */
import type { RequestContext } from "../../context.ts";
import type { RawTx, Realm, UserProfile } from "../../db/index.ts";
import type { UnitOfWork } from "../../events/index.ts";
import {
  OFFLINE_THRESHOLD_SECS,
  PRESENCE_PING_INTERVAL_SECS,
  PRESENCE_UPDATE_MIN_FREQ_SECONDS,
  presenceEvent,
  USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS,
  type PresenceTimes,
} from "../../lib/users/presence.ts";
import { inRawTransaction } from "../transaction.ts";

type Deps = Pick<RequestContext, "db" | "events">;
type Reporter = Pick<UserProfile, "id" | "realmId" | "email" | "dateJoined">;

/**
 * A user reported as active after this long without activity has "come online": other clients
 * may already show them offline before their next regular report, so an event tells them now.
 */
const BECAME_ONLINE_AFTER_MS = (OFFLINE_THRESHOLD_SECS - PRESENCE_PING_INTERVAL_SECS - 10) * 1000;
const MIN_FREQ_MS = PRESENCE_UPDATE_MIN_FREQ_SECONDS * 1000;

/**
 * update_user_presence: nothing while the user's `presence_enabled` is off (invisible mode);
 * otherwise the report, announced when the user came online and the organization shares
 * presence.
 */
export async function doReportPresence(
  deps: Deps,
  realm: Pick<Realm, "id" | "presenceDisabled">,
  user: Reporter & Pick<UserProfile, "presenceEnabled">,
  time: Date,
  active: boolean,
): Promise<void> {
  if (!user.presenceEnabled) return;
  // The usual report: one statement, which writes only when a time moves past the threshold,
  // and leaves a report that needs an event to the transaction below.
  const [old] = await deps.db.$queryRaw<(PresenceTimes & { wrote: boolean })[]>`
    WITH old AS (
      SELECT id, last_active_time, last_connected_time FROM user_presence
      WHERE user_profile_id = ${user.id}
    ), due AS (
      SELECT id,
        (last_connected_time IS NULL OR ${time}::timestamptz - last_connected_time > ${`${MIN_FREQ_MS} milliseconds`}::interval) AS connected,
        (${active} AND (last_active_time IS NULL OR ${time}::timestamptz - last_active_time > ${`${MIN_FREQ_MS} milliseconds`}::interval)) AS active,
        (${active} AND (last_active_time IS NULL OR ${time}::timestamptz - last_active_time > ${`${BECAME_ONLINE_AFTER_MS} milliseconds`}::interval)) AS online
      FROM old
    ), wrote AS (
      UPDATE user_presence p SET
        last_connected_time = GREATEST(p.last_connected_time, ${time}::timestamptz),
        last_active_time = CASE WHEN due.active THEN GREATEST(p.last_active_time, ${time}::timestamptz) ELSE p.last_active_time END,
        last_update_id = nextval('user_presence_update_id_seq')
      FROM due
      WHERE p.id = due.id AND (due.connected OR due.active) AND NOT due.online
      RETURNING p.id
    )
    SELECT last_active_time AS "lastActiveTime", last_connected_time AS "lastConnectedTime",
           EXISTS (SELECT 1 FROM wrote) AS wrote
    FROM old`;
  if (old && !becameOnline(old, time, active)) return;
  // A first report, or one that brings the user online: announced unless the organization
  // shares no presence, or is too large for these events (Zulip's
  // USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS).
  const audience = realm.presenceDisabled ? [] : await presenceAudience(deps, user.realmId);
  await inRawTransaction(deps, user.realmId, ({ tx, events }) =>
    writePresence({ tx, events }, user, time, active, audience),
  );
}

function becameOnline(old: PresenceTimes, time: Date, active: boolean): boolean {
  return (
    active &&
    (old.lastActiveTime === null ||
      time.getTime() - old.lastActiveTime.getTime() > BECAME_ONLINE_AFTER_MS)
  );
}

/** Who hears of a user coming online: the organization's active users, unless there are too many. */
async function presenceAudience(deps: Deps, realmId: number): Promise<number[]> {
  const rows = await deps.db.$queryRaw<{ id: number }[]>`
    SELECT id FROM user_profile WHERE realm_id = ${realmId} AND is_active
    LIMIT ${USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS + 1}`;
  return rows.length > USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS ? [] : rows.map((r) => r.id);
}

/**
 * Stores a report whatever the thresholds (creating the row if needed; times never move back
 * unless `replace`) and tells `audience` with a `presence` event: for a user coming online, and
 * for the forced update Zulip makes when a user turns `presence_enabled` on (an active report
 * now) or off (`replace` with an idle report older than the offline threshold, so that the user
 * shows as offline since then), to the whole organization whatever its size.
 */
export async function writePresence(
  { tx, events }: UnitOfWork<RawTx>,
  user: Reporter,
  time: Date,
  active: boolean,
  audience: number[],
  replace = false,
): Promise<void> {
  const activeTime = active ? time : null;
  const [row] = await tx.$queryRaw<PresenceTimes[]>`
    INSERT INTO user_presence (realm_id, user_profile_id, last_connected_time, last_active_time, last_update_id)
    VALUES (${user.realmId}, ${user.id}, ${time}, ${activeTime}, nextval('user_presence_update_id_seq'))
    ON CONFLICT (user_profile_id) DO UPDATE SET
      last_connected_time = CASE WHEN ${replace} THEN EXCLUDED.last_connected_time
        ELSE GREATEST(user_presence.last_connected_time, EXCLUDED.last_connected_time) END,
      last_active_time = CASE WHEN ${replace} THEN EXCLUDED.last_active_time
        ELSE GREATEST(user_presence.last_active_time, EXCLUDED.last_active_time) END,
      last_update_id = EXCLUDED.last_update_id
    RETURNING last_active_time AS "lastActiveTime", last_connected_time AS "lastConnectedTime"`;
  if (audience.length) events.add(presenceEvent(user, row!, time), audience);
}

/**
 * The presence update Zulip forces when a user turns `presence_enabled` on or off
 * (do_change_user_setting), so that everyone sees the new state at once: on, an active report
 * now; off, the user's presence replaced by an idle one older than the offline threshold (with
 * a 120 s margin for clock skew). Announced to `audience` (the whole organization, whatever its
 * size or presence setting), in the caller's transaction.
 */
export function presenceEnabledChanged(
  { tx, events }: UnitOfWork<RawTx>,
  user: Reporter,
  enabled: boolean,
  now: Date,
  audience: number[],
): Promise<void> {
  if (enabled) return writePresence({ tx, events }, user, now, true, audience);
  const offline = new Date(now.getTime() - (OFFLINE_THRESHOLD_SECS + 120) * 1000);
  return writePresence({ tx, events }, user, offline, false, audience, true);
}
