/**
 * Creating and deleting web sessions (lib/auth/sessions.ts reads them). A login always makes a new
 * session (Django's login() cycles the key), with a new CSRF token, and prunes the user's
 * expired sessions in the same transaction; a logout deletes its row, which every process sees at
 * its next request. No events: nothing a client shows changes.
 */
import type { AppDeps } from "../../context.ts";
import type { UserProfile } from "../../db/index.ts";
import { randomToken, sessionIdOf, SESSION_COOKIE_AGE_SECONDS } from "../../lib/auth/sessions.ts";
import { inTransaction } from "../transaction.ts";

/** A new session for the user: the key for the cookie (stored only as its hash) and its CSRF token. */
export async function doCreateSession(
  deps: Pick<AppDeps, "db" | "events" | "now">,
  user: Pick<UserProfile, "id" | "realmId">,
): Promise<{ key: string; csrfToken: string; expires: Date }> {
  const key = randomToken();
  const csrfToken = randomToken();
  const now = deps.now();
  const expires = new Date(now.getTime() + SESSION_COOKIE_AGE_SECONDS * 1000);
  await inTransaction(deps, user.realmId, async ({ tx }) => {
    await tx.session.deleteMany({ where: { userProfileId: user.id, expires: { lte: now } } });
    await tx.session.create({
      data: {
        id: sessionIdOf(key),
        userProfileId: user.id,
        realmId: user.realmId,
        csrfToken,
        created: now,
        expires,
      },
    });
  });
  return { key, csrfToken, expires };
}

/** Ends a session (logout): its row goes, so its cookie is refused everywhere from now on. */
export async function doDeleteSession(
  deps: Pick<AppDeps, "db" | "events">,
  session: { id: string; realmId: number },
): Promise<void> {
  await inTransaction(deps, session.realmId, async ({ tx }) => {
    await tx.session.deleteMany({ where: { id: session.id } });
  });
}
