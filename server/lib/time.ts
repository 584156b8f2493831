/** UNIX time in whole seconds, as the API gives timestamps (Zulip's datetime_to_timestamp). */
export const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

// A date, optionally a time (minutes, seconds and a fraction optional), optionally a zone.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * An ISO 8601 date or date and time, as GET /messages' `anchor_date` takes it; without a zone it
 * is in UTC. Null when the text is no such date, or names a day or time that does not exist.
 */
export function parseIsoDate(text: string): Date | null {
  const m = ISO_8601.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone = "Z"] = m;
  const offset = zone.toUpperCase() === "Z" ? "Z" : zone.length === 3 ? `${zone}:00` : zone;
  const normal = offset.length === 5 ? `${offset.slice(0, 3)}:${offset.slice(3)}` : offset;
  const ms = frac.padEnd(3, "0").slice(0, 3);
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${normal}`);
  if (Number.isNaN(date.getTime())) return null;
  // Date accepts 2024-02-30 as March 1st: the fields must be what was written.
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  return date;
}
