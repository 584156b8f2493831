/**
 * PATCH /realm/user_settings_defaults (zerver/views/realm.py update_realm_user_settings_defaults):
 * the settings the organization has defaults for, with PATCH /settings' checks of their values.
 */
import { doSetRealmUserDefaultSettings } from "../actions/realm/realm-user-settings-defaults.ts";
import type { Handler } from "../http/types.ts";
import {
  checkSettingValues,
  REALM_DEFAULT_SETTINGS,
  type SettingValue,
} from "../lib/users/user-settings.ts";

export const updateRealmUserSettingsDefaults: Handler<
  "update-realm-user-settings-defaults"
> = async ({ body }, ctx) => {
  // require_realm_admin comes before the values' own checks.
  const sent = (body ?? {}) as Record<string, unknown>;
  const changes = new Map<string, SettingValue>();
  for (const s of REALM_DEFAULT_SETTINGS)
    if (sent[s.name] !== undefined) changes.set(s.name, sent[s.name] as SettingValue);
  checkSettingValues(changes);
  await doSetRealmUserDefaultSettings(ctx, changes);
  return {};
};
