/**
 * Changing an organization's defaults for new users' settings (zerver/actions/realm_settings.py
 * do_set_realm_user_default_setting), administrators only: each default whose value changes is
 * stored with an audit log row and announced to everyone in the organization by a
 * `realm_user_settings_defaults` event, all in one transaction.
 */
import type { RequestContext } from "../../context.ts";
import { requireRealmAdmin } from "../../lib/users/users.ts";
import { defaultValue, realmUserDefaults } from "../../lib/realm/realm-user-settings-defaults.ts";
import { userSetting, type SettingValue } from "../../lib/users/user-settings.ts";
import { activeUserIds } from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";
import { NEW_VALUE, OLD_VALUE } from "../users/user-status.ts";

/** AuditLogEventType.REALM_DEFAULT_USER_SETTINGS_CHANGED. */
const REALM_DEFAULT_USER_SETTINGS_CHANGED = 216;

/** `changes`: checked values by Zulip property name, of settings with an organization default. */
export async function doSetRealmUserDefaultSettings(
  ctx: RequestContext,
  changes: Map<string, SettingValue>,
): Promise<void> {
  requireRealmAdmin(ctx.user);
  const realmId = ctx.realm.id;
  await inTransaction(ctx, realmId, async ({ tx, events }) => {
    // The row locked, so two administrators' changes compare with what the other committed.
    await tx.$queryRaw`SELECT id FROM realm_user_default WHERE realm_id = ${realmId} FOR UPDATE`;
    const row = await realmUserDefaults(tx, realmId);
    // The view acts only on the values that differ from the stored ones.
    const changed = [...changes]
      .map(([name, value]) => ({ setting: userSetting(name)!, value }))
      .filter(({ setting, value }) => defaultValue(row, setting.field) !== value);
    if (changed.length === 0) return;
    const data: Record<string, SettingValue> = {};
    for (const { setting, value } of changed) data[setting.field] = value;
    await tx.realmUserDefault.update({ where: { realmId }, data });
    const now = ctx.now();
    await tx.realmAuditLog.createMany({
      data: changed.map(({ setting, value }) => ({
        realmId,
        actingUserId: ctx.user.id,
        eventType: REALM_DEFAULT_USER_SETTINGS_CHANGED,
        eventTime: now,
        extraData: {
          [OLD_VALUE]: defaultValue(row, setting.field),
          [NEW_VALUE]: value,
          property: setting.name,
        },
      })),
    });
    const everyone = await activeUserIds(tx, realmId);
    for (const { setting, value } of changed)
      events.add(
        { type: "realm_user_settings_defaults", op: "update", property: setting.name, value },
        everyone,
      );
  });
}
