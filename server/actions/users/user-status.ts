/**
 * Setting a user's status (zerver/actions/user_status.py do_update_user_status): the fields
 * sent replace the stored ones, and a `user_status` event with exactly those fields goes to the
 * organization. `away` is the legacy face of the user's presence_enabled setting
 * (do_change_user_setting): it changes the setting, with its audit row and `user_settings` event.
 */
import type { RequestContext } from "../../context.ts";
import type { UserProfile } from "../../db/index.ts";
import type { ZulipEvent } from "../../events/log.ts";
import { clientIdFor, clientNameFromUserAgent } from "../../lib/clients.ts";
import type { StatusChange } from "../../lib/users/user-status.ts";
import { activeUserIds } from "../../lib/users/users.ts";
import { presenceEnabledChanged } from "./presence.ts";
import { inTransaction } from "../transaction.ts";

/** AuditLogEventType.USER_SETTING_CHANGED, and RealmAuditLog's OLD_VALUE / NEW_VALUE keys. */
export const USER_SETTING_CHANGED = 132;
export const OLD_VALUE = "1";
export const NEW_VALUE = "2";

export async function doUpdateUserStatus(
  ctx: RequestContext,
  target: Pick<UserProfile, "id" | "realmId" | "presenceEnabled" | "email" | "dateJoined">,
  change: StatusChange,
): Promise<void> {
  const clientId = await clientIdFor(ctx.db, clientNameFromUserAgent(ctx.userAgent));
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const now = ctx.now();
    if (change.away !== undefined) {
      const presenceEnabled = !change.away;
      await tx.userProfile.update({ where: { id: target.id }, data: { presenceEnabled } });
      events.invalidate(`user:${target.id}`);
      await tx.realmAuditLog.create({
        data: {
          realmId: target.realmId,
          actingUserId: ctx.user.id,
          modifiedUserId: target.id,
          eventType: USER_SETTING_CHANGED,
          eventTime: now,
          extraData: {
            [OLD_VALUE]: target.presenceEnabled,
            [NEW_VALUE]: presenceEnabled,
            property: "presence_enabled",
          },
        },
      });
      events.add(
        {
          type: "user_settings",
          op: "update",
          property: "presence_enabled",
          value: presenceEnabled,
        },
        [target.id],
      );
    }
    const fields = {
      ...(change.statusText !== undefined && { statusText: change.statusText }),
      ...change.emoji,
    };
    await tx.userStatus.upsert({
      where: { userProfileId: target.id },
      create: {
        realmId: target.realmId,
        userProfileId: target.id,
        timestamp: now,
        clientId,
        ...fields,
      },
      update: { timestamp: now, clientId, ...fields },
    });
    const event: ZulipEvent = { type: "user_status", user_id: target.id };
    if (change.away !== undefined) event.away = change.away;
    if (change.statusText !== undefined) event.status_text = change.statusText;
    if (change.emoji)
      Object.assign(event, {
        emoji_name: change.emoji.emojiName,
        emoji_code: change.emoji.emojiCode,
        reaction_type: change.emoji.reactionType,
      });
    const audience = await activeUserIds(tx, target.realmId);
    events.add(event, audience);
    // Zulip's do_change_user_setting forces a presence update for the new presence_enabled.
    if (change.away !== undefined)
      await presenceEnabledChanged({ tx, events }, target, !change.away, now, audience);
  });
}
