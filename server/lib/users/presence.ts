/**
 * Presence reads and formats (zerver/lib/presence.py): a user's presence is two times, when a
 * client last reported them active and when one was last connected at all; the modern format
 * gives both, the legacy one an `active` or `idle` status with one timestamp.
 */
import type { Db } from "../../db/index.ts";
import { isStorableId } from "../ids.ts";
import { unixSeconds } from "../time.ts";

/** Zulip's settings of the same names (zproject/default_settings.py, computed_settings.py). */
export const PRESENCE_PING_INTERVAL_SECS = 60;
export const OFFLINE_THRESHOLD_SECS = 140;
/** A report moves a stored time forward only when it is this much newer. */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/** Legacy format: `active` when the last activity is this close to the last connection. */
export const PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS = 70;
/** Past this many active users, nobody coming online is announced by an event (only forced updates are). */
export const USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS = 100;
/** Without `history_limit_days`, fetches go back two weeks. */
const DEFAULT_HISTORY_LIMIT_DAYS = 14;

/** What register tells clients (zerver/lib/events.py, the `realm` section). */
export const PRESENCE_REGISTER_SETTINGS = {
  server_presence_ping_interval_seconds: PRESENCE_PING_INTERVAL_SECS,
  server_presence_offline_threshold_seconds: OFFLINE_THRESHOLD_SECS,
};

export interface PresenceTimes {
  lastActiveTime: Date | null;
  lastConnectedTime: Date | null;
}

export interface ModernPresence {
  active_timestamp: number;
  idle_timestamp: number;
}

export interface LegacyPresenceEntry {
  client: "website";
  status: "active" | "idle";
  timestamp: number;
  pushable: false;
}

/** A time the user never reported reads as their joining time (user_presence_datetime_with_date_joined_default). */
const orJoined = (time: Date | null, dateJoined: Date) => time ?? dateJoined;

export function modernPresence(times: PresenceTimes, dateJoined: Date): ModernPresence {
  return {
    active_timestamp: unixSeconds(orJoined(times.lastActiveTime, dateJoined)),
    idle_timestamp: unixSeconds(orJoined(times.lastConnectedTime, dateJoined)),
  };
}

/** format_legacy_presence_dict: `active` when activity is within 70 s of the last connection. */
export function legacyPresenceEntry(times: PresenceTimes, dateJoined: Date): LegacyPresenceEntry {
  const active = orJoined(times.lastActiveTime, dateJoined);
  const connected = orJoined(times.lastConnectedTime, dateJoined);
  const isActive =
    active.getTime() + PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS * 1000 >=
    connected.getTime();
  return {
    client: "website",
    status: isActive ? "active" : "idle",
    timestamp: unixSeconds(isActive ? active : connected),
    pushable: false,
  };
}

/** get_legacy_user_presence_info: the entry under `website`, and without `pushable` under `aggregated`. */
export function legacyPresence(times: PresenceTimes, dateJoined: Date) {
  const website = legacyPresenceEntry(times, dateJoined);
  const { pushable: _pushable, ...aggregated } = website;
  return { aggregated, website };
}

interface PresenceRow extends PresenceTimes {
  userId: number;
  email: string;
  dateJoined: Date;
  lastUpdateId: bigint;
}

export interface PresenceFetch {
  /** Modern format, keyed by user ID; else legacy, keyed by API email. */
  slim: boolean;
  /** The client's last `presence_last_update_id`: only rows updated after it. */
  lastUpdateId?: number | null;
  historyLimitDays?: number | null;
}

/**
 * get_presences_for_realm / get_presence_dict_by_realm: the active human users' presence, in one
 * statement, with the update id to fetch from next time. An organization with presence
 * disabled shares none (-1).
 */
export async function realmPresences(
  db: Db,
  realm: { id: number; presenceDisabled: boolean },
  now: Date,
  fetch: PresenceFetch,
): Promise<{ presences: Record<string, unknown>; lastUpdateId: number }> {
  if (realm.presenceDisabled) return { presences: {}, lastUpdateId: -1 };
  const after = fetch.lastUpdateId ?? null;
  const days = fetch.historyLimitDays ?? DEFAULT_HISTORY_LIMIT_DAYS;
  // A client that already holds data (an id above 0) gets every change since, however old.
  // Any number of days the client sends stays a date PostgreSQL takes (from 1970 to year 275760).
  const since =
    after !== null && after > 0
      ? new Date(0)
      : new Date(Math.min(Math.max(now.getTime() - days * 86_400_000, 0), 8.64e15));
  const rows =
    fetch.historyLimitDays === 0
      ? []
      : await db.$queryRaw<PresenceRow[]>`
          SELECT p.user_profile_id AS "userId", u.email, u.date_joined AS "dateJoined",
                 p.last_active_time AS "lastActiveTime", p.last_connected_time AS "lastConnectedTime",
                 p.last_update_id AS "lastUpdateId"
          FROM user_presence p JOIN user_profile u ON u.id = p.user_profile_id
          WHERE p.realm_id = ${realm.id} AND u.is_active AND NOT u.is_bot
            AND p.last_update_id > ${BigInt(Math.min(Math.max(after ?? -1, -1), Number.MAX_SAFE_INTEGER))}
            AND p.last_connected_time >= ${since}`;
  const presences: Record<string, unknown> = {};
  let lastUpdateId = after ?? -1;
  for (const row of rows) {
    if (fetch.slim) presences[String(row.userId)] = modernPresence(row, row.dateJoined);
    else presences[row.email] = legacyPresence(row, row.dateJoined);
    lastUpdateId = Math.max(lastUpdateId, Number(row.lastUpdateId));
  }
  return { presences, lastUpdateId };
}

/** get_presence_response: the `presences`, `server_timestamp` and `presence_last_update_id` of a fetch. */
export async function presenceResponse(
  db: Db,
  realm: { id: number; presenceDisabled: boolean },
  now: Date,
  fetch: PresenceFetch,
) {
  const { presences, lastUpdateId } = await realmPresences(db, realm, now, fetch);
  return {
    presences,
    server_timestamp: now.getTime() / 1000,
    presence_last_update_id: lastUpdateId,
  };
}

/** One user's stored presence times, or null when they never reported. */
export async function userPresenceTimes(db: Db, userId: number): Promise<PresenceTimes | null> {
  const rows = await db.$queryRaw<PresenceTimes[]>`
    SELECT last_active_time AS "lastActiveTime", last_connected_time AS "lastConnectedTime"
    FROM user_presence WHERE user_profile_id = ${userId}`;
  return rows[0] ?? null;
}

/**
 * A `presence` event as logged: both formats, and each queue keeps the one its client declared
 * (`simplified_presence_events`: `presences` only; otherwise the legacy fields), as Zulip's
 * Tornado does (events/format.ts).
 */
export function presenceEvent(
  user: { id: number; email: string; dateJoined: Date },
  times: PresenceTimes,
  now: Date,
) {
  return {
    type: "presence",
    user_id: user.id,
    email: user.email,
    server_timestamp: now.getTime() / 1000,
    presence: { website: legacyPresenceEntry(times, user.dateJoined) },
    presences: { [String(user.id)]: modernPresence(times, user.dateJoined) },
  };
}

/**
 * The user GET /users/{user_id_or_email}/presence names: digits are an ID (as Python's int()
 * reads them), anything else an API email (get_active_user, case-insensitive); only active
 * users, bots included (the caller refuses them with their own text).
 */
export async function findActiveUserByIdOrApiEmail(db: Db, realmId: number, idOrEmail: string) {
  const digits = /^\s*[+-]?\d+\s*$/.test(idOrEmail);
  const select = { id: true, botType: true, dateJoined: true } as const;
  if (digits) {
    const id = Number(idOrEmail);
    return isStorableId(id)
      ? db.userProfile.findFirst({ where: { id, realmId, isActive: true }, select })
      : null;
  }
  return db.userProfile.findFirst({
    where: { realmId, isActive: true, email: { equals: idOrEmail, mode: "insensitive" } },
    select,
  });
}
