import { AuthenticationFailedError, JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { INVALID_EMAIL, isValidEmail } from "../lib/emails.ts";
import { verifyPassword } from "../lib/passwords.ts";
import {
  giveBack,
  rateLimitHeaders,
  rulesOf,
  strictest,
  takeHit,
  type RateLimitStatus,
} from "../lib/rate-limit.ts";
import { NO_ORGANIZATION, resolveRealm } from "../lib/realms.ts";
import { findUserForLogin } from "../lib/users.ts";

/**
 * POST /fetch_api_key (zerver/views/auth.py api_fetch_api_key, with the checks of
 * zproject/backends.py EmailAuthBackend in its order). A wrong password, an unknown user and
 * a user of another organization get the same answer; an unknown user costs a hash too, so
 * timing does not tell them apart.
 *
 * Attempts are limited per username (Zulip's rate_limit_auth, rule `authenticate_by_username`),
 * whether or not an account has it: past the limit even the right password gets 429. Every
 * attempt takes a hit before anything is checked, so that guesses sent in parallel cannot all
 * pass the check before the first failure is counted; a success gives its hit back, so only
 * failures count, and it does not clear the failures before it.
 */
export const fetchApiKey: Handler<"fetch-api-key"> = async ({ body }, ctx) => {
  const username = body.username.trim();
  if (!isValidEmail(username)) throw new JsonableError(INVALID_EMAIL);
  const realm = await resolveRealm(ctx.db, ctx.host);
  // resolveRealm finds none only when no organization exists at all.
  if (!realm)
    throw new JsonableError(NO_ORGANIZATION, { code: "NONEXISTENT_SUBDOMAIN", httpStatus: 404 });
  const hit = ctx.config.rateLimiting
    ? await takeHit(
        ctx.db,
        rulesOf(ctx.config.rateLimitingRules, "authenticate_by_username"),
        username.toLowerCase(),
        ctx.now(),
      )
    : undefined;
  // The headers report the stricter of this limit and the per-address one the request counted in.
  const report = (status: RateLimitStatus) =>
    Object.assign(ctx.responseHeaders ?? {}, rateLimitHeaders(strictest(status, ctx.rateLimit)!));
  if (hit) report(hit.status);
  if (!realm.passwordAuthEnabled)
    throw new AuthenticationFailedError(
      "Password authentication is disabled in this organization",
      "PASSWORD_AUTH_DISABLED",
    );
  const user = await findUserForLogin(ctx.db, realm.id, username);
  if (user && !user.isActive)
    throw new AuthenticationFailedError("Account is deactivated", "USER_DEACTIVATED");
  if (user && realm.deactivated)
    throw new AuthenticationFailedError(
      "This organization has been deactivated",
      "REALM_DEACTIVATED",
    );
  const ok = await verifyPassword(body.password, user?.passwordHash);
  if (!user || !ok) throw new AuthenticationFailedError();
  if (hit) report(await giveBack(ctx.db, hit));
  return { api_key: user.apiKey, email: user.deliveryEmail, user_id: user.id };
};
