import { doUpdateRealm } from "../actions/realm/realm.ts";
import { doSendTestWelcomeBotCustomMessage } from "../actions/realm/welcome-bot.ts";
import { OrganizationAdministratorRequiredError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { isRealmAdmin } from "../lib/users/users.ts";

/** PATCH /realm (zerver/views/realm.py update_realm): administrators only. */
export const updateRealm: Handler<"update-realm"> = async ({ body }, ctx) => {
  if (!isRealmAdmin(ctx.user)) throw new OrganizationAdministratorRequiredError();
  return doUpdateRealm(ctx, body);
};

/** POST /realm/test_welcome_bot_custom_message: administrators only, then the text. */
export const testWelcomeBotCustomMessage: Handler<"test-welcome-bot-custom-message"> = async (
  { body },
  ctx,
) => {
  if (!isRealmAdmin(ctx.user)) throw new OrganizationAdministratorRequiredError();
  return {
    message_id: await doSendTestWelcomeBotCustomMessage(ctx, body.welcome_message_custom_text),
  };
};
