/**
 * A message's hover (and keyboard-focus) toolbar, as in Zulip's web app: "Add emoji reaction",
 * "Edit" (my own messages, within the limit), "Star"/"Unstar", and the "Message actions" menu
 * with Zulip's items, each offered only where the register's settings allow it (the same rules
 * the server applies, state/permissions.ts). The dialogs of the actions are drawn once, by
 * ActionDialogs; the shortcuts (ui/messageKeys.ts) act on the selected message.
 */
import { signal } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { api, call, errorText } from "../api.ts";
import { t } from "../i18n.ts";
import {
  actionDialog,
  deleteMessage,
  editing,
  fetchRaw,
  isResolved,
  isStarred,
  markUnreadFrom,
  messageLink,
  openAction,
  quoteAndReply,
  toggleReaction,
  toggleResolved,
  toggleStar,
} from "../state/edit.ts";
import { store } from "../state/messages.ts";
import { subscriptions, users } from "../state/model.ts";
import {
  canDelete,
  canEditContent,
  canMoveChannel,
  canMoveTopic,
  canResolve,
  canSeeHistory,
  readReceiptsEnabled,
} from "../state/permissions.ts";
import type { Msg } from "../types.ts";
import { Confirm, Dialog } from "./Dialog.tsx";
import { EditHistory } from "./EditHistory.tsx";
import { EmojiPicker } from "./EmojiPicker.tsx";
import { Menu, type MenuItem } from "./Menu.tsx";

/** A short notice ("Copied!"), announced politely. */
export const notice = signal<string | undefined>(undefined);
let noticeTimer: ReturnType<typeof setTimeout> | undefined;
function say(text: string) {
  notice.value = text;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => (notice.value = undefined), 3000);
}

export function report(p: Promise<unknown>) {
  p.catch((err: unknown) => say(errorText(err)));
}

/** The Clipboard API where the page has it (a secure context), else a selected textarea's copy. */
function copyText(text: string): Promise<void> {
  if (navigator.clipboard)
    return navigator.clipboard.writeText(text).catch(() => copyByCommand(text));
  return copyByCommand(text);
}
function copyByCommand(text: string): Promise<void> {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
}

async function copyLink(m: Msg) {
  try {
    await copyText(messageLink(m));
    say(t("Copied!"));
  } catch {
    say(t("Could not copy the link."));
  }
}

/** Zulip's message actions popover, in its order, each item only where it is allowed. */
export function menuItems(m: Msg): MenuItem[] {
  const items: MenuItem[] = [];
  const add = (label: string, onSelect: () => void) => items.push({ label, onSelect });
  add(t("Quote and reply"), () => report(quoteAndReply(m)));
  if (canEditContent(m)) add(t("Edit message"), () => (editing.value = m.id));
  if (canMoveTopic(m) || canMoveChannel(m)) add(t("Move messages"), () => openAction("move", m.id));
  if (canResolve(m))
    add(isResolved(m.subject) ? t("Mark as unresolved") : t("Mark as resolved"), () =>
      report(toggleResolved(m)),
    );
  add(t("Mark as unread from here"), () => report(markUnreadFrom(m.id)));
  add(t("Copy link to message"), () => void copyLink(m));
  if (!canEditContent(m)) add(t("View message source"), () => openAction("source", m.id));
  if (canSeeHistory(m)) add(t("View edit history"), () => openAction("history", m.id));
  if (readReceiptsEnabled()) add(t("View read receipts"), () => openAction("receipts", m.id));
  if (canDelete(m)) add(t("Delete message"), () => openAction("delete", m.id));
  return items;
}

export function Toolbar({ m }: { m: Msg }) {
  const starred = isStarred(m);
  return (
    <div class="msg-toolbar">
      <button
        type="button"
        aria-label={t("Add emoji reaction")}
        title={t("Add emoji reaction")}
        onClick={(e) => {
          e.stopPropagation();
          openAction("emoji", m.id);
        }}
      >
        ☺
      </button>
      {canEditContent(m) && editing.value !== m.id && (
        <button
          type="button"
          aria-label={t("Edit")}
          title={t("Edit message")}
          onClick={(e) => {
            e.stopPropagation();
            editing.value = m.id;
          }}
        >
          ✎
        </button>
      )}
      <button
        type="button"
        class={starred ? "star starred" : "star"}
        aria-label={starred ? t("Unstar") : t("Star")}
        aria-pressed={starred}
        title={starred ? t("Unstar this message") : t("Star this message")}
        onClick={(e) => {
          e.stopPropagation();
          report(toggleStar(m));
        }}
      >
        {starred ? "★" : "☆"}
      </button>
      <Menu label={t("Message actions")} button="⋮" items={() => menuItems(m)} />
    </div>
  );
}

function MessageSource({ m, onClose }: { m: Msg; onClose: () => void }) {
  const [raw, setRaw] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    fetchRaw(m.id).then(setRaw, (err: unknown) => setError(errorText(err)));
  }, [m.id]);
  return (
    <Dialog title={t("Message source")} onClose={onClose} wide>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : (
        <textarea
          class="message-source"
          aria-label={t("Message source")}
          readOnly
          rows={Math.min(20, Math.max(4, (raw ?? "").split("\n").length + 1))}
          value={raw ?? t("Loading…")}
        />
      )}
    </Dialog>
  );
}

function ReadReceipts({ m, onClose }: { m: Msg; onClose: () => void }) {
  const [ids, setIds] = useState<number[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    call(
      api.GET("/messages/{message_id}/read_receipts", { params: { path: { message_id: m.id } } }),
    )
      .then((r) => setIds(r.user_ids))
      .catch((err: unknown) => setError(errorText(err)));
  }, [m.id]);
  const readers = (ids ?? [])
    .map((id) => ({ id, name: users.value.get(id)?.full_name ?? t("Unknown user") }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return (
    <Dialog title={t("Read receipts")} onClose={onClose}>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : ids === undefined ? (
        <p>{t("Loading…")}</p>
      ) : readers.length === 0 ? (
        <p>{t("No one has read this message yet.")}</p>
      ) : (
        <>
          <p>
            {readers.length === 1
              ? t("This message has been read by 1 person:")
              : t("This message has been read by {count} people:", { count: readers.length })}
          </p>
          <ul class="read-receipts" aria-label={t("Read by")}>
            {readers.map((r) => (
              <li key={r.id}>{r.name}</li>
            ))}
          </ul>
        </>
      )}
    </Dialog>
  );
}

type Propagate = "change_one" | "change_later" | "change_all";

/** Zulip's "Move messages" dialog: channel (where allowed), topic, which messages, notices. */
function MoveMessages({ m, onClose }: { m: Msg; onClose: () => void }) {
  const channelAllowed = canMoveChannel(m);
  const topicAllowed = canMoveTopic(m);
  const [streamId, setStreamId] = useState(m.stream_id ?? 0);
  const [topic, setTopic] = useState(m.subject);
  const [mode, setMode] = useState<Propagate>("change_later");
  const [notifyNew, setNotifyNew] = useState(true);
  const [notifyOld, setNotifyOld] = useState(true);
  const [error, setError] = useState<string | undefined>(undefined);
  const [saving, setSaving] = useState(false);
  const channels = [...subscriptions.value.values()].sort((a, b) => a.name.localeCompare(b.name));
  const submit = async () => {
    const body: {
      propagate_mode: Propagate;
      send_notification_to_new_thread: boolean;
      send_notification_to_old_thread: boolean;
      topic?: string;
      stream_id?: number;
    } = {
      propagate_mode: mode,
      send_notification_to_new_thread: notifyNew,
      send_notification_to_old_thread: notifyOld,
    };
    if (topic.trim() !== m.subject) body.topic = topic.trim();
    if (streamId !== m.stream_id) body.stream_id = streamId;
    setSaving(true);
    try {
      await call(
        api.PATCH("/messages/{message_id}", { params: { path: { message_id: m.id } }, body }),
      );
      onClose();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setSaving(false);
    }
  };
  return (
    <Dialog title={t("Move messages")} onClose={onClose}>
      <form
        class="move-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        {channelAllowed && (
          <label>
            {t("Channel")}
            <select
              aria-label={t("Channel")}
              value={String(streamId)}
              onChange={(e) => setStreamId(Number(e.currentTarget.value))}
            >
              {channels.map((s) => (
                <option key={s.stream_id} value={String(s.stream_id)}>
                  #{s.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          {t("Topic")}
          <input
            aria-label={t("Topic")}
            value={topic}
            disabled={!topicAllowed}
            onInput={(e) => setTopic(e.currentTarget.value)}
          />
        </label>
        <label>
          {t("Which messages")}
          <select
            aria-label={t("Which messages")}
            value={mode}
            onChange={(e) => setMode(e.currentTarget.value as Propagate)}
          >
            <option value="change_one">{t("Move only this message")}</option>
            <option value="change_later">
              {t("Move this and all following messages in this topic")}
            </option>
            <option value="change_all">{t("Move all messages in this topic")}</option>
          </select>
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={notifyNew}
            onChange={(e) => setNotifyNew(e.currentTarget.checked)}
          />
          {t("Send automated notice to new topic")}
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={notifyOld}
            onChange={(e) => setNotifyOld(e.currentTarget.checked)}
          />
          {t("Send automated notice to old topic")}
        </label>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="dialog-buttons">
          <button type="button" onClick={onClose}>
            {t("Cancel")}
          </button>
          <button type="submit" class="primary" disabled={saving}>
            {t("Confirm")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The open action's dialog and the notices; drawn once, beside the feed. */
export function ActionDialogs() {
  const open = actionDialog.value;
  const m = open ? store.get(open.id) : undefined;
  const close = () => (actionDialog.value = undefined);
  return (
    <>
      <div class="action-notice" role="status" aria-live="polite">
        {notice.value}
      </div>
      {open && m && open.kind === "emoji" && (
        <EmojiPicker
          onPick={(e) => {
            close();
            report(toggleReaction(m, e));
          }}
          onClose={close}
        />
      )}
      {open && m && open.kind === "source" && <MessageSource m={m} onClose={close} />}
      {open && m && open.kind === "receipts" && <ReadReceipts m={m} onClose={close} />}
      {open && m && open.kind === "history" && <EditHistory m={m} onClose={close} />}
      {open && m && open.kind === "move" && <MoveMessages m={m} onClose={close} />}
      {open && m && open.kind === "delete" && (
        <Confirm
          title={t("Delete message?")}
          action={t("Delete")}
          danger
          onConfirm={() => report(deleteMessage(m.id))}
          onClose={close}
        >
          {t("Deleting a message permanently removes it for everyone.")}
        </Confirm>
      )}
    </>
  );
}
