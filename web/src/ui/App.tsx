/**
 * The screen: a top bar (organization, search, me, Log out), the left sidebar (views, channels
 * and topics, direct messages), the feed of the view with the typing notice and the compose box,
 * and the people with their presence on the right. The title carries the unread count, as
 * Zulip's does ("(12) …"), which Zulip's desktop app turns into its badge.
 */
import { useEffect, useState } from "preact/hooks";
import { csrfToken } from "../api.ts";
import { t } from "../i18n.ts";
import { encodeHashComponent, narrowTitle } from "../narrow.ts";
import { me, names, realm } from "../state/model.ts";
import { registrations } from "../state/events.ts";
import { counts } from "../state/unread.ts";
import { page, view, type PageName } from "../state/view.ts";
import { Banner } from "./Banner.tsx";
import { Compose, TypingNotice } from "./Compose.tsx";
import { Feed, feedKey } from "./Feed.tsx";
import { LeftSidebar } from "./LeftSidebar.tsx";
import { PageHost } from "./PageHost.tsx";
import { RightSidebar } from "./RightSidebar.tsx";

declare global {
  interface Window {
    electron_bridge?: { send_event?: (name: string, ...args: unknown[]) => unknown };
  }
}

function Search() {
  const n = view.value.narrow;
  const [q, setQ] = useState(n.kind === "search" ? n.query : "");
  useEffect(() => setQ(n.kind === "search" ? n.query : ""), [n]);
  return (
    <form
      role="search"
      class="search"
      onSubmit={(e) => {
        e.preventDefault();
        const text = q.trim();
        if (text) location.hash = `#narrow/search/${encodeHashComponent(text)}`;
        (document.activeElement as HTMLElement | null)?.blur();
      }}
    >
      <input
        type="search"
        aria-label="Search"
        placeholder="Search"
        value={q}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
    </form>
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

export function App({ ready }: { ready: boolean }) {
  const v = view.value;
  const p = page.value;
  const total = counts.value.total;
  void ready;
  const title = p ? pageTitle(p.name) : narrowTitle(v.narrow, names);
  useEffect(() => {
    document.title = `${total > 0 ? `(${total}) ` : ""}${title} - ${realm.value.name || "Zulip"}`;
    window.electron_bridge?.send_event?.("total_unread_count", total);
  }, [total, title, realm.value.name]);
  return (
    <div class="app">
      <header class="top">
        <a class="realm" href="#feed">
          <img src="/static/images/realm-icon.svg" alt="" width={24} height={24} />
          <span>{realm.value.name}</span>
        </a>
        <Search />
        <div class="me">
          <span>{me.value.fullName}</span>
          {me.value.isAdmin && (
            <a href="#organization/organization-profile">{t("Organization settings")}</a>
          )}
          <form method="post" action="/accounts/logout/">
            <input type="hidden" name="csrfmiddlewaretoken" value={csrfToken} />
            <button type="submit">Log out</button>
          </form>
        </div>
      </header>
      <LeftSidebar />
      <main class="middle">
        <Banner />
        {p && <PageHost page={p} />}
        {/* The feed stays mounted under a page: going back to it shows it as it was. */}
        <div class="feed-area" hidden={p !== undefined}>
          <Feed key={`${feedKey(v)}|${registrations.value}`} v={v} />
          <TypingNotice />
          {ready && <Compose />}
        </div>
      </main>
      <RightSidebar />
    </div>
  );
}
