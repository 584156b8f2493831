/**
 * The bar over a run of messages of one conversation, as Zulip groups them: the channel and the
 * topic (each a link to its view) with its followed/muted icon and its actions menu, or the
 * direct-message conversation, and the day. In search results the topic shows the server's
 * highlighting of its matches (`match_subject`), as Zulip's does.
 */
import { hashOf } from "../narrow.ts";
import { displayTopic, me, names, subscriptions, users } from "../state/model.ts";
import type { Msg } from "../types.ts";
import { t } from "../i18n.ts";
import { TopicIcon, TopicMenu } from "./TopicMenu.tsx";
import { topicMatchHtml } from "./content.ts";

export function RecipientHeader({ m, day }: { m: Msg; day: string }) {
  if (m.type === "stream" && m.stream_id !== undefined) {
    const sub = subscriptions.value.get(m.stream_id);
    const channel =
      sub?.name ?? (typeof m.display_recipient === "string" ? m.display_recipient : t("unknown"));
    const matched = m.subject === "" ? undefined : topicMatchHtml(m);
    return (
      <div class="recipient" style={{ borderLeftColor: sub?.color ?? "#c2c2c2" }}>
        <a
          href={hashOf({ narrow: { kind: "channel", streamId: m.stream_id } }, names)}
          class="channel"
        >
          #{channel}
        </a>
        <span aria-hidden="true"> › </span>
        <a
          href={hashOf(
            { narrow: { kind: "topic", streamId: m.stream_id, topic: m.subject } },
            names,
          )}
          class={m.subject === "" ? "topic empty" : "topic"}
          dangerouslySetInnerHTML={matched === undefined ? undefined : { __html: matched }}
        >
          {matched === undefined ? displayTopic(m.subject) : undefined}
        </a>
        <TopicIcon streamId={m.stream_id} topic={m.subject} />
        <TopicMenu streamId={m.stream_id} topic={m.subject} />
        <span class="day">{day}</span>
      </div>
    );
  }
  const members = Array.isArray(m.display_recipient) ? m.display_recipient : [];
  const others = members.filter((u) => u.id !== me.value.id);
  const label = others.length
    ? t("You and {names}", {
        names: others.map((u) => users.value.get(u.id)?.full_name ?? u.full_name).join(", "),
      })
    : t("You (notes to self)");
  return (
    <div class="recipient dm">
      <a
        href={hashOf(
          {
            narrow: {
              kind: "dm",
              userIds: others.length ? others.map((u) => u.id) : [me.value.id],
            },
          },
          names,
        )}
      >
        {label}
      </a>
      <span class="day">{day}</span>
    </div>
  );
}
