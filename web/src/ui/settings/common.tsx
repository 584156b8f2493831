/** What the sections of the settings page share: saving one setting, and a saving checkbox/select. */
import { api, call } from "../../api.ts";
import { setting } from "../../state/settings.ts";
import { Checkbox, Select, type SaveState, type SelectOption } from "../Form.tsx";

/** PATCH /settings with one setting (the `user_settings` event then updates the page). */
export function saveSetting(name: string, value: string | number | boolean): Promise<unknown> {
  return call(api.PATCH("/settings", { body: { [name]: value } as never }));
}

type Save = (run: () => Promise<unknown>) => Promise<boolean>;

export function SettingCheckbox({
  name,
  label,
  save,
  disabled,
}: {
  name: string;
  label: string;
  save: Save;
  disabled?: boolean;
}) {
  return (
    <Checkbox
      label={label}
      checked={setting(name, false)}
      disabled={disabled}
      onChange={(v) => void save(() => saveSetting(name, v))}
    />
  );
}

export function SettingSelect({
  name,
  label,
  options,
  save,
  numeric = false,
  hint,
}: {
  name: string;
  label: string;
  options: readonly SelectOption[];
  save: Save;
  numeric?: boolean;
  hint?: string;
}) {
  return (
    <Select
      label={label}
      hint={hint}
      value={String(setting<string | number>(name, ""))}
      options={options}
      onChange={(v) => void save(() => saveSetting(name, numeric ? Number(v) : v))}
    />
  );
}

export type { SaveState };
