/**
 * The compose box: addressed to the view's conversation (a topic, a channel with a topic to
 * name, a direct-message conversation), or to what `r`, `c` and `x` chose. Enter sends,
 * Shift+Enter starts a new line; the message shows at once (local echo). Typing notifications go
 * out while typing, and "… is typing" shows for the conversation in view.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { sortedIds, type View } from "../narrow.ts";
import { compose, draft, openCompose, sendMessage, type Target } from "../state/compose.ts";
import { dmKey, me, realm, subscriptions, users } from "../state/model.ts";
import { noteTyping, stopTyping, typingIn } from "../state/typing.ts";
import { view } from "../state/view.ts";
import type { User } from "../types.ts";
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
  const content = useRef<HTMLTextAreaElement>(null);
  const topicInput = useRef<HTMLInputElement>(null);
  const toInput = useRef<HTMLInputElement>(null);

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
      if (streamId === undefined || !subscriptions.value.has(streamId)) return "Choose a channel.";
      return { kind: "stream", streamId, topic: topic.trim() };
    }
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
      if (!found) return `Unknown user: ${parts[i]}`;
      ids.push(found.user.user_id);
      i = found.next;
    }
    if (!ids.length) return "Choose at least one recipient.";
    return { kind: "dm", userIds: sortedIds(ids) };
  };

  const send = () => {
    const text = draft.value;
    if (!text.trim()) return;
    if (text.length > realm.value.maxMessageLength)
      return setError(
        `Message length shouldn't be greater than ${realm.value.maxMessageLength} characters.`,
      );
    const t = current();
    if (typeof t === "string") return setError(t);
    setError(undefined);
    sendMessage(t, text);
    draft.value = "";
  };

  const typingTo = () => {
    const t = current();
    return typeof t === "string" ? undefined : t;
  };

  return (
    <form
      class="compose"
      aria-label="Compose"
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
              aria-label="Channel"
              value={streamId ?? ""}
              onChange={(e) => setStreamId(Number(e.currentTarget.value))}
            >
              {subs.map((s) => (
                <option key={s.stream_id} value={s.stream_id}>
                  #{s.name}
                </option>
              ))}
            </select>
            <input
              ref={topicInput}
              aria-label="Topic"
              placeholder={realm.value.emptyTopicName}
              value={topic}
              maxLength={realm.value.maxTopicLength}
              onInput={(e) => setTopic(e.currentTarget.value)}
            />
          </>
        ) : (
          <>
            <input
              ref={toInput}
              aria-label="To"
              placeholder="Names or emails, separated by commas"
              list="compose-people"
              value={to}
              onInput={(e) => setTo(e.currentTarget.value)}
            />
            <datalist id="compose-people">
              {[...users.value.values()]
                .filter((u) => u.is_active && u.user_id !== me.value.id)
                .slice(0, 500)
                .map((u) => (
                  <option key={u.user_id} value={u.full_name}>
                    {u.email}
                  </option>
                ))}
            </datalist>
          </>
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
          New topic
        </button>
        <button
          type="button"
          class="link"
          onClick={() => openCompose({ kind: "dm", userIds: [] }, "to")}
        >
          New direct message
        </button>
      </div>
      <div class="content-row">
        <textarea
          ref={content}
          aria-label="Message"
          placeholder={
            mode === "dm"
              ? "Message " + (to || "…")
              : `Message #${subscriptions.value.get(streamId ?? 0)?.name ?? ""}${topic ? " > " + topic : ""}`
          }
          rows={Math.min(10, Math.max(2, draft.value.split("\n").length))}
          value={draft.value}
          onInput={(e) => {
            draft.value = e.currentTarget.value;
            noteTyping(typingTo(), !draft.value.trim());
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              send();
            }
          }}
        />
        <ComposeActions target={typingTo()} textarea={content} />
        <button type="submit" class="send">
          Send
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
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
  const who = ids.map((id) => users.value.get(id)?.full_name ?? "Someone");
  const text =
    who.length === 0
      ? ""
      : who.length === 1
        ? `${who[0]} is typing…`
        : who.length <= 3
          ? `${who.slice(0, -1).join(", ")} and ${who.at(-1)} are typing…`
          : "Several people are typing…";
  return (
    <div class="typing" aria-live="polite">
      {text}
    </div>
  );
}
