/** Presence (zerver/views/presence.py update_active_status_backend, get_presence_backend, get_statuses_for_realm). */
import { doReportPresence } from "../actions/users/presence.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import {
  findActiveUserByIdOrApiEmail,
  legacyPresence,
  modernPresence,
  OFFLINE_THRESHOLD_SECS,
  presenceResponse,
  userPresenceTimes,
} from "../lib/users/presence.ts";
import { unixSeconds } from "../lib/time.ts";
import { humanUsersOnly } from "../lib/users/users.ts";

/** POST /users/me/presence: the caller's report, then (unless `ping_only`) everyone's presence. */
export const updatePresence: Handler<"update-presence"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  if (body.status !== "active" && body.status !== "idle")
    throw new JsonableError(`Invalid status: ${body.status}`);
  const now = ctx.now();
  await doReportPresence(ctx, ctx.realm, ctx.user, now, body.status === "active");
  if (body.ping_only) return {};
  return presenceResponse(ctx.db, ctx.realm, now, {
    // `last_update_id` means a modern client.
    slim: (body.slim_presence ?? false) || body.last_update_id !== undefined,
    lastUpdateId: body.last_update_id,
    historyLimitDays: body.history_limit_days,
  });
};

/**
 * GET /users/{user_id_or_email}/presence: an active human user's presence, the modern fields and
 * the legacy dictionaries in one object (Zulip 12.0 since feature level 497; 487–496 sent the
 * modern ones alone, earlier servers the legacy ones alone: both together serve either reader).
 * The legacy `aggregated` status is `offline` past the offline threshold, and neither legacy
 * entry has `client` or `pushable`. `slim_presence` no longer changes the answer.
 */
export const getUserPresence: Handler<"get-user-presence"> = async ({ path }, ctx) => {
  const target = await findActiveUserByIdOrApiEmail(ctx.db, ctx.realm.id, path.user_id_or_email);
  if (!target) throw new JsonableError("No such user");
  if (target.botType !== null) throw new JsonableError("Presence is not supported for bot users.");
  const times = await userPresenceTimes(ctx.db, target.id);
  if (!times) throw new JsonableError(`No presence data for ${path.user_id_or_email}`);
  const { website, aggregated } = legacyPresence(times, target.dateJoined);
  const offline = unixSeconds(ctx.now()) - aggregated.timestamp > OFFLINE_THRESHOLD_SECS;
  return {
    presence: {
      ...modernPresence(times, target.dateJoined),
      website: { status: website.status, timestamp: website.timestamp },
      aggregated: {
        status: offline ? ("offline" as const) : aggregated.status,
        timestamp: aggregated.timestamp,
      },
    },
  };
};

/** GET /realm/presence: everyone's presence of the last two weeks, in the legacy format. */
export const getPresence: Handler<"get-presence"> = async (_request, ctx) => {
  const { presences, server_timestamp } = await presenceResponse(ctx.db, ctx.realm, ctx.now(), {
    slim: false,
  });
  return { presences: presences as never, server_timestamp };
};
