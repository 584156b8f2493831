/**
 * An organization's defaults for new users' settings (Zulip's RealmUserDefault): the stored row
 * (one per organization, its columns named as UserProfile's), as register shows it and as a new
 * user takes it. Which settings have a default is the settings table's `realmDefault` mark.
 */
import type { Db, RealmUserDefault } from "../../db/index.ts";
import { REALM_DEFAULT_SETTINGS, type SettingValue } from "../users/user-settings.ts";

/** The organization's row; every organization has one (created with it, or by the migration). */
export function realmUserDefaults(db: Db, realmId: number): Promise<RealmUserDefault> {
  return db.realmUserDefault.findUniqueOrThrow({ where: { realmId } });
}

/** A default's value, by the setting's UserProfile column (the row's columns have the same names). */
export const defaultValue = (row: RealmUserDefault, field: string) =>
  (row as unknown as Record<string, SettingValue>)[field]!;

/** Register's `realm_user_settings_defaults`: the stored defaults, by Zulip property name. */
export function userSettingsDefaultsState(row: RealmUserDefault): Record<string, SettingValue> {
  return Object.fromEntries(
    REALM_DEFAULT_SETTINGS.map((s) => [s.name, defaultValue(row, s.field)]),
  );
}

/** copy_default_settings: the new user's columns for every setting the organization defaults. */
export function newUserSettings(row: RealmUserDefault): Record<string, SettingValue> {
  return Object.fromEntries(
    REALM_DEFAULT_SETTINGS.map((s) => [s.field, defaultValue(row, s.field)]),
  );
}
