/**
 * The screen: a top bar (organization, search, me, Log out), the left sidebar (views, channels
 * and topics, direct messages), the feed of the view with the typing notice and the compose box,
 * and the people with their presence on the right. The title carries the unread count, as
 * Zulip's does ("(12) …"), which Zulip's desktop app turns into its badge.
 */
import { signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { csrfToken } from "../api.ts";
import { bindKey } from "../keys.ts";
import { t } from "../i18n.ts";
import { narrowTitle } from "../narrow.ts";
import { me, names, realm } from "../state/model.ts";
import { registrations } from "../state/events.ts";
import { counts } from "../state/unread.ts";
import { page, view, type PageName } from "../state/view.ts";
import { Banner } from "./Banner.tsx";
import { Compose, TypingNotice } from "./Compose.tsx";
import { Feed, feedKey } from "./Feed.tsx";
import { LeftSidebar } from "./LeftSidebar.tsx";
import { ActionDialogs } from "./MessageActions.tsx";
import { PageHost } from "./PageHost.tsx";
import { RightSidebar } from "./RightSidebar.tsx";
import { NotifyBanner } from "./NotifyBanner.tsx";
import { StatusButton } from "./StatusDialog.tsx";
import { UserCardHost } from "./UserCard.tsx";
import { KeyboardHelp } from "./KeyboardHelp.tsx";
import "./Layout.css";
import { Search } from "./Search.tsx";

declare global {
  interface Window {
    electron_bridge?: { send_event?: (name: string, ...args: unknown[]) => unknown };
  }
}

/**
 * The sidebar shown over the middle column on a small screen (Layout.css: both sidebars at
 * ≤ 600 px, the people at ≤ 900 px), from the top bar's buttons; following a link, Esc, or a
 * click beside it closes it.
 */
const drawer = signal<"left" | "right" | undefined>(undefined);
window.addEventListener("hashchange", () => (drawer.value = undefined));
window.addEventListener(
  "open-drawer",
  (e) => (drawer.value = (e as CustomEvent<"left" | "right">).detail),
);
bindKey("Escape", () => {
  if (!drawer.value) return false;
  drawer.value = undefined;
});

function DrawerButton({ side, label }: { side: "left" | "right"; label: string }) {
  const open = drawer.value === side;
  return (
    <button
      type="button"
      class={`drawer-button ${side}`}
      aria-label={label}
      aria-expanded={open}
      onClick={() => (drawer.value = open ? undefined : side)}
    >
      <svg viewBox="0 0 20 20" width="18" height="18" aria-hidden="true">
        {side === "left" ? (
          <path d="M3 5h14M3 10h14M3 15h14" stroke="currentColor" stroke-width="2" fill="none" />
        ) : (
          <path
            d="M10 10a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zm-6 7c0-3 2.7-5 6-5s6 2 6 5z"
            fill="currentColor"
          />
        )}
      </svg>
    </button>
  );
}

/** The title's first part while a page is shown (Zulip's words for its views). */
function pageTitle(name: PageName): string {
  const titles: Record<PageName, string> = {
    inbox: t("Inbox"),
    recent: t("Recent conversations"),
    channels: t("Channels"),
    drafts: t("Drafts"),
    scheduled: t("Scheduled messages"),
    settings: t("Settings"),
    organization: t("Organization settings"),
    user: t("User profile"),
  };
  return titles[name];
}

/**
 * Whether the feed under a page has started. A session that opens on a page (the Inbox, the
 * default home view) fetches and draws the feed below it only once the page is drawn and a
 * moment has passed, so that the first screen waits for neither (250 messages, 6,000 elements).
 */
const feedStarted = signal(false);
const FEED_DELAY_MS = 1000;
/**
 * Opened without a fragment, the app learns its home view from the registration: until then no
 * feed is drawn, since a feed in view marks its messages read, and the home view may be a page.
 */
const openedBare = location.hash === "" || location.hash === "#";

export function App({ ready }: { ready: boolean }) {
  const v = view.value;
  const p = page.value;
  useEffect(() => {
    if (feedStarted.value || (openedBare && !ready)) return;
    if (p === undefined) {
      feedStarted.value = true;
      return;
    }
    const timer = setTimeout(() => (feedStarted.value = true), FEED_DELAY_MS);
    return () => clearTimeout(timer);
  }, [p, ready]);
  const total = counts.value.total;
  const title = p ? pageTitle(p.name) : narrowTitle(v.narrow, names);
  useEffect(() => {
    document.title = `${total > 0 ? `(${total}) ` : ""}${title} - ${realm.value.name || "Zulip"}`;
    window.electron_bridge?.send_event?.("total_unread_count", total);
  }, [total, title, realm.value.name]);
  return (
    <div class="app" data-drawer={drawer.value}>
      <header class="top">
        <DrawerButton side="left" label={t("Show channels")} />
        <a class="realm" href="#feed">
          <img src="/static/images/realm-icon.svg" alt="" width={24} height={24} />
          <span>{realm.value.name}</span>
        </a>
        <Search />
        <DrawerButton side="right" label={t("Show people")} />
        <div class="me">
          <StatusButton />
          <span>{me.value.fullName}</span>
          <a class="settings-link" href="#settings/profile" aria-label={t("Settings")}>
            ⚙
          </a>
          {me.value.isAdmin && (
            <a href="#organization/organization-profile">{t("Organization settings")}</a>
          )}
          <form method="post" action="/accounts/logout/">
            <input type="hidden" name="csrfmiddlewaretoken" value={csrfToken} />
            <button type="submit">{t("Log out")}</button>
          </form>
        </div>
      </header>
      <LeftSidebar />
      <main class="middle">
        <Banner />
        <NotifyBanner />
        {p && <PageHost page={p} />}
        {/* The feed stays mounted under a page: going back to it shows it as it was. */}
        <div class="feed-area" hidden={p !== undefined}>
          {feedStarted.value && <Feed key={`${feedKey(v)}|${registrations.value}`} v={v} />}
          <TypingNotice />
          {ready && <Compose />}
        </div>
      </main>
      <RightSidebar />
      <UserCardHost />
      {drawer.value && (
        <div
          class="drawer-backdrop"
          aria-hidden="true"
          onClick={() => (drawer.value = undefined)}
        />
      )}
      <KeyboardHelp />
      <ActionDialogs />
    </div>
  );
}
