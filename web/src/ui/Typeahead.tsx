/**
 * A reusable, accessible typeahead (WAI-ARIA's combobox with a listbox popup): the field carries
 * role=combobox with aria-expanded, aria-controls and aria-activedescendant while suggestions
 * show; the list is a role=listbox of role=option rows. ↑/↓ move, Tab or Enter picks, Escape
 * closes; a click picks too. The field keeps the focus throughout.
 *
 *   const ta = useTypeahead<User>("to", (u) => ...);
 *   <input {...ta.fieldProps} onKeyDown={(e) => ta.keyDown(e) || ...} />
 *   {ta.list}
 *
 * `show(options)` offers options (at most MAX_SHOWN), `close()` hides them.
 */
import type { ComponentChildren, JSX } from "preact";
import { useRef, useState } from "preact/hooks";
import "./Typeahead.css";

export const MAX_SHOWN = 8;

export interface TypeaheadOption<T> {
  key: string;
  value: T;
  /** The row's main text (its accessible name starts with it). */
  label: string;
  /** Secondary text: an email, a description. */
  detail?: string;
  /** An emoji, an image, an avatar. */
  icon?: ComponentChildren;
}

export interface Typeahead<T> {
  open: boolean;
  show(options: TypeaheadOption<T>[]): void;
  close(): void;
  /** Handles the typeahead's keys while open; true when it did (the caller does nothing more). */
  keyDown(e: KeyboardEvent): boolean;
  fieldProps: Record<string, string | boolean | undefined>;
  list: JSX.Element | null;
}

export function useTypeahead<T>(
  id: string,
  onPick: (value: T) => void,
  label: string,
): Typeahead<T> {
  const [options, setOptions] = useState<TypeaheadOption<T>[]>([]);
  const [active, setActive] = useState(0);
  const pick = useRef(onPick);
  pick.current = onPick;
  const open = options.length > 0;
  const listId = `${id}-typeahead`;
  const close = () => {
    setOptions([]);
    setActive(0);
  };
  const choose = (i: number) => {
    const o = options[i];
    close();
    if (o) pick.current(o.value);
  };
  return {
    open,
    show(next) {
      setOptions(next.slice(0, MAX_SHOWN));
      setActive(0);
    },
    close,
    keyDown(e) {
      if (!open || e.isComposing) return false;
      switch (e.key) {
        case "ArrowDown":
          setActive((active + 1) % options.length);
          break;
        case "ArrowUp":
          setActive((active - 1 + options.length) % options.length);
          break;
        case "Enter":
        case "Tab":
          if (e.shiftKey || e.ctrlKey || e.altKey || e.metaKey) return false;
          choose(active);
          break;
        case "Escape":
          close();
          e.stopPropagation();
          break;
        default:
          return false;
      }
      e.preventDefault();
      return true;
    },
    fieldProps: open
      ? {
          role: "combobox",
          "aria-expanded": true,
          "aria-controls": listId,
          "aria-autocomplete": "list",
          "aria-activedescendant": `${listId}-${active}`,
        }
      : { role: undefined, "aria-expanded": undefined, "aria-controls": undefined },
    list: open ? (
      <ul class="typeahead" id={listId} role="listbox" aria-label={label}>
        {options.map((o, i) => (
          <li
            key={o.key}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === active}
            class={i === active ? "active" : undefined}
            aria-describedby={o.detail ? `${listId}-${i}-detail` : undefined}
            // Keep the focus in the field: pick on mousedown, before it would blur.
            onMouseDown={(e) => {
              e.preventDefault();
              choose(i);
            }}
            onMouseMove={() => i !== active && setActive(i)}
          >
            {o.icon !== undefined && (
              <span class="typeahead-icon" aria-hidden="true">
                {o.icon}
              </span>
            )}
            <span class="typeahead-label">{o.label}</span>
            {o.detail && (
              // Heard as the option's description, not part of its name.
              <span class="typeahead-detail" id={`${listId}-${i}-detail`} aria-hidden="true">
                {o.detail}
              </span>
            )}
          </li>
        ))}
      </ul>
    ) : null,
  };
}
