/**
 * Recent conversations (`#recent`, Zulip's recent_view): every recent channel topic and direct
 * message conversation, the newest first, with its channel, topic, participants, last sender and
 * time, and its unread count; filters "Unread" and "Participated", and a box that filters by
 * channel, topic or name. From state/recent.ts: one bounded fetch per registration, then live
 * events; coming back here refetches nothing. Muted topics and channels are left out.
 *
 * Keys: ↑/↓ or k/j between rows, Enter opens the conversation.
 */
import { signal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { t } from "../i18n.ts";
import { hashOf, sortedIds, type Narrow } from "../narrow.ts";
import { displayTopic, me, names, subscriptions, users } from "../state/model.ts";
import {
  conversations,
  isMutedTopic,
  loadRecent,
  recentStatus,
  type Conversation,
} from "../state/recent.ts";
import { counts } from "../state/unread.ts";
import { Avatar } from "./Avatar.tsx";
import { dayOf, isToday, timeOfDay } from "./format.ts";
import type { PageProps } from "./PageHost.tsx";
import { moveInRows, useIncremental } from "./nav.ts";
import "./PageFilter.css";
import "./Recent.css";

const onlyUnread = signal(false);
const onlyParticipated = signal(false);
const query = signal("");

function userName(id: number): string {
  return users.value.get(id)?.full_name ?? t("Unknown user");
}

function dmLabel(userIds: number[]): string {
  const others = userIds.filter((id) => id !== me.value.id);
  if (!others.length) return t("{name} (you)", { name: me.value.fullName });
  return others.map(userName).join(", ");
}

interface Row {
  c: Conversation;
  channel: string;
  topic: string;
  narrow: Narrow;
  unread: number;
}

function rows(): Row[] {
  const c = counts.value;
  const q = query.value.trim().toLowerCase();
  const myId = me.value.id;
  const out: Row[] = [];
  const sorted = [...conversations.value.values()].sort((a, b) => b.maxId - a.maxId);
  for (const conv of sorted) {
    let row: Row;
    if (conv.kind === "stream") {
      const sub = subscriptions.value.get(conv.streamId);
      if (!sub || isMutedTopic(conv.streamId, conv.topic)) continue;
      row = {
        c: conv,
        channel: sub.name,
        topic: displayTopic(conv.topic),
        narrow: { kind: "topic", streamId: conv.streamId, topic: conv.topic },
        unread: c.byTopic.get(conv.streamId)?.get(conv.topic.toLowerCase())?.count ?? 0,
      };
    } else {
      const others = conv.userIds.filter((id) => id !== myId);
      row = {
        c: conv,
        channel: t("Direct messages"),
        topic: dmLabel(conv.userIds),
        narrow: { kind: "dm", userIds: others.length ? others : [myId] },
        unread: c.byDm.get(sortedIds(conv.userIds).join(",")) ?? 0,
      };
    }
    if (onlyUnread.value && row.unread === 0) continue;
    if (onlyParticipated.value && !conv.participated) continue;
    if (q && !`${row.channel}\n${row.topic}`.toLowerCase().includes(q)) continue;
    out.push(row);
  }
  return out;
}

function when(seconds: number): string {
  return isToday(seconds) ? timeOfDay(seconds) : dayOf(seconds);
}

function Toggle({ label, on }: { label: string; on: typeof onlyUnread }) {
  return (
    <button
      type="button"
      class="page-toggle"
      aria-pressed={on.value}
      onClick={() => (on.value = !on.value)}
    >
      {label}
    </button>
  );
}

export default function RecentPage(_: PageProps) {
  const table = useRef<HTMLTableElement>(null);
  useEffect(() => void loadRecent(), []);
  const all = rows();
  // Drawn progressively (nav.ts): a few screens at once, the rest as they scroll into view.
  const { limit, sentinel, more } = useIncremental(all.length);
  const shown = all.slice(0, limit);
  const status = recentStatus.value;
  const hasRows = shown.length > 0;
  useEffect(() => {
    const active = document.activeElement;
    if (hasRows && (!active || active === document.body))
      table.current?.querySelector<HTMLElement>("[data-row]")?.focus();
  }, [hasRows]);

  return (
    <section class="page recent" aria-label={t("Recent conversations")}>
      <h1>{t("Recent conversations")}</h1>
      <div class="page-filter">
        <Toggle label={t("Unread")} on={onlyUnread} />
        <Toggle label={t("Participated")} on={onlyParticipated} />
        <input
          type="search"
          class="page-field"
          aria-label={t("Filter topics")}
          placeholder={t("Filter topics")}
          value={query.value}
          onInput={(e) => (query.value = e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown") {
              e.preventDefault();
              table.current?.querySelector<HTMLElement>("[data-row]")?.focus();
            }
          }}
        />
      </div>
      {status === "error" && (
        <p role="alert" class="recent-note">
          {t("Could not load recent conversations.")}{" "}
          <button type="button" onClick={() => void loadRecent()}>
            {t("Try again")}
          </button>
        </p>
      )}
      {!hasRows && (
        <p class="recent-note" role="status">
          {status === "loading" || status === "idle"
            ? t("Loading…")
            : t("No conversations match your filters.")}
        </p>
      )}
      {hasRows && (
        <table
          class="recent-table"
          ref={table}
          onKeyDown={(e) => moveInRows(e.currentTarget, e) && e.preventDefault()}
        >
          <thead>
            <tr>
              <th scope="col">{t("Channel")}</th>
              <th scope="col">{t("Topic")}</th>
              <th scope="col">{t("Unread")}</th>
              <th scope="col">{t("Participants")}</th>
              <th scope="col">{t("Last message")}</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => {
              const href = hashOf({ narrow: r.narrow }, names);
              const c = r.c;
              const channelHref =
                c.kind === "stream"
                  ? hashOf({ narrow: { kind: "channel", streamId: c.streamId } }, names)
                  : undefined;
              const participants = c.senders.map(userName);
              return (
                <tr key={c.key} class={r.unread > 0 ? "unread" : undefined}>
                  <td class="recent-channel">
                    {channelHref ? (
                      <a href={channelHref} tabIndex={-1}>
                        {r.channel}
                      </a>
                    ) : (
                      r.channel
                    )}
                  </td>
                  <td class="recent-topic">
                    <a href={href} data-row>
                      {r.topic}
                    </a>
                  </td>
                  <td class="recent-unread">
                    {r.unread > 0 && (
                      <span
                        class="recent-count"
                        aria-label={t("{count} unread", { count: r.unread })}
                      >
                        {r.unread}
                      </span>
                    )}
                  </td>
                  <td class="recent-participants">
                    {participants.length > 0 && (
                      <span
                        role="img"
                        class="recent-avatars"
                        aria-label={t("Participants: {names}", { names: participants.join(", ") })}
                      >
                        {c.senders.map((id) => (
                          <Avatar
                            key={id}
                            userId={id}
                            name={userName(id)}
                            url={users.value.get(id)?.avatar_url ?? undefined}
                            size={22}
                          />
                        ))}
                      </span>
                    )}
                  </td>
                  <td class="recent-last">
                    {c.lastSender !== undefined && (
                      <span class="recent-sender">{userName(c.lastSender)}</span>
                    )}
                    {c.lastTime !== undefined && (
                      <time dateTime={new Date(c.lastTime * 1000).toISOString()}>
                        {when(c.lastTime)}
                      </time>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {more && (
        <p class="recent-note" ref={sentinel as preact.Ref<HTMLParagraphElement>}>
          {t("Loading…")}
        </p>
      )}
    </section>
  );
}
