/**
 * The home view (`user_settings.web_home_view`: "inbox", "recent" ("recent_topics" before
 * feature level 454) or "all_messages"; Zulip's default is the inbox): what an empty fragment
 * opens (main.tsx, after the first register) and where Escape goes from a feed.
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";
import { HOME_VIEW_KEY } from "./register.ts";
import { go, goPage, page, view } from "./view.ts";

export const homeView = signal<"inbox" | "recent" | "all_messages">("inbox");

/** web_home_view: "recent" (feature level 454; "recent_topics" before), "inbox", "all_messages". */
function homeOf(v: unknown): "inbox" | "recent" | "all_messages" {
  return v === "recent" || v === "recent_topics" ? "recent" : v === "all_messages" ? v : "inbox";
}

/** Sets the home view, remembered for the next load's first requests (state/register.ts). */
function setHome(v: unknown) {
  homeView.value = homeOf(v);
  try {
    localStorage.setItem(HOME_VIEW_KEY, homeView.value);
  } catch {
    // Not remembered: the next load assumes the Inbox and fetches All messages after the register.
  }
}

onRegister((state) => {
  const s = state as { user_settings?: { web_home_view?: string } };
  setHome(s.user_settings?.web_home_view);
});

onEvent("user_settings", (event) => {
  const e = event as { op?: string; property?: string; value?: unknown };
  if (e.op === "update" && e.property === "web_home_view") setHome(e.value);
});

/** Opens the home view (an empty fragment, Escape): `replace` keeps the history as it is. */
export function goHome(replace = false) {
  const h = homeView.value;
  if (h === "all_messages") {
    if (replace) history.replaceState(null, "", "#feed");
    go({ kind: "all" });
    return;
  }
  const name = h === "inbox" ? "inbox" : "recent";
  if (replace) {
    history.replaceState(null, "", `#${name}`);
    page.value = { name, section: "" };
  } else goPage(name);
}

/** Whether the home view is what is shown. */
export function atHome(): boolean {
  const h = homeView.value;
  const p = page.value;
  if (h === "all_messages") return !p && view.value.narrow.kind === "all" && !view.value.near;
  return p?.name === (h === "inbox" ? "inbox" : "recent") && !p.section;
}
