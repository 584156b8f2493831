/**
 * Keyboard movement through a page's rows (Inbox, Recent conversations, the channel browser), as
 * Zulip's views move: ↑/↓ or k/j between the rows (elements marked `data-row`), Home/End to the
 * first and last; the focused row's own link or button takes Enter.
 */
import { useEffect, useRef, useState } from "preact/hooks";
export function rowsOf(container: HTMLElement): HTMLElement[] {
  return [...container.querySelectorAll<HTMLElement>("[data-row]")];
}

/** Handles a key for a list of rows; returns whether it did. */
export function moveInRows(container: HTMLElement, e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  const rows = rowsOf(container);
  if (!rows.length) return false;
  const at = rows.indexOf(document.activeElement as HTMLElement);
  let next: number;
  switch (e.key) {
    case "ArrowDown":
    case "j":
      next = at < 0 ? 0 : Math.min(rows.length - 1, at + 1);
      break;
    case "ArrowUp":
    case "k":
      next = at < 0 ? 0 : Math.max(0, at - 1);
      break;
    case "Home":
      next = 0;
      break;
    case "End":
      next = rows.length - 1;
      break;
    default:
      return false;
  }
  rows[next]!.focus();
  rows[next]!.scrollIntoView({ block: "nearest" });
  return true;
}

/**
 * Progressive rendering of a long page list (Inbox, Recent conversations): the first `first`
 * rows at once, `step` more whenever the element given `sentinel` (placed after the last row)
 * comes within a screen of the viewport. A page opens in one frame with a few hundred elements
 * where all its rows would be thousands (500 channels of unread topics), and every row stays
 * reachable by scrolling or by the keys, whose focus scrolls the sentinel into range.
 */
export function useIncremental(total: number, first = 60, step = 120) {
  const [limit, setLimit] = useState(first);
  const sentinel = useRef<HTMLElement>(null);
  useEffect(() => {
    const el = sentinel.current;
    if (!el || limit >= total) return;
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setLimit((n) => n + step);
      },
      { rootMargin: "100% 0px" },
    );
    seen.observe(el);
    return () => seen.disconnect();
  }, [limit, total, step]);
  return { limit, sentinel, more: total > limit };
}
