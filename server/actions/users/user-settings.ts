/**
 * A user changing their own settings (zerver/actions/user_settings.py): the password, the name
 * (check_change_full_name) and each personal setting (do_change_user_setting), in one
 * transaction with their events.
 */
import type { RequestContext } from "../../context.ts";
import type { UserProfile } from "../../db/index.ts";
import type { UnitOfWork } from "../../events/index.ts";
import { hashPassword } from "../../lib/auth/passwords.ts";
import { fakeEmailDomain } from "../../lib/realm/realm.ts";
import {
  settingChangeEvent,
  settingValue,
  userSetting,
  type SettingValue,
} from "../../lib/users/user-settings.ts";
import {
  activeUserIds,
  activeViewers,
  apiEmailFor,
  canSeeDeliveryEmail,
  checkFullNameInRealm,
  EmailVisibility,
  avatarUrl,
} from "../../lib/users/users.ts";
import { selfEditedUserIds } from "../../lib/users/target-users.ts";
import { notifyExportConsent } from "../realm/realm-export-changed.ts";
import { USER_SETTING_CHANGED, OLD_VALUE, NEW_VALUE } from "./user-status.ts";
import { inTransaction } from "../transaction.ts";
import { presenceEnabledChanged } from "./presence.ts";

export interface SettingsChange {
  /** Already checked for strength, and the old password verified. */
  newPassword?: string;
  /** Only when the user may change their name and it differs. */
  fullName?: string;
  /** Checked values by Zulip property name. */
  settings: Map<string, SettingValue>;
}

export async function doChangeSettings(ctx: RequestContext, change: SettingsChange) {
  const { user, realm } = ctx;
  const passwordHash =
    change.newPassword !== undefined ? await hashPassword(change.newPassword) : undefined;
  // do_change_user_setting acts only on values that differ; the time zone comes last, as Zulip's view does.
  const changed = [...change.settings]
    .map(([name, value]) => ({ setting: userSetting(name)!, value }))
    .filter(({ setting, value }) => settingValue(user, setting) !== value)
    .sort((a, b) => Number(a.setting.name === "timezone") - Number(b.setting.name === "timezone"));
  const visibility = changed.find((c) => c.setting.name === "email_address_visibility");
  const domain = visibility ? await fakeEmailDomain(ctx.db, realm, ctx.config) : "";
  if (passwordHash === undefined && change.fullName === undefined && changed.length === 0) return;

  await inTransaction(ctx, realm.id, async ({ tx, events }) => {
    events.invalidate(`user:${user.id}`);
    if (passwordHash !== undefined)
      await tx.userProfile.update({ where: { id: user.id }, data: { passwordHash } });

    if (change.fullName !== undefined) {
      const fullName = await checkFullNameInRealm(tx, realm, change.fullName, user.id);
      await tx.userProfile.update({ where: { id: user.id }, data: { fullName } });
      events.add(
        { type: "realm_user", op: "update", person: { user_id: user.id, full_name: fullName } },
        await activeUserIds(tx, realm.id),
      );
    }

    if (changed.length === 0) return;
    const data: Record<string, SettingValue> = {};
    for (const { setting, value } of changed) data[setting.field] = value;
    const updated = await tx.userProfile.update({ where: { id: user.id }, data });
    const now = ctx.now();
    await tx.realmAuditLog.createMany({
      data: changed.map(({ setting, value }) => ({
        realmId: realm.id,
        actingUserId: user.id,
        modifiedUserId: user.id,
        eventType: USER_SETTING_CHANGED,
        eventTime: now,
        extraData: {
          [OLD_VALUE]: settingValue(user, setting),
          [NEW_VALUE]: value,
          property: setting.name,
        },
      })),
    });
    for (const { setting, value } of changed) {
      events.add(settingChangeEvent(setting, value), [user.id]);
      if (setting.name === "timezone")
        events.add(
          {
            type: "realm_user",
            op: "update",
            person: { email: user.email, user_id: user.id, timezone: value },
          },
          await activeUserIds(tx, realm.id),
        );
      if (setting.name === "email_address_visibility")
        await emailVisibilityChanged({ tx, events }, user, updated, domain);
      // The administrators' list of consents (GET /export/realm/consents) follows it.
      if (setting.name === "allow_private_data_export")
        await notifyExportConsent({ tx, events }, realm.id, updated);
      // Drafts stop being kept on the server; their deletion sends no event (the clients keep them).
      if (setting.name === "enable_drafts_synchronization" && value === false)
        await tx.draft.deleteMany({ where: { userProfileId: user.id } });
      // do_change_user_setting forces a presence update for the new presence_enabled.
      if (setting.name === "presence_enabled")
        await presenceEnabledChanged(
          { tx, events },
          updated,
          value === true,
          ctx.now(),
          await activeUserIds(tx, realm.id),
        );
    }
  });
}

/**
 * send_delivery_email_update_events: the real address to those who may now see it, null to
 * those who no longer may; and when "everyone" is the old or new value, the API email itself
 * changes (send_user_email_update_event, notify_avatar_url_change).
 */
async function emailVisibilityChanged(
  { tx, events }: UnitOfWork,
  before: UserProfile,
  after: UserProfile,
  domain: string,
) {
  const viewers = await activeViewers(tx, before.realmId);
  const now = viewers.filter((v) => canSeeDeliveryEmail(v, after));
  const was = new Set(viewers.filter((v) => canSeeDeliveryEmail(v, before)).map((v) => v.id));
  const gained = now.filter((v) => !was.has(v.id)).map((v) => v.id);
  const nowIds = new Set(now.map((v) => v.id));
  const lost = [...was].filter((id) => !nowIds.has(id));
  const person = (deliveryEmail: string | null) => ({
    type: "realm_user",
    op: "update",
    person: { user_id: before.id, delivery_email: deliveryEmail },
  });
  if (gained.length) events.add(person(before.deliveryEmail), gained);
  if (lost.length) events.add(person(null), lost);
  const everyone = EmailVisibility.EVERYONE;
  if (before.emailAddressVisibility !== everyone && after.emailAddressVisibility !== everyone)
    return;
  const email = apiEmailFor(after, domain);
  await tx.userProfile.update({ where: { id: before.id }, data: { email } });
  const all = viewers.map((v) => v.id);
  events.add(
    { type: "realm_user", op: "update", person: { user_id: before.id, new_email: email } },
    all,
  );
  if (after.avatarSource === "G")
    events.add(
      {
        type: "realm_user",
        op: "update",
        person: {
          avatar_source: after.avatarSource,
          avatar_url: avatarUrl(after),
          avatar_url_medium: avatarUrl(after, true),
          avatar_version: after.avatarVersion,
          user_id: before.id,
        },
      },
      all,
    );
}

/**
 * An administrator's bulk change (PATCH /settings `target_users`, bulk_change_user_setting):
 * per setting, the targets whose value differs (less those who chose it themselves, with
 * `skipIfAlreadyEdited`) change at once; each gets the events of their own change, and the
 * audit log names the administrator. A fixed number of statements per setting, whatever the
 * number of users.
 */
export async function doBulkChangeSettings(
  ctx: RequestContext,
  userIds: number[],
  settings: Map<string, SettingValue>,
  skipIfAlreadyEdited: boolean,
): Promise<void> {
  const { realm } = ctx;
  await inTransaction(ctx, realm.id, async ({ tx, events }) => {
    for (const [name, value] of settings) {
      const setting = userSetting(name)!;
      const skipped = skipIfAlreadyEdited
        ? await selfEditedUserIds(tx, userIds, name, USER_SETTING_CHANGED)
        : new Set<number>();
      const eligible = userIds.filter((id) => !skipped.has(id));
      if (eligible.length === 0) continue;
      const users = await tx.userProfile.findMany({
        where: { id: { in: eligible }, realmId: realm.id, NOT: { [setting.field]: value } },
      });
      if (users.length === 0) continue;
      const ids = users.map((u) => u.id);
      await tx.userProfile.updateMany({
        where: { id: { in: ids } },
        data: { [setting.field]: value },
      });
      const now = ctx.now();
      await tx.realmAuditLog.createMany({
        data: users.map((u) => ({
          realmId: realm.id,
          actingUserId: ctx.user.id,
          modifiedUserId: u.id,
          eventType: USER_SETTING_CHANGED,
          eventTime: now,
          extraData: {
            [OLD_VALUE]: settingValue(u, setting),
            [NEW_VALUE]: value,
            property: name,
          },
        })),
      });
      if (name === "enable_drafts_synchronization" && value === false)
        await tx.draft.deleteMany({ where: { userProfileId: { in: ids } } });
      for (const u of users) {
        events.invalidate(`user:${u.id}`);
        events.add(settingChangeEvent(setting, value), [u.id]);
      }
    }
  });
}
