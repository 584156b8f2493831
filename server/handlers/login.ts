/**
 * Logging in and out of the web app (Zulip's login_page and logout_then_login), outside the API:
 * HTML forms that need no JavaScript, as the sign-up pages (handlers/join.ts).
 *
 * - `GET /login/` (also `/accounts/login/`): the form; a visitor with a live session goes to `/`.
 *   Login CSRF is a double-submit cookie: `csrftoken` (HttpOnly, SameSite=Lax) holds the value
 *   of the form's hidden `csrfmiddlewaretoken`.
 * - `POST /accounts/login/` (also `/login/`): the password check of POST /fetch_api_key
 *   (lib/auth/login.ts: the `authenticate_by_username` limit, password auth enabled, deactivated user
 *   or organization); success makes a new session (actions/auth/sessions.ts), sets `sessionid` and
 *   redirects to `next` when it is a local path, else to `/`.
 * - `POST /accounts/logout/`: with the session's CSRF token (form field `csrfmiddlewaretoken` or
 *   header `X-CSRFToken`), deletes the session, clears the cookie, redirects to `/login/`.
 */
import express, { Router, type NextFunction, type Request, type Response } from "express";
import type { AppDeps } from "../context.ts";
import type { Realm } from "../db/index.ts";
import { doCreateSession, doDeleteSession } from "../actions/auth/sessions.ts";
import { doRecordLogin } from "../actions/users/users.ts";
import { AuthenticationFailedError, RateLimitedError } from "../errors.ts";
import { isValidEmail } from "../lib/email/addresses.ts";
import { authenticateByPassword } from "../lib/auth/login.ts";
import { resolveRealm } from "../lib/realm/realm.ts";
import {
  cookieValue,
  randomToken,
  SESSION_COOKIE,
  SESSION_COOKIE_AGE_SECONDS,
  tokensEqual,
} from "../lib/auth/sessions.ts";
import { errorPage, forbiddenPage, noOrganizationPage } from "../http/join-pages.ts";
import { currentSession, sendPage, setCookie } from "../http/pages.ts";
import { loginPage, rateLimitedPage, WRONG_CREDENTIALS } from "../http/login-pages.ts";

export const CSRF_COOKIE = "csrftoken";
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** `next` if it is a path on this site (not `//host` or `/\host`, which browsers take as another site). */
export function localNext(next: string): string {
  return next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
}

/** A form field's value as the last one sent (Django's QueryDict), or "". */
function field(req: Request, name: string): string {
  const value = ((req.body ?? {}) as Record<string, unknown>)[name];
  const last = Array.isArray(value) ? (value.at(-1) as unknown) : value;
  return typeof last === "string" ? last : "";
}

export function loginRoutes(deps: AppDeps) {
  const router = Router();
  const parseForm = express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 20 });

  /** The login CSRF token: the browser's cookie if it has a well-formed one, else a new cookie. */
  function loginCsrfToken(req: Request, res: Response): string {
    const known = cookieValue(req.headers.cookie, CSRF_COOKIE);
    if (known !== undefined && TOKEN_FORMAT.test(known)) return known;
    const token = randomToken();
    setCookie(res, req, CSRF_COOKIE, token, 365 * 24 * 60 * 60);
    return token;
  }

  async function realmOf(req: Request): Promise<Realm | null> {
    return resolveRealm(deps.db, req.get("host") ?? deps.config.externalHost);
  }

  const showForm = async (req: Request, res: Response) => {
    if (await currentSession(deps, req)) return res.redirect(302, "/");
    const realm = await realmOf(req);
    if (!realm) return sendPage(res, noOrganizationPage(), "no-store");
    const next = typeof req.query.next === "string" ? localNext(req.query.next) : "/";
    sendPage(
      res,
      loginPage({ realmName: realm.name, csrfToken: loginCsrfToken(req, res), next }),
      "no-store",
    );
  };
  router.get(["/login", "/accounts/login"], showForm);

  router.post(["/login", "/accounts/login"], parseForm, async (req: Request, res: Response) => {
    const cookie = cookieValue(req.headers.cookie, CSRF_COOKIE);
    if (cookie === undefined || !tokensEqual(field(req, "csrfmiddlewaretoken"), cookie))
      return sendPage(res, forbiddenPage(), "no-store");
    const realm = await realmOf(req);
    if (!realm) return sendPage(res, noOrganizationPage(), "no-store");
    const username = field(req, "username").trim();
    const next = localNext(field(req, "next"));
    const again = (error: string) =>
      sendPage(
        res,
        loginPage({ realmName: realm.name, csrfToken: cookie, next, email: username, error }),
        "no-store",
      );
    if (!isValidEmail(username)) return again(WRONG_CREDENTIALS);
    let user;
    try {
      user = await authenticateByPassword(deps, realm, username, field(req, "password"));
    } catch (e) {
      if (e instanceof RateLimitedError) {
        const seconds = Math.ceil(Number(e.headers["Retry-After"]));
        res.set("Retry-After", String(seconds));
        return sendPage(
          res,
          rateLimitedPage({
            realmName: realm.name,
            csrfToken: cookie,
            next,
            email: username,
            seconds,
          }),
          "no-store",
        );
      }
      if (!(e instanceof AuthenticationFailedError)) throw e;
      return again(e.code === "AUTHENTICATION_FAILED" ? WRONG_CREDENTIALS : e.message);
    }
    await doRecordLogin(deps, user);
    const { key } = await doCreateSession(deps, user);
    setCookie(res, req, SESSION_COOKIE, key, SESSION_COOKIE_AGE_SECONDS);
    res.set("Cache-Control", "no-store").redirect(302, next);
  });

  router.post("/accounts/logout", parseForm, async (req: Request, res: Response) => {
    const key = cookieValue(req.headers.cookie, SESSION_COOKIE);
    const session = key === undefined ? null : await currentSession(deps, req);
    if (session) {
      const header = req.get("x-csrftoken");
      const sent = header ?? field(req, "csrfmiddlewaretoken");
      if (!tokensEqual(sent, session.csrfToken)) {
        if (header !== undefined)
          return res.status(403).json({
            result: "error",
            msg: "CSRF error: CSRF token from the 'X-Csrftoken' HTTP header incorrect.",
            code: "CSRF_FAILED",
          });
        return sendPage(res, forbiddenPage(), "no-store");
      }
      await doDeleteSession(deps, { id: session.id, realmId: session.realm.id });
    }
    if (key !== undefined) setCookie(res, req, SESSION_COOKIE, "", 0);
    res.set("Cache-Control", "no-store").redirect(302, "/login/");
  });

  // A body the form parser refuses, or anything unexpected: a plain page, never a stack trace.
  router.use(
    ["/login", "/accounts"],
    (err: unknown, _req: Request, res: Response, next: NextFunction) => {
      if (res.headersSent) return next(err);
      const status = (err as { status?: unknown }).status;
      const code = typeof status === "number" && status >= 400 && status < 500 ? status : 500;
      if (code >= 500) deps.log.error({ err }, "login page failed");
      sendPage(res, errorPage(code), "no-store");
    },
  );
  return router;
}
