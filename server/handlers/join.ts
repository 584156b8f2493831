/**
 * The sign-up page, `/join/<key>/`, outside the API: the link in an invitation email, in an
 * address confirmation email, or an invitation link anyone may use. GET shows the form; POST
 * (an ordinary form submission, application/x-www-form-urlencoded, no JavaScript needed) checks
 * it as Zulip's RegistrationForm / HomepageForm do, re-shows it with the errors, or creates the
 * account (actions/invites/sign-up.ts) and shows its API key once.
 */
import express, { Router, type NextFunction, type Request, type Response } from "express";
import type { AppDeps } from "../context.ts";
import type { Realm } from "../db/index.ts";
import { doRequestSignUpEmail, doSignUp, SignUpLinkGone } from "../actions/invites/sign-up.ts";
import { JsonableError } from "../errors.ts";
import { INVALID_EMAIL, checkEmailAllowedForRealm, isValidEmail } from "../lib/email/addresses.ts";
import { passwordRuleText, passwordStrengthProblem } from "../lib/auth/passwords.ts";
import { realmUrl, resolveRealm } from "../lib/realm/realm.ts";
import { signUpLink, type SignUpLink } from "../lib/invites/sign-up.ts";
import { checkFullName } from "../lib/users/users.ts";
import {
  addressPage,
  checkEmailPage,
  errorPage,
  forbiddenPage,
  linkProblemPage,
  noOrganizationPage,
  registerPage,
  welcomePage,
  type FieldErrors,
  type Page,
} from "../http/join-pages.ts";

type UsableLink = Extract<SignUpLink, { kind: "register" | "multiuse" }>;

/** Django's error for a missing required form field. */
const REQUIRED = "This field is required.";

function send(res: Response, { status, html }: Page) {
  res
    .status(status)
    .type("html")
    // The pages may carry an API key: never cached, never framed, no scripts at all, and the
    // form posts only here. The URL holds the link's key, so it is never sent to another site as
    // a Referer; same-origin (not no-referrer, under which browsers send `Origin: null` with the
    // form and the cross-site check below would refuse it).
    .set({
      "Cache-Control": "no-store",
      "Referrer-Policy": "same-origin",
      "X-Frame-Options": "DENY",
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy":
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    })
    .send(html);
}

/** A form field's value as the last one sent (Django's QueryDict), or "". */
function field(req: Request, name: string): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const value = body[name];
  const last = Array.isArray(value) ? (value.at(-1) as unknown) : value;
  return typeof last === "string" ? last : "";
}

/**
 * A cheap cross-site check for the form (the key is the real secret): a browser's Origin, or
 * failing that its Referer, must name this host. Clients that send neither (curl) pass.
 */
function sameSite(req: Request): boolean {
  const host = req.get("host");
  const origin = req.get("origin");
  const from = origin ?? req.get("referer");
  if (from === undefined) return true;
  if (from === "null") return false;
  try {
    return new URL(from).host === host;
  } catch {
    return false;
  }
}

export function joinRoutes(deps: AppDeps) {
  const router = Router();
  const parseForm = express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 20 });

  /** The organization and the link, or the page that says why there is nothing to sign up for. */
  async function context(
    req: Request,
  ): Promise<{ page: Page } | { page?: undefined; realm: Realm; link: UsableLink }> {
    const realm = await resolveRealm(deps.db, req.get("host") ?? "");
    if (!realm || realm.deactivated) return { page: noOrganizationPage() };
    const link = await signUpLink(deps.db, String(req.params.key), realm.id, deps.now());
    if (link.kind === "malformed" || link.kind === "missing" || link.kind === "expired")
      return { page: linkProblemPage(link.kind) };
    return { realm, link };
  }

  router.get("/join/:key", async (req, res) => {
    const found = await context(req);
    if (found.page) return send(res, found.page);
    const { realm, link } = found;
    send(
      res,
      link.kind === "register"
        ? registerPage({
            realmName: realm.name,
            email: link.prereg.email,
            fullName: link.prereg.fullName ?? "",
            termsUrl: deps.config.termsOfServiceUrl,
            passwordRule: passwordRuleText(deps.config),
          })
        : addressPage({ realmName: realm.name, email: "" }),
    );
  });

  router.post("/join/:key", parseForm, async (req, res) => {
    if (!sameSite(req)) return send(res, forbiddenPage());
    const found = await context(req);
    if (found.page) return send(res, found.page);
    const { realm, link } = found;
    if (link.kind === "register") send(res, await register(req, realm, link.prereg));
    else send(res, await requestEmail(req, realm, link.inviteId));
  });

  /** RegistrationForm: name, password, terms; then the account. */
  async function register(
    req: Request,
    realm: Realm,
    prereg: { id: number; email: string },
  ): Promise<Page> {
    const fullName = field(req, "full_name");
    const password = field(req, "password");
    const termsUrl = deps.config.termsOfServiceUrl;
    const errors: FieldErrors = {};
    if (fullName.trim() === "") errors.full_name = REQUIRED;
    else
      try {
        checkFullName(fullName);
      } catch (e) {
        if (!(e instanceof JsonableError)) throw e;
        errors.full_name = e.message;
      }
    if (password === "") errors.password = REQUIRED;
    else {
      const problem = await passwordStrengthProblem(password, deps.config);
      if (problem) errors.password = problem;
    }
    if (termsUrl && field(req, "terms") === "") errors.terms = REQUIRED;
    const again = (error?: string) =>
      registerPage({
        realmName: realm.name,
        email: prereg.email,
        fullName,
        termsUrl,
        passwordRule: passwordRuleText(deps.config),
        errors,
        error,
      });
    if (Object.keys(errors).length) return again();
    try {
      const user = await doSignUp(deps, realm, prereg.id, { fullName, password });
      return welcomePage({
        realmName: realm.name,
        email: user.email,
        apiKey: user.apiKey,
        site: await realmUrl(deps.db, realm, deps.config),
      });
    } catch (e) {
      if (e instanceof SignUpLinkGone) return linkProblemPage("expired");
      if (e instanceof JsonableError) return again(e.message);
      throw e;
    }
  }

  /** HomepageForm of an invitation link: the address, then its confirmation email. */
  async function requestEmail(req: Request, realm: Realm, inviteId: number): Promise<Page> {
    const email = field(req, "email").trim();
    const again = (errors: FieldErrors, error?: string) =>
      addressPage({ realmName: realm.name, email, errors, error });
    if (email === "") return again({ email: REQUIRED });
    if (!isValidEmail(email)) return again({ email: INVALID_EMAIL });
    try {
      await checkEmailAllowedForRealm(deps.db, realm, email);
      await doRequestSignUpEmail(deps, realm, inviteId, email);
      return checkEmailPage(email);
    } catch (e) {
      if (e instanceof SignUpLinkGone) return linkProblemPage("expired");
      if (e instanceof JsonableError) return again({ email: e.message });
      throw e;
    }
  }

  // A body the form parser refuses, or anything unexpected: a plain page, never a stack trace.
  router.use("/join", (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = (err as { status?: unknown }).status;
    const code = typeof status === "number" && status >= 400 && status < 500 ? status : 500;
    if (code >= 500) deps.log.error({ err }, "sign-up page failed");
    send(res, errorPage(code));
  });
  return router;
}
