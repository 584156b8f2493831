/**
 * Logging in with an email and a password, as POST /fetch_api_key and the login form
 * (handlers/login.ts) both do it: zproject/backends.py EmailAuthBackend's checks in its order,
 * behind Zulip's `authenticate_by_username` rate limit (rate_limit_auth).
 *
 * Attempts are limited per username, whether or not an account has it: past the limit even the
 * right password gets 429. Every attempt takes a hit before anything is checked, so that guesses
 * sent in parallel cannot all pass the check before the first failure is counted; a success gives
 * its hit back, so only failures count, and it does not clear the failures before it. A wrong
 * password, an unknown user and a user of another organization get the same answer; an unknown
 * user costs a hash too, so timing does not tell them apart.
 */
import type { Config } from "../../config.ts";
import type { Db, Realm, UserProfile } from "../../db/index.ts";
import { AuthenticationFailedError } from "../../errors.ts";
import { verifyPassword } from "./passwords.ts";
import { giveBack, rulesOf, takeHit, type RateLimitStatus } from "./rate-limit.ts";
import { findUserForLogin } from "../users/users.ts";

export async function authenticateByPassword(
  deps: { db: Db; config: Pick<Config, "rateLimiting" | "rateLimitingRules">; now: () => Date },
  realm: Realm,
  username: string,
  password: string,
  /** Told the `authenticate_by_username` status after the hit is taken and after it is given back. */
  report: (status: RateLimitStatus) => void = () => {},
): Promise<UserProfile> {
  const hit = deps.config.rateLimiting
    ? await takeHit(
        deps.db,
        rulesOf(deps.config.rateLimitingRules, "authenticate_by_username"),
        username.toLowerCase(),
        deps.now(),
      )
    : undefined;
  if (hit) report(hit.status);
  if (!realm.passwordAuthEnabled)
    throw new AuthenticationFailedError(
      "Password authentication is disabled in this organization",
      "PASSWORD_AUTH_DISABLED",
    );
  const user = await findUserForLogin(deps.db, realm.id, username);
  checkAccountForLogin(user, realm);
  const ok = await verifyPassword(password, user?.passwordHash);
  if (!user || !ok) throw new AuthenticationFailedError();
  if (hit) report(await giveBack(deps.db, hit));
  return user;
}

/**
 * The account checks of every login backend (EmailAuthBackend, DevAuthBackend), in Zulip's order
 * and before the password is looked at: a deactivated account, then a deactivated organization.
 */
export function checkAccountForLogin(
  user: Pick<UserProfile, "isActive"> | null,
  realm: Pick<Realm, "deactivated">,
): void {
  if (user && !user.isActive)
    throw new AuthenticationFailedError("Account is deactivated", "USER_DEACTIVATED");
  if (user && realm.deactivated)
    throw new AuthenticationFailedError(
      "This organization has been deactivated",
      "REALM_DEACTIVATED",
    );
}
