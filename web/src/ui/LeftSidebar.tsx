/**
 * The left sidebar: the views (All messages, Mentions, Starred), my channels with their unread
 * counts, each with its topics (the channel being viewed: its recent topics; the others: the
 * most recent few with unread messages), most recent first, and the direct-message conversations.
 */
import { useEffect, useState } from "preact/hooks";
import { hashOf, narrowKey, sortedIds, type Narrow } from "../narrow.ts";
import { displayTopic, me, names, recentDms, subscriptions, users } from "../state/model.ts";
import { loadTopics, sortedTopics, topics } from "../state/topics.ts";
import { counts } from "../state/unread.ts";
import { t } from "../i18n.ts";
import { page, pageHash, view, type PageName } from "../state/view.ts";
import { preloadPage } from "./PageHost.tsx";
import { TopicIcon, TopicMenu } from "./TopicMenu.tsx";

/** Topics listed under the channel being viewed before "more topics". */
const TOPICS_SHOWN = 8;
/**
 * Unread topics listed under each other channel, the most recent first. Without a bound, a user
 * with many unread messages had every unread topic of every channel in the DOM (17,000 topics,
 * 50,000 elements in the populate-scale organization), which every view change renders again.
 */
const UNREAD_TOPICS_SHOWN = 5;
const DMS_SHOWN = 20;

function SidebarLink({
  narrow,
  name,
  count,
  children,
}: {
  narrow: Narrow;
  name: string;
  count: number;
  children?: preact.ComponentChildren;
}) {
  const current = !page.value && narrowKey(view.value.narrow) === narrowKey(narrow);
  return (
    <a
      href={hashOf({ narrow }, names)}
      aria-label={count > 0 ? `${name}, ${count} unread` : name}
      aria-current={current ? "page" : undefined}
      class={current ? "current" : undefined}
    >
      {children}
      <span class="name">{name}</span>
      {/* The space lets the text seen ("Verona 3") read as part of the name heard. */}
      {count > 0 && " "}
      {count > 0 && <span class="count">{count}</span>}
    </a>
  );
}

/** A link to a page (Inbox, Recent conversations, Drafts...), its chunk fetched on hover. */
function PageLink({ name, label, count = 0 }: { name: PageName; label: string; count?: number }) {
  const current = page.value?.name === name;
  return (
    <li>
      <a
        href={pageHash({ name, section: "" })}
        aria-label={count > 0 ? `${label}, ${count} unread` : label}
        aria-current={current ? "page" : undefined}
        class={current ? "current" : undefined}
        onMouseEnter={() => void preloadPage(name).catch(() => {})}
      >
        <span class="name">{label}</span>
        {count > 0 && " "}
        {count > 0 && <span class="count">{count}</span>}
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

export function LeftSidebar() {
  const c = counts.value;
  const v = view.value.narrow;
  const activeStream = v.kind === "channel" || v.kind === "topic" ? v.streamId : undefined;
  useEffect(() => {
    if (activeStream !== undefined) void loadTopics(activeStream);
  }, [activeStream]);
  void topics.value;
  const [filter, setFilter] = useState("");
  const wanted = filter.trim().toLowerCase();
  const subs = [...subscriptions.value.values()]
    .filter((s) => !wanted || s.name.toLowerCase().includes(wanted))
    .sort((a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || a.name.localeCompare(b.name));
  const dms = [...recentDms.value.entries()]
    .sort((a, b) => b[1].maxId - a[1].maxId)
    .slice(0, DMS_SHOWN);
  const myId = me.value.id;
  return (
    <div class="left-sidebar">
      <nav aria-label="Views">
        <ul>
          <PageLink name="inbox" label={t("Inbox")} count={c.total} />
          <PageLink name="recent" label={t("Recent conversations")} />
          <Item narrow={{ kind: "all" }} name="All messages" count={c.total} />
          <Item narrow={{ kind: "mentioned" }} name="Mentions" count={c.mentions} />
          <Item narrow={{ kind: "starred" }} name="Starred messages" count={0} />
          <PageLink name="drafts" label={t("Drafts")} />
          <PageLink name="scheduled" label={t("Scheduled messages")} />
        </ul>
      </nav>
      <nav aria-label="Channels">
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
        <ul>
          {subs.map((s) => {
            const unreadTopics = c.byTopic.get(s.stream_id);
            let shown: { name: string; count: number }[];
            if (s.stream_id === activeStream) {
              const recent = sortedTopics(s.stream_id).map((t) => ({
                name: t.name,
                count: unreadTopics?.get(t.name.toLowerCase())?.count ?? 0,
              }));
              // The topic being viewed is listed even when older than those shown.
              const viewing = v.kind === "topic" ? v.topic.toLowerCase() : undefined;
              shown = recent.filter(
                (t, i) => i < TOPICS_SHOWN || t.count > 0 || t.name.toLowerCase() === viewing,
              );
              if (
                viewing !== undefined &&
                !recent.some((t) => t.name.toLowerCase() === viewing) &&
                v.kind === "topic"
              )
                shown.unshift({ name: v.topic, count: unreadTopics?.get(viewing)?.count ?? 0 });
            } else
              shown = [...(unreadTopics?.values() ?? [])]
                .sort((a, b) => b.maxId - a.maxId)
                .slice(0, UNREAD_TOPICS_SHOWN)
                .map((t) => ({ name: t.topic, count: t.count }));
            return (
              <li key={s.stream_id} class="channel-group">
                <SidebarLink
                  narrow={{ kind: "channel", streamId: s.stream_id }}
                  name={s.name}
                  count={c.byStream.get(s.stream_id) ?? 0}
                >
                  <span class="swatch" style={{ background: s.color }} aria-hidden="true" />
                </SidebarLink>
                {shown.length > 0 && (
                  <ul class="topics" aria-label={`Topics in ${s.name}`}>
                    {shown.map((t) => (
                      <li key={t.name} class="topic">
                        <SidebarLink
                          narrow={{ kind: "topic", streamId: s.stream_id, topic: t.name }}
                          name={displayTopic(t.name)}
                          count={t.count}
                        />
                        <TopicIcon streamId={s.stream_id} topic={t.name} />
                        <TopicMenu streamId={s.stream_id} topic={t.name} />
                      </li>
                    ))}
                  </ul>
                )}
              </li>
            );
          })}
        </ul>
      </nav>
      <nav aria-label="Direct messages">
        <h2>Direct messages</h2>
        <ul>
          {dms.map(([key, d]) => {
            const others = d.userIds.filter((id) => id !== myId);
            const name = others.length
              ? others.map((id) => users.value.get(id)?.full_name ?? "Unknown user").join(", ")
              : `${me.value.fullName} (you)`;
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
          {dms.length === 0 && <li class="empty">No direct messages yet.</li>}
        </ul>
      </nav>
    </div>
  );
}
