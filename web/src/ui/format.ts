/**
 * Times and dates as the app shows them: in the user's locale (their `default_language`) and
 * time zone (their `timezone` setting, else the browser's), with their 12- or 24-hour setting.
 */
import { locale, t } from "../i18n.ts";
import { twentyFourHour } from "../state/model.ts";
import { userSettings } from "../state/settings.ts";

/**
 * Formatters made once per locale, time zone and options: building an Intl.DateTimeFormat (which
 * `toLocaleString` with options does on every call) costs tens of microseconds, several times
 * per message of a feed. The signals are still read on every call, so that a component showing a
 * time renders again when the user's language, time zone or 12/24-hour setting changes.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
const zones = new Map<string, string | undefined>();

/** The user's time zone, if the browser knows it (an unknown one would throw). */
function timeZone(): string | undefined {
  const zone = userSettings.value.timezone;
  if (typeof zone !== "string" || !zone) return undefined;
  if (zones.has(zone)) return zones.get(zone);
  let known: string | undefined;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    known = zone;
  } catch {
    known = undefined;
  }
  zones.set(zone, known);
  return known;
}

function formatter(
  lang: string | undefined,
  options: Intl.DateTimeFormatOptions,
  name: string,
): Intl.DateTimeFormat {
  const zone = timeZone();
  const key = `${lang ?? ""}|${zone ?? ""}|${name}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(lang, { timeZone: zone, ...options });
    formatters.set(key, f);
  }
  return f;
}

function format(seconds: number, options: Intl.DateTimeFormatOptions, name: string): string {
  return formatter(locale.value, options, name).format(seconds * 1000);
}

/**
 * The hour cycle of the user's 12/24-hour setting. Named outright because `hour12: true` lets
 * the locale pick between 0–11 and 1–12, and ICU versions differ: German midnight is "0:03 AM"
 * in one and "12:03 AM" in another. Zulip writes 12-hour times as "12:03 AM" everywhere.
 */
export function hourCycle(): "h12" | "h23" {
  return twentyFourHour.value ? "h23" : "h12";
}

export function timeOfDay(seconds: number): string {
  const cycle = hourCycle();
  // Zulip writes "h:mm a" on a 12-hour clock and "HH:mm" on a 24-hour one ("09:05").
  const hour = cycle === "h23" ? "2-digit" : "numeric";
  return format(seconds, { hour, minute: "2-digit", hourCycle: cycle }, `time${cycle}`);
}

export function fullDate(seconds: number): string {
  const cycle = hourCycle();
  return format(
    seconds,
    { dateStyle: "full", timeStyle: "short", hourCycle: cycle },
    `full${cycle}`,
  );
}

/** The calendar day of a moment in the user's time zone, as "2026-11-29". */
function dayKey(seconds: number): string {
  return formatter("en-CA", { year: "numeric", month: "2-digit", day: "2-digit" }, "day").format(
    seconds * 1000,
  );
}

/** Whether the moment falls on today's date, in the user's time zone. */
export function isToday(seconds: number): boolean {
  return dayKey(seconds) === dayKey(Date.now() / 1000);
}

/** The dates dayOf wrote for days before yesterday, since "today" (or the language or zone) changed. */
let dayLabels = { today: "", yesterday: "", context: "", labels: new Map<string, string>() };

export function dayOf(seconds: number): string {
  const now = Date.now() / 1000;
  const today = dayKey(now);
  const context = `${locale.value ?? ""}|${timeZone() ?? ""}`;
  if (dayLabels.today !== today || dayLabels.context !== context)
    dayLabels = { today, yesterday: dayKey(now - 86_400), context, labels: new Map() };
  const day = dayKey(seconds);
  // Through t() on every call: a component showing them renders again in a new language.
  if (day === today) return t("Today");
  if (day === dayLabels.yesterday) return t("Yesterday");
  let label = dayLabels.labels.get(day);
  if (label === undefined) {
    label =
      day.slice(0, 4) === today.slice(0, 4)
        ? format(seconds, { month: "short", day: "numeric" }, "day-short")
        : format(seconds, { month: "short", day: "numeric", year: "numeric" }, "day-year");
    dayLabels.labels.set(day, label);
  }
  return label;
}

/** Initials for an avatar that cannot be shown. */
export function initials(name: string): string {
  const parts = name.trim().split(/\s+/);
  return (
    (parts[0]?.[0] ?? "") + (parts.length > 1 ? (parts[parts.length - 1]?.[0] ?? "") : "")
  ).toUpperCase();
}

/** A stable colour for a user without an avatar. */
export function colourOf(id: number): string {
  return `hsl(${(id * 47) % 360} 50% 32%)`;
}

let collator: Intl.Collator | undefined;
/**
 * `a.localeCompare(b)`, the same order (the browser's locale), through one Intl.Collator: sorting
 * 10,000 people's names with localeCompare set up the comparison at each call (~10× slower).
 */
export function compareNames(a: string, b: string): number {
  return (collator ??= new Intl.Collator()).compare(a, b);
}
