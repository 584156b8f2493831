/**
 * The view being shown, which the URL fragment names (so links, reloads, back and forward work),
 * and the selected message (keyboard navigation, reply). Changing the view changes the fragment;
 * a changed fragment changes the view.
 *
 * Two kinds of view share the middle column: a feed of messages (`view`: a narrow, Zulip's
 * `#narrow/...` and `#feed`) and a page (`page`: Zulip's `#inbox`, `#recent`, `#channels/all`,
 * `#drafts`, `#scheduled`, `#settings/profile`, `#organization/...`, `#user/ID`). While a page
 * is shown, the last feed stays mounted and hidden, so going back to it refetches nothing.
 */
import { signal } from "@preact/signals";
import { hashOf, narrowKey, parseHash, type Narrow, type View } from "../narrow.ts";
import { names } from "./model.ts";

export const PAGES = [
  "inbox",
  "recent",
  "channels",
  "drafts",
  "scheduled",
  "settings",
  "organization",
  "user",
] as const;
export type PageName = (typeof PAGES)[number];
export interface Page {
  name: PageName;
  /** What follows the page's name in the fragment (`profile` in `#settings/profile`), or "". */
  section: string;
}

/** The page a fragment names (Zulip's names; `#recent_topics` is the old name of `#recent`). */
export function parsePage(hash: string): Page | undefined {
  const h = hash.replace(/^#/, "");
  const [first = "", ...rest] = h.split("/");
  const name = first === "recent_topics" ? "recent" : first === "streams" ? "channels" : first;
  if (!(PAGES as readonly string[]).includes(name)) return undefined;
  return { name: name as PageName, section: rest.join("/") };
}

export function pageHash(p: Page): string {
  return `#${p.name}${p.section ? `/${p.section}` : ""}`;
}

export const view = signal<View>(parseHash(location.hash) ?? { narrow: { kind: "all" } });
export const page = signal<Page | undefined>(parsePage(location.hash));
export const selectedId = signal<number | undefined>(undefined);

export function go(narrow: Narrow, near?: number) {
  const next: View = near === undefined ? { narrow } : { narrow, near };
  const hash = hashOf(next, names);
  if (location.hash !== hash) location.hash = hash;
  else setView(next);
}

export function goPage(name: PageName, section = "") {
  const hash = pageHash({ name, section });
  if (location.hash !== hash) location.hash = hash;
  else page.value = { name, section };
}

function setView(next: View) {
  page.value = undefined;
  const old = view.value;
  if (narrowKey(old.narrow) === narrowKey(next.narrow) && old.near === next.near) return;
  selectedId.value = next.near;
  view.value = next;
}

export function listenToHash() {
  window.addEventListener("hashchange", () => {
    const p = parsePage(location.hash);
    if (p) {
      const old = page.value;
      if (!old || old.name !== p.name || old.section !== p.section) page.value = p;
      return;
    }
    setView(parseHash(location.hash) ?? { narrow: { kind: "all" } });
  });
}
