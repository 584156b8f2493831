/**
 * The emoji picker (Zulip's emoji_picker.ts), a dialog: a search box (names and aliases, by
 * prefix of any word), then "Frequently used" (my reactions in this browser and Zulip's
 * defaults), the organization's custom emoji, and every emoji; a grid of buttons named by the
 * emoji's name, moved through with the arrow keys. Enter in the search box picks the first match.
 * The list of all emoji is drawn a page at a time, as it is scrolled.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { frequentEmoji, type EmojiRef } from "../state/edit.ts";
import { customEmoji, emojiChar, matchEmoji, unicodeEmoji, type Emoji } from "../state/emoji.ts";
import { Dialog } from "./Dialog.tsx";
import "./EmojiPicker.css";

/** Emoji drawn at a time in the list of all of them (about 1,900). */
const PAGE = 200;

/** A match by one of its aliases is named (and picked) by that alias, as typed: "tada", not "party". */
function named(e: Emoji, query: string): Emoji {
  const q = query.toLowerCase().replace(/ /g, "_");
  if (e.name.startsWith(q)) return e;
  const alias = e.aliases.find((a) => a.startsWith(q));
  return alias ? { ...e, name: alias } : e;
}

function Glyph({ e }: { e: EmojiRef & { url?: string } }) {
  if (e.type === "realm_emoji") {
    const url = e.url ?? customEmoji.value.find((c) => c.code === e.code)?.url;
    return url ? <img src={url} alt="" width={22} height={22} /> : <span>:{e.name}:</span>;
  }
  return <span aria-hidden="true">{emojiChar(e.code)}</span>;
}

/** Focus moves to the button nearest in the row above or below (by position on screen). */
function moveFocus(from: HTMLElement, key: string, root: HTMLElement): boolean {
  const all = [...root.querySelectorAll<HTMLElement>("button.emoji-choice")];
  const at = all.indexOf(from);
  if (at < 0) return false;
  let next: HTMLElement | undefined;
  if (key === "ArrowRight") next = all[at + 1];
  else if (key === "ArrowLeft") next = all[at - 1];
  else if (key === "ArrowDown" || key === "ArrowUp") {
    const r = from.getBoundingClientRect();
    const down = key === "ArrowDown";
    let rowTop: number | undefined;
    let best = Infinity;
    for (const b of down ? all.slice(at + 1) : all.slice(0, at).reverse()) {
      const br = b.getBoundingClientRect();
      if (Math.abs(br.top - r.top) < 2) continue;
      if (rowTop === undefined) rowTop = br.top;
      else if (Math.abs(br.top - rowTop) >= 2) break;
      const d = Math.abs(br.left - r.left);
      if (d < best) {
        best = d;
        next = b;
      }
    }
    if (!next && !down) {
      root.querySelector<HTMLInputElement>("input[type=search]")?.focus();
      return true;
    }
  } else return false;
  if (!next) return true;
  next.focus();
  next.scrollIntoView({ block: "nearest" });
  return true;
}

export function EmojiPicker({
  onPick,
  onClose,
}: {
  onPick: (e: EmojiRef) => void;
  onClose: () => void;
}) {
  const [query, setQuery] = useState("");
  const [all, setAll] = useState<Emoji[] | undefined>(undefined);
  const [failed, setFailed] = useState(false);
  /** How many of "All emoji" are drawn: more as the list is scrolled near its end. */
  const [shown, setShown] = useState(PAGE);
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    unicodeEmoji().then(setAll, () => setFailed(true));
    requestAnimationFrame(() =>
      root.current?.querySelector<HTMLInputElement>("input[type=search]")?.focus(),
    );
  }, []);
  const custom = customEmoji.value;
  const q = query.trim();
  const sections: { title: string; list: (EmojiRef & { url?: string })[] }[] = q
    ? [
        {
          title: t("Search results"),
          list: matchEmoji([...custom, ...(all ?? [])], q, 80).map((e) => named(e, q)),
        },
      ]
    : [
        { title: t("Frequently used"), list: frequentEmoji() },
        ...(custom.length ? [{ title: t("Custom emoji"), list: [...custom] }] : []),
        { title: t("All emoji"), list: (all ?? []).slice(0, shown) },
      ];
  const first = sections[0]?.list[0];
  return (
    <Dialog title={t("Add emoji reaction")} onClose={onClose}>
      <div
        class="emoji-picker"
        ref={root}
        onKeyDown={(e) => {
          const target = e.target as HTMLElement;
          if (target.tagName === "INPUT") {
            if (e.key === "ArrowDown") {
              root.current?.querySelector<HTMLElement>("button.emoji-choice")?.focus();
              e.preventDefault();
            }
            return;
          }
          if (root.current && moveFocus(target, e.key, root.current)) e.preventDefault();
        }}
      >
        <input
          type="search"
          aria-label={t("Search emoji")}
          placeholder={t("Search")}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && first) {
              e.preventDefault();
              onPick(first);
            }
          }}
        />
        {failed && (
          <p role="alert" class="error">
            {t("Could not load the emoji.")}
          </p>
        )}
        <div
          class="emoji-sections"
          onScroll={(e) => {
            const el = e.currentTarget;
            if (all && shown < all.length && el.scrollHeight - el.scrollTop - el.clientHeight < 300)
              setShown(shown + PAGE);
          }}
        >
          {sections.map((s) => (
            <section key={s.title} aria-label={s.title}>
              <h3>{s.title}</h3>
              {s.list.length === 0 ? (
                <p class="none">
                  {all === undefined && !failed ? t("Loading…") : t("No matching emoji.")}
                </p>
              ) : (
                <div class="emoji-grid">
                  {s.list.map((e) => (
                    <button
                      type="button"
                      class="emoji-choice"
                      key={`${e.type}:${e.code}`}
                      aria-label={e.name}
                      title={`:${e.name}:`}
                      onClick={() => onPick(e)}
                    >
                      <Glyph e={e} />
                    </button>
                  ))}
                </div>
              )}
            </section>
          ))}
        </div>
      </div>
    </Dialog>
  );
}
