/**
 * The view being shown, which the URL fragment names (so links, reloads, back and forward work),
 * and the selected message (keyboard navigation, reply). Changing the view changes the fragment;
 * a changed fragment changes the view.
 */
import { signal } from "@preact/signals";
import { hashOf, narrowKey, parseHash, type Narrow, type View } from "../narrow.ts";
import { names } from "./model.ts";

export const view = signal<View>(parseHash(location.hash) ?? { narrow: { kind: "all" } });
export const selectedId = signal<number | undefined>(undefined);

export function go(narrow: Narrow, near?: number) {
  const next: View = near === undefined ? { narrow } : { narrow, near };
  const hash = hashOf(next, names);
  if (location.hash !== hash) location.hash = hash;
  else setView(next);
}

function setView(next: View) {
  const old = view.value;
  if (narrowKey(old.narrow) === narrowKey(next.narrow) && old.near === next.near) return;
  selectedId.value = next.near;
  view.value = next;
}

export function listenToHash() {
  window.addEventListener("hashchange", () => {
    setView(parseHash(location.hash) ?? { narrow: { kind: "all" } });
  });
}
