/**
 * Storing or forgetting a user's video-call provider token
 * (zerver/actions/video_calls.py do_set_video_call_provider_token): every change tells the
 * user's clients whether they now hold one, with a `has_videoprovider_token` event (Zulip's
 * `has_zoom_token`, `{type, value}`), and Zulip's `has_webex_token` when the provider is Webex.
 */
import type { AppDeps } from "../../context.ts";
import type { UserProfile } from "../../db/index.ts";
import { oauthProviderId, WEBEX, type ProviderToken } from "../../lib/realm/video-calls.ts";
import { inTransaction } from "../transaction.ts";

/**
 * Stores `token`, or with null forgets the stored one: only if it is still `accessToken` when
 * given (another request may have refreshed it meanwhile). Says whether anything changed.
 */
export async function doSetVideoCallProviderToken(
  deps: Pick<AppDeps, "db" | "events" | "config">,
  user: Pick<UserProfile, "id" | "realmId">,
  provider: string,
  token: ProviderToken | null,
  accessToken?: string,
): Promise<boolean> {
  return inTransaction(deps, user.realmId, async ({ tx, events }) => {
    if (token === null) {
      const { count } = await tx.videoCallProviderToken.deleteMany({
        where: { userProfileId: user.id, provider, accessToken },
      });
      if (count === 0) return false;
    } else
      await tx.videoCallProviderToken.upsert({
        where: { userProfileId_provider: { userProfileId: user.id, provider } },
        create: { realmId: user.realmId, userProfileId: user.id, provider, ...token },
        update: token,
      });
    events.add({ type: "has_videoprovider_token", value: token !== null }, [user.id]);
    // Zulip's own name for the same fact when the provider is Webex (level 493).
    if (oauthProviderId(deps.config) === WEBEX)
      events.add({ type: "has_webex_token", value: token !== null }, [user.id]);
    return true;
  });
}
