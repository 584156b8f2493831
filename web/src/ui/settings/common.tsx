/** What the sections of the settings page share: reading and saving one personal setting. */
import { api, call } from "../../api.ts";
import { setting } from "../../state/settings.ts";
import { SettingSections, type SettingRow, type SettingStore } from "../Form.tsx";

/** PATCH /settings with one setting (the `user_settings` event then updates the page). */
export function saveSetting(name: string, value: string | number | boolean): Promise<unknown> {
  return call(api.PATCH("/settings", { body: { [name]: value } as never }));
}

/** A setting shown as a checkbox. */
export const check = (name: string, label: string): SettingRow => ({ name, label });

const store: SettingStore = { get: setting, put: saveSetting };

/** Titled groups of personal settings, each saved on change, with their save status. */
export function Settings({
  sections,
}: {
  sections: readonly { title: string; rows: readonly SettingRow[] }[];
}) {
  return <SettingSections store={store} sections={sections} />;
}
