/**
 * What the user card, the profile page and the buddy list say about a person: their role, local
 * time, last activity, status emoji and custom profile fields, in Zulip's words.
 */
import { t } from "../i18n.ts";
import { presence, presenceStatus, serverClockSkew, users } from "../state/model.ts";
import { hourCycle } from "./format.ts";
import { emojiChar } from "../state/emoji.ts";
import { profileFields, statusOf, type Status } from "../state/status.ts";
import { realmEmoji } from "../state/model.ts";
import type { User } from "../types.ts";

export function roleName(u: User): string {
  switch (u.role) {
    case 100:
      return t("Owner");
    case 200:
      return t("Administrator");
    case 300:
      return t("Moderator");
    case 600:
      return t("Guest");
    default:
      return u.is_bot ? t("Bot") : t("Member");
  }
}

/** The time where the user is ("3:04 PM"), or undefined without a time zone. */
export function localTime(u: User, now = new Date()): string | undefined {
  if (!u.timezone) return undefined;
  try {
    return now.toLocaleTimeString(undefined, {
      timeZone: u.timezone,
      hour: "numeric",
      minute: "2-digit",
      hourCycle: hourCycle(),
    });
  } catch {
    return undefined;
  }
}

/** "Active now", "Idle", or how long ago they were last active (Zulip's buddy-list words). */
export function lastActive(userId: number): string {
  void presence.value;
  const s = presenceStatus(userId);
  if (s === "active") return t("Active now");
  if (s === "idle") return t("Idle");
  const p = presence.value.get(userId);
  if (!p) return t("Not active");
  const seconds =
    Date.now() / 1000 + serverClockSkew.value - Math.max(p.active_timestamp, p.idle_timestamp);
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return t("Active {n} minutes ago", { n: Math.max(1, minutes) });
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return t("Active {n} hours ago", { n: hours });
  return t("Active {n} days ago", { n: Math.floor(hours / 24) });
}

export function StatusEmoji({ status }: { status: Status | undefined }) {
  if (!status?.emoji_name) return null;
  const label = `:${status.emoji_name}:`;
  if (status.reaction_type === "realm_emoji") {
    const url = realmEmoji.value.get(status.emoji_code ?? "");
    if (url) return <img class="status-emoji" src={url} alt={label} />;
  }
  if (status.emoji_code && status.reaction_type !== "realm_emoji") {
    try {
      return (
        <span class="status-emoji" role="img" aria-label={label}>
          {emojiChar(status.emoji_code)}
        </span>
      );
    } catch {
      // an unknown code: its name
    }
  }
  return <span class="status-emoji">{label}</span>;
}

export function UserStatusLine({ userId }: { userId: number }) {
  const s = statusOf(userId);
  if (!s) return null;
  return (
    <span class="user-status">
      <StatusEmoji status={s} />
      {s.status_text && <span class="status-text">{s.status_text}</span>}
    </span>
  );
}

/** A custom profile field's value as text (choices by their words, users by their names). */
function fieldText(type: number, fieldData: string | undefined, value: string): string {
  try {
    if (type === 3 && fieldData) {
      const choices = JSON.parse(fieldData) as Record<string, { text: string }>;
      return choices[value]?.text ?? value;
    }
    if (type === 6)
      return (JSON.parse(value) as number[])
        .map((id) => users.value.get(id)?.full_name ?? t("Unknown user"))
        .join(", ");
  } catch {
    // shown as it is
  }
  return value;
}

export function ProfileFields({ u }: { u: User }) {
  const data = (u.profile_data ?? {}) as Record<string, { value: string } | undefined>;
  const rows = profileFields.value
    .map((f) => ({ f, v: data[String(f.id)]?.value }))
    .filter((r): r is { f: (typeof r)["f"]; v: string } => !!r.v);
  if (!rows.length) return null;
  return (
    <>
      {rows.map(({ f, v }) => (
        <div key={f.id}>
          <dt>{f.name}</dt>
          <dd>
            {f.type === 5 && /^https?:\/\//.test(v) ? (
              <a href={v} target="_blank" rel="noopener noreferrer">
                {v}
              </a>
            ) : (
              fieldText(f.type, f.field_data, v)
            )}
          </dd>
        </div>
      ))}
    </>
  );
}
