/**
 * One message of the feed: its sender (avatar and name) when it starts a run, its time, the HTML
 * the server rendered (post-processed), "(edited)", its reactions (a click toggles mine), the
 * hover and focus toolbar of its actions (MessageActions.tsx), and, while it is edited, the
 * inline editor of its content (and of its topic, where moving it is allowed).
 * A row renders again only when one of its props changed (the store replaces changed messages),
 * or a signal it reads (its sender's name and avatar, the time format, a permission) did.
 */
import { Component } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { me, realm, realmEmoji, users } from "../state/model.ts";
import { editing, isStarred, toggleReaction } from "../state/edit.ts";
import { canMoveTopic } from "../state/permissions.ts";
import { selectedId } from "../state/view.ts";
import type { Msg, Reaction } from "../types.ts";
import { messageHtml } from "./content.ts";
import { Avatar } from "./Avatar.tsx";
import { SenderName } from "./UserCard.tsx";
import { RecipientHeader } from "./RecipientHeader.tsx";
import { fullDate, timeOfDay } from "./format.ts";
import { Toolbar } from "./MessageActions.tsx";
import "./Message.css";

export interface RowProps {
  m: Msg;
  showSender: boolean;
  unread: boolean;
  selected: boolean;
  isEditing: boolean;
  /** Set on the first message of a run: the day shown in the conversation's bar above it. */
  day: string | undefined;
}

function shallowEqual(a: object, b: object) {
  const ka = Object.keys(a) as (keyof typeof a)[];
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

export class MessageRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps) {
    return !shallowEqual(this.props, next);
  }
  override render() {
    return <MessageView {...this.props} />;
  }
}

function MessageView({ m, showSender, unread, selected, isEditing, day }: RowProps) {
  // The sender's name and avatar as they are now (the people store, kept current by
  // `realm_user` events), as Zulip's web app shows them: a change shows on every message at once,
  // without touching the messages. The message's own copy is the fallback (an unknown sender).
  const sender = users.value.get(m.sender_id);
  const name = sender?.full_name ?? m.sender_full_name;
  const avatarUrl = sender?.avatar_url ?? m.avatar_url ?? undefined;
  const time = timeOfDay(m.timestamp);
  const edited = m.last_edit_timestamp !== undefined;
  return (
    <article
      aria-label={`${name}, ${time}`}
      aria-current={selected ? "true" : undefined}
      data-id={m.id}
      onClick={() => (selectedId.value = m.id)}
    >
      {day !== undefined && <RecipientHeader m={m} day={day} />}
      <div
        class={`msg${showSender ? " first" : ""}${unread ? " unread" : ""}${selected ? " selected" : ""}`}
      >
        <div class="gutter">
          {showSender && <Avatar userId={m.sender_id} name={name} url={avatarUrl} />}
        </div>
        <div class="body">
          <div class="meta">
            {showSender && <SenderName userId={m.sender_id} name={name} />}
            <time
              dateTime={new Date(m.timestamp * 1000).toISOString()}
              title={fullDate(m.timestamp)}
            >
              {time}
            </time>
            {edited && <span class="edited">{t("(edited)")}</span>}
            {isStarred(m) && (
              <span class="starred-mark" title={t("Starred")}>
                ★
              </span>
            )}
          </div>
          {!isEditing && <Toolbar m={m} />}
          {isEditing ? (
            <EditBox m={m} />
          ) : (
            <div class="content" dangerouslySetInnerHTML={{ __html: messageHtml(m) }} />
          )}
          {m.reactions.length > 0 && <Reactions m={m} />}
        </div>
      </div>
    </article>
  );
}

interface ReactionGroup {
  r: Reaction;
  userIds: number[];
}

function emojiOf(r: Reaction) {
  if (r.reaction_type === "unicode_emoji") {
    try {
      return (
        <span class="emoji">
          {String.fromCodePoint(...r.emoji_code.split("-").map((h) => Number.parseInt(h, 16)))}
        </span>
      );
    } catch {
      return <span class="emoji">:{r.emoji_name}:</span>;
    }
  }
  const url = r.reaction_type === "realm_emoji" ? realmEmoji.value.get(r.emoji_code) : undefined;
  return url ? <img class="emoji" src={url} alt="" /> : <span class="emoji">:{r.emoji_name}:</span>;
}

function Reactions({ m }: { m: Msg }) {
  const groups = new Map<string, ReactionGroup>();
  for (const r of m.reactions) {
    const key = `${r.reaction_type}:${r.emoji_code}`;
    const g = groups.get(key);
    if (g) g.userIds.push(r.user_id);
    else groups.set(key, { r, userIds: [r.user_id] });
  }
  const myId = me.value.id;
  const toggle = (r: Reaction) => {
    void toggleReaction(m, {
      name: r.emoji_name,
      code: r.emoji_code,
      type: r.reaction_type,
    }).catch(() => {});
  };
  return (
    <div class="reactions">
      {[...groups.values()].map(({ r, userIds }) => {
        const mine = userIds.includes(myId);
        const who = userIds
          .map((id) =>
            id === myId ? t("You") : (users.value.get(id)?.full_name ?? t("Unknown user")),
          )
          .join(", ");
        return (
          <button
            type="button"
            key={`${r.reaction_type}:${r.emoji_code}`}
            class={mine ? "reaction mine" : "reaction"}
            aria-pressed={mine}
            aria-label={
              userIds.length === 1
                ? t("{emoji}: 1 reaction by {who}", { emoji: r.emoji_name, who })
                : t("{emoji}: {count} reactions by {who}", {
                    emoji: r.emoji_name,
                    count: userIds.length,
                    who,
                  })
            }
            title={t("{who} reacted with :{emoji}:", { who, emoji: r.emoji_name })}
            onClick={(e) => {
              e.stopPropagation();
              toggle(r);
            }}
          >
            {emojiOf(r)} <span class="count">{userIds.length}</span>
          </button>
        );
      })}
    </div>
  );
}

/** The inline editor: the raw Markdown (fetched), and the topic of a channel message. */
function EditBox({ m }: { m: Msg }) {
  const [raw, setRaw] = useState<string | undefined>(undefined);
  const [topic, setTopic] = useState(m.type === "stream" ? m.subject : "");
  const [error, setError] = useState<string | undefined>(undefined);
  const [saving, setSaving] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    let live = true;
    call(
      api.GET("/messages/{message_id}", {
        params: { path: { message_id: m.id }, query: { apply_markdown: false } },
      }),
    )
      .then((res) => {
        if (!live) return;
        setRaw(res.raw_content ?? res.message.content);
        requestAnimationFrame(() => area.current?.focus());
      })
      .catch((err) => setError(errorText(err)));
    return () => {
      live = false;
    };
  }, [m.id]);
  const save = async () => {
    if (raw === undefined) return;
    const body: { content?: string; topic?: string } = {};
    const original = m.type === "stream" ? m.subject : "";
    if (m.type === "stream" && canMoveTopic(m) && topic.trim() !== original)
      body.topic = topic.trim();
    body.content = raw;
    setSaving(true);
    try {
      await call(
        api.PATCH("/messages/{message_id}", { params: { path: { message_id: m.id } }, body }),
      );
      editing.value = undefined;
    } catch (err) {
      setError(errorText(err));
    } finally {
      setSaving(false);
    }
  };
  return (
    <form
      class="edit"
      aria-label={t("Edit message")}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          editing.value = undefined;
        }
      }}
    >
      {m.type === "stream" && canMoveTopic(m) && (
        <input
          aria-label={t("Topic")}
          value={topic}
          maxLength={realm.value.maxTopicLength}
          onInput={(e) => setTopic(e.currentTarget.value)}
        />
      )}
      <textarea
        ref={area}
        aria-label={t("Message content")}
        value={raw ?? ""}
        disabled={raw === undefined}
        rows={Math.min(12, Math.max(2, (raw ?? "").split("\n").length + 1))}
        onInput={(e) => setRaw(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void save();
          }
        }}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="buttons">
        <button type="submit" disabled={saving || raw === undefined}>
          {t("Save")}
        </button>
        <button type="button" onClick={() => (editing.value = undefined)}>
          {t("Cancel")}
        </button>
      </div>
    </form>
  );
}
