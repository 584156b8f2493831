/**
 * Legacy (non-E2EE) push tokens (zerver/lib/push_notifications.py add_push_device_token,
 * remove_push_device_token, send_test_push_notification) as a Zulip server without push
 * notifications configured runs them: this server has no push bouncer and no APNs or FCM
 * credentials, so tokens are stored (they say which users have mobile devices, as in Zulip)
 * and nothing is sent to them.
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import type { TokenKind } from "../../lib/push/push-tokens.ts";
import { refuseNul } from "../../lib/text.ts";
import { inTransaction } from "../transaction.ts";

type Ctx = Pick<RequestContext, "db" | "events" | "config" | "log" | "now" | "realm" | "user">;

/** add_push_device_token: the token, or its refreshed `last_updated` when it is known. */
export async function doAddPushDeviceToken(
  ctx: Ctx,
  token: string,
  kind: TokenKind,
  iosAppId: string | null,
): Promise<void> {
  refuseNul(token, "token");
  await inTransaction(ctx, ctx.realm.id, async ({ tx }) => {
    await tx.pushDeviceToken.upsert({
      where: { userProfileId_kind_token: { userProfileId: ctx.user.id, kind, token } },
      create: { userProfileId: ctx.user.id, kind, token, iosAppId, lastUpdated: ctx.now() },
      update: { lastUpdated: ctx.now() },
    });
  });
}

/** remove_push_device_token: without a bouncer, an unknown token is an error. */
export async function doRemovePushDeviceToken(
  ctx: Ctx,
  token: string,
  kind: TokenKind,
): Promise<void> {
  const removed = token.includes("\0")
    ? 0
    : await inTransaction(ctx, ctx.realm.id, async ({ tx }) => {
        const { count } = await tx.pushDeviceToken.deleteMany({
          where: { userProfileId: ctx.user.id, kind, token },
        });
        return count;
      });
  if (removed === 0) throw new JsonableError("Token does not exist");
}

/**
 * send_test_push_notification without a bouncer: sent straight to APNs and FCM, which this
 * server has no credentials for, so it is dropped (Zulip logs "APNs: Dropping a notification
 * because nothing configured") and the request succeeds.
 */
export function doSendTestPushNotification(ctx: Ctx, tokens: { kind: number }[]): void {
  if (tokens.length)
    ctx.log.info(
      { devices: tokens.length },
      "push: dropping a test notification because nothing is configured",
    );
}
