/** User statuses (zerver/views/presence.py get_status_backend, update_user_status_backend, update_user_status_admin). */
import { doUpdateUserStatus } from "../actions/users/user-status.ts";
import type { Handler } from "../http/types.ts";
import { accessUserForRead } from "../lib/access/users.ts";
import { checkStatusText, checkUpdateUserStatus, userStatus } from "../lib/users/user-status.ts";
import { accessUserById, humanUsersOnly } from "../lib/users/users.ts";

/** GET /users/{user_id}/status: any active human user's status, only its set fields. */
export const getUserStatus: Handler<"get-user-status"> = async ({ path }, ctx) => {
  const target = await accessUserForRead(ctx.db, ctx.user, ctx.realm, path.user_id, {});
  return { status: await userStatus(ctx.db, target.id) };
};

/** POST /users/me/status: the caller's own status, and the legacy `away`; not for bots. */
export const updateStatus: Handler<"update-status"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  const change = await checkUpdateUserStatus(ctx.db, ctx.realm.id, {
    away: body.away,
    statusText: checkStatusText(body.status_text),
    emojiName: body.emoji_name,
    emojiCode: body.emoji_code,
    reactionType: body.reaction_type,
  });
  await doUpdateUserStatus(ctx, ctx.user, change);
  return {};
};

/**
 * POST /users/{user_id}/status: an administrator (bots too, since feature level 473) sets an
 * active human user's status. The text's length is checked first, as Zulip's parameter parsing does.
 */
export const updateStatusForUser: Handler<"update-status-for-user"> = async (
  { path, body },
  ctx,
) => {
  const statusText = checkStatusText(body.status_text);
  const target = await accessUserById(ctx.db, ctx.user, path.user_id, { forAdmin: true });
  const change = await checkUpdateUserStatus(ctx.db, ctx.realm.id, {
    statusText,
    emojiName: body.emoji_name,
    emojiCode: body.emoji_code,
    reactionType: body.reaction_type,
  });
  await doUpdateUserStatus(ctx, target, change);
  return {};
};
