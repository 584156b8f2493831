/**
 * Zulip's keyboard shortcuts (help/keyboard-shortcuts.md): j/k and the arrows move the
 * selection, Home/End go to the first/last message, PgUp/PgDn scroll, Enter or r replies to it,
 * c starts a new topic, x a new direct message, n goes to the next unread topic (Shift+N: followed
 * topic), p to the next
 * unread direct-message conversation, i and t open Inbox and Recent conversations, q and w filter
 * channels and people, / searches, ? shows them all, Esc goes to the home view (or cancels what
 * is open).
 *
 * Every shortcut is described where it is bound (`bindKey(key, handler, help)`), so that the
 * "Keyboard shortcuts" dialog (`?`) lists those of every feature, grouped as Zulip's are.
 */
import { signal } from "@preact/signals";
import { t } from "./i18n.ts";
import { openCompose } from "./state/compose.ts";
import { editing } from "./state/edit.ts";
import { atHome, goHome } from "./state/home.ts";
import { me, recentDms } from "./state/model.ts";
import { counts, unreadTopicsInOrder } from "./state/unread.ts";
import { FOLLOWED, topicPolicy } from "./state/user-topics.ts";
import { go, goPage, view } from "./state/view.ts";
import { feedControl } from "./ui/Feed.tsx";
import { dmMembers, sortedIds } from "./narrow.ts";

/** The groups of the "Keyboard shortcuts" dialog (Zulip's headings). */
export type KeyGroup = "basics" | "navigation" | "composing" | "actions" | "other";
export const KEY_GROUPS: Record<KeyGroup, () => string> = {
  basics: () => t("The basics"),
  navigation: () => t("Navigation"),
  composing: () => t("Composing messages"),
  actions: () => t("Message actions"),
  other: () => t("Other"),
};

export interface KeyHelp {
  /** What the key does, in the words of the dialog: a function, so that it is translated when shown. */
  description: () => string;
  group?: KeyGroup;
  /** The keys as shown, when not the combo itself ("Enter or r"). */
  keys?: string;
}

/** Every described shortcut, by combo (a later binding of the same combo replaces its help). */
const described = new Map<string, KeyHelp>();
/** Opens the "Keyboard shortcuts" dialog (ui/KeyboardHelp.tsx). */
export const keyboardHelpOpen = signal(false);

/** Opens the keyboard shortcuts (`?`, and Zulip's desktop app's menu item). */
export function openKeyboardHelp() {
  keyboardHelpOpen.value = true;
}

/** A key shown as the dialog shows it: "Ctrl+K", "Shift+N", "?". */
export function keyLabel(combo: string): string {
  const parts = combo.split("+");
  const key = parts.pop()!;
  const mods = parts.map((m) => (m === "ctrl" ? "Ctrl" : m === "alt" ? "Alt" : m));
  const shown =
    key.length === 1 && key !== key.toLowerCase()
      ? `Shift+${key}`
      : ({ Escape: "Esc", ArrowUp: "↑", ArrowDown: "↓", PageUp: "PgUp", PageDown: "PgDn" }[key] ??
        key);
  return [...mods, shown].join("+");
}

/** Describes a key the app handles without bindKey (the core keys below). */
export function describeKey(combo: string, help: KeyHelp) {
  described.set(combo, help);
}

/** The shortcuts to list, grouped, in the order they were described. */
export function keyList(): { group: KeyGroup; keys: string; description: string }[] {
  return [...described.entries()].map(([combo, h]) => ({
    group: h.group ?? "other",
    keys: h.keys ?? keyLabel(combo),
    description: h.description(),
  }));
}

function typingInField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName));
}

type KeyHandler = (e: KeyboardEvent) => boolean | void;
const bindings = new Map<string, KeyHandler>();

/**
 * A feature's shortcut: `combo` is the key as KeyboardEvent.key names it ("i", "?", "*"), after
 * "ctrl+" (Ctrl or Cmd) or "alt+" where held. The handler returns false when it does not apply
 * (then the key does what it would otherwise). Keys typed in a field never reach it. `help`
 * lists it in the "Keyboard shortcuts" dialog.
 */
export function bindKey(combo: string, handler: KeyHandler, help?: KeyHelp) {
  bindings.set(combo, handler);
  if (help) described.set(combo, help);
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
      case "n":
        if (!goNextUnreadTopic()) return;
        break;
      case "Escape":
        if (editing.value !== undefined) editing.value = undefined;
        else if (!atHome()) goHome();
        else return;
        break;
      case "/":
        document.querySelector<HTMLInputElement>("form[role=search] input")?.focus();
        break;
      default:
        return;
    }
    e.preventDefault();
  });
}

/**
 * `n`: the oldest unread topic other than the one shown; Shift+N (`followed`): the same among
 * followed topics (Zulip's "next unread followed topic"). False when there is none.
 */
function goNextUnreadTopic(followed = false): boolean {
  const n = view.value.narrow;
  const here = n.kind === "topic" ? `${n.streamId}:${n.topic.toLowerCase()}` : undefined;
  const next = unreadTopicsInOrder().find(
    (t) =>
      `${t.streamId}:${t.topic.toLowerCase()}` !== here &&
      (!followed || topicPolicy(t.streamId, t.topic) === FOLLOWED),
  );
  if (!next) return false;
  go({ kind: "topic", streamId: next.streamId, topic: next.topic });
  return true;
}

/** The feed's scrolling box: the nearest ancestor of the feed that scrolls. */
function feedScroller(): HTMLElement | undefined {
  for (let e = document.querySelector<HTMLElement>("[role=feed]"); e; e = e.parentElement)
    if (/(auto|scroll)/.test(getComputedStyle(e).overflowY)) return e;
  return undefined;
}

/** Focuses a filter box (the sidebars' channel and people filters), opening its sidebar on a phone. */
function focusFilter(selector: string, drawer: "left" | "right"): boolean {
  const box = document.querySelector<HTMLInputElement>(selector);
  if (!box) return false;
  window.dispatchEvent(new CustomEvent("open-drawer", { detail: drawer }));
  box.focus();
  box.select();
  return true;
}

// The core keys (handled in installKeys), described for the dialog in Zulip's order and words.
const CORE: [string, KeyHelp][] = [
  ["?", { group: "basics", description: () => t("Show keyboard shortcuts") }],
  ["/", { group: "basics", description: () => t("Search") }],
  [
    "Escape",
    { group: "basics", description: () => t("Go to the home view, or close what is open") },
  ],
  ["r", { group: "basics", keys: "Enter or r", description: () => t("Reply to message") }],
  ["c", { group: "basics", description: () => t("New topic") }],
  ["x", { group: "basics", description: () => t("New direct message") }],
  ["j", { group: "navigation", keys: "j or ↓", description: () => t("Next message") }],
  ["k", { group: "navigation", keys: "k or ↑", description: () => t("Previous message") }],
  ["n", { group: "navigation", description: () => t("Next unread topic") }],
];
for (const [combo, help] of CORE) describeKey(combo, help);

bindKey("?", () => openKeyboardHelp(), CORE[0]![1]);
bindKey("N", () => goNextUnreadTopic(true), {
  group: "navigation",
  description: () => t("Next unread followed topic"),
});
bindKey("q", () => focusFilter("input[data-filter=channels]", "left"), {
  group: "basics",
  description: () => t("Filter channels"),
});
bindKey(
  "w",
  () => focusFilter(".right-sidebar input[type=search], .right-sidebar input[type=text]", "right"),
  { group: "basics", description: () => t("Filter people") },
);
bindKey("i", () => goPage("inbox"), { group: "basics", description: () => t("Inbox") });
bindKey("t", () => goPage("recent"), {
  group: "basics",
  description: () => t("Recent conversations"),
});
bindKey("Home", () => feedControl.current?.move(-Infinity), {
  group: "navigation",
  description: () => t("First message"),
});
bindKey("End", () => feedControl.current?.move(Infinity), {
  group: "navigation",
  description: () => t("Last message"),
});
for (const [key, sign] of [
  ["PageUp", -1],
  ["PageDown", 1],
] as const)
  bindKey(
    key,
    () => {
      const box = feedScroller();
      if (!box) return false;
      box.scrollBy({ top: sign * box.clientHeight * 0.9 });
    },
    {
      group: "navigation",
      description: () => (sign < 0 ? t("Scroll up") : t("Scroll down")),
    },
  );
bindKey(
  "p",
  () => {
    // The most recent unread conversation other than the one shown (Zulip's "next unread DM").
    const n = view.value.narrow;
    const here = n.kind === "dm" ? sortedIds([...n.userIds, me.value.id]).join(",") : undefined;
    const unreadDms = counts.value.byDm;
    const next = [...recentDms.value.entries()]
      .filter(([key]) => key !== here && (unreadDms.get(key) ?? 0) > 0)
      .sort((a, b) => b[1].maxId - a[1].maxId)[0];
    let ids = next?.[1].userIds;
    if (!ids) {
      const key = [...unreadDms.keys()].find((k) => k !== here);
      if (!key) return false;
      ids = key.split(",").map(Number);
    }
    const others = ids.filter((id) => id !== me.value.id);
    go({ kind: "dm", userIds: others.length ? others : [me.value.id] });
  },
  { group: "navigation", description: () => t("Next unread direct message conversation") },
);
