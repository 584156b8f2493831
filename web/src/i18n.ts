/**
 * The app's words, ready for translation: every user-visible string goes through `t()`, keyed by
 * its English text as Zulip's web app keys its `$t({defaultMessage})` (gettext style), with
 * `{name}` placeholders filled from `values`. `web/src/i18n/messages.json` is the one catalogue
 * of those strings (`npm run i18n:extract` writes it from the sources; a test fails when it is
 * stale); a translation is `web/src/i18n/<language>.json`, the same keys with translated values,
 * loaded on demand when the user's `default_language` has one.
 */
import { signal } from "@preact/signals";

type Catalogue = Readonly<Record<string, string>>;

/** The translation in use (empty: English); a signal, so that a change renders again. */
const translation = signal<Catalogue>({});
export const language = signal("en");
/**
 * The locale dates and numbers are written in: the user's `default_language` even where no
 * translation exists yet (the browser knows every locale's dates), else the browser's.
 */
export const locale = signal<string | undefined>(undefined);

export function t(message: string, values?: Readonly<Record<string, string | number>>): string {
  const text = translation.value[message] || message;
  if (!values) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  );
}

/** Languages with a translation (besides English), as `web/src/i18n/` holds them. */
export const TRANSLATIONS: Readonly<Record<string, () => Promise<{ default: Catalogue }>>> = {};

/** Switches to `code` (a register `default_language`), or English where no translation exists. */
export async function setLanguage(code: string) {
  const load = TRANSLATIONS[code];
  language.value = load ? code : "en";
  locale.value = validLocale(code);
  translation.value = load ? (await load()).default : {};
  // Through globalThis: narrow.ts (and so this file) is also read by Node tools without the DOM.
  const doc = (globalThis as { document?: { documentElement: { lang: string } } }).document;
  if (doc) doc.documentElement.lang = language.value;
}

function validLocale(code: string): string | undefined {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([code]).length ? code : undefined;
  } catch {
    return undefined;
  }
}
