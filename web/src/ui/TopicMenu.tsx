/**
 * A topic's actions (Zulip's topic popover): follow or unfollow, mute or unmute ("Unmute topic"
 * only, in a muted channel, where a topic is muted unless unmuted), and the icons that say a
 * topic is followed or muted, beside its name in the sidebar and the recipient header.
 */
import { t } from "../i18n.ts";
import {
  channelMuted,
  FOLLOWED,
  INHERIT,
  isTopicMuted,
  MUTED,
  setTopicPolicy,
  topicPolicy,
  UNMUTED,
  userTopics,
} from "../state/user-topics.ts";
import { Menu, type MenuItem } from "./Menu.tsx";
import "./TopicMenu.css";

export function topicMenuItems(streamId: number, topic: string): MenuItem[] {
  const policy = topicPolicy(streamId, topic);
  const mutedChannel = channelMuted(streamId);
  const items: MenuItem[] = [];
  const run = (p: 0 | 1 | 2 | 3) => () => void setTopicPolicy(streamId, topic, p).catch(() => {});
  items.push(
    policy === FOLLOWED
      ? { label: t("Unfollow topic"), onSelect: run(INHERIT) }
      : { label: t("Follow topic"), onSelect: run(FOLLOWED) },
  );
  if (isTopicMuted(streamId, topic))
    items.push({ label: t("Unmute topic"), onSelect: run(mutedChannel ? UNMUTED : INHERIT) });
  else if (!mutedChannel || policy === UNMUTED)
    items.push({ label: t("Mute topic"), onSelect: run(MUTED) });
  return items;
}

export function TopicMenu({ streamId, topic }: { streamId: number; topic: string }) {
  return (
    <Menu
      label={t("Topic actions")}
      className="topic-menu"
      button={<span aria-hidden="true">⋮</span>}
      items={() => topicMenuItems(streamId, topic)}
    />
  );
}

/** The followed or muted icon, with its words for those who cannot see it. */
export function TopicIcon({ streamId, topic }: { streamId: number; topic: string }) {
  void userTopics.value;
  if (topicPolicy(streamId, topic) === FOLLOWED)
    return (
      <span
        class="topic-icon followed"
        role="img"
        aria-label={t("Followed topic")}
        title={t("Followed topic")}
      >
        ◉
      </span>
    );
  if (isTopicMuted(streamId, topic))
    return (
      <span
        class="topic-icon muted"
        role="img"
        aria-label={t("Muted topic")}
        title={t("Muted topic")}
      >
        🔇︎
      </span>
    );
  return null;
}
