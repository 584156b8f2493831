/** POST and DELETE /users/me/muted_users/{muted_user_id} (zerver/views/muted_users.py). */
import { doMuteUser, doUnmuteUser } from "../actions/users/muted-users.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { accessUserById } from "../lib/users/users.ts";

// Bots (since feature level 188) and deactivated users may be muted and unmuted.
const ACCESS = { forAdmin: false, allowBots: true, allowDeactivated: true } as const;

/** mute_user: oneself is refused before the user is looked up. */
export const muteUser: Handler<"mute-user"> = async ({ path }, ctx) => {
  if (path.muted_user_id === ctx.user.id) throw new JsonableError("Cannot mute self");
  const target = await accessUserById(ctx.db, ctx.user, path.muted_user_id, ACCESS);
  await doMuteUser(ctx, target.id);
  return {};
};

export const unmuteUser: Handler<"unmute-user"> = async ({ path }, ctx) => {
  const target = await accessUserById(ctx.db, ctx.user, path.muted_user_id, ACCESS);
  await doUnmuteUser(ctx, target.id);
  return {};
};
