/**
 * Keyboard movement through a page's rows (Inbox, Recent conversations, the channel browser), as
 * Zulip's views move: ↑/↓ or k/j between the rows (elements marked `data-row`), Home/End to the
 * first and last; the focused row's own link or button takes Enter.
 */
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
