/**
 * Zulip's DevAuthBackend (zproject/backends.py, zerver/views/development/dev_login.py): any
 * active user by email alone, on a server started with DEV_LOGIN=true. The account checks are
 * EmailAuthBackend's, in its order, without the password and its rate limit.
 */
import type { Realm, UserProfile } from "../../db/index.ts";
import type { PublicContext } from "../../context.ts";
import { AuthenticationFailedError, JsonableError } from "../../errors.ts";
import { findUserForLogin } from "../users/users.ts";
import { checkAccountForLogin } from "./login.ts";

/** check_dev_auth_backend: this server is never "production" to Zulip's first test. */
export function checkDevAuthBackend(ctx: Pick<PublicContext, "config">): void {
  if (!ctx.config.devLogin) throw new JsonableError("DevAuthBackend not enabled.");
}

export async function authenticateDevUser(
  ctx: Pick<PublicContext, "db">,
  realm: Realm,
  username: string,
): Promise<UserProfile> {
  const user = await findUserForLogin(ctx.db, realm.id, username);
  checkAccountForLogin(user, realm);
  if (!user) throw new AuthenticationFailedError();
  return user;
}
