/**
 * The search box: Zulip's operators (`channel:`, `topic:`, `sender:`, `dm:`, `is:`, `has:`,
 * `near:`, each negated by a leading `-`, and free text) with a typeahead of suggestions as
 * Zulip's search_suggestion.ts offers them: the operators, then their operands (channel names,
 * people, the topics of the channel chosen, `is:` and `has:` values), and "Search for" the text.
 * All local and instant: the register's state and the topics already fetched. Enter picks the
 * highlighted suggestion and searches; Tab completes the box with it.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { t } from "../i18n.ts";
import {
  narrowOf,
  parseSearch,
  searchText,
  tokenize,
  type Directory,
  type Narrow,
} from "../narrow.ts";
import { me, names, subscriptions, users } from "../state/model.ts";
import { loadTopics, sortedTopics, topics } from "../state/topics.ts";
import { go, view } from "../state/view.ts";
import "./Search.css";

const SHOWN = 8;

/** The model's names, with the look-ups from names and emails the search box needs. */
export const directory: Directory = {
  channelName: (id) => names.channelName(id),
  userName: (id) => names.userName(id),
  get myId() {
    return me.value.id;
  },
  channelId(name) {
    const want = name.toLowerCase();
    for (const s of subscriptions.value.values())
      if (s.name.toLowerCase() === want) return s.stream_id;
    return undefined;
  },
  userId(s) {
    const want = s.toLowerCase();
    if (/^\d+$/.test(want) && users.value.has(Number(want))) return Number(want);
    for (const u of users.value.values())
      if (u.email.toLowerCase() === want || u.full_name.toLowerCase() === want) return u.user_id;
    return undefined;
  },
  userEmail: (id) => users.value.get(id)?.email,
};

/** The text the box shows for a view: its terms, except for the plain views the sidebar names. */
function boxText(n: Narrow): string {
  return n.kind === "search" || n.kind === "terms" || n.kind === "sender"
    ? searchText(n, directory)
    : "";
}

interface Suggestion {
  /** The whole text of the box once picked. */
  text: string;
  /** What the suggestion says (its accessible name). */
  label: string;
}

function quoted(s: string): string {
  return /\s/.test(s) ? `"${s}"` : s;
}

const OPERATOR_HELP: [string, () => string][] = [
  ["channel:", () => t("Messages in a channel")],
  ["topic:", () => t("Messages in a topic")],
  ["sender:", () => t("Messages sent by a person")],
  ["dm:", () => t("Direct messages with a person")],
  ["is:", () => t("Unread, starred, mentioned, direct or followed messages")],
  ["has:", () => t("Messages with links, images or attachments")],
];

const IS_VALUES: [string, () => string][] = [
  ["unread", () => t("Unread messages")],
  ["starred", () => t("Starred messages")],
  ["mentioned", () => t("Messages that mention you")],
  ["dm", () => t("Direct messages")],
  ["followed", () => t("Messages in followed topics")],
  ["resolved", () => t("Messages in resolved topics")],
];
const HAS_VALUES: [string, () => string][] = [
  ["link", () => t("Messages with links")],
  ["image", () => t("Messages with images")],
  ["attachment", () => t("Messages with attachments")],
  ["reaction", () => t("Messages with reactions")],
];

/** Whether any word of `name` starts with `prefix` (both lower-cased). */
function wordStarts(name: string, prefix: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith(prefix) || n.includes(` ${prefix}`);
}

/** The suggestions for the text typed so far (the last token is the one being completed). */
export function suggest(text: string): Suggestion[] {
  const tokens = tokenize(text);
  const last = tokens[tokens.length - 1];
  // A token is being typed unless the text ends with a space.
  const typing = last && last.end === text.length ? last : undefined;
  const before = typing ? text.slice(0, typing.start) : text;
  const out: Suggestion[] = [];
  const trimmed = text.trim();
  if (typing?.operator !== undefined) {
    const neg = typing.negated ? "-" : "";
    const op = typing.operator;
    const partial = typing.operand.toLowerCase();
    const add = (operand: string, label: string) =>
      out.push({ text: `${before}${neg}${op}:${quoted(operand)}`, label });
    if (op === "channel" || op === "stream") {
      for (const s of [...subscriptions.value.values()].sort((a, b) =>
        a.name.localeCompare(b.name),
      ))
        if (out.length < SHOWN && wordStarts(s.name, partial))
          add(s.name, t("Messages in #{channel}", { channel: s.name }));
    } else if (op === "sender" || op === "from" || op === "dm" || op === "pm-with") {
      // dm: takes several people, comma-separated: the one being typed is after the last comma.
      const comma = op === "dm" || op === "pm-with" ? partial.lastIndexOf(",") : -1;
      const head = comma >= 0 ? typing.operand.slice(0, comma + 1) : "";
      const want = partial.slice(comma + 1);
      if (op !== "dm" && op !== "pm-with" && "me".startsWith(want)) add("me", t("Sent by me"));
      for (const u of users.value.values()) {
        if (out.length >= SHOWN) break;
        if (!u.is_active || u.is_bot) continue;
        if (!wordStarts(u.full_name, want) && !u.email.toLowerCase().startsWith(want)) continue;
        add(
          head + u.email,
          op === "sender" || op === "from"
            ? t("Sent by {name}", { name: u.full_name })
            : t("Direct messages with {name}", { name: u.full_name }),
        );
      }
    } else if (op === "topic" || op === "subject") {
      const channel = tokenize(before).find(
        (x) => (x.operator === "channel" || x.operator === "stream") && !x.negated,
      );
      const id = channel ? directory.channelId(channel.operand) : undefined;
      if (id !== undefined) {
        void loadTopics(id);
        void topics.value;
        for (const tp of sortedTopics(id))
          if (out.length < SHOWN && wordStarts(tp.name, partial))
            add(tp.name, t("Topic {topic}", { topic: tp.name }));
      }
    } else if (op === "is" || op === "has") {
      for (const [value, label] of op === "is" ? IS_VALUES : HAS_VALUES)
        if (value.startsWith(partial)) add(value, label());
    }
    // The text as typed, when it is complete enough to search.
    if (typing.operand && !out.some((s) => s.text === trimmed))
      out.push({ text: trimmed, label: t("Search for {text}", { text: trimmed }) });
    return out;
  }
  if (trimmed) out.push({ text: trimmed, label: t("Search for {text}", { text: trimmed }) });
  if (typing) {
    const word = typing.operand.replace(/^-/, "").toLowerCase();
    const neg = typing.operand.startsWith("-") ? "-" : "";
    for (const [op, label] of OPERATOR_HELP)
      if (op.startsWith(word))
        out.push({ text: `${before}${neg}${op}`, label: `${neg}${op} ${label()}` });
  } else if (!trimmed)
    for (const [op, label] of OPERATOR_HELP) out.push({ text: op, label: `${op} ${label()}` });
  return out.slice(0, SHOWN + 1);
}

export function Search() {
  const n = view.value.narrow;
  const [q, setQ] = useState(boxText(n));
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  // The view's terms, named once the register names its channels and people (after a reload).
  const known = subscriptions.value.size + users.value.size;
  useEffect(() => {
    if (document.activeElement !== input.current) setQ(boxText(n));
  }, [n, known]);
  // Read here so that the topics fetched for `topic:` suggest once they arrive.
  void topics.value;
  const list = useMemo(() => (open ? suggest(q) : []), [open, q, topics.value]);
  const shown = open && list.length > 0;
  const at = Math.min(active, list.length - 1);

  function search(text: string) {
    setOpen(false);
    const trimmed = text.trim();
    if (!trimmed) return;
    const parsed = parseSearch(trimmed, directory);
    if (!parsed.terms.length && parsed.near === undefined) return;
    go(narrowOf(parsed.terms), parsed.near);
    input.current?.blur();
  }

  function pick(s: Suggestion, andSearch: boolean) {
    if (andSearch && !s.text.endsWith(":")) {
      setQ(s.text);
      search(s.text);
      return;
    }
    const next = s.text.endsWith(":") ? s.text : `${s.text} `;
    setQ(next);
    setActive(0);
    input.current?.focus();
  }

  return (
    <form
      role="search"
      class="search"
      onSubmit={(e) => {
        e.preventDefault();
        const s = shown ? list[at] : undefined;
        if (s) pick(s, true);
        else search(q);
      }}
    >
      <input
        ref={input}
        type="search"
        aria-label={t("Search")}
        placeholder={t("Search")}
        autocomplete="off"
        aria-autocomplete="list"
        aria-controls={shown ? "search-suggestions" : undefined}
        aria-activedescendant={shown && at >= 0 ? `search-suggestion-${at}` : undefined}
        value={q}
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setActive(0);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            if (!shown) return setOpen(true);
            e.preventDefault();
            const d = e.key === "ArrowDown" ? 1 : -1;
            setActive((at + d + list.length) % list.length);
          } else if (e.key === "Tab" && shown && !e.shiftKey) {
            const s = list[at];
            if (s && s.text !== q) {
              e.preventDefault();
              pick(s, false);
            }
          } else if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            if (shown) setOpen(false);
            else {
              setQ(boxText(n));
              input.current?.blur();
            }
          }
        }}
      />
      {shown && (
        <ul id="search-suggestions" role="listbox" aria-label={t("Search suggestions")}>
          {list.map((s, i) => (
            <li
              key={s.text}
              id={`search-suggestion-${i}`}
              role="option"
              aria-selected={i === at}
              // The box keeps the focus: a click picks without blurring it first.
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => pick(s, true)}
            >
              <span class="label">{s.label}</span>
              {s.label.indexOf(s.text) < 0 && <span class="query"> {s.text}</span>}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
