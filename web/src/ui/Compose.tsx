/**
 * The compose box: addressed to the view's conversation (a topic, a channel with a topic to
 * name, a direct-message conversation), or to what `r`, `c` and `x` chose. Enter sends,
 * Shift+Enter starts a new line; the message shows at once (local echo). Typing notifications go
 * out while typing, and "… is typing" shows for the conversation in view.
 *
 * It helps as Zulip's does: typeahead in the message (`@` people, groups and wildcards, `@_`
 * silent mentions, `#` channels and `#channel>` topics, `:` emoji), in the Topic field (the
 * channel's topics) and in the To field (people); formatting buttons and keys (Ctrl+B, Ctrl+I,
 * Ctrl+Shift+L) in the toolbar row (`.compose-tools`, where other tools' buttons go too); a
 * preview rendered by the server (POST /json/messages/render); and the organization's length
 * limit, counted down near it and refused past it.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { sortedIds, type View } from "../narrow.ts";
import { compose, draft, openCompose, sendMessage, type Target } from "../state/compose.ts";
import { customEmoji, emojiChar, matchEmoji, unicodeEmoji, type Emoji } from "../state/emoji.ts";
import { listFor, store } from "../state/messages.ts";
import { dmKey, me, realm, recentDms, subscriptions, users } from "../state/model.ts";
import { loadTopics, topics } from "../state/topics.ts";
import {
  channelByName,
  matchChannels,
  matchGroups,
  matchTopics,
  matchUsers,
  matchWildcards,
  mentionSyntax,
  warmUserIndex,
} from "../state/typeahead.ts";
import { noteTyping, stopTyping, typingIn } from "../state/typing.ts";
import { view } from "../state/view.ts";
import type { User } from "../types.ts";
import { postprocess } from "./content.ts";
import { useTypeahead, type TypeaheadOption } from "./Typeahead.tsx";
import "./Compose.css";
import { ComposeActions } from "./ComposeActions.tsx";

export function targetOfView(v: View): Target | undefined {
  const n = v.narrow;
  if (n.kind === "topic") return { kind: "stream", streamId: n.streamId, topic: n.topic };
  if (n.kind === "channel") return { kind: "stream", streamId: n.streamId, topic: "" };
  if (n.kind === "dm")
    return { kind: "dm", userIds: sortedIds(n.userIds).filter((id) => id !== me.value.id) };
  return undefined;
}

function userByText(text: string): User | undefined {
  const t = text.trim().toLowerCase();
  for (const u of users.value.values())
    if (
      u.is_active &&
      (u.email.toLowerCase() === t ||
        (u.delivery_email ?? "").toLowerCase() === t ||
        u.full_name.toLowerCase() === t)
    )
      return u;
  return undefined;
}

function namesOf(ids: number[]): string {
  return ids
    .map((id) => users.value.get(id)?.full_name ?? "")
    .filter(Boolean)
    .join(", ");
}

/** A Markdown edit of the selection (Zulip's compose formatting buttons and keys). */
export type Format = "bold" | "italic" | "link" | "code" | "quote";

/** The text that replaces `selected`, and what to select in it afterwards (offsets in it). */
export function formatText(
  format: Format,
  selected: string,
): { text: string; select: [number, number] } {
  const wrap = (left: string, right: string) => ({
    text: left + selected + right,
    select: [left.length, left.length + selected.length] as [number, number],
  });
  switch (format) {
    case "bold":
      return wrap("**", "**");
    case "italic":
      return wrap("*", "*");
    case "code":
      return selected.includes("\n") ? wrap("```\n", "\n```") : wrap("`", "`");
    case "quote":
      return wrap("```quote\n", "\n```");
    case "link": {
      const text = `[${selected}](url)`;
      return { text, select: [text.length - 4, text.length - 1] };
    }
  }
}

/** Replaces the field's text from `start` to `end` as typing would (the browser's undo keeps it). */
function replaceRange(field: HTMLTextAreaElement, start: number, end: number, text: string) {
  field.focus();
  field.setSelectionRange(start, end);
  if (!document.execCommand("insertText", false, text)) {
    field.setRangeText(text, start, end, "end");
    field.dispatchEvent(new Event("input", { bubbles: true }));
  }
}

/** Senders of the conversation in view, most recent first: the mention typeahead's first choices. */
function conversationPeople(target: Target | undefined): number[] {
  const ids: number[] = [];
  if (target?.kind === "dm") ids.push(...target.userIds);
  const list = listFor(view.value.narrow);
  for (let i = list.ids.length - 1; i >= 0 && ids.length < 30; i--) {
    const m = store.get(list.ids[i]!);
    if (m && !ids.includes(m.sender_id)) ids.push(m.sender_id);
  }
  return ids.filter((id) => id !== me.value.id);
}

let emojiList: Emoji[] | undefined;

type Suggestion = { insert: string; start: number };

const MENTION = /(?<=^|[\s(])@(_?)(?:\*\*?)?([^@*\n]{0,40})$/;
const CHANNEL_TOPIC = /(?<=^|[\s(])#(?:\*\*)?([^*#>\n]+?)(?:\*\*)?>([^*\n]{0,60})$/;
const CHANNEL = /(?<=^|[\s(])#(?:\*\*)?([^*#>\n]{0,40})$/;
const EMOJI = /(?<=^|[\s(]):([\w+-]{2,})$/;

function userOption(u: User, insert: string, start: number): TypeaheadOption<Suggestion> {
  return {
    key: `u${u.user_id}`,
    value: { insert, start },
    label: u.full_name,
    detail: u.delivery_email ?? u.email,
  };
}

/** What the message typeahead offers for the text before the caret. */
function messageSuggestions(
  before: string,
  target: Target | undefined,
  streamMode: boolean,
  emojiLoaded: () => void,
): TypeaheadOption<Suggestion>[] {
  let m = MENTION.exec(before);
  if (m) {
    const start = m.index;
    const silent = m[1] === "_";
    const q = m[2]!;
    if (q.split(" ").length > 4) return [];
    const people = matchUsers(q, { preferred: conversationPeople(target) }).map((u) =>
      userOption(u, mentionSyntax(u, silent) + " ", start),
    );
    const wildcards =
      streamMode && !silent
        ? matchWildcards(q).map((w) => ({
            key: `w${w}`,
            value: { insert: `@**${w}** `, start },
            label: w,
            detail:
              w === "topic"
                ? t("Notify topic")
                : w === "channel"
                  ? t("Notify channel")
                  : t("Notify everyone"),
          }))
        : [];
    const groups = matchGroups(q).map((g) => ({
      key: `g${g.id}`,
      value: { insert: `@${silent ? "_" : ""}*${g.name}* `, start },
      label: g.name,
      detail: g.description || t("User group"),
    }));
    // Wildcards first once their name is being typed (Zulip ranks them by match too).
    return q.length >= 2 && wildcards.length
      ? [...wildcards, ...people, ...groups]
      : [...people, ...groups, ...wildcards];
  }
  m = CHANNEL_TOPIC.exec(before);
  if (m) {
    const channel = channelByName(m[1]!);
    if (channel) {
      void loadTopics(channel.stream_id);
      const start = m.index;
      const q = m[2]!;
      const options = matchTopics(channel.stream_id, q).map((tp) => ({
        key: `t${tp.name}`,
        value: { insert: `#**${channel.name}>${tp.name}** `, start },
        label: tp.name,
        detail: `#${channel.name}`,
      }));
      if (q.trim() && !options.some((o) => o.label.toLowerCase() === q.trim().toLowerCase()))
        options.push({
          key: "t-new",
          value: { insert: `#**${channel.name}>${q.trim()}** `, start },
          label: q.trim(),
          detail: t("New topic"),
        });
      return options;
    }
  }
  m = CHANNEL.exec(before);
  if (m) {
    const start = m.index;
    return matchChannels(m[1]!).map((s) => ({
      key: `s${s.stream_id}`,
      value: { insert: `#**${s.name}** `, start },
      label: s.name,
      detail: s.description || undefined,
    }));
  }
  m = EMOJI.exec(before);
  if (m) {
    const start = m.index;
    if (!emojiList)
      void unicodeEmoji().then((all) => {
        emojiList = all;
        emojiLoaded();
      });
    const q = m[1]!.toLowerCase();
    // One row per matching name ("thumbs_up" and "thumbs_down" for :thumbs), leaving out a
    // name that only drops the underscores of another ("thumbsup").
    const rows: TypeaheadOption<Suggestion>[] = [];
    for (const e of matchEmoji([...customEmoji.value, ...(emojiList ?? [])], q, 8)) {
      const names = [e.name, ...e.aliases];
      const matching = names.filter(
        (n) => n.startsWith(q) || n.split("_").some((w) => w.startsWith(q)),
      );
      for (const name of matching.length ? matching : [e.name]) {
        if (!name.includes("_") && matching.some((n) => n !== name && n.replace(/_/g, "") === name))
          continue;
        rows.push({
          key: `e${e.type}${e.code}:${name}`,
          value: { insert: `:${name}: `, start },
          label: `:${name}:`,
          icon: e.url ? <img src={e.url} alt="" /> : emojiChar(e.code),
        });
      }
    }
    return rows;
  }
  return [];
}

/** The To field's text split into the people it names so far and what is being typed after. */
function parseRecipients(to: string): { ids: number[]; rest: string; unknown?: string } {
  // Names may hold commas ("Othello, the Moor of Venice"): the longest run of pieces that
  // names someone wins.
  const parts = to.split(",").map((p) => p.trim());
  const ids: number[] = [];
  for (let i = 0; i < parts.length;) {
    if (!parts[i]) {
      i++;
      continue;
    }
    let found: { user: User; next: number } | undefined;
    for (let j = parts.length; j > i && !found; j--) {
      const user = userByText(parts.slice(i, j).join(", "));
      if (user) found = { user, next: j };
    }
    if (!found) return { ids, rest: parts.slice(i).join(", "), unknown: parts[i] };
    ids.push(found.user.user_id);
    i = found.next;
  }
  return { ids, rest: "" };
}

export function Compose() {
  const c = compose.value;
  const v = view.value;
  const subs = [...subscriptions.value.values()].sort((a, b) => a.name.localeCompare(b.name));
  const target = c.target ?? targetOfView(v);
  const [mode, setMode] = useState<"stream" | "dm">(target?.kind ?? "stream");
  const [streamId, setStreamId] = useState<number | undefined>(
    target?.kind === "stream" ? target.streamId : subs[0]?.stream_id,
  );
  const [topic, setTopic] = useState(target?.kind === "stream" ? target.topic : "");
  const [to, setTo] = useState(target?.kind === "dm" ? namesOf(target.userIds) : "");
  const [error, setError] = useState<string | undefined>(undefined);
  /** The rendered preview (HTML) while previewing, "" while it loads; undefined: writing. */
  const [preview, setPreview] = useState<string | undefined>(undefined);
  const [, setEmojiTick] = useState(0);
  const content = useRef<HTMLTextAreaElement>(null);
  const topicInput = useRef<HTMLInputElement>(null);
  const toInput = useRef<HTMLInputElement>(null);
  /** Whether the topic was typed in since the field got the focus (its typeahead is wanted). */
  const topicTyped = useRef(false);

  const messageTypeahead = useTypeahead<Suggestion>(
    "compose-message",
    (s) => {
      const field = content.current;
      if (!field) return;
      replaceRange(field, s.start, field.selectionStart, s.insert);
    },
    t("Suggestions"),
  );
  const topicTypeahead = useTypeahead<string>(
    "compose-topic",
    (name) => {
      setTopic(name);
      content.current?.focus();
    },
    t("Topics"),
  );
  const toTypeahead = useTypeahead<User>(
    "compose-to",
    (u) => {
      const { ids } = parseRecipients(to);
      setTo([...namesOf(ids).split(", ").filter(Boolean), u.full_name].join(", ") + ", ");
      toInput.current?.focus();
    },
    t("People"),
  );

  // A new view or a new choice (reply, new topic, new DM) readdresses the box.
  useEffect(() => {
    const t = c.target ?? targetOfView(v);
    setMode(t?.kind ?? "stream");
    if (t?.kind === "stream") {
      setStreamId(t.streamId);
      setTopic(t.topic);
    } else if (t?.kind === "dm") setTo(namesOf(t.userIds));
    else {
      setStreamId((old) => old ?? subs[0]?.stream_id);
      setTopic("");
    }
    setError(undefined);
    setPreview(undefined);
    const field =
      c.focus === "topic"
        ? topicInput
        : c.focus === "to"
          ? toInput
          : c.focus === "content"
            ? content
            : undefined;
    if (field) requestAnimationFrame(() => field.current?.focus());
  }, [c.focusTick, v]);

  const current = (): Target | string => {
    if (mode === "stream") {
      if (streamId === undefined || !subscriptions.value.has(streamId))
        return t("Choose a channel.");
      return { kind: "stream", streamId, topic: topic.trim() };
    }
    const { ids, unknown } = parseRecipients(to);
    if (unknown !== undefined) return t("Unknown user: {name}", { name: unknown });
    if (!ids.length) return t("Choose at least one recipient.");
    return { kind: "dm", userIds: sortedIds(ids) };
  };

  const max = realm.value.maxMessageLength;
  const length = draft.value.length;
  const tooLong = length > max;
  const tooLongText = t("Message length shouldn't be greater than {max} characters.", { max });

  const send = () => {
    const text = draft.value;
    if (!text.trim()) return;
    if (text.length > max) return setError(tooLongText);
    const t = current();
    if (typeof t === "string") return setError(t);
    setError(undefined);
    setPreview(undefined);
    sendMessage(t, text);
    draft.value = "";
  };

  const typingTo = () => {
    const t = current();
    return typeof t === "string" ? undefined : t;
  };

  /** Offers what fits the text before the message's caret (or closes the typeahead). */
  const suggest = () => {
    const field = content.current;
    if (!field || field.selectionStart !== field.selectionEnd) return messageTypeahead.close();
    const before = field.value.slice(0, field.selectionStart);
    const options = messageSuggestions(before, typingTo(), mode === "stream", () =>
      setEmojiTick((n) => n + 1),
    );
    if (options.length) messageTypeahead.show(options);
    else if (messageTypeahead.open) messageTypeahead.close();
  };

  const suggestTopics = (text: string) => {
    if (streamId === undefined) return;
    void loadTopics(streamId);
    const q = text.trim().toLowerCase();
    const options = matchTopics(streamId, text)
      .filter((tp) => tp.name.toLowerCase() !== q)
      .map((tp) => ({ key: tp.name, value: tp.name, label: tp.name }));
    if (options.length) topicTypeahead.show(options);
    else topicTypeahead.close();
  };

  // Data arriving after the key that asked for it (emoji load on first use, a channel's topics
  // on first look) refreshes the suggestions of the field being typed in.
  const knownTopics = topics.value;
  useEffect(() => {
    const focused = document.activeElement;
    if (focused && focused === content.current) suggest();
    else if (focused && focused === topicInput.current && topicTyped.current) suggestTopics(topic);
  }, [emojiList, knownTopics]);

  const suggestPeople = (text: string) => {
    const { ids, rest } = parseRecipients(text);
    if (!rest.trim()) return toTypeahead.close();
    const options = matchUsers(rest, {
      exclude: new Set(ids),
      preferred: [...recentPeople()],
    }).map((u) => ({
      key: String(u.user_id),
      value: u,
      label: u.full_name,
      detail: u.delivery_email ?? u.email,
    }));
    if (options.length) toTypeahead.show(options);
    else toTypeahead.close();
  };

  const format = (f: Format) => {
    const field = content.current;
    if (!field) return;
    const { selectionStart: start, selectionEnd: end } = field;
    const { text, select } = formatText(f, field.value.slice(start, end));
    replaceRange(field, start, end, text);
    field.setSelectionRange(start + select[0], start + select[1]);
  };

  const togglePreview = () => {
    if (preview !== undefined) {
      setPreview(undefined);
      requestAnimationFrame(() => content.current?.focus());
      return;
    }
    messageTypeahead.close();
    setPreview("");
    const text = draft.value;
    call(api.POST("/messages/render", { body: { content: text.trim() ? text : " " } }))
      .then((r) => setPreview(postprocess(r.rendered)))
      .catch((err: unknown) => {
        setPreview(undefined);
        setError(errorText(err));
      });
  };

  const remaining = max - length;
  const showCounter = length >= max * 0.9;

  return (
    <form
      class="compose"
      aria-label={t("Compose")}
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          stopTyping();
          (document.activeElement as HTMLElement | null)?.blur();
          compose.value = { ...compose.value, target: undefined };
        }
      }}
    >
      <div class="recipient-row">
        {mode === "stream" ? (
          <>
            <select
              aria-label={t("Channel")}
              value={streamId ?? ""}
              onChange={(e) => setStreamId(Number(e.currentTarget.value))}
            >
              {subs.map((s) => (
                <option key={s.stream_id} value={s.stream_id}>
                  #{s.name}
                </option>
              ))}
            </select>
            <div class="typeahead-anchor recipient-field">
              <input
                ref={topicInput}
                aria-label={t("Topic")}
                placeholder={realm.value.emptyTopicName}
                value={topic}
                maxLength={realm.value.maxTopicLength}
                autoComplete="off"
                {...topicTypeahead.fieldProps}
                onInput={(e) => {
                  setTopic(e.currentTarget.value);
                  topicTyped.current = true;
                  suggestTopics(e.currentTarget.value);
                }}
                onKeyDown={(e) => topicTypeahead.keyDown(e)}
                onFocus={() => streamId !== undefined && void loadTopics(streamId)}
                onBlur={() => {
                  topicTyped.current = false;
                  topicTypeahead.close();
                }}
              />
              {topicTypeahead.list}
            </div>
          </>
        ) : (
          <div class="typeahead-anchor recipient-field">
            <input
              ref={toInput}
              aria-label={t("To")}
              placeholder={t("Names or emails, separated by commas")}
              value={to}
              autoComplete="off"
              {...toTypeahead.fieldProps}
              onInput={(e) => {
                setTo(e.currentTarget.value);
                suggestPeople(e.currentTarget.value);
              }}
              onKeyDown={(e) => toTypeahead.keyDown(e)}
              onFocus={warmUserIndex}
              onBlur={() => toTypeahead.close()}
            />
            {toTypeahead.list}
          </div>
        )}
        <button
          type="button"
          class="link"
          onClick={() =>
            openCompose(
              { kind: "stream", streamId: streamId ?? subs[0]?.stream_id ?? 0, topic: "" },
              "topic",
            )
          }
        >
          {t("New topic")}
        </button>
        <button
          type="button"
          class="link"
          onClick={() => openCompose({ kind: "dm", userIds: [] }, "to")}
        >
          {t("New direct message")}
        </button>
      </div>
      <div class="content-row">
        <div class="typeahead-anchor message-field">
          {preview === undefined ? (
            <textarea
              ref={content}
              aria-label={t("Message")}
              aria-describedby={tooLong ? "compose-too-long" : undefined}
              placeholder={
                mode === "dm"
                  ? t("Message {to}", { to: to || "…" })
                  : topic
                    ? t("Message #{channel} > {topic}", {
                        channel: subscriptions.value.get(streamId ?? 0)?.name ?? "",
                        topic,
                      })
                    : t("Message #{channel}", {
                        channel: subscriptions.value.get(streamId ?? 0)?.name ?? "",
                      })
              }
              rows={Math.min(10, Math.max(2, draft.value.split("\n").length))}
              value={draft.value}
              {...messageTypeahead.fieldProps}
              onInput={(e) => {
                draft.value = e.currentTarget.value;
                noteTyping(typingTo(), !draft.value.trim());
                suggest();
              }}
              onClick={suggest}
              onFocus={warmUserIndex}
              onBlur={() => messageTypeahead.close()}
              onKeyDown={(e) => {
                if (messageTypeahead.keyDown(e)) return;
                const ctrl = e.ctrlKey || e.metaKey;
                const key = e.key.toLowerCase();
                if (ctrl && !e.altKey && !e.shiftKey && (key === "b" || key === "i")) {
                  e.preventDefault();
                  format(key === "b" ? "bold" : "italic");
                } else if (ctrl && e.shiftKey && key === "l") {
                  e.preventDefault();
                  format("link");
                } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                  e.preventDefault();
                  send();
                }
              }}
              onKeyUp={(e) => {
                if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) suggest();
              }}
            />
          ) : (
            <div
              class="compose-preview content"
              role="region"
              aria-label={t("Preview")}
              aria-busy={preview === ""}
              dangerouslySetInnerHTML={{ __html: preview || `<p>${t("Loading…")}</p>` }}
            />
          )}
          {messageTypeahead.list}
        </div>
        <ComposeActions target={typingTo()} textarea={content} />
        <button
          type="submit"
          class="send"
          disabled={tooLong}
          aria-describedby={tooLong ? "compose-too-long" : undefined}
        >
          {t("Send")}
        </button>
      </div>
      <div class="compose-tools" role="toolbar" aria-label={t("Formatting")}>
        <FormatButton label={t("Bold")} keys="Ctrl+B" onClick={() => format("bold")}>
          <b>B</b>
        </FormatButton>
        <FormatButton label={t("Italic")} keys="Ctrl+I" onClick={() => format("italic")}>
          <i>I</i>
        </FormatButton>
        <FormatButton label={t("Link")} keys="Ctrl+Shift+L" onClick={() => format("link")}>
          <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">
            <path
              d="M6.5 9.5l3-3M7 4.5l1.2-1.2a2.5 2.5 0 013.5 3.5L10.5 8M9 11.5l-1.2 1.2a2.5 2.5 0 01-3.5-3.5L5.5 8"
              fill="none"
              stroke="currentColor"
              stroke-width="1.5"
              stroke-linecap="round"
            />
          </svg>
        </FormatButton>
        <FormatButton label={t("Code")} onClick={() => format("code")}>
          <code>{"</>"}</code>
        </FormatButton>
        <FormatButton label={t("Quote")} onClick={() => format("quote")}>
          ❝
        </FormatButton>
        <button
          type="button"
          class="compose-tool preview-toggle"
          aria-pressed={preview !== undefined}
          onClick={togglePreview}
        >
          {preview === undefined ? t("Preview") : t("Write")}
        </button>
        <span class="compose-tools-end" />
        {showCounter && (
          <span
            class={tooLong ? "compose-counter over" : "compose-counter"}
            role="status"
            aria-label={t("{count} characters remaining", { count: remaining })}
          >
            {remaining}
          </span>
        )}
      </div>
      {tooLong && (
        <p class="error" id="compose-too-long">
          {tooLongText}
        </p>
      )}
      {error && error !== tooLongText && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

function FormatButton(props: {
  label: string;
  keys?: string;
  onClick: () => void;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class="compose-tool"
      aria-label={props.label}
      title={props.keys ? `${props.label} (${props.keys})` : props.label}
      aria-keyshortcuts={props.keys?.replace("Ctrl", "Control")}
      // Keep the focus (and the selection) in the message.
      onMouseDown={(e) => e.preventDefault()}
      onClick={props.onClick}
    >
      {props.children}
    </button>
  );
}

/** People of recent direct messages, most recent first (the To field's first choices). */
function recentPeople(): Set<number> {
  const out = new Set<number>();
  const dms = [...recentDms.value.values()].sort((a, b) => b.maxId - a.maxId).slice(0, 20);
  for (const c of dms) for (const id of c.userIds) if (id !== me.value.id) out.add(id);
  return out;
}

/** "Othello is typing…" for the conversations of the view. */
export function TypingNotice() {
  const n = view.value.narrow;
  let wanted: ((conversation: string) => boolean) | undefined;
  if (n.kind === "all") wanted = () => true;
  else if (n.kind === "channel") wanted = (c) => c.startsWith(`s:${n.streamId}:`);
  else if (n.kind === "topic") wanted = (c) => c === `s:${n.streamId}:${n.topic.toLowerCase()}`;
  else if (n.kind === "dm") wanted = (c) => c === `d:${dmKey([...n.userIds, me.value.id])}`;
  const ids = wanted ? typingIn(wanted) : [];
  const who = ids.map((id) => users.value.get(id)?.full_name ?? t("Someone"));
  const text =
    who.length === 0
      ? ""
      : who.length === 1
        ? t("{name} is typing…", { name: who[0]! })
        : who.length <= 3
          ? t("{names} and {last} are typing…", {
              names: who.slice(0, -1).join(", "),
              last: who.at(-1)!,
            })
          : t("Several people are typing…");
  return (
    <div class="typing" aria-live="polite">
      {text}
    </div>
  );
}
