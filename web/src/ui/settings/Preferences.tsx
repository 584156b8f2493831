/**
 * Settings › Preferences (Zulip's settings_preferences): theme, high contrast, time format,
 * emoji set, language, home view and time zone. Each saves on change.
 */
import { t, TRANSLATIONS } from "../../i18n.ts";
import { setting } from "../../state/settings.ts";
import { check, Settings } from "./common.tsx";

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
  const lang = setting("default_language", "en");
  const langs = languages();
  const tz = setting("timezone", "");
  return (
    <div>
      <Settings
        sections={[
          {
            title: t("General"),
            rows: [
              {
                name: "color_scheme",
                label: t("Theme"),
                numeric: true,
                options: [
                  { value: "1", label: t("Automatic (follows system settings)") },
                  { value: "3", label: t("Light") },
                  { value: "2", label: t("Dark") },
                ],
              },
              check("high_contrast_mode", t("High contrast mode")),
              {
                name: "default_language",
                label: t("Language"),
                value: langs.some((l) => l.value === lang) ? lang : "en",
                options: langs,
                hint:
                  langs.length === 1
                    ? t("The app has no translation besides English yet.")
                    : undefined,
              },
              {
                name: "web_home_view",
                label: t("Home view"),
                options: [
                  { value: "inbox", label: t("Inbox") },
                  { value: "recent", label: t("Recent conversations") },
                  { value: "all_messages", label: t("Combined feed") },
                ],
              },
            ],
          },
          {
            title: t("Time"),
            rows: [
              {
                name: "twenty_four_hour_time",
                label: t("Time format"),
                options: [
                  { value: "false", label: t("AM/PM (e.g., 5:00 PM)") },
                  { value: "true", label: t("24-hour (e.g., 17:00)") },
                ],
              },
              {
                name: "timezone",
                label: t("Time zone"),
                options: [
                  { value: "", label: t("Not set") },
                  ...timezones(tz).map((z) => ({ value: z, label: z })),
                ],
              },
            ],
          },
          {
            title: t("Emoji"),
            rows: [
              {
                name: "emojiset",
                label: t("Emoji theme"),
                hint: t("This app shows your system's emoji; the choice is saved for other apps."),
                options: [
                  { value: "google", label: t("Google") },
                  { value: "twitter", label: t("Twitter") },
                  { value: "text", label: t("Plain text") },
                ],
              },
              {
                name: "translate_emoticons",
                label: t("Convert emoticons before sending (:) becomes 😃)"),
              },
              check(
                "display_emoji_reaction_users",
                t("Display names of reacting users when few users have reacted to a message"),
              ),
            ],
          },
        ]}
      />
    </div>
  );
}
