import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { INVALID_EMAIL, isValidEmail } from "../lib/email/addresses.ts";
import { authenticateByPassword } from "../lib/auth/login.ts";
import { doRecordLogin } from "../actions/users/users.ts";
import { rateLimitHeaders, strictest, type RateLimitStatus } from "../lib/auth/rate-limit.ts";
import { NO_ORGANIZATION, resolveRealm } from "../lib/realm/realm.ts";

/**
 * POST /fetch_api_key (zerver/views/auth.py api_fetch_api_key): the password check and its
 * `authenticate_by_username` rate limit are lib/auth/login.ts's, shared with the login form.
 */
export const fetchApiKey: Handler<"fetch-api-key"> = async ({ body }, ctx) => {
  const username = body.username.trim();
  if (!isValidEmail(username)) throw new JsonableError(INVALID_EMAIL);
  const realm = await resolveRealm(ctx.db, ctx.host);
  // resolveRealm finds none only when no organization exists at all.
  if (!realm)
    throw new JsonableError(NO_ORGANIZATION, { code: "NONEXISTENT_SUBDOMAIN", httpStatus: 404 });
  // The headers report the stricter of this limit and the per-address one the request counted in.
  const report = (status: RateLimitStatus) =>
    Object.assign(ctx.responseHeaders ?? {}, rateLimitHeaders(strictest(status, ctx.rateLimit)!));
  const user = await authenticateByPassword(ctx, realm, username, body.password, report);
  await doRecordLogin(ctx, user);
  return { api_key: user.apiKey, email: user.deliveryEmail, user_id: user.id };
};
