/**
 * A popover menu of actions (a message's "⋯" menu, a topic's or a user's): a button with
 * aria-haspopup that opens a `role="menu"` of `menuitem`s, moved through with the arrow keys,
 * closed by Escape, by a choice or by a click elsewhere; focus returns to the button.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import "./Menu.css";

export interface MenuItem {
  label: string;
  onSelect: () => void;
  /** Shown but not choosable (with the reason as its title). */
  disabledReason?: string;
}

export function Menu({
  label,
  button,
  items,
  className = "",
}: {
  /** The button's accessible name ("Message actions"). */
  label: string;
  /** What the button shows (an icon, "⋯"). */
  button: ComponentChildren;
  items: () => MenuItem[];
  className?: string;
}) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const away = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", away);
    root.current?.querySelector<HTMLElement>("[role=menuitem]:not([aria-disabled=true])")?.focus();
    return () => document.removeEventListener("mousedown", away);
  }, [open]);
  const close = () => {
    setOpen(false);
    trigger.current?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const all = [...(root.current?.querySelectorAll<HTMLElement>("[role=menuitem]") ?? [])];
    const at = all.indexOf(document.activeElement as HTMLElement);
    if (e.key === "Escape") close();
    else if (e.key === "ArrowDown" || e.key === "j") all[(at + 1) % all.length]?.focus();
    else if (e.key === "ArrowUp" || e.key === "k") all[(at - 1 + all.length) % all.length]?.focus();
    else if (e.key === "Tab") setOpen(false);
    else return;
    if (e.key !== "Tab") {
      e.preventDefault();
      e.stopPropagation();
    }
  };
  return (
    <div class={`menu-root ${className}`} ref={root} onKeyDown={open ? onKeyDown : undefined}>
      <button
        ref={trigger}
        type="button"
        class="menu-button"
        aria-label={label}
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={(e) => {
          e.stopPropagation();
          setOpen(!open);
        }}
      >
        {button}
      </button>
      {open && (
        <ul role="menu" aria-label={label} class="menu">
          {items().map((item) => (
            <li
              role="menuitem"
              key={item.label}
              tabIndex={-1}
              aria-disabled={item.disabledReason ? true : undefined}
              title={item.disabledReason}
              onClick={(e) => {
                e.stopPropagation();
                if (item.disabledReason) return;
                close();
                item.onSelect();
              }}
              onKeyDown={(e) => {
                if ((e.key === "Enter" || e.key === " ") && !item.disabledReason) {
                  e.preventDefault();
                  e.stopPropagation();
                  close();
                  item.onSelect();
                }
              }}
            >
              {item.label}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
