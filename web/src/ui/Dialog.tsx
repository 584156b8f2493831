/**
 * A modal dialog on the native `<dialog>` (showModal): the browser keeps focus inside it, makes
 * the rest inert, and Escape closes it. Named by its heading, so tests and screen readers find it
 * as `dialog "<title>"`. Every dialog of the app (confirmations, the emoji picker, message
 * source, edit history, keyboard shortcuts, forms of the settings) is one of these.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";
import { t } from "../i18n.ts";
import "./Dialog.css";

export function Dialog({
  title,
  onClose,
  children,
  wide = false,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class={wide ? "dialog wide" : "dialog"}
      aria-labelledby={id}
      onClose={onClose}
      // Escape is the dialog's: not the app's "back to All messages" as well.
      onKeyDown={(e) => e.key === "Escape" && e.stopPropagation()}
      onClick={(e) => e.target === ref.current && onClose()}
    >
      <header>
        <h2 id={id}>{title}</h2>
        <button type="button" class="close" aria-label={t("Close")} onClick={onClose}>
          ×
        </button>
      </header>
      <div class="dialog-body">{children}</div>
    </dialog>
  );
}

/** "Are you sure?" with the action's own words on its button. */
export function Confirm({
  title,
  children,
  action,
  onConfirm,
  onClose,
  danger = false,
}: {
  title: string;
  children: ComponentChildren;
  action: string;
  onConfirm: () => void;
  onClose: () => void;
  danger?: boolean;
}) {
  return (
    <Dialog title={title} onClose={onClose}>
      <div class="confirm-text">{children}</div>
      <div class="dialog-buttons">
        <button type="button" onClick={onClose}>
          {t("Cancel")}
        </button>
        <button
          type="button"
          class={danger ? "danger" : "primary"}
          onClick={() => {
            onConfirm();
            onClose();
          }}
        >
          {action}
        </button>
      </div>
    </Dialog>
  );
}
