/**
 * Desktop notifications, as Zulip's web app gives them (web/src/message_notifications.ts,
 * desktop_notifications.ts): for a message that arrives while the tab is hidden or unfocused,
 * never my own nor a muted user's. Direct messages, mentions and alert words per
 * `enable_desktop_notifications`; followed topics per `enable_followed_topic_desktop_notifications`;
 * other channel messages per the subscription's `desktop_notifications` (null: the user's
 * `enable_stream_desktop_notifications`); nothing from muted topics but mentions. The title is
 * the sender, the body the text; a click focuses the tab and opens the conversation. A short beep
 * when `enable_sounds` (no sound file needed). Zulip's desktop app's `electron_bridge` makes the
 * notification where it offers to, and its events (logout, settings, replies) are handled here.
 */
import { signal } from "@preact/signals";
import { api, call, csrfToken } from "../api.ts";
import { dmMembers } from "../narrow.ts";
import type { Msg, ZulipEvent } from "../types.ts";
import { onEvent, onRegister } from "./events.ts";
import { me, subscriptions, users } from "./model.ts";
import { isMuted } from "./muted-users.ts";
import { isFollowed, isTopicMuted } from "./user-topics.ts";
import { go, goPage } from "./view.ts";

type Settings = Record<string, unknown>;
const settings = signal<Settings>({});

interface Bridge {
  send_event?: (name: string, ...args: unknown[]) => unknown;
  on_event?: (name: string, listener: (...args: never[]) => void) => void;
  new_notification?: (
    title: string,
    options: NotificationOptions,
    dispatch: (type: string, ev: Event) => boolean,
  ) => { close(): void };
  set_send_notification_reply_message_supported?: (supported: boolean) => void;
}
const bridge = (): Bridge | undefined =>
  (window as unknown as { electron_bridge?: Bridge }).electron_bridge;

/** The permission the browser gave ("default": not asked yet), for the banner. */
export const permission = signal<NotificationPermission | "unsupported">(
  typeof Notification === "undefined" ? "unsupported" : Notification.permission,
);

export async function askPermission() {
  if (typeof Notification === "undefined") return;
  permission.value = await Notification.requestPermission();
}

onRegister((state) => {
  settings.value = (state.user_settings as Settings | undefined) ?? {};
});
onEvent("user_settings", (e) => {
  const ev = e as unknown as { op: string; property?: string; value?: unknown };
  if (ev.op === "update" && ev.property)
    settings.value = { ...settings.value, [ev.property]: ev.value };
});
onEvent("message", (e) => {
  const ev = e as ZulipEvent & { message: Msg; flags: string[] };
  const m: Msg = { ...ev.message, flags: ev.flags ?? [] };
  const kind = reason(m);
  if (kind && !(document.visibilityState === "visible" && document.hasFocus())) notify(m, kind);
});

/** Why a message notifies (or undefined when it does not), Zulip's rules. */
export function reason(m: Msg): "dm" | "mention" | "alert" | "followed" | "channel" | undefined {
  const s = settings.value;
  if (m.sender_id === me.value.id || isMuted(m.sender_id)) return undefined;
  if (m.flags.includes("read")) return undefined;
  const desktop = s.enable_desktop_notifications !== false;
  if (m.type === "private") return desktop ? "dm" : undefined;
  const mentioned = m.flags.some((f) => f === "mentioned" || f.endsWith("wildcard_mentioned"));
  if (mentioned) return desktop ? "mention" : undefined;
  const streamId = m.stream_id ?? 0;
  if (isTopicMuted(streamId, m.subject)) return undefined;
  if (m.flags.includes("has_alert_word")) return desktop ? "alert" : undefined;
  if (isFollowed(streamId, m.subject) && s.enable_followed_topic_desktop_notifications === true)
    return "followed";
  const own = subscriptions.value.get(streamId)?.desktop_notifications;
  const channel = own ?? s.enable_stream_desktop_notifications === true;
  return channel ? "channel" : undefined;
}

function textOf(html: string): string {
  const doc = new DOMParser().parseFromString(html, "text/html");
  const text = (doc.body.textContent ?? "").replace(/\s+/g, " ").trim();
  return text.length > 150 ? `${text.slice(0, 147)}…` : text;
}

function open(m: Msg) {
  window.focus();
  if (m.type === "private") {
    const others = dmMembers(m).filter((id) => id !== me.value.id);
    go({ kind: "dm", userIds: others.length ? others : [me.value.id] }, m.id);
  } else if (m.stream_id !== undefined)
    go({ kind: "topic", streamId: m.stream_id, topic: m.subject }, m.id);
}

function notify(m: Msg, kind: string) {
  const title = users.value.get(m.sender_id)?.full_name ?? m.sender_full_name;
  const options: NotificationOptions = {
    body: textOf(m.content),
    tag: m.type === "private" ? `dm:${dmMembers(m).join(",")}` : `${m.stream_id}:${m.subject}`,
    icon: m.avatar_url ?? undefined,
  };
  const sound =
    settings.value.enable_sounds !== false && settings.value.notification_sound !== "none";
  if ((kind === "dm" || kind === "mention" || kind === "alert") && sound) beep();
  const b = bridge();
  if (b?.new_notification) {
    b.new_notification(title, options, (type) => {
      if (type === "click") open(m);
      return true;
    });
    return;
  }
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  const n = new Notification(title, options);
  n.onclick = () => {
    open(m);
    n.close();
  };
}

let audio: AudioContext | undefined;
/** A short, soft two-tone beep (WebAudio; nothing to download). */
function beep() {
  try {
    audio ??= new AudioContext();
    const now = audio.currentTime;
    for (const [i, freq] of [880, 1320].entries()) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.08, now + i * 0.09);
      gain.gain.exponentialRampToValueAtTime(0.001, now + i * 0.09 + 0.08);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + i * 0.09);
      osc.stop(now + i * 0.09 + 0.09);
    }
  } catch {
    // no audio here
  }
}

/** Zulip's desktop app's calls into the page (web-client-notes §1.3). */
function installBridge() {
  const b = bridge();
  if (!b?.on_event) return;
  b.on_event("logout", () => {
    const form = document.createElement("form");
    form.method = "post";
    form.action = "/accounts/logout/";
    const input = document.createElement("input");
    input.type = "hidden";
    input.name = "csrfmiddlewaretoken";
    input.value = csrfToken;
    form.append(input);
    document.body.append(form);
    form.submit();
  });
  b.on_event("show-keyboard-shortcuts", () => {
    // The `?` help, where the app has it (a no-op otherwise).
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "?", bubbles: true }));
  });
  b.on_event("show-notification-settings", () => goPage("settings", "notifications"));
  b.set_send_notification_reply_message_supported?.(true);
  b.on_event("send_notification_reply_message", (messageId: number, reply: string) => {
    void replyTo(Number(messageId), String(reply));
  });
}

async function replyTo(messageId: number, reply: string) {
  const { message: m } = await call(
    api.GET("/messages/{message_id}", { params: { path: { message_id: messageId } } }),
  );
  const msg = m as unknown as Msg;
  if (msg.type === "private") {
    const to = dmMembers(msg).filter((id) => id !== me.value.id);
    await call(
      api.POST("/messages", {
        body: { type: "private", to: to.length ? to : [me.value.id], content: reply },
      }),
    );
  } else
    await call(
      api.POST("/messages", {
        body: { type: "stream", to: msg.stream_id!, topic: msg.subject, content: reply },
      }),
    );
}

installBridge();
