/**
 * The shortcuts on the selected message (Zulip's hotkey.ts): e edits it (or shows its source),
 * m moves it, : opens the emoji picker, + toggles :+1:, Ctrl+S stars it, > quotes it in a reply,
 * Shift+U marks it and what follows unread. Imported by main.tsx once keys.ts is ready.
 */
import { bindKey } from "../keys.ts";
import {
  actionDialog,
  editing,
  markUnreadFrom,
  openAction,
  quoteAndReply,
  toggleReaction,
  toggleStar,
} from "../state/edit.ts";
import { store } from "../state/messages.ts";
import { canEditContent, canMoveChannel, canMoveTopic } from "../state/permissions.ts";
import { selectedId } from "../state/view.ts";
import type { Msg } from "../types.ts";
import { report } from "./MessageActions.tsx";

function selected(): Msg | undefined {
  const id = selectedId.value;
  return id === undefined ? undefined : store.get(id);
}

function onSelected(action: (m: Msg) => void) {
  return () => {
    const m = selected();
    if (!m || actionDialog.value) return false;
    action(m);
    return true;
  };
}

bindKey(
  "e",
  onSelected((m) => {
    if (canEditContent(m)) editing.value = m.id;
    else openAction("source", m.id);
  }),
);
bindKey("m", () => {
  const m = selected();
  if (!m || !(canMoveTopic(m) || canMoveChannel(m))) return false;
  openAction("move", m.id);
});
bindKey(
  ":",
  onSelected((m) => openAction("emoji", m.id)),
);
bindKey(
  "+",
  onSelected((m) =>
    report(toggleReaction(m, { name: "+1", code: "1f44d", type: "unicode_emoji" })),
  ),
);
bindKey(
  "ctrl+s",
  onSelected((m) => report(toggleStar(m))),
);
bindKey(
  ">",
  onSelected((m) => report(quoteAndReply(m))),
);
bindKey(
  "U",
  onSelected((m) => report(markUnreadFrom(m.id))),
);
