/**
 * What every HTML page of the web app's origin shares (the login and sign-up pages, the app
 * shell): its security headers, how it is sent, its cookies, and the visitor's live session.
 */
import type { Request, Response } from "express";
import type { AppDeps } from "../context.ts";
import { resolveRealm } from "../lib/realm/realm.ts";
import {
  cookieValue,
  SESSION_COOKIE,
  sessionByKey,
  type WebSession,
} from "../lib/auth/sessions.ts";
import type { Page } from "./join-pages.ts";

/** The security headers of every page the web app's origin serves (login pages, the app shell). */
export const PAGE_SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; connect-src 'self'; font-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "strict-origin-when-cross-origin",
};

export function sendPage(res: Response, { status, html }: Page, cache = "no-cache") {
  res
    .status(status)
    .type("html")
    .set({ ...PAGE_SECURITY_HEADERS, "Cache-Control": cache })
    .send(html);
}

/** A cookie as Set-Cookie writes it: HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS. */
export function setCookie(
  res: Response,
  req: Request,
  name: string,
  value: string,
  maxAgeSeconds: number,
) {
  res.append(
    "Set-Cookie",
    `${name}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAgeSeconds}` +
      (req.secure ? "; Secure" : ""),
  );
}

/**
 * The request's live session on this host, its user and organization active (what /json
 * accepts, http/auth.ts), or null.
 */
export async function currentSession(
  deps: Pick<AppDeps, "db" | "now" | "config">,
  req: Request,
): Promise<WebSession | null> {
  const key = cookieValue(req.headers.cookie, SESSION_COOKIE);
  if (key === undefined) return null;
  const [session, realm] = await Promise.all([
    sessionByKey(deps.db, key, deps.now()),
    resolveRealm(deps.db, req.get("host") ?? deps.config.externalHost),
  ]);
  if (!session || !realm || session.realm.id !== realm.id) return null;
  if (!session.user.isActive || realm.deactivated) return null;
  return session;
}
