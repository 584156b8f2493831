/**
 * The channel browser (`#channels/subscribed`, `#channels/all`, `#channels/new`; Zulip's
 * "Channel settings" overlay): every channel the user may see (state/channels.ts), each with its
 * privacy, name, description and subscriber count, and Subscribe / Unsubscribe, which the
 * subscription event then shows; a filter; and the form that creates a channel, offering only
 * the kinds of channel the user may create (the organization's group settings) and showing the
 * server's error as it words it.
 *
 * Fast with many channels: the list is windowed (only the rows in view are in the DOM, at a fixed
 * row height), sorted once per change of the channels, and nothing is fetched per row.
 */
import { useMemo, useRef, useState, useEffect } from "preact/hooks";
import { api, call, errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { channels, creation, type Channel } from "../state/channels.ts";
import { hashOf } from "../narrow.ts";
import { me, names, subscriptions } from "../state/model.ts";
import { userInGroupSetting } from "../state/permissions.ts";
import { go, goPage } from "../state/view.ts";
import type { PageProps } from "./PageHost.tsx";
import "./PageFilter.css";
import "./ChannelBrowser.css";

/** Each row's height in pixels (fixed, so that the window is arithmetic). */
const ROW = 64;
/** Rows drawn beyond the visible ones, above and below. */
const OVERSCAN = 6;

type Privacy = "public" | "private" | "web-public";

function privacyOf(c: Channel): Privacy {
  return c.is_web_public ? "web-public" : c.invite_only ? "private" : "public";
}

function PrivacyIcon({ c }: { c: Channel }) {
  const p = privacyOf(c);
  const label = p === "web-public" ? t("Web-public") : p === "private" ? t("Private") : t("Public");
  const glyph = p === "web-public" ? "🌐" : p === "private" ? "🔒" : "#";
  return (
    <span class={`channel-privacy ${p}`} role="img" aria-label={label} title={label}>
      {glyph}
    </span>
  );
}

function SubscribeButton({ c }: { c: Channel }) {
  const subscribed = subscriptions.value.has(c.stream_id);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  async function toggle() {
    setBusy(true);
    setError(undefined);
    try {
      if (subscribed)
        await call(api.DELETE("/users/me/subscriptions", { body: { subscriptions: [c.name] } }));
      else
        await call(
          api.POST("/users/me/subscriptions", { body: { subscriptions: [{ name: c.name }] } }),
        );
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      {error && (
        <span class="channel-error" role="alert">
          {error}
        </span>
      )}
      <button
        type="button"
        class={subscribed ? "channel-sub subscribed" : "channel-sub"}
        aria-label={
          subscribed
            ? t("Unsubscribe from {name}", { name: c.name })
            : t("Subscribe to {name}", { name: c.name })
        }
        disabled={busy}
        onClick={() => void toggle()}
      >
        {subscribed ? t("Unsubscribe") : t("Subscribe")}
      </button>
    </>
  );
}

function ChannelList({ list }: { list: Channel[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(800);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    setHeight(el.clientHeight || 800);
    const observer = new ResizeObserver(() => setHeight(el.clientHeight || 800));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    if (box.current) box.current.scrollTop = 0;
    setTop(0);
  }, [list]);
  const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const last = Math.min(list.length, Math.ceil((top + height) / ROW) + OVERSCAN);
  const shown = list.slice(first, last);
  return (
    <div
      class="channel-scroll"
      ref={box}
      onScroll={(e) => setTop(e.currentTarget.scrollTop)}
      tabIndex={-1}
    >
      <ul
        class="channel-list"
        aria-label={t("Channels")}
        style={{ height: `${list.length * ROW}px` }}
      >
        {shown.map((c, i) => {
          const count = c.subscriber_count;
          return (
            <li
              key={c.stream_id}
              class="channel-row"
              style={{ top: `${(first + i) * ROW}px`, height: `${ROW}px` }}
              aria-posinset={first + i + 1}
              aria-setsize={list.length}
            >
              <PrivacyIcon c={c} />
              <div class="channel-main">
                <a
                  class="channel-name"
                  href={hashOf({ narrow: { kind: "channel", streamId: c.stream_id } }, names)}
                >
                  {c.name}
                </a>
                <div
                  class="channel-description rendered_markdown"
                  // The server's rendering of the description (sanitized as messages are).
                  dangerouslySetInnerHTML={{ __html: c.rendered_description }}
                />
              </div>
              {count !== undefined && (
                <span
                  class="channel-count"
                  title={t("{count} subscribers", { count })}
                  aria-label={t("{count} subscribers", { count })}
                >
                  {count}
                </span>
              )}
              <SubscribeButton c={c} />
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function canCreate(kind: Privacy): boolean {
  const s = creation.value;
  const id = me.value.id;
  if (kind === "public") return userInGroupSetting(s.public, id);
  if (kind === "private") return userInGroupSetting(s.private, id);
  return s.webPublicAvailable && userInGroupSetting(s.webPublic, id);
}

function CreateForm() {
  const kinds = (["public", "private", "web-public"] as const).filter(canCreate);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [privacy, setPrivacy] = useState<Privacy>(kinds[0] ?? "public");
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  if (!kinds.length)
    return <p class="channel-note">{t("You do not have permission to create channels.")}</p>;
  const labels: Record<Privacy, [string, string]> = {
    "web-public": [
      t("Web-public"),
      t(
        "Organization members can join (guests must be invited by a subscriber); anyone on the Internet can view complete message history without creating an account",
      ),
    ],
    public: [
      t("Public"),
      t(
        "Organization members can join (guests must be invited by a subscriber); organization members can view complete message history without joining",
      ),
    ],
    private: [
      t("Private"),
      t(
        "Must be invited by a subscriber; new subscribers can only see messages sent after they join",
      ),
    ],
  };
  async function submit(e: Event) {
    e.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) {
      setError(t("Choose a name for the new channel."));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const { id } = await call(
        api.POST("/channels/create", {
          body: {
            name: trimmed,
            description,
            subscribers: [me.value.id],
            invite_only: privacy === "private",
            is_web_public: privacy === "web-public",
          },
        }),
      );
      go({ kind: "channel", streamId: id });
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="channel-create" onSubmit={(e) => void submit(e)} aria-label={t("Create channel")}>
      <h2>{t("Create channel")}</h2>
      <label>
        {t("Channel name")}
        <input
          type="text"
          class="page-field"
          value={name}
          maxLength={60}
          required
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <label>
        {t("Channel description")}
        <input
          type="text"
          class="page-field"
          value={description}
          maxLength={1024}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
      </label>
      <fieldset>
        <legend>{t("Who can access the channel?")}</legend>
        {kinds.map((k) => (
          <label key={k} class="channel-radio">
            <input
              type="radio"
              name="privacy"
              value={k}
              checked={privacy === k}
              onChange={() => setPrivacy(k)}
            />
            <span>
              <strong>{labels[k][0]}</strong>
              <span class="channel-hint">{labels[k][1]}</span>
            </span>
          </label>
        ))}
      </fieldset>
      {error && (
        <p class="channel-error" role="alert">
          {error}
        </p>
      )}
      <div class="channel-actions">
        <button type="button" onClick={() => goPage("channels", "subscribed")}>
          {t("Cancel")}
        </button>
        <button type="submit" class="primary" disabled={busy}>
          {t("Create")}
        </button>
      </div>
    </form>
  );
}

export default function ChannelBrowserPage({ section }: PageProps) {
  const tab = section === "all" || section === "new" ? section : "subscribed";
  const [filter, setFilter] = useState("");
  const all = channels.value;
  const subs = subscriptions.value;
  const sorted = useMemo(
    () => [...all.values()].sort((a, b) => a.name.localeCompare(b.name)),
    [all],
  );
  const list = useMemo(() => {
    const q = filter.trim().toLowerCase();
    return sorted.filter(
      (c) =>
        (tab !== "subscribed" || subs.has(c.stream_id)) &&
        (!q || c.name.toLowerCase().includes(q) || c.description.toLowerCase().includes(q)),
    );
    // The subscribed tab follows subscriptions; the others need not recompute for them.
  }, [sorted, filter, tab, tab === "subscribed" ? subs : undefined]);
  const canCreateAny = (["public", "private", "web-public"] as const).some(canCreate);
  const tabs: [string, string][] = [
    ["subscribed", t("Subscribed")],
    ["all", t("All channels")],
  ];
  return (
    <section class="page channel-browser" aria-label={t("Channels")}>
      <div class="channel-top">
        <h1>{t("Channels")}</h1>
        {canCreateAny && tab !== "new" && (
          <button type="button" class="primary" onClick={() => goPage("channels", "new")}>
            {t("Create channel")}
          </button>
        )}
      </div>
      {tab === "new" ? (
        <CreateForm />
      ) : (
        <>
          <div class="page-filter channel-bar">
            <div role="tablist" aria-label={t("Channels")} class="channel-tabs">
              {tabs.map(([key, label]) => (
                <button
                  key={key}
                  type="button"
                  class="page-toggle"
                  role="tab"
                  aria-selected={tab === key}
                  onClick={() => goPage("channels", key)}
                >
                  {label}
                </button>
              ))}
            </div>
            <input
              type="search"
              class="page-field"
              aria-label={t("Filter channels")}
              placeholder={t("Filter channels")}
              value={filter}
              onInput={(e) => setFilter(e.currentTarget.value)}
            />
          </div>
          {list.length === 0 ? (
            <p class="channel-note">
              {filter.trim()
                ? t("No channels match your filter.")
                : tab === "subscribed"
                  ? t("You are not subscribed to any channels.")
                  : t("There are no channels you can view in this organization.")}
            </p>
          ) : (
            <ChannelList list={list} />
          )}
        </>
      )}
    </section>
  );
}
