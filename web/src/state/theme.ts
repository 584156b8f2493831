/**
 * The colour theme (Settings › Preferences › Theme, `color_scheme`: 1 automatic, 2 dark, 3
 * light, Zulip's values) and high contrast (`high_contrast_mode`), applied to <html> as
 * `data-theme` and `data-contrast`, which styles.css's variables follow. Automatic follows the
 * system's `prefers-color-scheme`, live.
 */
import { effect } from "@preact/signals";
import { setLanguage } from "../i18n.ts";
import { userSettings } from "./settings.ts";

export const COLOR_SCHEME = { automatic: 1, dark: 2, light: 3 } as const;

const dark = window.matchMedia("(prefers-color-scheme: dark)");

function apply() {
  const scheme = userSettings.value.color_scheme;
  const root = document.documentElement;
  const isDark = scheme === COLOR_SCHEME.dark || (scheme !== COLOR_SCHEME.light && dark.matches);
  root.dataset.theme = isDark ? "dark" : "light";
  if (userSettings.value.high_contrast_mode === true) root.dataset.contrast = "high";
  else delete root.dataset.contrast;
}

effect(apply);
dark.addEventListener("change", apply);

// The app's language follows the setting (English where there is no translation yet).
effect(() => {
  const lang = userSettings.value.default_language;
  if (typeof lang === "string") void setLanguage(lang);
});
