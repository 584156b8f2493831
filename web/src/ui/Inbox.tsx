/**
 * Inbox (`#inbox`, Zulip's inbox_ui): the unread conversations, direct messages first (one row
 * per conversation, the newest first), then each channel (pinned first, then by name) with its
 * unread topics (the one with the newest unread message first), every row with its count and a
 * link to the conversation. Groups collapse (remembered in localStorage, as Zulip's does); a
 * filter narrows by channel, topic or name. Muted channels and topics are left out. Built from
 * the unread state the app keeps (state/unread.ts): no request.
 *
 * Keys: ↑/↓ or k/j between rows, Enter opens, ← collapses the group of the focused row, →
 * expands it.
 */
import { signal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { t } from "../i18n.ts";
import { hashOf, type Narrow } from "../narrow.ts";
import { displayTopic, me, names, recentDms, subscriptions, users } from "../state/model.ts";
import { isMutedTopic } from "../state/recent.ts";
import { counts } from "../state/unread.ts";
import type { PageProps } from "./PageHost.tsx";
import { moveInRows, useIncremental } from "./nav.ts";
import { compareNames } from "./format.ts";
import "./PageFilter.css";
import "./Inbox.css";

const STORAGE_KEY = "inbox-collapsed";

function loadCollapsed(): ReadonlySet<string> {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    return new Set(raw ? (JSON.parse(raw) as string[]) : []);
  } catch {
    return new Set();
  }
}
const collapsed = signal<ReadonlySet<string>>(loadCollapsed());
const filter = signal("");

function setCollapsed(key: string, value: boolean) {
  const next = new Set(collapsed.value);
  if (value) next.add(key);
  else next.delete(key);
  collapsed.value = next;
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify([...next]));
  } catch {
    // storage full or refused: the state lasts this session
  }
}

interface Row {
  key: string;
  name: string;
  count: number;
  narrow: Narrow;
}
interface Group {
  key: string;
  name: string;
  /** The channel header's own link (none for direct messages). */
  narrow?: Narrow;
  color?: string;
  count: number;
  /** How many rows the group has. */
  size: number;
  /**
   * Its rows, newest first: made when the group is drawn (at scale, thousands of topics' rows
   * would be made for the few the first screens show).
   */
  rows: () => Row[];
}

function dmName(userIds: number[]): string {
  const myId = me.value.id;
  const others = userIds.filter((id) => id !== myId);
  if (!others.length) return t("{name} (you)", { name: me.value.fullName });
  return others.map((id) => users.value.get(id)?.full_name ?? t("Unknown user")).join(", ");
}

function groups(): Group[] {
  const c = counts.value;
  const q = filter.value.trim().toLowerCase();
  const out: Group[] = [];
  const myId = me.value.id;
  // Direct messages: one row per conversation, the newest unread first.
  const dms: (Row & { maxId: number })[] = [];
  for (const [key, count] of c.byDm) {
    const ids = key.split(",").map(Number);
    const name = dmName(ids);
    if (q && !name.toLowerCase().includes(q)) continue;
    const others = ids.filter((id) => id !== myId);
    dms.push({
      key: `d:${key}`,
      name,
      count,
      narrow: { kind: "dm", userIds: others.length ? others : [myId] },
      maxId: recentDms.value.get(key)?.maxId ?? 0,
    });
  }
  if (dms.length) {
    dms.sort((a, b) => b.maxId - a.maxId);
    out.push({
      key: "dm",
      name: t("Direct messages"),
      count: dms.reduce((n, r) => n + r.count, 0),
      size: dms.length,
      rows: () => dms,
    });
  }
  const subs = [...subscriptions.value.values()].sort(
    (a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || compareNames(a.name, b.name),
  );
  for (const s of subs) {
    const topics = c.byTopic.get(s.stream_id);
    if (!topics) continue;
    const channelMatches = !q || s.name.toLowerCase().includes(q);
    const shown = [...topics.values()].filter(
      (tc) =>
        !isMutedTopic(s.stream_id, tc.topic) &&
        (channelMatches || displayTopic(tc.topic).toLowerCase().includes(q)),
    );
    if (!shown.length) continue;
    let rows: Row[] | undefined;
    out.push({
      key: `s:${s.stream_id}`,
      name: s.name,
      narrow: { kind: "channel", streamId: s.stream_id },
      color: s.color,
      count: shown.reduce((n, tc) => n + tc.count, 0),
      size: shown.length,
      rows: () =>
        (rows ??= shown
          .sort((a, b) => b.maxId - a.maxId)
          .map((tc): Row => ({
            key: `t:${s.stream_id}:${tc.topic.toLowerCase()}`,
            name: displayTopic(tc.topic),
            count: tc.count,
            narrow: { kind: "topic", streamId: s.stream_id, topic: tc.topic },
          }))),
    });
  }
  return out;
}

function unreadLabel(name: string, count: number): string {
  return t("{name}, {count} unread", { name, count });
}

export default function InboxPage(_: PageProps) {
  const list = useRef<HTMLDivElement>(null);
  const all = groups();
  const shut = collapsed.value;
  // Group headers and conversation rows, drawn progressively (nav.ts): with hundreds of channels
  // of unread topics, the page opens with the first screens only.
  const total = all.reduce((n, g) => n + 1 + (shut.has(g.key) ? 0 : g.size), 0);
  const { limit, sentinel, more } = useIncremental(total);
  let budget = limit;

  useEffect(() => {
    // As Zulip's: the first row has the focus, so that the keys work at once.
    const active = document.activeElement;
    if (!active || active === document.body)
      list.current?.querySelector<HTMLElement>("[data-row]")?.focus();
  }, []);

  function onKeyDown(e: KeyboardEvent) {
    const box = list.current;
    if (!box) return;
    if (moveInRows(box, e)) {
      e.preventDefault();
      return;
    }
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    const row = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>(
      "[data-group]",
    );
    const key = row?.dataset.group;
    if (!row || !key) return;
    e.preventDefault();
    setCollapsed(key, e.key === "ArrowLeft");
    // The group's header keeps the focus once its rows are gone.
    if (e.key === "ArrowLeft")
      requestAnimationFrame(() =>
        row.querySelector<HTMLElement>("[data-row][data-header]")?.focus(),
      );
  }

  return (
    <section class="page inbox" aria-label={t("Inbox")}>
      <h1>{t("Inbox")}</h1>
      <div class="page-filter inbox-filter">
        <input
          type="search"
          class="page-field"
          aria-label={t("Filter")}
          placeholder={t("Filter")}
          value={filter.value}
          onInput={(e) => (filter.value = e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown") {
              e.preventDefault();
              list.current?.querySelector<HTMLElement>("[data-row]")?.focus();
            }
          }}
        />
      </div>
      <div class="inbox-list" ref={list} onKeyDown={onKeyDown}>
        {all.length === 0 && (
          <p class="inbox-empty">
            {filter.value.trim()
              ? t("No conversations match your filter.")
              : t("There are no unread messages in your inbox.")}
          </p>
        )}
        {all.map((g) => {
          if (budget <= 0) return null;
          budget -= 1;
          const isShut = shut.has(g.key);
          const rows = isShut ? [] : g.rows().slice(0, budget);
          budget -= rows.length;
          const listId = `inbox-${g.key.replace(/[^\w-]/g, "_")}`;
          return (
            <div class="inbox-group" key={g.key} data-group={g.key}>
              <h2 class="inbox-header">
                <button
                  type="button"
                  class="inbox-toggle"
                  data-row
                  data-header
                  aria-expanded={!isShut}
                  aria-controls={listId}
                  aria-label={unreadLabel(g.name, g.count)}
                  onClick={() => setCollapsed(g.key, !isShut)}
                >
                  <span class="inbox-caret" aria-hidden="true">
                    {isShut ? "▸" : "▾"}
                  </span>
                  {g.color && (
                    <span class="inbox-swatch" style={{ background: g.color }} aria-hidden="true" />
                  )}
                  <span class="inbox-name">{g.name}</span>{" "}
                  <span class="inbox-count" aria-hidden="true">
                    {g.count}
                  </span>
                </button>
                {g.narrow && (
                  <a class="inbox-open" href={hashOf({ narrow: g.narrow }, names)} tabIndex={-1}>
                    {t("Go to channel")}
                  </a>
                )}
              </h2>
              <ul id={listId} hidden={isShut}>
                {rows.map((r) => (
                  <li key={r.key}>
                    <a
                      class="inbox-row"
                      data-row
                      href={hashOf({ narrow: r.narrow }, names)}
                      aria-label={unreadLabel(r.name, r.count)}
                    >
                      <span class="inbox-name">{r.name}</span>{" "}
                      <span class="inbox-count" aria-hidden="true">
                        {r.count}
                      </span>
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          );
        })}
        {more && (
          <p class="inbox-more" ref={sentinel as preact.Ref<HTMLParagraphElement>}>
            {t("Loading…")}
          </p>
        )}
      </div>
    </section>
  );
}
