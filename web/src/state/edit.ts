/**
 * What one does on a message (Zulip's message_edit.ts, reactions.ts, starred_messages.ts,
 * unread_ops.ts, compose_actions.quote_message): the message being edited inline (one at a time,
 * as in Zulip's web app), the dialog of an action that is open, and the requests of each action.
 * The store follows through the events they cause (update_message, update_message_flags,
 * reaction, delete_message in state/events.ts).
 */
import { effect, signal } from "@preact/signals";
import { api, call } from "../api.ts";
import { dmMembers, hashOf, narrowTerms, type Narrow } from "../narrow.ts";
import type { Msg } from "../types.ts";
import { draft, openCompose } from "./compose.ts";
import { me, names, users } from "./model.ts";
import { reading } from "./read.ts";
import { view } from "./view.ts";

export const editing = signal<number | undefined>(undefined);

export type ActionDialog = "emoji" | "move" | "delete" | "source" | "history" | "receipts";
/** The action dialog open, and on which message. */
export const actionDialog = signal<{ kind: ActionDialog; id: number } | undefined>(undefined);

export function openAction(kind: ActionDialog, id: number) {
  actionDialog.value = { kind, id };
}

/** Reading resumes when the view changes after "Mark as unread from here". */
effect(() => {
  void view.value;
  reading.paused = false;
});

export function isStarred(m: Msg): boolean {
  return m.flags.includes("starred");
}

export function toggleStar(m: Msg) {
  return call(
    api.POST("/messages/flags", {
      body: { messages: [m.id], op: isStarred(m) ? "remove" : "add", flag: "starred" },
    }),
  );
}

export interface EmojiRef {
  name: string;
  code: string;
  type: "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";
}

const FREQUENT_KEY = "zulip-frequent-emoji";
/** Zulip's default "Frequently used" emoji (emoji_picker.ts / frequently_used). */
export const DEFAULT_FREQUENT: readonly EmojiRef[] = [
  { name: "+1", code: "1f44d", type: "unicode_emoji" },
  { name: "tada", code: "1f389", type: "unicode_emoji" },
  { name: "smile", code: "1f604", type: "unicode_emoji" },
  { name: "heart", code: "2764", type: "unicode_emoji" },
  { name: "working_on_it", code: "1f6e0", type: "unicode_emoji" },
  { name: "octopus", code: "1f419", type: "unicode_emoji" },
];

/** My reactions, most used first (kept in this browser), then Zulip's defaults: 12 at most. */
export function frequentEmoji(): EmojiRef[] {
  let mine: { e: EmojiRef; n: number }[] = [];
  try {
    mine = JSON.parse(localStorage.getItem(FREQUENT_KEY) ?? "[]") as typeof mine;
  } catch {
    mine = [];
  }
  const out = mine.sort((a, b) => b.n - a.n).map((x) => x.e);
  for (const d of DEFAULT_FREQUENT) if (!out.some((e) => e.code === d.code)) out.push(d);
  return out.slice(0, 12);
}

function noteUsed(e: EmojiRef) {
  let mine: { e: EmojiRef; n: number }[] = [];
  try {
    mine = JSON.parse(localStorage.getItem(FREQUENT_KEY) ?? "[]") as typeof mine;
  } catch {
    mine = [];
  }
  const found = mine.find((x) => x.e.code === e.code && x.e.type === e.type);
  if (found) found.n++;
  else mine.push({ e, n: 1 });
  try {
    localStorage.setItem(FREQUENT_KEY, JSON.stringify(mine.slice(-50)));
  } catch {
    // storage full or denied: the defaults serve
  }
}

/** Adds my reaction with this emoji, or removes it when I already reacted with it. */
export function toggleReaction(m: Msg, e: EmojiRef) {
  const mine = m.reactions.some(
    (r) => r.user_id === me.value.id && r.emoji_code === e.code && r.reaction_type === e.type,
  );
  const params = { path: { message_id: m.id } };
  const body = { emoji_name: e.name, emoji_code: e.code, reaction_type: e.type };
  if (!mine) noteUsed(e);
  return mine
    ? call(api.DELETE("/messages/{message_id}/reactions", { params, body }))
    : call(api.POST("/messages/{message_id}/reactions", { params, body }));
}

export function deleteMessage(id: number) {
  return call(api.DELETE("/messages/{message_id}", { params: { path: { message_id: id } } }));
}

/** The raw Markdown of a message. */
export async function fetchRaw(id: number): Promise<string> {
  const res = await call(
    api.GET("/messages/{message_id}", {
      params: { path: { message_id: id }, query: { apply_markdown: false } },
    }),
  );
  return res.raw_content ?? res.message.content;
}

/** The conversation of a message, as a narrow. */
export function conversationOf(m: Msg): Narrow {
  return m.type === "stream" && m.stream_id !== undefined
    ? { kind: "topic", streamId: m.stream_id, topic: m.subject }
    : { kind: "dm", userIds: dmMembers(m) };
}

/** Zulip's link to a message: its conversation's URL, `/near/ID`, on this organization. */
export function messageLink(m: Msg): string {
  return `${location.origin}/${hashOf({ narrow: conversationOf(m), near: m.id }, names)}`;
}

/**
 * unread_ops.mark_as_unread_from_here: the read flag removed from this message on, in the view
 * shown, in batches; the view then stops marking what it shows as read until it changes.
 */
export async function markUnreadFrom(id: number) {
  reading.paused = true;
  const narrow = narrowTerms(view.value.narrow, me.value.id);
  let anchor: number = id;
  let includeAnchor = true;
  for (let i = 0; i < 50; i++) {
    const res = await call(
      api.POST("/messages/flags/narrow", {
        body: {
          anchor,
          include_anchor: includeAnchor,
          num_before: 0,
          num_after: 5000,
          narrow,
          op: "remove",
          flag: "read",
        },
      }),
    );
    if (res.found_newest || res.last_processed_id === null) break;
    anchor = res.last_processed_id;
    includeAnchor = false;
  }
}

/** "✔ " marks a resolved topic (Zulip's RESOLVED_TOPIC_PREFIX). */
export const RESOLVED_PREFIX = "✔ ";

export function isResolved(topic: string): boolean {
  return topic.startsWith(RESOLVED_PREFIX);
}

/** Resolves the message's topic, or unresolves it: the whole topic renamed, as Zulip does. */
export function toggleResolved(m: Msg) {
  const topic = isResolved(m.subject)
    ? m.subject.replace(/^[✔ ]+/u, "")
    : `${RESOLVED_PREFIX}${m.subject}`;
  return call(
    api.PATCH("/messages/{message_id}", {
      params: { path: { message_id: m.id } },
      body: {
        topic,
        propagate_mode: "change_all",
        send_notification_to_old_thread: false,
        send_notification_to_new_thread: true,
      },
    }),
  );
}

/** compose_actions.quote_message: a reply in the message's conversation quoting it. */
export async function quoteAndReply(m: Msg) {
  const target =
    m.type === "stream" && m.stream_id !== undefined
      ? { kind: "stream" as const, streamId: m.stream_id, topic: m.subject }
      : {
          kind: "dm" as const,
          userIds: (() => {
            const others = dmMembers(m).filter((u) => u !== me.value.id);
            return others.length ? others : [me.value.id];
          })(),
        };
  openCompose(target);
  const raw = await fetchRaw(m.id);
  const name = users.value.get(m.sender_id)?.full_name ?? m.sender_full_name;
  const fence = raw.includes("```") ? "````" : "```";
  const quote = `@_**${name}|${m.sender_id}** [said](${messageLink(m)}):\n${fence}quote\n${raw}\n${fence}\n`;
  draft.value = draft.value.trim() ? `${draft.value.trimEnd()}\n\n${quote}` : quote;
  openCompose(target);
}
