/**
 * Zulip's core keyboard shortcuts (help/keyboard-shortcuts.md): j/k and the arrows move the
 * selection, Enter or r replies to it, c starts a new topic, x a new direct message, n goes to
 * the next unread topic, Esc goes to the home view (or cancels what is open), / searches.
 */
import { openCompose } from "./state/compose.ts";
import { editing } from "./state/edit.ts";
import { me } from "./state/model.ts";
import { atHome, goHome } from "./state/home.ts";
import { unreadTopicsInOrder } from "./state/unread.ts";
import { go, view } from "./state/view.ts";
import { feedControl } from "./ui/Feed.tsx";
import { dmMembers } from "./narrow.ts";

function typingInField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName));
}

type KeyHandler = (e: KeyboardEvent) => boolean | void;
const bindings = new Map<string, KeyHandler>();

/**
 * A feature's shortcut: `combo` is the key as KeyboardEvent.key names it ("i", "?", "*"), after
 * "ctrl+" (Ctrl or Cmd) or "alt+" where held. The handler returns false when it does not apply
 * (then the key does what it would otherwise). Keys typed in a field never reach it.
 */
export function bindKey(combo: string, handler: KeyHandler) {
  bindings.set(combo, handler);
}

function comboOf(e: KeyboardEvent): string {
  return `${e.ctrlKey || e.metaKey ? "ctrl+" : ""}${e.altKey ? "alt+" : ""}${e.key}`;
}

export function installKeys() {
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || typingInField(e)) return;
    const bound = bindings.get(comboOf(e));
    if (bound && bound(e) !== false) {
      e.preventDefault();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    // Enter on a focused link or button is theirs.
    const tag = (e.target as HTMLElement | null)?.tagName;
    if (e.key === "Enter" && (tag === "A" || tag === "BUTTON")) return;
    const feed = feedControl.current;
    const n = view.value.narrow;
    switch (e.key) {
      case "j":
      case "ArrowDown":
        feed?.move(1);
        break;
      case "k":
      case "ArrowUp":
        feed?.move(-1);
        break;
      case "Enter":
      case "r": {
        const m = feed?.selected();
        if (!m) return;
        if (m.type === "stream" && m.stream_id !== undefined)
          openCompose({ kind: "stream", streamId: m.stream_id, topic: m.subject });
        else {
          const others = dmMembers(m).filter((id) => id !== me.value.id);
          openCompose({ kind: "dm", userIds: others.length ? others : [me.value.id] });
        }
        break;
      }
      case "c": {
        const m = feed?.selected();
        const streamId =
          n.kind === "channel" || n.kind === "topic"
            ? n.streamId
            : m?.type === "stream"
              ? m.stream_id
              : undefined;
        openCompose(
          streamId === undefined ? undefined : { kind: "stream", streamId, topic: "" },
          "topic",
        );
        break;
      }
      case "x":
        openCompose({ kind: "dm", userIds: [] }, "to");
        break;
      case "n": {
        const here = n.kind === "topic" ? `${n.streamId}:${n.topic.toLowerCase()}` : undefined;
        const next = unreadTopicsInOrder().find(
          (t) => `${t.streamId}:${t.topic.toLowerCase()}` !== here,
        );
        if (!next) return;
        go({ kind: "topic", streamId: next.streamId, topic: next.topic });
        break;
      }
      case "Escape":
        if (editing.value !== undefined) editing.value = undefined;
        else if (!atHome()) goHome();
        else return;
        break;
      case "/":
        document.querySelector<HTMLInputElement>("input[type=search]")?.focus();
        break;
      default:
        return;
    }
    e.preventDefault();
  });
}
