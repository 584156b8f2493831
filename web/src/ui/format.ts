/** Times and dates as the feed shows them (the user's 12- or 24-hour setting). */
import { twentyFourHour } from "../state/model.ts";

export function timeOfDay(seconds: number): string {
  return new Date(seconds * 1000).toLocaleTimeString(undefined, {
    hour: "numeric",
    minute: "2-digit",
    hour12: !twentyFourHour.value,
  });
}

export function fullDate(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString(undefined, {
    dateStyle: "full",
    timeStyle: "short",
    hour12: !twentyFourHour.value,
  });
}

export function dayOf(seconds: number): string {
  const d = new Date(seconds * 1000);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return "Today";
  const yesterday = new Date(now.getTime() - 86_400_000);
  if (d.toDateString() === yesterday.toDateString()) return "Yesterday";
  return d.toLocaleDateString(undefined, {
    month: "short",
    day: "numeric",
    ...(d.getFullYear() !== now.getFullYear() ? { year: "numeric" } : {}),
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
