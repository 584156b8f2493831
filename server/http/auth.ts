/**
 * HTTP Basic authentication with email and API key (zerver/decorator.py
 * validate_api_key) on `/api/v1`, and the session cookie with its CSRF token on `/json`
 * (zerver/lib/rest.py rest_dispatch: each path takes only its own credentials), run after the
 * validator has matched the operation and before it checks parameters, so a bad key with bad
 * parameters answers 401 as Zulip does.
 */
import { timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import {
  CsrfFailedError,
  JsonableError,
  OrganizationAdministratorRequiredError,
  SessionRequiredError,
  UnauthorizedError,
} from "../errors.ts";
import type { AppDeps } from "../context.ts";
import type { Realm, UserProfile } from "../db/index.ts";
import { resolveRealm, userByApiKey } from "../lib/auth/identity.ts";
import type { RateLimitStatus } from "../lib/auth/rate-limit.ts";
import { NO_ORGANIZATION } from "../lib/realm/realm.ts";
import { cookieValue, SESSION_COOKIE, sessionByKey, tokensEqual } from "../lib/auth/sessions.ts";
import { viaJson } from "./json-prefix.ts";
import { operationFor, type LoadedSpec, type OperationInfo } from "./spec.ts";
import { isRealmAdmin } from "../lib/users/users.ts";
import { countStatements, type StatementCounter } from "../db/statements.ts";

export const API_KEY_FORMAT = /^[A-Za-z0-9]{32}$/;

declare global {
  namespace Express {
    interface Request {
      /** Set by authentication: the request's host and, for authenticated operations, who is asking. */
      zulip?: { host: string; realm?: Realm; user?: UserProfile; rateLimit?: RateLimitStatus };
    }
  }
}

function keysEqual(a: string, b: string) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function parseBasicAuth(header: string): { username: string; password: string } {
  const [scheme, encoded = ""] = header.trim().split(/\s+/, 2);
  if (scheme?.toLowerCase() !== "basic")
    throw new JsonableError("This endpoint requires HTTP basic authentication.");
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) throw new UnauthorizedError("Invalid authorization header for basic auth");
  return { username: decoded.slice(0, colon).trim(), password: decoded.slice(colon + 1).trim() };
}

export function authMiddleware(spec: LoadedSpec, deps: AppDeps) {
  return function zulipAuth(req: Request, res: Response, next: NextFunction) {
    void countStatements(requestCounter(res), () => authenticate(req, next));
  };
  async function authenticate(req: Request, next: NextFunction) {
    try {
      const op = operationFor(spec, req);
      const host = req.headers.host ?? deps.config.externalHost;
      req.zulip = { host };
      if (!op?.requiresAuth) return next();
      if (viaJson(req)) {
        req.zulip = { host, ...(await checkSession(deps, req, host)) };
        checkRole(op, req.zulip.user!);
        return next();
      }
      const header = req.headers.authorization;
      if (!header) throw new UnauthorizedError();
      const { username, password } = parseBasicAuth(header);
      if (!API_KEY_FORMAT.test(password)) throw new UnauthorizedError("Malformed API key");
      req.zulip = { host, ...(await checkApiKey(deps, host, username, password)) };
      checkRole(op, req.zulip.user!);
      next();
    } catch (err) {
      next(await withOrganizationHint(deps, req, err));
    }
  }
}

/** require_realm_admin, for operations whose Zulip view has the decorator. */
function checkRole(op: OperationInfo, user: Pick<UserProfile, "role">): void {
  if (op.requiresRole === "administrator" && !isRealmAdmin(user))
    throw new OrganizationAdministratorRequiredError();
}

/**
 * The organization and active user an API key (of the right format) authenticates on this host:
 * one indexed lookup by the (unique) key, cached. With an email (HTTP Basic), it must name the same
 * user, by its real or its API address, case-insensitively; without one (`?api_key=` on file
 * URLs), the key alone decides.
 */
export async function checkApiKey(
  deps: Pick<AppDeps, "db">,
  host: string,
  email: string | null,
  apiKey: string,
): Promise<{ realm: Realm; user: UserProfile }> {
  const [realm, found] = await Promise.all([
    resolveRealm(deps.db, host),
    userByApiKey(deps.db, apiKey),
  ]);
  const lower = email?.toLowerCase();
  const user =
    found &&
    (lower === undefined ||
      found.deliveryEmail.toLowerCase() === lower ||
      found.email.toLowerCase() === lower)
      ? found
      : null;
  // Compare even when there is no such user, so the answer takes the same time.
  const matches = keysEqual(user?.apiKey ?? "0".repeat(32), apiKey) && user !== null;
  // resolveRealm finds none only when no organization exists at all.
  if (!realm) throw new UnauthorizedError(NO_ORGANIZATION);
  if (!user || !matches) throw new UnauthorizedError("Invalid API key");
  if (!user.isActive) throw new UnauthorizedError("Account is deactivated");
  // A valid key of another organization's user (validate_account_and_subdomain).
  if (user.realmId !== realm.id)
    throw new UnauthorizedError("Account is not associated with this subdomain");
  if (realm.deactivated) throw new UnauthorizedError("This organization has been deactivated");
  return { realm, user };
}

/** Methods that change nothing, and so need no CSRF token (Django's CsrfViewMiddleware also lets OPTIONS and TRACE through; the API has neither). */
const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * `/json`: the live session the `sessionid` cookie names, refused as an API key is when its user
 * or organization is deactivated or it belongs to another organization; then, for a method that
 * may change something, the X-CSRFToken header must be the session's token. An Authorization
 * header is not read here.
 */
export async function checkSession(
  deps: Pick<AppDeps, "db" | "now">,
  req: Request,
  host: string,
): Promise<{ realm: Realm; user: UserProfile }> {
  const key = cookieValue(req.headers.cookie, SESSION_COOKIE);
  const [session, realm] = await Promise.all([
    key === undefined ? null : sessionByKey(deps.db, key, deps.now()),
    resolveRealm(deps.db, host),
  ]);
  if (!realm) throw new SessionRequiredError(NO_ORGANIZATION);
  if (!session) throw new SessionRequiredError();
  if (!session.user.isActive) throw new SessionRequiredError("Account is deactivated");
  if (session.realm.id !== realm.id)
    throw new SessionRequiredError("Account is not associated with this subdomain");
  if (realm.deactivated) throw new SessionRequiredError("This organization has been deactivated");
  if (!SAFE_METHODS.has(req.method)) {
    const sent = req.headers["x-csrftoken"];
    if (typeof sent !== "string" || sent === "") throw new CsrfFailedError(CsrfFailedError.MISSING);
    if (!tokensEqual(sent, session.csrfToken)) throw new CsrfFailedError(CsrfFailedError.INCORRECT);
  }
  return { realm, user: session.user };
}

/**
 * On a server with no organization at all, every refused credential (none, malformed, a key
 * nobody has) gets the hint saying what to run, as a 401 like the refusal it replaces: a new
 * user's first request usually carries no key yet. resolveRealm finds no organization only then.
 */
async function withOrganizationHint(
  deps: Pick<AppDeps, "db">,
  req: Request,
  err: unknown,
): Promise<unknown> {
  if (
    !(err instanceof JsonableError) ||
    (err instanceof UnauthorizedError && err.message === NO_ORGANIZATION)
  )
    return err;
  // A database that cannot answer leaves the refusal as it was: it must still be answered.
  const realm = await resolveRealm(deps.db, req.zulip?.host ?? "").catch(() => "unknown" as const);
  if (realm) return err;
  return viaJson(req)
    ? new SessionRequiredError(NO_ORGANIZATION)
    : new UnauthorizedError(NO_ORGANIZATION);
}

/** The request's statement counter (authentication and the handler add to it). */
export function requestCounter(res: Response): StatementCounter {
  return ((res.locals as { statements?: StatementCounter }).statements ??= { statements: 0 });
}
