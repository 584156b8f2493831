/**
 * The buddy list: the organization's people with their presence (active, idle, offline), active
 * first, then by name, with their status emoji and text; a click on a name opens the
 * direct-message conversation, on the avatar the user card. "Filter people" (key `w`) narrows it
 * by name. Bots and deactivated users are left out. Windowed: only the rows in view (fixed row
 * height, from the scroll offset) are in the DOM, so 10,000 users cost what 30 do.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { hashOf } from "../narrow.ts";
import { me, names, presence, presenceStatus, users, type PresenceStatus } from "../state/model.ts";
import { presenceEnabled, statuses, statusOf } from "../state/status.ts";
import { Avatar } from "./Avatar.tsx";
import { compareNames } from "./format.ts";
import { StatusEmoji } from "./people.tsx";
import { openUserCard } from "./UserCard.tsx";
import "./RightSidebar.css";

export const ROW_PX = 30;
/** Rows rendered beyond each edge of the view. */
const OVERSCAN = 8;
const ORDER: Record<PresenceStatus, number> = { active: 0, idle: 1, offline: 2 };

function word(status: PresenceStatus): string {
  return status === "active" ? t("Active") : status === "idle" ? t("Idle") : t("Offline");
}

export function RightSidebar() {
  // Presence ages without events: look again every half minute.
  const [tick, setTick] = useState(0);
  const [filter, setFilter] = useState("");
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const scroller = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const timer = setInterval(() => setTick((x) => x + 1), 30_000);
    const s = scroller.current;
    const observer = new ResizeObserver(() => s && setHeight(s.clientHeight));
    if (s) observer.observe(s);
    return () => {
      clearInterval(timer);
      observer.disconnect();
    };
  }, []);
  const myId = me.value.id;
  const away = !presenceEnabled.value;
  const people = useMemo(() => {
    const q = filter.trim().toLowerCase();
    const list: { id: number; name: string; status: PresenceStatus }[] = [];
    for (const u of users.value.values()) {
      if (!u.is_active || u.is_bot) continue;
      if (
        q &&
        !u.full_name
          .toLowerCase()
          .split(/\s+/)
          .some((w) => w.startsWith(q)) &&
        !u.full_name.toLowerCase().startsWith(q)
      )
        continue;
      const status: PresenceStatus =
        u.user_id === myId ? (away ? "offline" : "active") : presenceStatus(u.user_id);
      list.push({ id: u.user_id, name: u.full_name, status });
    }
    return list.sort((a, b) => ORDER[a.status] - ORDER[b.status] || compareNames(a.name, b.name));
  }, [users.value, presence.value, filter, tick, myId, away]);
  void statuses.value;
  const first = Math.max(0, Math.floor(scrollTop / ROW_PX) - OVERSCAN);
  const last = Math.min(people.length, Math.ceil((scrollTop + height) / ROW_PX) + OVERSCAN);
  const rows = people.slice(first, last);
  return (
    <aside class="right-sidebar buddy-list" aria-label={t("Users")}>
      <h2>{t("Users")}</h2>
      <input
        type="search"
        class="buddy-filter"
        aria-label={t("Filter people")}
        placeholder={t("Filter people")}
        value={filter}
        onInput={(e) => {
          setFilter(e.currentTarget.value);
          if (scroller.current) scroller.current.scrollTop = 0;
          setScrollTop(0);
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            setFilter("");
            e.currentTarget.blur();
          }
        }}
      />
      <div
        class="buddy-scroller"
        ref={scroller}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      >
        <ul style={{ height: `${people.length * ROW_PX}px` }}>
          {rows.map(({ id, name, status }, i) => {
            const s = statusOf(id);
            const you = id === myId ? ` ${t("(you)")}` : "";
            return (
              <li key={id} style={{ top: `${(first + i) * ROW_PX}px` }}>
                <button
                  type="button"
                  class="buddy-avatar"
                  aria-label={t("{name}: user card", { name })}
                  onClick={() => openUserCard(id)}
                >
                  <Avatar
                    userId={id}
                    name={name}
                    url={users.value.get(id)?.avatar_url ?? undefined}
                    size={22}
                  />
                </button>
                <a
                  href={hashOf({ narrow: { kind: "dm", userIds: [id] } }, names)}
                  aria-label={`${name}${you}, ${word(status)}${s?.status_text ? `, ${s.status_text}` : ""}`}
                  title={s?.status_text ? `${name}: ${s.status_text}` : name}
                >
                  <span class={`presence ${status}`} aria-hidden="true" />
                  <span class="name">{name}</span>
                  {s && (
                    <span class="buddy-status" aria-hidden="true">
                      <StatusEmoji status={s} />
                    </span>
                  )}
                </a>
              </li>
            );
          })}
        </ul>
        {people.length === 0 && <p class="more">{t("No matching users.")}</p>}
      </div>
    </aside>
  );
}
