/**
 * The left sidebar, as Zulip's: the views (Inbox, Recent conversations, All messages, Mentions,
 * Starred, Drafts and Scheduled messages with their counts), my channels with their unread
 * counts, and the direct-message conversations (not those with a muted user).
 *
 * Topics are listed only under the channel being viewed (Zulip's topic_list_data.ts: its 8 most
 * recent topics, then those with unread messages up to 12, the topic being viewed always, and
 * "More topics" for the rest); the Inbox lists the unread ones of every channel. So a channel's
 * row is one <li>, its link, its name and its count (4 elements): 500 subscribed channels with
 * unread messages everywhere are ~2,000 elements, where listing every channel's unread topics
 * (each with its menu button) made 37,000. (Not `content-visibility: auto` on the rows: Chromium
 * leaves the rows out of view out of the accessibility tree, where screen readers search.)
 */
import { computed } from "@preact/signals";
import { Component } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { hashOf, narrowKey, sortedIds, type Narrow } from "../narrow.ts";
import { displayTopic, me, names, recentDms, subscriptions, users } from "../state/model.ts";
import { drafts } from "../state/drafts.ts";
import { mutedUsers, withMutedUser } from "../state/muted-users.ts";
import { scheduled } from "../state/scheduled.ts";
import { loadTopics, sortedTopics, topics } from "../state/topics.ts";
import { counts } from "../state/unread.ts";
import { t } from "../i18n.ts";
import { page, pageHash, view, type PageName } from "../state/view.ts";
import { compareNames } from "./format.ts";
import { preloadPage } from "./PageHost.tsx";
import { TopicIcon, TopicMenu } from "./TopicMenu.tsx";
import "./LeftSidebar.css";

/** Topics listed under the channel being viewed before "More topics" (Zulip's max_topics). */
const TOPICS_SHOWN = 8;
/** With those having unread messages (Zulip's max_topics_with_unread). */
const TOPICS_WITH_UNREAD_SHOWN = 12;
const DMS_SHOWN = 20;

function unreadName(name: string, count: number): string {
  return count > 0 ? t("{name}, {count} unread", { name, count }) : name;
}

function Count({ count }: { count: number }) {
  // The space lets the text seen ("Verona 3") read as part of the name heard.
  return count > 0 ? (
    <>
      {" "}
      <span class="count">{count}</span>
    </>
  ) : null;
}

/** The narrow in view (none while a page is), as narrowKey writes it. */
const currentKey = computed(() => (page.value ? undefined : narrowKey(view.value.narrow)));
/** The channel in view (or whose topic is), for its topics and its row's highlight. */
const activeStreamId = computed(() => {
  const v = view.value.narrow;
  return v.kind === "channel" || v.kind === "topic" ? v.streamId : undefined;
});

interface LinkProps {
  narrow: Narrow;
  name: string;
  count: number;
  swatch?: string;
}

/**
 * A link renders again only when what it shows changed: the sidebar renders again at every change
 * of the unread counts (each message read), and its 500 channels' links need not.
 */
class SidebarLink extends Component<LinkProps> {
  override shouldComponentUpdate(next: LinkProps) {
    const a = this.props;
    return !(
      a.name === next.name &&
      a.count === next.count &&
      a.swatch === next.swatch &&
      narrowKey(a.narrow) === narrowKey(next.narrow)
    );
  }
  override render() {
    return <SidebarLinkView {...this.props} />;
  }
}

function SidebarLinkView({ narrow, name, count, swatch }: LinkProps) {
  // A link renders again only when it becomes (or stops being) the current one: not all 500
  // channels' links on every narrow switch.
  const key = narrowKey(narrow);
  const isCurrent = useMemo(() => computed(() => currentKey.value === key), [key]);
  const current = isCurrent.value;
  return (
    <a
      href={hashOf({ narrow }, names)}
      aria-label={unreadName(name, count)}
      aria-current={current ? "page" : undefined}
      class={current ? "current" : undefined}
      style={swatch ? { "--swatch": swatch } : undefined}
    >
      <span class="name">{name}</span>
      <Count count={count} />
    </a>
  );
}

/** A link to a page (Inbox, Recent conversations, Drafts...), its chunk fetched on hover. */
function PageLink({
  name,
  label,
  count = 0,
  unread = true,
}: {
  name: PageName;
  label: string;
  count?: number;
  /** Whether the count is of unread messages (Inbox), or of things (Drafts 3). */
  unread?: boolean;
}) {
  const current = page.value?.name === name;
  return (
    <li>
      <a
        href={pageHash({ name, section: "" })}
        aria-label={
          count <= 0
            ? label
            : unread
              ? unreadName(label, count)
              : t("{name}, {count}", { name: label, count })
        }
        aria-current={current ? "page" : undefined}
        class={current ? "current" : undefined}
        onMouseEnter={() => void preloadPage(name).catch(() => {})}
      >
        <span class="name">{label}</span>
        <Count count={count} />
      </a>
    </li>
  );
}

function Item(props: { narrow: Narrow; name: string; count: number; className?: string }) {
  return (
    <li class={props.className}>
      <SidebarLink {...props} />
    </li>
  );
}

/**
 * The topics of the channel being viewed (Zulip's choice): the most recent first, the first
 * TOPICS_SHOWN, then those with unread messages up to TOPICS_WITH_UNREAD_SHOWN, and the one being
 * viewed; "More topics" (with the unread messages it hides) shows them all.
 */
function ChannelTopics({ streamId, name }: { streamId: number; name: string }) {
  const [more, setMore] = useState(false);
  useEffect(() => setMore(false), [streamId]);
  void topics.value;
  const v = view.value.narrow;
  const viewing = v.kind === "topic" && v.streamId === streamId ? v.topic : undefined;
  const unread = counts.value.byTopic.get(streamId);
  const countOf = (topic: string) => unread?.get(topic.toLowerCase())?.count ?? 0;
  const all = sortedTopics(streamId).map((topic) => topic.name);
  if (viewing !== undefined && !all.some((n) => n.toLowerCase() === viewing.toLowerCase()))
    all.unshift(viewing);
  let shown: string[] = all;
  let hiddenUnread = 0;
  let hidden = 0;
  if (!more) {
    shown = [];
    for (const [i, topic] of all.entries()) {
      const count = countOf(topic);
      if (
        i < TOPICS_SHOWN ||
        (count > 0 && shown.length < TOPICS_WITH_UNREAD_SHOWN) ||
        topic.toLowerCase() === viewing?.toLowerCase()
      )
        shown.push(topic);
      else {
        hidden++;
        hiddenUnread += count;
      }
    }
  }
  if (all.length === 0) return null;
  return (
    <ul class="topics" aria-label={t("Topics in {channel}", { channel: name })}>
      {shown.map((topic) => (
        <li key={topic} class="topic">
          <SidebarLink
            narrow={{ kind: "topic", streamId, topic }}
            name={displayTopic(topic)}
            count={countOf(topic)}
          />
          <TopicIcon streamId={streamId} topic={topic} />
          <TopicMenu streamId={streamId} topic={topic} />
        </li>
      ))}
      {(hidden > 0 || more) && (
        <li class="more-topics">
          <button
            type="button"
            aria-expanded={more}
            aria-label={more ? t("Fewer topics") : unreadName(t("More topics"), hiddenUnread)}
            onClick={() => setMore(!more)}
          >
            {more ? t("Fewer topics") : t("More topics")}
            {!more && <Count count={hiddenUnread} />}
          </button>
        </li>
      )}
    </ul>
  );
}

export function LeftSidebar() {
  const c = counts.value;
  const activeStream = activeStreamId.value;
  useEffect(() => {
    if (activeStream !== undefined) void loadTopics(activeStream);
  }, [activeStream]);
  const [filter, setFilter] = useState("");
  const wanted = filter.trim().toLowerCase();
  const allSubs = subscriptions.value;
  const subs = useMemo(
    () =>
      [...allSubs.values()]
        .filter((s) => !wanted || s.name.toLowerCase().includes(wanted))
        .sort(
          (a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || compareNames(a.name, b.name),
        ),
    [allSubs, wanted],
  );
  void mutedUsers.value;
  const dms = [...recentDms.value.entries()]
    .filter(([, d]) => !withMutedUser(d.userIds))
    .sort((a, b) => b[1].maxId - a[1].maxId)
    .slice(0, DMS_SHOWN);
  const myId = me.value.id;
  return (
    <div class="left-sidebar">
      <nav aria-label={t("Views")}>
        <ul>
          <PageLink name="inbox" label={t("Inbox")} count={c.total} />
          <PageLink name="recent" label={t("Recent conversations")} />
          <Item narrow={{ kind: "all" }} name={t("All messages")} count={c.total} />
          <Item narrow={{ kind: "mentioned" }} name={t("Mentions")} count={c.mentions} />
          <Item narrow={{ kind: "starred" }} name={t("Starred messages")} count={0} />
          <PageLink name="drafts" label={t("Drafts")} count={drafts.value.size} unread={false} />
          <PageLink
            name="scheduled"
            label={t("Scheduled messages")}
            count={scheduled.value.size}
            unread={false}
          />
        </ul>
      </nav>
      <nav aria-label={t("Channels")}>
        <h2>
          <a href={pageHash({ name: "channels", section: "all" })}>{t("Channels")}</a>
        </h2>
        {/* `q` focuses it (keys.ts). */}
        <input
          type="search"
          class="channel-filter"
          data-filter="channels"
          aria-label={t("Filter channels")}
          placeholder={t("Filter channels")}
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              setFilter("");
              e.currentTarget.blur();
            }
          }}
        />
        <ul class="channels">
          {subs.map((s) => (
            <li key={s.stream_id} class={s.stream_id === activeStream ? "active" : undefined}>
              <SidebarLink
                narrow={{ kind: "channel", streamId: s.stream_id }}
                name={s.name}
                count={c.byStream.get(s.stream_id) ?? 0}
                swatch={s.color}
              />
              {s.stream_id === activeStream && (
                <ChannelTopics streamId={s.stream_id} name={s.name} />
              )}
            </li>
          ))}
        </ul>
      </nav>
      <nav aria-label={t("Direct messages")}>
        <h2>{t("Direct messages")}</h2>
        <ul>
          {dms.map(([key, d]) => {
            const others = d.userIds.filter((id) => id !== myId);
            const name = others.length
              ? others.map((id) => users.value.get(id)?.full_name ?? t("Unknown user")).join(", ")
              : t("{name} (you)", { name: me.value.fullName });
            return (
              <Item
                key={key}
                narrow={{ kind: "dm", userIds: others.length ? others : [myId] }}
                name={name}
                count={c.byDm.get(sortedIds(d.userIds).join(",")) ?? 0}
                className="dm"
              />
            );
          })}
          {dms.length === 0 && <li class="empty">{t("No direct messages yet.")}</li>}
        </ul>
      </nav>
    </div>
  );
}
