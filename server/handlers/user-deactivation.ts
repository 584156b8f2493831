/**
 * Deactivation, reactivation and API key regeneration (zerver/views/users.py
 * deactivate_user_backend, deactivate_user_own_backend, reactivate_user_backend;
 * zerver/views/user_settings.py regenerate_api_key).
 */
import { JsonableError, OrganizationOwnerRequiredError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { BotType, checkBotNameAvailable, checkCanCreateBot } from "../lib/users/bots.ts";
import {
  accessUserById,
  activeMemberCount,
  humanUsersOnly,
  isLastOwner,
  Role,
} from "../lib/users/users.ts";
import {
  doDeactivateUser,
  doReactivateUser,
  doRegenerateApiKey,
} from "../actions/users/user-deactivation.ts";

/** CannotDeactivateLastUserError: "Cannot deactivate the only {entity}.". */
class CannotDeactivateLastUserError extends JsonableError {
  constructor(isLastOwner: boolean) {
    const entity = isLastOwner ? "organization owner" : "user";
    super(`Cannot deactivate the only ${entity}.`, {
      code: "CANNOT_DEACTIVATE_LAST_USER",
      data: { is_last_owner: isLastOwner, entity },
    });
  }
}

/** DELETE /users/{user_id}. `deactivation_notification_comment`'s email is not sent yet. */
export const deactivateUser: Handler<"deactivate-user"> = async ({ path }, ctx) => {
  const target = await accessUserById(ctx.db, ctx.user, path.user_id, {
    allowDeactivated: false,
    allowBots: false,
    forAdmin: true,
  });
  if (target.role === Role.OWNER && ctx.user.role !== Role.OWNER)
    throw new OrganizationOwnerRequiredError();
  if (await isLastOwner(ctx.db, target))
    throw new JsonableError("Cannot deactivate the only organization owner");
  await doDeactivateUser(ctx, ctx.realm, target);
  return {};
};

/** DELETE /users/me. */
export const deactivateOwnUser: Handler<"deactivate-own-user"> = async (_input, ctx) => {
  if ((await activeMemberCount(ctx.db, ctx.realm.id)) === 1)
    throw new CannotDeactivateLastUserError(false);
  if (await isLastOwner(ctx.db, ctx.user)) throw new CannotDeactivateLastUserError(true);
  await doDeactivateUser(ctx, ctx.realm, ctx.user);
  return {};
};

/** POST /users/{user_id}/reactivate. */
export const reactivateUser: Handler<"reactivate-user"> = async ({ path }, ctx) => {
  const target = await accessUserById(ctx.db, ctx.user, path.user_id, {
    allowDeactivated: true,
    allowBots: true,
    forAdmin: true,
  });
  if (target.isBot) {
    await checkCanCreateBot(ctx.db, ctx.user, ctx.realm, target.botType ?? BotType.GENERIC);
    await checkBotNameAvailable(ctx.db, ctx.realm.id, target.fullName, true);
  }
  await doReactivateUser(ctx, ctx.realm, target, ctx.user);
  return {};
};

/** POST /users/me/api_key/regenerate (human users only). */
export const regenerateApiKey: Handler<"regenerate-api-key"> = async (_input, ctx) => {
  humanUsersOnly(ctx.user);
  return { api_key: await doRegenerateApiKey(ctx, ctx.realm, ctx.user) };
};
