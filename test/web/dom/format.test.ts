/**
 * Times and dates of the feed (web/src/ui/format.ts), written by formatters made once per
 * language, time zone and 12/24-hour setting: the same text as `toLocaleString` with those
 * options, and a change of any of them shows at once (no formatter of the old setting reused).
 */
import { describe, expect, it } from "vitest";

// The settings' module reaches the API client, which reads the page's CSRF token and origin.
Object.assign(globalThis, {
  document: { querySelector: () => null },
  location: { origin: "http://localhost", href: "http://localhost/" },
});
const { locale } = await import("../../../web/src/i18n.ts");
const { twentyFourHour } = await import("../../../web/src/state/model.ts");
const { userSettings } = await import("../../../web/src/state/settings.ts");
const { dayOf, fullDate, isToday, timeOfDay } = await import("../../../web/src/ui/format.ts");

const reference = (seconds: number, options: Intl.DateTimeFormatOptions) =>
  new Date(seconds * 1000).toLocaleString(locale.value, {
    timeZone: (userSettings.value.timezone as string | undefined) || undefined,
    ...options,
  });

// 2024-03-10 23:30 UTC: already the 11th in Tokyo, still the 10th in New York.
const moment = Date.UTC(2024, 2, 10, 23, 30) / 1000;

describe("format", () => {
  it("writes times and dates as toLocaleString does, following language, zone and 12/24 hours", () => {
    for (const lang of ["en-US", "de", "fr"])
      for (const zone of ["America/New_York", "Asia/Tokyo", "UTC"])
        for (const h24 of [false, true]) {
          locale.value = lang;
          userSettings.value = { timezone: zone };
          twentyFourHour.value = h24;
          expect(timeOfDay(moment)).toBe(
            reference(moment, {
              hour: h24 ? "2-digit" : "numeric",
              minute: "2-digit",
              hourCycle: h24 ? "h23" : "h12",
            }),
          );
          expect(fullDate(moment)).toBe(
            reference(moment, {
              dateStyle: "full",
              timeStyle: "short",
              hourCycle: h24 ? "h23" : "h12",
            }),
          );
          expect(dayOf(moment)).toBe(
            reference(moment, { month: "short", day: "numeric", year: "numeric" }),
          );
        }
  });

  it("names today and yesterday in the user's time zone, and other days of this year without it", () => {
    locale.value = "en-US";
    userSettings.value = { timezone: "UTC" };
    twentyFourHour.value = false;
    const now = Date.now() / 1000;
    expect(dayOf(now)).toBe("Today");
    expect(isToday(now)).toBe(true);
    expect(dayOf(now - 86_400)).toBe("Yesterday");
    expect(isToday(now - 86_400)).toBe(false);
    // A day this year (if today is early January, last year's: then with its year).
    const earlier = now - 5 * 86_400;
    const sameYear =
      new Date(earlier * 1000).getUTCFullYear() === new Date(now * 1000).getUTCFullYear();
    expect(dayOf(earlier)).toBe(
      reference(earlier, {
        month: "short",
        day: "numeric",
        ...(sameYear ? {} : { year: "numeric" }),
      }),
    );
    // An unknown zone falls back to the browser's, as before.
    userSettings.value = { timezone: "Not/AZone" };
    expect(timeOfDay(moment)).toBe(
      new Date(moment * 1000).toLocaleString("en-US", {
        hour: "numeric",
        minute: "2-digit",
        hour12: true,
      }),
    );
  });

  it("writes the first hour after midnight as 12 on a 12-hour clock in every language, as Zulip does", () => {
    // `hour12: true` alone lets ICU pick 0–11 for German and French ("0:30 AM").
    const midnight = Date.UTC(2024, 2, 10, 0, 30) / 1000;
    userSettings.value = { timezone: "UTC" };
    twentyFourHour.value = false;
    for (const lang of ["en-US", "de", "fr"]) {
      locale.value = lang;
      expect(timeOfDay(midnight)).toMatch(/^12:30\sAM$/);
    }
    twentyFourHour.value = true;
    locale.value = "de";
    expect(timeOfDay(midnight)).toBe("00:30");
  });
});
