/**
 * One saved message on the Drafts and Scheduled messages pages: its conversation (the row's
 * name), a time (last edited, or due), what it says, a button that takes it back to the compose
 * box and one that deletes it, each named for this message.
 */
import type { ComponentChildren } from "preact";
import { t } from "../i18n.ts";
import "./SavedRow.css";

export function SavedRow({
  where,
  timestamp,
  when,
  children,
  reopen,
  remove,
}: {
  /** The conversation's label. */
  where: string;
  /** The time the row shows (seconds), and its words. */
  timestamp: number;
  when: string;
  /** The message: a draft's start, or a scheduled message rendered. */
  children: ComponentChildren;
  /** The first button (Restore, Edit): its text, accessible name and action. */
  reopen: { text: string; label: string; onClick: () => void };
  /** Delete: its accessible name and action. */
  remove: { label: string; onClick: () => void };
}) {
  return (
    <li>
      <article aria-label={where}>
        <header>
          <span class="where">{where}</span>
          <time dateTime={new Date(timestamp * 1000).toISOString()}>{when}</time>
        </header>
        {children}
        <div class="saved-buttons">
          <button type="button" aria-label={reopen.label} onClick={reopen.onClick}>
            {reopen.text}
          </button>
          <button type="button" class="danger" aria-label={remove.label} onClick={remove.onClick}>
            {t("Delete")}
          </button>
        </div>
      </article>
    </li>
  );
}
