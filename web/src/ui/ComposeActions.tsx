/**
 * The compose box's own helpers, beside its Send button: its text saved as a draft of its
 * conversation as you type (state/drafts.ts) and restored when the box is readdressed; "Upload
 * files" (and paste and drag-and-drop of files onto the box) with progress, inserting Zulip's
 * `[name](/user_uploads/...)`; "Schedule message" (Zulip's presets or a chosen time); and the
 * edit of a scheduled message reopened from the Scheduled messages page, saved on send.
 */
import type { ComponentChildren, RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { sortedIds } from "../narrow.ts";
import { compose, draft } from "../state/compose.ts";
import { conversationKey, deleteDraft, draftFor, saveDraft } from "../state/drafts.ts";
import { me } from "../state/model.ts";
import {
  editingScheduled,
  editScheduled,
  type Preset,
  presets,
  scheduleMessage,
} from "../state/scheduled.ts";
import type { Conversation } from "../state/typing.ts";
import { dismissUpload, uploadFile, uploadLink, uploads } from "../state/uploads.ts";
import { view } from "../state/view.ts";
import { Dialog } from "./Dialog.tsx";
import { fullDate, timeOfDay } from "./format.ts";
import "./ComposeActions.css";

/** How long typing pauses before the draft is saved. */
const SAVE_DELAY_MS = 1000;

function targetOfView(): Conversation | undefined {
  const n = view.value.narrow;
  if (n.kind === "topic") return { kind: "stream", streamId: n.streamId, topic: n.topic };
  if (n.kind === "channel") return { kind: "stream", streamId: n.streamId, topic: "" };
  if (n.kind === "dm") {
    const others = sortedIds(n.userIds).filter((id) => id !== me.value.id);
    return { kind: "dm", userIds: others.length ? others : [me.value.id] };
  }
  return undefined;
}

/** Saves the box's text as its conversation's draft; restores a draft when the box is readdressed. */
function useDrafts(target: Conversation | undefined) {
  const active = useRef<string | undefined>(undefined);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(target);
  latest.current = target;

  const save = () => {
    if (draft.value.trim()) active.current = saveDraft(active.current, latest.current, draft.value);
  };
  const flush = () => {
    if (timer.current === undefined) return;
    clearTimeout(timer.current);
    timer.current = undefined;
    save();
  };

  // A new view or a new choice (reply, new topic, drafts' Restore): the old text is saved, and
  // the new conversation's draft, if any, fills the box. The same conversation chosen again (a
  // quote and reply into the conversation the box is already addressed to) keeps the text.
  const addressed = useRef<string | undefined>(undefined);
  useEffect(() => {
    const next = compose.value.target ?? targetOfView();
    const nextKey = conversationKey(next);
    if (addressed.current !== undefined && nextKey === addressed.current) return;
    addressed.current = nextKey;
    flush();
    if (editingScheduled.value) {
      // The box holds a scheduled message: no draft of it.
      active.current = undefined;
      return;
    }
    const d = draftFor(next);
    active.current = d?.id;
    draft.value = d?.content ?? "";
  }, [compose.value.focusTick, view.value]);

  const key = conversationKey(target);
  useEffect(() => {
    if (editingScheduled.value) return;
    if (!draft.value.trim()) {
      clearTimeout(timer.current);
      timer.current = undefined;
      if (active.current !== undefined) deleteDraft(active.current);
      active.current = undefined;
      return;
    }
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = undefined;
      save();
    }, SAVE_DELAY_MS);
  }, [draft.value, key]);

  // Leaving the page saves what was typed since.
  useEffect(() => {
    const leave = () => flush();
    window.addEventListener("pagehide", leave);
    return () => {
      window.removeEventListener("pagehide", leave);
      flush();
    };
  }, []);
}

/** Inserts `text` at the textarea's cursor (replacing its selection), in the draft signal. */
function insertAtCursor(textarea: HTMLTextAreaElement | null, text: string) {
  const value = draft.value;
  const start = textarea?.selectionStart ?? value.length;
  const end = textarea?.selectionEnd ?? value.length;
  draft.value = value.slice(0, start) + text + value.slice(end);
  if (textarea)
    requestAnimationFrame(() => {
      textarea.focus();
      textarea.setSelectionRange(start + text.length, start + text.length);
    });
}

function replaceText(old: string, text: string) {
  const value = draft.value;
  const at = value.indexOf(old);
  draft.value =
    at < 0
      ? text
        ? value + (value && !value.endsWith("\n") ? " " : "") + text
        : value
      : value.slice(0, at) + text + value.slice(at + old.length);
}

async function uploadAll(files: Iterable<File>, textarea: HTMLTextAreaElement | null) {
  for (const file of files) {
    const name = file.name || "pasted-image.png";
    // Zulip's placeholder while the file travels, replaced by its link.
    const placeholder = `[${t("Uploading {name}…", { name })}]()`;
    insertAtCursor(textarea, placeholder + " ");
    void uploadFile(file).then((url) =>
      replaceText(url ? placeholder : placeholder + " ", url ? uploadLink(name, url) : ""),
    );
  }
}

function toLocalInput(seconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Each of Zulip's presets in words, given its time of day (literal strings, for the catalogue). */
const PRESET_WORDS: Record<Preset["label"], (time: string) => string> = {
  tomorrow: (time) => t("Tomorrow at {time}", { time }),
  monday: (time) => t("Monday at {time}", { time }),
};

function ScheduleDialog({
  target,
  onClose,
}: {
  target: Conversation | undefined;
  onClose: () => void;
}) {
  const [error, setError] = useState<string | undefined>(undefined);
  const [custom, setCustom] = useState(toLocalInput(Date.now() / 1000 + 3600));
  const [busy, setBusy] = useState(false);
  const choose = async (at: number) => {
    if (!target) return setError(t("Choose who to send the message to first."));
    if (!draft.value.trim()) return setError(t("Write a message first."));
    if (!(at > Date.now() / 1000))
      return setError(t("Scheduled delivery time must be in the future."));
    setBusy(true);
    try {
      await scheduleMessage(target, draft.value, at);
      draft.value = "";
      onClose();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={t("Schedule message")} onClose={onClose}>
      <div class="schedule-options">
        {presets().map(({ label, at }) => (
          <button key={label} type="button" disabled={busy} onClick={() => void choose(at)}>
            {PRESET_WORDS[label](timeOfDay(at))}
          </button>
        ))}
        <label>
          {t("Custom time")}
          <input
            type="datetime-local"
            value={custom}
            onInput={(e) => setCustom(e.currentTarget.value)}
          />
        </label>
        <button
          type="button"
          class="primary"
          disabled={busy}
          onClick={() => void choose(new Date(custom).getTime() / 1000)}
        >
          {t("Schedule")}
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </Dialog>
  );
}

/** A 16-pixel line drawing (the paper clip, the clock) in the text's colour, hidden from readers. */
function LineIcon({ children }: { children: ComponentChildren }) {
  return (
    <svg
      aria-hidden="true"
      width="16"
      height="16"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
    >
      {children}
    </svg>
  );
}

export function ComposeActions({
  target,
  textarea,
}: {
  /** The box's conversation as its fields name it (undefined while they name none). */
  target: Conversation | undefined;
  textarea: RefObject<HTMLTextAreaElement | null>;
}) {
  useDrafts(target);
  const root = useRef<HTMLDivElement>(null);
  const [scheduling, setScheduling] = useState(false);
  const [editError, setEditError] = useState<string | undefined>(undefined);
  const latest = useRef(target);
  latest.current = target;

  // Paste of files into the text, and files dropped anywhere on the box.
  useEffect(() => {
    const ta = textarea.current;
    const form = root.current?.closest("form");
    const paste = (e: ClipboardEvent) => {
      const files = [...(e.clipboardData?.files ?? [])];
      if (!files.length) return;
      e.preventDefault();
      void uploadAll(files, ta);
    };
    const over = (e: DragEvent) => {
      if (e.dataTransfer?.types.includes("Files")) e.preventDefault();
    };
    const drop = (e: DragEvent) => {
      const files = [...(e.dataTransfer?.files ?? [])];
      if (!files.length) return;
      e.preventDefault();
      void uploadAll(files, ta);
    };
    // Sending while a scheduled message is being edited saves the edit instead.
    const send = (e: Event) => {
      const editing = editingScheduled.value;
      if (!editing) return;
      if (e instanceof KeyboardEvent && (e.key !== "Enter" || e.shiftKey || e.isComposing)) return;
      if (e instanceof KeyboardEvent && e.target !== ta) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      const to = latest.current;
      if (!to || !draft.value.trim()) return;
      editScheduled(editing.scheduled_message_id, to, draft.value).then(
        () => {
          editingScheduled.value = undefined;
          setEditError(undefined);
          draft.value = "";
        },
        (err) => setEditError(errorText(err)),
      );
    };
    ta?.addEventListener("paste", paste);
    form?.addEventListener("dragover", over);
    form?.addEventListener("drop", drop);
    form?.addEventListener("submit", send, true);
    form?.addEventListener("keydown", send, true);
    return () => {
      ta?.removeEventListener("paste", paste);
      form?.removeEventListener("dragover", over);
      form?.removeEventListener("drop", drop);
      form?.removeEventListener("submit", send, true);
      form?.removeEventListener("keydown", send, true);
    };
  }, [textarea.current]);

  const editing = editingScheduled.value;
  const list = uploads.value;
  return (
    <div class="compose-actions" ref={root}>
      {list.length > 0 && (
        <ul class="compose-uploads">
          {list.map((u) =>
            u.error ? (
              <li key={u.id} role="alert">
                {u.error}{" "}
                <button
                  type="button"
                  class="link"
                  aria-label={t("Dismiss")}
                  onClick={() => dismissUpload(u.id)}
                >
                  ×
                </button>
              </li>
            ) : (
              <li key={u.id} role="status">
                {t("Uploading {name}… {percent}%", { name: u.name, percent: u.percent })}
              </li>
            ),
          )}
        </ul>
      )}
      {editing && (
        <p class="compose-editing" role="status">
          {t("Editing a message scheduled for {time}.", {
            time: fullDate(editing.scheduled_delivery_timestamp),
          })}{" "}
          <button
            type="button"
            class="link"
            onClick={() => {
              editingScheduled.value = undefined;
              draft.value = "";
            }}
          >
            {t("Cancel")}
          </button>
        </p>
      )}
      {editError && (
        <p class="error" role="alert">
          {editError}
        </p>
      )}
      <div class="compose-buttons">
        <label class="icon-button" title={t("Upload files")}>
          <input
            type="file"
            multiple
            class="sr-only"
            aria-label={t("Upload files")}
            onChange={(e) => {
              const input = e.currentTarget;
              const files = [...(input.files ?? [])];
              input.value = "";
              void uploadAll(files, textarea.current);
            }}
          />
          <LineIcon>
            <path d="M21 11.5l-8.5 8.5a5 5 0 0 1-7-7L14 4.5a3.3 3.3 0 0 1 4.7 4.7l-8.5 8.5a1.7 1.7 0 0 1-2.4-2.4L15.5 7.6" />
          </LineIcon>
        </label>
        <button
          type="button"
          class="icon-button"
          aria-label={t("Schedule message")}
          title={t("Schedule message")}
          onClick={() => setScheduling(true)}
        >
          <LineIcon>
            <circle cx="12" cy="12" r="9" />
            <path d="M12 7v5l3 2" />
          </LineIcon>
        </button>
      </div>
      {scheduling && <ScheduleDialog target={target} onClose={() => setScheduling(false)} />}
    </div>
  );
}
