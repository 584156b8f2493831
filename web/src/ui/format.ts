/**
 * Times and dates as the app shows them: in the user's locale (their `default_language`) and
 * time zone (their `timezone` setting, else the browser's), with their 12- or 24-hour setting.
 */
import { locale, t } from "../i18n.ts";
import { twentyFourHour } from "../state/model.ts";
import { userSettings } from "../state/settings.ts";

/** The user's time zone, if the browser knows it (an unknown one would throw). */
function timeZone(): string | undefined {
  const zone = userSettings.value.timezone;
  if (typeof zone !== "string" || !zone) return undefined;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

function format(seconds: number, options: Intl.DateTimeFormatOptions): string {
  return new Date(seconds * 1000).toLocaleString(locale.value, {
    timeZone: timeZone(),
    ...options,
  });
}

export function timeOfDay(seconds: number): string {
  return format(seconds, { hour: "numeric", minute: "2-digit", hour12: !twentyFourHour.value });
}

export function fullDate(seconds: number): string {
  return format(seconds, { dateStyle: "full", timeStyle: "short", hour12: !twentyFourHour.value });
}

/** The calendar day of a moment in the user's time zone, as "2026-11-29". */
function dayKey(seconds: number): string {
  return new Date(seconds * 1000).toLocaleDateString("en-CA", { timeZone: timeZone() });
}

/** Whether the moment falls on today's date, in the user's time zone. */
export function isToday(seconds: number): boolean {
  return dayKey(seconds) === dayKey(Date.now() / 1000);
}

export function dayOf(seconds: number): string {
  const now = Date.now() / 1000;
  if (isToday(seconds)) return t("Today");
  if (dayKey(seconds) === dayKey(now - 86_400)) return t("Yesterday");
  const sameYear = dayKey(seconds).slice(0, 4) === dayKey(now).slice(0, 4);
  return format(seconds, {
    month: "short",
    day: "numeric",
    ...(sameYear ? {} : { year: "numeric" }),
  });
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
