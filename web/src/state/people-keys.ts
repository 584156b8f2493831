/**
 * Zulip's shortcuts of this part: Shift+M (`M`) mutes or unmutes the selected message's topic,
 * `w` focuses "Filter people" in the buddy list.
 */
import { bindKey } from "../keys.ts";
import { feedControl } from "../ui/Feed.tsx";
import { toggleTopicMute } from "./user-topics.ts";

bindKey("M", () => {
  const m = feedControl.current?.selected();
  if (m?.type !== "stream" || m.stream_id === undefined) return false;
  void toggleTopicMute(m.stream_id, m.subject).catch(() => {});
});

bindKey("w", () => {
  const box = document.querySelector<HTMLInputElement>(".buddy-filter");
  if (!box || box.offsetParent === null) return false;
  box.focus();
});
