/**
 * POST /calls/videoprovider/create: a meeting with the organization's video_chat_provider
 * (zerver/views/video_calls.py, one path for Zulip's per-provider ones): the OAuth provider's
 * meeting API with the user's token, a signed BigBlueButton join link, or a Jitsi room.
 */
import { doSetVideoCallProviderToken } from "../actions/users/video-calls.ts";
import type { RequestContext } from "../context.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import {
  BIG_BLUE_BUTTON,
  JITSI_MEET,
  OAUTH_PROVIDERS,
  OAUTH_TOKEN_KEY,
  VIDEO_CHAT_PROVIDERS,
  WEBEX,
  bigBlueButtonMeetingId,
  callFailed,
  configuredOAuth,
  createMeeting,
  invalidToken,
  jitsiMeetingUrl,
  notConfigured,
  oauthProviderId,
  requestToken,
  signObject,
  storedToken,
  type ProviderToken,
} from "../lib/realm/video-calls.ts";

export const createVideoCall: Handler<"create-video-call"> = async (_input, ctx) => {
  const provider = ctx.realm.videoChatProvider;
  if (OAUTH_PROVIDERS.has(provider)) return { url: await oauthMeeting(ctx) };
  if (provider === BIG_BLUE_BUTTON) {
    if (!bigBlueButtonConfigured(ctx)) throw notConfigured("BigBlueButton");
    return { url: await bigBlueButtonLink(ctx, `${ctx.realm.name} meeting`, false) };
  }
  const jitsiServer = ctx.realm.jitsiServerUrl ?? ctx.config.jitsiServerUrl;
  if (provider === JITSI_MEET && jitsiServer) return { url: jitsiMeetingUrl(jitsiServer) };
  // Disabled (0), or a provider this server has no integration for.
  throw notConfigured(
    provider === 0
      ? "Video call provider"
      : (VIDEO_CHAT_PROVIDERS[provider] ?? "Video call provider"),
  );
};

/**
 * POST /calls/webex/create (level 493): the OAuth meeting, when the server's provider is Webex,
 * whatever the organization's video_chat_provider.
 */
export const createWebexVideoCall: Handler<"create-webex-video-call"> = async (_input, ctx) => {
  if (oauthProviderId(ctx.config) !== WEBEX) throw notConfigured("Webex");
  return { url: await oauthMeeting(ctx) };
};

/**
 * OAuthVideoCallProvider.make_video_call: refresh an expired token first, and once more when the
 * provider answers 401; a token that cannot be refreshed is forgotten (the clients are told).
 */
async function oauthMeeting(ctx: RequestContext): Promise<string> {
  const provider = configuredOAuth(ctx.config);
  const stored = await storedToken(ctx.db, ctx.user.id);
  if (!stored) throw invalidToken(provider.name);
  let token: ProviderToken = stored;
  let refreshed = false;
  let adopted = false;
  const refreshOrForget = async () => {
    const fresh =
      token.refreshToken === null || refreshed
        ? null
        : await requestToken(
            provider,
            { grant_type: "refresh_token", refresh_token: token.refreshToken },
            ctx.now(),
          );
    refreshed = true;
    if (fresh) {
      // A refresh that gives no new refresh token keeps the old one (RFC 6749 §6).
      token = { ...fresh, refreshToken: fresh.refreshToken ?? token.refreshToken };
      await doSetVideoCallProviderToken(ctx, ctx.user, OAUTH_TOKEN_KEY, token);
      return;
    }
    if (await doSetVideoCallProviderToken(ctx, ctx.user, OAUTH_TOKEN_KEY, null, token.accessToken))
      throw invalidToken(provider.name);
    // Another request replaced the token meanwhile (its refresh used the same refresh token
    // first): try with that one, once.
    const current = await storedToken(ctx.db, ctx.user.id);
    if (!current || adopted) throw invalidToken(provider.name);
    adopted = true;
    token = current;
  };
  if (token.expiresAt !== null && token.expiresAt <= ctx.now()) await refreshOrForget();
  for (;;) {
    const result = await createMeeting(provider, token.accessToken);
    if (result === "failed") throw callFailed(provider.name);
    if (result !== "unauthorized") return result.url;
    await refreshOrForget();
  }
}

/**
 * GET /calls/bigbluebutton/create (get_bigbluebutton_url): Zulip signs the link whatever the
 * server's settings and refuses only at the join page; we refuse at once, with the join page's
 * text, so that no client posts a link that cannot work.
 */
export const createBigBlueButtonVideoCall: Handler<"create-big-blue-button-video-call"> = async (
  { query },
  ctx,
) => {
  if (!bigBlueButtonConfigured(ctx)) throw new JsonableError("BigBlueButton is not configured.");
  return { url: await bigBlueButtonLink(ctx, query.meeting_name, query.voice_only ?? false) };
};

const bigBlueButtonConfigured = (ctx: RequestContext) =>
  Boolean(ctx.config.bigBlueButtonUrl && ctx.config.bigBlueButtonSecret);

/**
 * get_bigbluebutton_url: a link to this server's join page carrying the meeting, signed so that
 * nobody can alter it to enter another meeting on the same BigBlueButton server; the caller is
 * its moderator.
 */
async function bigBlueButtonLink(
  ctx: RequestContext,
  name: string,
  voiceOnly: boolean,
): Promise<string> {
  const signed = await signObject(ctx.db, "bigbluebutton", {
    meeting_id: bigBlueButtonMeetingId(),
    name,
    lock_settings_disable_cam: voiceOnly,
    moderator: ctx.user.id,
  });
  return `/calls/bigbluebutton/join?bigbluebutton=${signed}`;
}
