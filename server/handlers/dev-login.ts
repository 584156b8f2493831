/** POST /dev_fetch_api_key (zerver/views/development/dev_login.py api_dev_fetch_api_key). */
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { authenticateDevUser, checkDevAuthBackend } from "../lib/auth/dev-login.ts";
import { INVALID_EMAIL, isValidEmail } from "../lib/email/addresses.ts";
import { NO_ORGANIZATION, resolveRealm } from "../lib/realm/realm.ts";

/** Zulip's order: the backend first, then the address, the organization and the user. */
export const devFetchApiKey: Handler<"dev-fetch-api-key"> = async ({ body }, ctx) => {
  checkDevAuthBackend(ctx);
  const username = body.username.trim();
  if (!isValidEmail(username)) throw new JsonableError(INVALID_EMAIL);
  const realm = await resolveRealm(ctx.db, ctx.host);
  if (!realm)
    throw new JsonableError(NO_ORGANIZATION, { code: "NONEXISTENT_SUBDOMAIN", httpStatus: 404 });
  const user = await authenticateDevUser(ctx, realm, username);
  return { api_key: user.apiKey, email: user.deliveryEmail, user_id: user.id };
};
