/**
 * PATCH /settings (zerver/views/user_settings.py json_change_settings): not for bots. Its
 * deprecated aliases PATCH /settings/notifications and /settings/display take only the settings
 * of their legacy group (the table's `legacy`); the spec lists the same ones.
 */
import { doBulkChangeSettings, doChangeSettings } from "../actions/users/user-settings.ts";
import { JsonableError, OrganizationAdministratorRequiredError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { checkPasswordStrength, verifyPassword } from "../lib/auth/passwords.ts";
import {
  checkSettingValues,
  legacySettings,
  USER_SETTINGS,
  type SettingValue,
  type UserSetting,
} from "../lib/users/user-settings.ts";
import { SECURITY_SENSITIVE_USER_SETTINGS, targetUserIds } from "../lib/users/target-users.ts";
import { humanUsersOnly, isRealmAdmin } from "../lib/users/users.ts";

export const updateSettings: Handler<"update-settings"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  const settings = sentSettings(body, USER_SETTINGS);
  if (body?.target_users !== undefined) return changeForOthers(ctx, body, settings);
  checkSettingValues(settings);

  const { new_password: newPassword, old_password: oldPassword, email, full_name } = body ?? {};
  if (newPassword !== undefined) {
    if (!(await verifyPassword(oldPassword ?? "", ctx.user.passwordHash)))
      throw new JsonableError("Wrong password!");
    if (!(await checkPasswordStrength(newPassword, ctx.config)))
      throw new JsonableError("New password is too weak!");
  }
  // Changing the address needs a confirmation email this server does not send yet.
  if (email !== undefined && email.trim() !== ctx.user.deliveryEmail)
    throw new JsonableError("Email address changes are disabled in this organization.");
  // A name change the organization forbids is ignored, not refused (Zulip: "failing silently").
  const nameChange =
    full_name !== undefined &&
    full_name !== ctx.user.fullName &&
    (!ctx.realm.nameChangesDisabled || isRealmAdmin(ctx.user))
      ? full_name
      : undefined;
  await doChangeSettings(ctx, { newPassword, fullName: nameChange, settings });
  return {};
};

/**
 * `target_users` (level 444): administrators only; no email, password, time zone or
 * security-sensitive setting; the name ignored. Zulip stores the other values unchecked here;
 * we check them as for one's own change rather than store a language or sound that does not exist.
 */
async function changeForOthers(
  ctx: Parameters<typeof updateSettings>[1],
  body: NonNullable<Parameters<typeof updateSettings>[0]["body"]>,
  settings: Map<string, SettingValue>,
) {
  if (!isRealmAdmin(ctx.user)) throw new OrganizationAdministratorRequiredError();
  const target = body.target_users!;
  if (body.email !== undefined || body.new_password !== undefined || body.timezone !== undefined)
    throw new JsonableError("Cannot change this setting for other users.");
  if ([...settings.keys()].some((name) => SECURITY_SENSITIVE_USER_SETTINGS.has(name)))
    throw new JsonableError("Cannot change this setting for other users.");
  const userIds = await targetUserIds(ctx.db, ctx.realm.id, target);
  checkSettingValues(settings);
  await doBulkChangeSettings(ctx, userIds, settings, target.skip_if_already_edited);
  return {};
}

function sentSettings(body: object | undefined, table: readonly UserSetting[]) {
  const sent = (body ?? {}) as Record<string, unknown>;
  const settings = new Map<string, SettingValue>();
  for (const s of table)
    if (sent[s.name] !== undefined) settings.set(s.name, sent[s.name] as SettingValue);
  return settings;
}

/** The aliases: the same checks and action as PATCH /settings, over one legacy group. */
async function changeLegacyGroup(
  body: object | undefined,
  ctx: Parameters<typeof updateSettings>[1],
  group: NonNullable<UserSetting["legacy"]>,
) {
  humanUsersOnly(ctx.user);
  const settings = sentSettings(body, legacySettings(group));
  checkSettingValues(settings);
  await doChangeSettings(ctx, { settings });
  return {};
}

export const updateNotificationSettings: Handler<"update-notification-settings"> = (
  { body },
  ctx,
) => changeLegacyGroup(body, ctx, "notification");

export const updateDisplaySettings: Handler<"update-display-settings"> = ({ body }, ctx) =>
  changeLegacyGroup(body, ctx, "display");
