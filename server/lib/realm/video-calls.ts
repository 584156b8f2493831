/**
 * Video calls (zerver/views/video_calls.py): which provider an organization uses, Zulip's
 * errors, the signed values the browser-facing endpoints hand out (the OAuth `state`, the
 * BigBlueButton join link), and the provider's HTTP calls. Outbound HTTP runs outside any
 * database transaction, each call bounded by TIMEOUT_MS (Zulip's VideoCallSession timeout).
 */
import { createHash, createHmac, randomInt, timingSafeEqual } from "node:crypto";
import type { Config, VideoProviderConfig } from "../../config.ts";
import type { Db, PrismaClient } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { signingKey } from "../uploads/uploads.ts";

export const TIMEOUT_MS = 5000;

/**
 * Realm.VIDEO_CHAT_PROVIDERS' ids → names (Zulip 12): 2 was Google Hangouts, since removed; 5 is
 * Zoom's server-to-server integration, 6 Constructor Groups and 7 Nextcloud Talk, none of which
 * this server has.
 */
export const VIDEO_CHAT_PROVIDERS: Record<number, string> = {
  0: "None",
  1: "Jitsi Meet",
  3: "Zoom",
  4: "BigBlueButton",
  5: "Zoom",
  6: "Constructor Groups",
  7: "Nextcloud Talk",
  8: "Webex",
};
export const DISABLED = 0;
export const JITSI_MEET = 1;
export const ZOOM = 3;
export const BIG_BLUE_BUTTON = 4;
export const WEBEX = 8;
/** The user-OAuth providers (Zoom's user integration, Webex): served by the configured OAuth provider. */
export const OAUTH_PROVIDERS = new Set([ZOOM, WEBEX]);

type ProvidersConfig = Pick<Config, "videoProvider" | "bigBlueButtonUrl" | "bigBlueButtonSecret">;

/** Which of Zoom (3) and Webex (8) the server's one OAuth provider is: Webex when so named. */
export function oauthProviderId(config: Pick<Config, "videoProvider">): number {
  return config.videoProvider.name.trim().toLowerCase() === "webex" ? WEBEX : ZOOM;
}

/**
 * Realm.VIDEO_CHAT_PROVIDERS as Zulip builds it: none and Jitsi Meet always, the others only when
 * the server has their credentials (register's `realm_available_video_chat_providers`, and the
 * values PATCH /realm accepts for `video_chat_provider`).
 */
export function availableVideoChatProviders(
  config: ProvidersConfig,
): Record<string, { name: string; id: number }> {
  const out: Record<string, { name: string; id: number }> = {
    disabled: { name: "None", id: DISABLED },
    jitsi_meet: { name: "Jitsi Meet", id: JITSI_MEET },
  };
  const oauth = config.videoProvider;
  const oauthId = oauthProviderId(config);
  if (oauth.clientId !== undefined && oauth.clientSecret !== undefined && oauthId === ZOOM)
    out.zoom = { name: "Zoom", id: ZOOM };
  if (config.bigBlueButtonUrl && config.bigBlueButtonSecret)
    out.big_blue_button = { name: "BigBlueButton", id: BIG_BLUE_BUTTON };
  if (oauth.clientId !== undefined && oauth.clientSecret !== undefined && oauthId === WEBEX)
    out.webex = { name: "Webex", id: WEBEX };
  return out;
}

/** VideoCallProviderToken.provider of the configured OAuth provider's tokens. */
export const OAUTH_TOKEN_KEY = "oauth";

export function notConfigured(providerName: string): JsonableError {
  return new JsonableError(`${providerName} credentials have not been configured`);
}

/** InvalidVideoCallProviderTokenError. */
export function invalidToken(providerName: string): JsonableError {
  return new JsonableError(`Invalid ${providerName} access token`, {
    code: "INVALID_VIDEO_CALL_PROVIDER_TOKEN",
  });
}

export function callFailed(providerName: string): JsonableError {
  return new JsonableError(`Failed to create ${providerName} call`);
}

/** The OAuth provider's settings when its credentials are set, or Zulip's refusal. */
export function configuredOAuth(
  config: Pick<Config, "videoProvider">,
): VideoProviderConfig & { clientId: string; clientSecret: string } {
  const provider = config.videoProvider;
  if (provider.clientId === undefined || provider.clientSecret === undefined)
    throw notConfigured(provider.name);
  return provider as VideoProviderConfig & { clientId: string; clientSecret: string };
}

// --- Signed values -------------------------------------------------------------------------

async function mac(db: PrismaClient, purpose: string, text: string) {
  return createHmac("sha256", await signingKey(db))
    .update(`${purpose}:${text}`)
    .digest("base64url");
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `<base64url JSON>.<mac>`: a value this server made and nobody altered. */
export async function signObject(
  db: PrismaClient,
  purpose: string,
  value: object,
): Promise<string> {
  const body = Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${body}.${await mac(db, purpose, body)}`;
}

/** The object signObject signed for this purpose, or null for anything else. */
export async function unsignObject(
  db: PrismaClient,
  purpose: string,
  signed: string,
): Promise<Record<string, unknown> | null> {
  const dot = signed.lastIndexOf(".");
  if (dot <= 0) return null;
  const body = signed.slice(0, dot);
  if (!sameText(signed.slice(dot + 1), await mac(db, purpose, body))) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    return value && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The OAuth flow's session identifier (Zulip's __get_sid): a MAC of a random cookie the
 * register step set in the browser, so that only the browser that started the flow completes it.
 */
export function sessionId(db: PrismaClient, cookie: string): Promise<string> {
  return mac(db, "videoprovider-sid", cookie);
}

/** A cookie's value from a Cookie header (the last one of that name), or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  let found: string | undefined;
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) found = part.slice(eq + 1).trim();
  }
  return found;
}

// --- The OAuth provider's HTTP API ---------------------------------------------------------

export interface ProviderToken {
  accessToken: string;
  refreshToken: string | null;
  tokenType: string | null;
  scope: string | null;
  expiresAt: Date | null;
}

/**
 * POST to the token URL (RFC 6749 §4.1.3 and §6, client authenticated with HTTP Basic): the new
 * token, or null when the provider refuses or cannot be reached.
 */
export async function requestToken(
  provider: VideoProviderConfig & { clientId: string; clientSecret: string },
  form: Record<string, string>,
  now: Date,
): Promise<ProviderToken | null> {
  let body: Record<string, unknown>;
  try {
    const response = await fetch(provider.tokenUrl, {
      method: "POST",
      headers: {
        Authorization:
          "Basic " +
          Buffer.from(
            `${encodeURIComponent(provider.clientId)}:${encodeURIComponent(provider.clientSecret)}`,
          ).toString("base64"),
        Accept: "application/json",
      },
      body: new URLSearchParams(form),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!response.ok) return null;
    body = (await response.json()) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof body?.access_token !== "string" || body.access_token === "") return null;
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : null,
    tokenType: typeof body.token_type === "string" ? body.token_type : null,
    scope: typeof body.scope === "string" ? body.scope : null,
    expiresAt:
      Number.isFinite(expiresIn) && expiresIn > 0
        ? new Date(now.getTime() + expiresIn * 1000)
        : null,
  };
}

/** The user's token from the configured OAuth provider, if they hold one. */
export function storedToken(db: Db, userId: number): Promise<ProviderToken | null> {
  return db.videoCallProviderToken.findUnique({
    where: { userProfileId_provider: { userProfileId: userId, provider: OAUTH_TOKEN_KEY } },
    select: {
      accessToken: true,
      refreshToken: true,
      tokenType: true,
      scope: true,
      expiresAt: true,
    },
  });
}

export type MeetingResult = { url: string } | "unauthorized" | "failed";

/** POST the meeting (Zulip's Zoom payload: video on, a default password) with the bearer token. */
export async function createMeeting(
  provider: VideoProviderConfig,
  accessToken: string,
): Promise<MeetingResult> {
  try {
    const response = await fetch(provider.meetingUrl, {
      method: "POST",
      headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        settings: { host_video: true, participant_video: true },
        default_password: true,
      }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (response.status === 401) return "unauthorized";
    if (!response.ok) return "failed";
    const url = ((await response.json()) as Record<string, unknown> | null)?.[
      provider.joinUrlField
    ];
    return typeof url === "string" && /^https?:\/\//i.test(url) ? { url } : "failed";
  } catch {
    return "failed";
  }
}

// --- Jitsi and BigBlueButton ---------------------------------------------------------------

/** A 15-digit room number on the organization's Jitsi server, as Zulip's web client makes one. */
export function jitsiMeetingUrl(serverUrl: string): string {
  const room = `${randomInt(1, 10)}${String(randomInt(0, 1e14)).padStart(14, "0")}`;
  return `${serverUrl.replace(/\/+$/, "")}/${room}`;
}

/** BigBlueButton's API checksum: sha256 of the call's name, its query string and the shared secret. */
export function bigBlueButtonChecksum(call: string, query: string, secret: string): string {
  return createHash("sha256")
    .update(call + query + secret)
    .digest("hex");
}

/** `a=b&c=d` with every value percent-encoded (Python's urlencode with quote). */
export function queryString(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

/** The text of a flat element of BigBlueButton's XML answer (`<returncode>SUCCESS</returncode>`). */
export function xmlElement(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>\\s*([^<]*?)\\s*</${name}>`).exec(xml)?.[1];
}

/** Zulip's meeting ids: "zulip-" and 12 random digits. */
export function bigBlueButtonMeetingId(): string {
  return `zulip-${randomInt(100000000000, 999999999999)}`;
}
