/**
 * The message feed of a view: the narrow's list (state/messages.ts), grouped under channel and
 * topic (or conversation) headers as Zulip groups them, opened at the first unread message (or
 * the `near` one). Only a window of WINDOW messages is in the DOM, as in Zulip's
 * message_list_view.ts: scrolling near an edge moves the window, and past what is loaded fetches
 * the next batch; the row in view keeps its place on screen meanwhile. Rows seen are marked read.
 */
import { batch } from "@preact/signals";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { matches, narrowKey, narrowTitle, type View } from "../narrow.ts";
import { compose, pending, retrySend, discardSend, type Pending } from "../state/compose.ts";
import { editing } from "../state/edit.ts";
import { listFor, resetList, store } from "../state/messages.ts";
import { me, names, subscriptions, users } from "../state/model.ts";
import { sawMessage } from "../state/read.ts";
import { isUnread } from "../state/unread.ts";
import { selectedId } from "../state/view.ts";
import type { Msg } from "../types.ts";
import { t } from "../i18n.ts";
import { dayOf, timeOfDay } from "./format.ts";
import { MessageRow } from "./Message.tsx";
import { RecipientHeader } from "./RecipientHeader.tsx";
import { Avatar } from "./Avatar.tsx";
import { MutedRow } from "./MutedRow.tsx";
import { openUserCard } from "./UserCard.tsx";
import { mutedUsers, revealed } from "../state/muted-users.ts";
import { visibleInHome } from "../state/user-topics.ts";

/** Messages in the DOM at most (Zulip's _RENDER_WINDOW_SIZE), and how far the window moves. */
export const WINDOW = 250;
const SHIFT = 100;
/** Pixels from an edge at which the window moves or the next batch is fetched. */
const EDGE_PX = 800;
/**
 * The rows of the first frame of a view opened: those around the message it opens at that fill
 * the screen (rows before it when it opens at the bottom). The rest of the window is rendered
 * just after that frame is painted, so that a switch shows its messages after rendering ~50 rows
 * rather than the 150 of the first fetch (or the 250 of a cached list).
 */
const FIRST_PAINT_BEFORE = 15;
const FIRST_PAINT_BEFORE_BOTTOM = 45;
const FIRST_PAINT_AFTER = 35;
/** A sender's messages within this many seconds share one sender line. */
const SAME_RUN_SECONDS = 600;

function lowerBound(ids: number[], id: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What the keyboard moves through: the feed being shown registers itself here. */
export const feedControl: { current?: { move(delta: number): void; selected(): Msg | undefined } } =
  {};

interface Win {
  first: number | undefined;
  last: number | undefined;
  /** The window's end follows the newest message loaded. */
  atNewest: boolean;
}

type Restore =
  | { kind: "bottom" }
  | { kind: "anchor"; id: number; offset: number }
  | { kind: "show"; id: number }
  | undefined;

function recipientKey(m: Msg): string {
  return m.type === "stream"
    ? `s:${m.stream_id}:${m.subject.toLowerCase()}`
    : `d:${JSON.stringify((m.display_recipient as { id: number }[]).map((u) => u.id).sort())}`;
}

export function Feed({ v }: { v: View }) {
  const list = listFor(v.narrow);
  const version = list.version.value; // renders again on every change of the list
  const scroller = useRef<HTMLDivElement>(null);
  const win = useRef<Win>({ first: undefined, last: undefined, atNewest: true });
  const restore = useRef<Restore>(undefined);
  const [, rerender] = useState(0);
  /** Between a view's first frame (its rows in view) and the rest of its window rendered. */
  const growing = useRef(false);
  const live = useRef(true);
  useEffect(
    () => () => {
      live.current = false;
    },
    [],
  );
  const title = narrowTitle(v.narrow, names);
  void version;
  // The first fetch goes out now, not after this render is painted (the effect below waits for
  // the same one): the server works while the browser lays out and paints the switch.
  if (!list.loaded && !list.error) void list.load(v.near ?? "first_unread");

  // The first load, or the cached list shown again.
  useEffect(() => {
    const w = win.current;
    const open = () => {
      const ids = list.ids;
      const target = v.near ?? list.anchorId;
      const at =
        target !== undefined ? Math.min(lowerBound(ids, target), ids.length - 1) : ids.length - 1;
      const end = Math.min(
        ids.length - 1,
        Math.max(at + 50, Math.min(ids.length - 1, at + WINDOW / 2)),
      );
      const start = Math.max(0, end - WINDOW + 1);
      const shown = ids[at];
      const bottom = !(shown !== undefined && (target !== undefined || !list.foundNewest));
      if (bottom) {
        restore.current = { kind: "bottom" };
        selectedId.value = ids[ids.length - 1];
      } else {
        restore.current = { kind: "show", id: shown };
        selectedId.value = shown;
      }
      // The first frame: the rows that fill the screen around `at`; the whole window after it.
      const firstStart = Math.max(
        start,
        at - (bottom ? FIRST_PAINT_BEFORE_BOTTOM : FIRST_PAINT_BEFORE),
      );
      const firstEnd = Math.min(end, at + FIRST_PAINT_AFTER);
      w.first = ids[firstStart];
      w.last = ids[firstEnd];
      w.atNewest = firstEnd === ids.length - 1;
      if (firstStart > start || firstEnd < end) {
        const full = { first: ids[start], last: ids[end], atNewest: end === ids.length - 1 };
        growing.current = true;
        requestAnimationFrame(() =>
          setTimeout(() => {
            growing.current = false;
            if (!live.current) return;
            // Unless scrolling or the keyboard moved the window meanwhile.
            if (w.first === ids[firstStart] && w.last === ids[firstEnd]) {
              w.first = full.first;
              w.last = full.last;
              w.atNewest = full.atNewest;
            }
            rerender((x) => x + 1);
          }, 0),
        );
      }
      rerender((x) => x + 1);
    };
    if (!list.loaded) void list.load(v.near ?? "first_unread").then(open);
    else if (v.near !== undefined && !list.ids.includes(v.near)) {
      // A cached list that does not reach the message asked for: fetched anew around it.
      // The next render takes a new list, and this effect runs again for it.
      resetList(v.narrow);
      rerender((x) => x + 1);
    } else {
      if (v.near === undefined) list.anchorId = undefined;
      open();
    }
  }, [list]);

  const ids = list.ids;
  const w = win.current;
  // Before the view opens (a cached list shown again), at most the newest WINDOW.
  let iFirst =
    w.first === undefined
      ? Math.max(0, ids.length - WINDOW)
      : Math.min(lowerBound(ids, w.first), Math.max(0, ids.length - 1));
  let iLast =
    w.atNewest || w.last === undefined
      ? ids.length - 1
      : Math.min(ids.length - 1, lowerBound(ids, w.last + 1) - 1);
  if (iLast < iFirst) iLast = iFirst;
  // New messages at the bottom while the window follows it: the oldest leave the DOM.
  if (iLast - iFirst + 1 > WINDOW + SHIFT / 2) iFirst = iLast - WINDOW + 1;
  w.first = ids[iFirst];
  w.last = ids[iLast];

  // Where the view is now, so that the rows in view stay put when rows come and go above them.
  const el = scroller.current;
  if (el && restore.current === undefined) {
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 4 && w.atNewest)
      restore.current = { kind: "bottom" };
    else {
      const top = el.getBoundingClientRect().top;
      for (const row of el.querySelectorAll<HTMLElement>("article[data-id]")) {
        const r = row.getBoundingClientRect();
        if (r.bottom > top) {
          restore.current = { kind: "anchor", id: Number(row.dataset.id), offset: r.top - top };
          break;
        }
      }
    }
  }

  const moveWindow = (direction: -1 | 1) => {
    const all = list.ids;
    const a = w.first === undefined ? 0 : lowerBound(all, w.first);
    const b =
      w.last === undefined
        ? all.length - 1
        : Math.min(all.length - 1, lowerBound(all, w.last + 1) - 1);
    let start: number;
    let end: number;
    if (direction < 0) {
      start = Math.max(0, a - SHIFT);
      end = Math.min(b, start + WINDOW - 1);
    } else {
      end = Math.min(all.length - 1, b + SHIFT);
      start = Math.max(a, end - WINDOW + 1);
    }
    w.first = all[start];
    w.last = all[end];
    w.atNewest = end === all.length - 1;
    rerender((x) => x + 1);
  };

  const onScroll = () => {
    const s = scroller.current;
    // Not while the first frame's few rows are shown: the whole window follows at once.
    if (!s || !list.loaded || growing.current) return;
    const all = list.ids;
    const a = w.first === undefined ? 0 : lowerBound(all, w.first);
    const b = w.last === undefined ? all.length - 1 : lowerBound(all, w.last + 1) - 1;
    if (s.scrollTop < EDGE_PX) {
      if (a > 0) moveWindow(-1);
      else if (!list.foundOldest && !list.loadingOlder)
        void list.loadOlder().then(() => moveWindow(-1));
    }
    if (s.scrollHeight - s.scrollTop - s.clientHeight < EDGE_PX) {
      if (b < all.length - 1) moveWindow(1);
      else if (!list.foundNewest && !list.loadingNewer)
        void list.loadNewer().then(() => moveWindow(1));
    }
  };

  useLayoutEffect(() => {
    const s = scroller.current;
    const r = restore.current;
    restore.current = undefined;
    if (!s || !r) return;
    if (r.kind === "bottom") s.scrollTop = s.scrollHeight;
    else {
      const row = s.querySelector<HTMLElement>(`article[data-id="${r.id}"]`);
      if (!row) return;
      const top = s.getBoundingClientRect().top;
      if (r.kind === "show")
        s.scrollTop += row.getBoundingClientRect().top - top - Math.min(120, s.clientHeight / 4);
      else s.scrollTop += row.getBoundingClientRect().top - top - r.offset;
    }
    // A short list leaves no room to scroll: fetch further at once.
    if (s.scrollHeight <= s.clientHeight + EDGE_PX) onScroll();
  });

  // Rows seen are read: at least half on screen (or filling half of it), while the page is shown.
  useLayoutEffect(() => {
    const s = scroller.current;
    if (!s) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (document.visibilityState !== "visible") return;
        // One change of the unread counts for all the rows seen at once, not one per row.
        batch(() => {
          for (const e of entries) {
            if (!e.isIntersecting) continue;
            const half = (e.rootBounds?.height ?? 0) / 2;
            if (e.intersectionRatio >= 0.5 || e.intersectionRect.height >= half)
              sawMessage(Number((e.target as HTMLElement).dataset.id));
          }
        });
      },
      { root: s, threshold: [0, 0.5, 1] },
    );
    for (const row of s.querySelectorAll("article[data-id]")) observer.observe(row);
    return () => observer.disconnect();
  });

  const shown: Msg[] = [];
  // All messages leaves out muted topics (and muted channels' topics), as Zulip's does.
  const home = v.narrow.kind === "all";
  for (let i = iFirst; i <= iLast && i < ids.length; i++) {
    const m = store.get(ids[i]!);
    if (m && (!home || visibleInHome(m))) shown.push(m);
  }
  const muted = mutedUsers.value;
  const shownAnyway = revealed.value;
  const showPending = list.foundNewest && iLast >= ids.length - 1;
  const echoes = showPending ? pending.value.filter((p) => pendingMatches(p, v)) : [];

  feedControl.current = {
    selected: () => (selectedId.value === undefined ? undefined : store.get(selectedId.value)),
    move(delta) {
      const all = list.ids;
      const cur = selectedId.value;
      let at = cur === undefined ? all.length - 1 : lowerBound(all, cur);
      at = Math.max(0, Math.min(all.length - 1, at + delta));
      const id = all[at];
      if (id === undefined) return;
      selectedId.value = id;
      if (w.first !== undefined && id < w.first) moveWindow(-1);
      else if (w.last !== undefined && id > w.last) moveWindow(1);
      requestAnimationFrame(() =>
        scroller.current
          ?.querySelector(`article[data-id="${id}"]`)
          ?.scrollIntoView({ block: "nearest" }),
      );
    },
  };

  const selected = selectedId.value;
  const editingId = editing.value;
  const rows = [];
  let prevKey = "";
  let prevDay = "";
  let prev: Msg | undefined;
  for (const m of shown) {
    const key = recipientKey(m);
    const day = dayOf(m.timestamp);
    const newGroup = key !== prevKey || day !== prevDay;
    const showSender =
      newGroup ||
      prev?.sender_id !== m.sender_id ||
      m.timestamp - (prev?.timestamp ?? 0) > SAME_RUN_SECONDS;
    const collapsed = muted.has(m.sender_id) && !shownAnyway.has(m.id);
    const row = (
      <MessageRow
        key={m.id}
        m={m}
        showSender={showSender}
        unread={isUnread(m.id)}
        day={newGroup ? day : undefined}
        selected={selected === m.id}
        isEditing={editingId === m.id}
      />
    );
    rows.push(
      collapsed ? (
        <MutedRow key={m.id} m={m} day={newGroup ? day : undefined}>
          {row}
        </MutedRow>
      ) : (
        row
      ),
    );
    prevKey = key;
    prevDay = day;
    prev = collapsed ? undefined : m;
  }

  // The feed holds only articles (ARIA's feed pattern); what it says about its state is beside it.
  let echoKey = prevKey;
  let echoDay = prevDay;
  return (
    <div class="feed-scroller" ref={scroller} onScroll={onScroll} onClick={avatarClick}>
      {list.loaded && list.foundOldest && iFirst === 0 && (
        <p class="history-start">
          {ids.length
            ? t("This is the beginning of the conversation.")
            : t("No messages here yet.")}
        </p>
      )}
      {list.loadingOlder && <p class="loading">{t("Loading older messages…")}</p>}
      {!list.loaded && !list.error && <p class="loading">{t("Loading messages…")}</p>}
      {list.error && (
        <p class="error" role="alert">
          {list.error}
        </p>
      )}
      <div
        role="feed"
        aria-label={title}
        aria-busy={!list.loaded || list.loadingOlder || list.loadingNewer}
      >
        {rows}
        {echoes.map((p) => {
          const m = pendingAsMessage(p);
          const key = recipientKey(m);
          const day = dayOf(p.at / 1000);
          const showHeader = key !== echoKey || day !== echoDay;
          echoKey = key;
          echoDay = day;
          return <PendingRow key={p.localId} p={p} m={m} day={showHeader ? day : undefined} />;
        })}
      </div>
      {list.loadingNewer && <p class="loading">{t("Loading newer messages…")}</p>}
    </div>
  );
}

/** A click on a sender's avatar opens their card (the name beside it is the keyboard's way). */
function avatarClick(e: MouseEvent) {
  const el = e.target as HTMLElement;
  if (!el.closest(".gutter .avatar")) return;
  const id = Number(el.closest<HTMLElement>("article[data-id]")?.dataset.id);
  const m = Number.isInteger(id) ? store.get(id) : undefined;
  if (m && !mutedUsers.value.has(m.sender_id)) openUserCard(m.sender_id);
}

/** A message not yet sent, as the feed's rules (narrows, headers) see it. */
function pendingAsMessage(p: Pending): Msg {
  const to = p.target;
  return {
    type: to.kind === "stream" ? "stream" : "private",
    stream_id: to.kind === "stream" ? to.streamId : undefined,
    subject: to.kind === "stream" ? to.topic : "",
    display_recipient:
      to.kind === "dm"
        ? [...new Set([...to.userIds, me.value.id])].map((id) => ({
            id,
            full_name: users.value.get(id)?.full_name ?? "",
          }))
        : (subscriptions.value.get(to.streamId)?.name ?? ""),
    flags: ["read"],
  } as unknown as Msg;
}

function pendingMatches(p: Pending, v: View): boolean {
  return matches(v.narrow, pendingAsMessage(p), me.value.id) ?? false;
}

function PendingRow({ p, m, day }: { p: Pending; m: Msg; day: string | undefined }) {
  const time = timeOfDay(p.at / 1000);
  return (
    <article aria-label={`${me.value.fullName}, ${time}`} data-local-id={p.localId}>
      {day !== undefined && <RecipientHeader m={m} day={day} />}
      <div class={`msg first pending ${p.state}`}>
        <div class="gutter">
          <Avatar
            userId={me.value.id}
            name={me.value.fullName}
            url={users.value.get(me.value.id)?.avatar_url ?? undefined}
          />
        </div>
        <div class="body">
          <div class="meta">
            <span class="sender">{me.value.fullName}</span>
            <time>{time}</time>
            {p.state === "failed" ? (
              <span class="status">{t("Not sent")}</span>
            ) : (
              <span class="status">{t("Sending…")}</span>
            )}
          </div>
          <div class="content">
            {p.content.split("\n").map((line, i) => (
              <p key={i}>{line}</p>
            ))}
          </div>
          {p.state === "failed" && (
            <div class="failed" role="alert">
              <span>{p.error ?? t("The message could not be sent.")}</span>
              <button type="button" onClick={() => retrySend(p.localId)}>
                {t("Retry")}
              </button>
              <button type="button" onClick={() => discardSend(p.localId)}>
                {t("Discard")}
              </button>
            </div>
          )}
        </div>
      </div>
    </article>
  );
}

export function feedKey(v: View): string {
  return `${narrowKey(v.narrow)}|${v.near ?? ""}`;
}

export { compose };
