/**
 * The browser-facing video-call endpoints, outside the API (zproject/urls.py):
 *
 * - GET /calls/videoprovider/register: the user (HTTP Basic or `?api_key=`, as for files) is
 *   sent to the OAuth provider's authorize URL with a signed `state` naming them, bound to this
 *   browser by a cookie (Zulip binds it to the session's CSRF cookie).
 * - GET /calls/videoprovider/complete: where the provider sends the browser back; the code is
 *   exchanged for a token at the token URL and stored, with its event.
 * - POST /calls/videoprovider/deauthorize: the provider's deauthorization notice, answered as
 *   Zulip's deauthorize_zoom_user does (success, nothing kept to delete on its word alone).
 * - GET /calls/bigbluebutton/join: creates the signed meeting on the BigBlueButton server and
 *   sends the browser to its join URL, as moderator for the user who made the link.
 *
 * Refusals are Zulip's JSON error envelope, as its JsonableError gives on these views.
 */
import { randomBytes } from "node:crypto";
import { Router, type NextFunction, type Request, type Response } from "express";
import { doSetVideoCallProviderToken } from "../actions/users/video-calls.ts";
import type { AppDeps } from "../context.ts";
import { JsonableError, RequestVariableMissingError } from "../errors.ts";
import { realmById, resolveRealm } from "../lib/auth/identity.ts";
import { realmUrl } from "../lib/realm/realm.ts";
import { findActiveUserProfile } from "../lib/users/users.ts";
import {
  OAUTH_TOKEN_KEY,
  TIMEOUT_MS,
  bigBlueButtonChecksum,
  configuredOAuth,
  cookieValue,
  queryString,
  requestToken,
  sameText,
  sessionId,
  signObject,
  unsignObject,
  xmlElement,
} from "../lib/realm/video-calls.ts";
import { fileRequester } from "../http/uploads.ts";

const SID_COOKIE = "videoprovider_sid";
/** How long the user has to get through the provider's pages. */
const STATE_SECONDS = 3600;

function stringParam(req: Request, name: string): string {
  const value = (req.query as Record<string, unknown>)[name];
  const last = Array.isArray(value) ? (value.at(-1) as unknown) : value;
  if (typeof last !== "string") throw new RequestVariableMissingError(name);
  return last;
}

export function videoCallRoutes(deps: AppDeps) {
  const router = Router();
  const redirectUri = () => `http://${deps.config.externalHost}/calls/videoprovider/complete`;

  router.get("/calls/videoprovider/register", async (req, res) => {
    const user = await fileRequester(req, deps);
    const provider = configuredOAuth(deps.config);
    const cookie = randomBytes(24).toString("base64url");
    const state = await signObject(deps.db, "videoprovider-state", {
      realm: user.realmId,
      user: user.id,
      sid: await sessionId(deps.db, cookie),
      exp: Math.floor(deps.now().getTime() / 1000) + STATE_SECONDS,
    });
    const url = new URL(provider.authorizeUrl);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", provider.clientId);
    url.searchParams.set("redirect_uri", redirectUri());
    url.searchParams.set("state", state);
    if (provider.scope) url.searchParams.set("scope", provider.scope);
    res
      // The URL may hold the API key (`?api_key=`): never cached, never sent on as a Referer.
      .set({ "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" })
      .cookie(SID_COOKIE, cookie, {
        httpOnly: true,
        sameSite: "lax",
        path: "/calls/videoprovider/",
        maxAge: STATE_SECONDS * 1000,
      })
      .redirect(302, url.toString());
  });

  router.get("/calls/videoprovider/complete", async (req, res) => {
    const provider = configuredOAuth(deps.config);
    const code = stringParam(req, "code");
    const invalidSession = new JsonableError(`Invalid ${provider.name} session identifier`);
    const state = await unsignObject(deps.db, "videoprovider-state", stringParam(req, "state"));
    if (
      !state ||
      typeof state.realm !== "number" ||
      typeof state.user !== "number" ||
      typeof state.sid !== "string" ||
      typeof state.exp !== "number" ||
      state.exp < deps.now().getTime() / 1000
    )
      throw invalidSession;
    // The provider returns to the one registered redirect URI; the cookie lives on the
    // organization's own host, so go there first (complete_zoom_user's redirect).
    const here = await resolveRealm(deps.db, req.get("host") ?? "");
    if (here?.id !== state.realm) {
      const realm = await realmById(deps.db, state.realm);
      if (!realm) throw invalidSession;
      return res.redirect(302, (await realmUrl(deps.db, realm, deps.config)) + req.originalUrl);
    }
    const cookie = cookieValue(req.get("cookie"), SID_COOKIE);
    if (!cookie || !sameText(state.sid, await sessionId(deps.db, cookie))) throw invalidSession;
    const user = await findActiveUserProfile(deps.db, state.realm, state.user);
    if (!user) throw invalidSession;
    const token = await requestToken(
      provider,
      { grant_type: "authorization_code", code, redirect_uri: redirectUri() },
      deps.now(),
    );
    if (!token) throw new JsonableError(`Invalid ${provider.name} credentials`);
    await doSetVideoCallProviderToken(deps, user, OAUTH_TOKEN_KEY, token);
    res
      .status(200)
      .type("html")
      .set({ "Cache-Control": "no-store", "Content-Security-Policy": "default-src 'none'" })
      .clearCookie(SID_COOKIE, { path: "/calls/videoprovider/" })
      .send(
        `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(provider.name)}</title></head>` +
          `<body><p>${escapeHtml(provider.name)} is connected. You may close this window.</p></body></html>`,
      );
  });

  router.post("/calls/videoprovider/deauthorize", (_req, res) => {
    res.json({ result: "success", msg: "" });
  });

  router.get("/calls/bigbluebutton/join", async (req, res) => {
    const user = await fileRequester(req, deps);
    const base = deps.config.bigBlueButtonUrl;
    const secret = deps.config.bigBlueButtonSecret;
    if (!base || !secret) throw new JsonableError("BigBlueButton is not configured.");
    const data = await unsignObject(deps.db, "bigbluebutton", stringParam(req, "bigbluebutton"));
    if (!data) throw new JsonableError("Invalid signature.");
    const meetingID = String(data.meeting_id);
    const create = queryString({
      meetingID,
      name: String(data.name),
      lockSettingsDisableCam: String(data.lock_settings_disable_cam === true),
    });
    let xml: string;
    try {
      const response = await fetch(
        `${base}api/create?${create}&checksum=${bigBlueButtonChecksum("create", create, secret)}`,
        { signal: AbortSignal.timeout(TIMEOUT_MS) },
      );
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      xml = await response.text();
    } catch {
      throw new JsonableError("Error connecting to the BigBlueButton server.");
    }
    if (xmlElement(xml, "messageKey") === "checksumError")
      throw new JsonableError("Error authenticating to the BigBlueButton server.");
    const createTime = xmlElement(xml, "createTime");
    if (xmlElement(xml, "returncode") !== "SUCCESS" || createTime === undefined)
      throw new JsonableError("BigBlueButton server returned an unexpected error.");
    const join = queryString({
      meetingID,
      // Only the link's maker is moderator, so only they can turn a voice call into a video call.
      role: data.moderator === user.id ? "MODERATOR" : "VIEWER",
      fullName: user.fullName,
      // Ties the join URL to this creation of the meeting.
      createTime,
    });
    res
      .set("Cache-Control", "no-store")
      .redirect(
        302,
        `${base}api/join?${join}&checksum=${bigBlueButtonChecksum("join", join, secret)}`,
      );
  });

  router.use("/calls", (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent || !(err instanceof JsonableError)) return next(err);
    res
      .status(err.httpStatus)
      .set(err.headers)
      .json({ result: "error", msg: err.message, code: err.code, ...err.data() });
  });
  return router;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
