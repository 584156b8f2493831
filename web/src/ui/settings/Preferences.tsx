/**
 * Settings › Preferences (Zulip's settings_preferences): theme, high contrast, time format,
 * emoji set, language, home view and time zone. Each saves on change.
 */
import { t, TRANSLATIONS } from "../../i18n.ts";
import { setting } from "../../state/settings.ts";
import { FormSection, SaveStatus, Select, useSave } from "../Form.tsx";
import { saveSetting, SettingCheckbox, SettingSelect } from "./common.tsx";

/** Language names by code, for the languages the app has translations for (English first). */
function languages() {
  const names = new Intl.DisplayNames([navigator.language || "en"], { type: "language" });
  return ["en", ...Object.keys(TRANSLATIONS)].map((code) => ({
    value: code,
    label: names.of(code) ?? code,
  }));
}

function timezones(current: string): string[] {
  const all =
    (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.(
      "timeZone",
    ) ?? [];
  return current && !all.includes(current) ? [current, ...all] : all;
}

export function PreferencesSection() {
  const [status, save] = useSave();
  const lang = setting("default_language", "en");
  const langs = languages();
  const tz = setting("timezone", "");
  return (
    <div>
      <SaveStatus state={status} />
      <FormSection title={t("General")}>
        <SettingSelect
          name="color_scheme"
          label={t("Theme")}
          numeric
          save={save}
          options={[
            { value: "1", label: t("Automatic (follows system settings)") },
            { value: "3", label: t("Light") },
            { value: "2", label: t("Dark") },
          ]}
        />
        <SettingCheckbox name="high_contrast_mode" label={t("High contrast mode")} save={save} />
        <Select
          label={t("Language")}
          value={langs.some((l) => l.value === lang) ? lang : "en"}
          options={langs}
          hint={
            langs.length === 1 ? t("The app has no translation besides English yet.") : undefined
          }
          onChange={(v) => void save(() => saveSetting("default_language", v))}
        />
        <SettingSelect
          name="web_home_view"
          label={t("Home view")}
          save={save}
          options={[
            { value: "inbox", label: t("Inbox") },
            { value: "recent", label: t("Recent conversations") },
            { value: "all_messages", label: t("Combined feed") },
          ]}
        />
      </FormSection>
      <FormSection title={t("Time")}>
        <SettingSelect
          name="twenty_four_hour_time"
          label={t("Time format")}
          save={save}
          options={[
            { value: "false", label: t("AM/PM (e.g., 5:00 PM)") },
            { value: "true", label: t("24-hour (e.g., 17:00)") },
          ]}
        />
        <Select
          label={t("Time zone")}
          value={tz}
          options={[
            { value: "", label: t("Not set") },
            ...timezones(tz).map((z) => ({ value: z, label: z })),
          ]}
          onChange={(v) => void save(() => saveSetting("timezone", v))}
        />
      </FormSection>
      <FormSection title={t("Emoji")}>
        <SettingSelect
          name="emojiset"
          label={t("Emoji theme")}
          save={save}
          hint={t("This app shows your system's emoji; the choice is saved for other apps.")}
          options={[
            { value: "google", label: t("Google") },
            { value: "twitter", label: t("Twitter") },
            { value: "text", label: t("Plain text") },
          ]}
        />
        <SettingCheckbox
          name="translate_emoticons"
          label={t("Convert emoticons before sending (:) becomes 😃)")}
          save={save}
        />
        <SettingCheckbox
          name="display_emoji_reaction_users"
          label={t("Display names of reacting users when few users have reacted to a message")}
          save={save}
        />
      </FormSection>
    </div>
  );
}
