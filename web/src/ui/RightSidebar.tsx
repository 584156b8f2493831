/**
 * The organization's people with their presence (active, idle, offline), active first, then by
 * name; a click opens the direct-message conversation. Bots and deactivated users are left out,
 * and at most USERS_SHOWN are in the DOM (the rest are counted), so a large organization costs
 * no more to render than a small one.
 */
import { useEffect, useState } from "preact/hooks";
import { hashOf } from "../narrow.ts";
import { me, names, presence, presenceStatus, users, type PresenceStatus } from "../state/model.ts";
import { Avatar } from "./Avatar.tsx";

const USERS_SHOWN = 200;
const ORDER: Record<PresenceStatus, number> = { active: 0, idle: 1, offline: 2 };
const WORDS: Record<PresenceStatus, string> = {
  active: "Active",
  idle: "Idle",
  offline: "Offline",
};

export function RightSidebar() {
  // Presence ages without events: look again every half minute.
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((x) => x + 1), 30_000);
    return () => clearInterval(t);
  }, []);
  void presence.value;
  const people = [...users.value.values()]
    .filter((u) => u.is_active && !u.is_bot)
    .map((u) => ({
      u,
      status: u.user_id === me.value.id ? ("active" as const) : presenceStatus(u.user_id),
    }))
    .sort(
      (a, b) => ORDER[a.status] - ORDER[b.status] || a.u.full_name.localeCompare(b.u.full_name),
    );
  const shown = people.slice(0, USERS_SHOWN);
  return (
    <aside class="right-sidebar" aria-label="Users">
      <h2>Users</h2>
      <ul>
        {shown.map(({ u, status }) => (
          <li key={u.user_id}>
            <a
              href={hashOf({ narrow: { kind: "dm", userIds: [u.user_id] } }, names)}
              aria-label={`${u.full_name}${u.user_id === me.value.id ? " (you)" : ""}, ${WORDS[status]}`}
              title={`${u.full_name} (${WORDS[status].toLowerCase()})`}
            >
              <Avatar
                userId={u.user_id}
                name={u.full_name}
                url={u.avatar_url ?? undefined}
                size={24}
              />
              <span class={`presence ${status}`} aria-hidden="true" />
              <span class="name">{u.full_name}</span>
            </a>
          </li>
        ))}
      </ul>
      {people.length > shown.length && <p class="more">and {people.length - shown.length} more</p>}
    </aside>
  );
}
