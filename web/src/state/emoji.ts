/**
 * The emoji one may name (the picker, `:` in the compose box): Unicode emoji from the file the
 * register's `server_emoji_data_url` names (Zulip's `{"code_to_names": {...}}`, cached by the
 * browser for ever: its URL carries its hash), fetched on first use, and the organization's
 * custom emoji from the register's `realm_emoji` (kept current by `realm_emoji` events).
 * Names are looked up by prefix of any of their words, as Zulip's typeahead does.
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";

export interface Emoji {
  /** The canonical name (the first of Zulip's names for it). */
  name: string;
  aliases: readonly string[];
  /** The Unicode code points in hex, "1f44d" or "1f468-200d-1f4bb"; a custom emoji's id. */
  code: string;
  type: "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";
  /** A custom emoji's image. */
  url?: string;
}

interface RealmEmojiEntry {
  id: string;
  name: string;
  source_url: string;
  deactivated: boolean;
}

let dataUrl: string | undefined;
let unicode: Promise<Emoji[]> | undefined;
/** The organization's active custom emoji. */
export const customEmoji = signal<readonly Emoji[]>([]);

function setCustom(entries: Record<string, RealmEmojiEntry>) {
  customEmoji.value = Object.values(entries)
    .filter((e) => !e.deactivated)
    .map((e) => ({
      name: e.name,
      aliases: [],
      code: e.id,
      type: "realm_emoji",
      url: e.source_url,
    }));
}

onRegister((state) => {
  dataUrl = typeof state.server_emoji_data_url === "string" ? state.server_emoji_data_url : dataUrl;
  setCustom((state.realm_emoji ?? {}) as Record<string, RealmEmojiEntry>);
});
onEvent("realm_emoji", (event) => {
  const e = event as { realm_emoji?: Record<string, RealmEmojiEntry> };
  if (e.realm_emoji) setCustom(e.realm_emoji);
});

/** Every Unicode emoji, loaded once (a failed load is tried again on the next call). */
export function unicodeEmoji(): Promise<Emoji[]> {
  if (!unicode) {
    // The server names it on the organization's URL; it is fetched from the origin the app
    // was loaded from (the same server, which the page's CSP allows), whatever name reached it.
    const url = dataUrl && new URL(dataUrl, location.href).pathname;
    unicode = (url ? fetch(url).then((r) => r.json()) : Promise.resolve({ code_to_names: {} }))
      .then((data: { code_to_names: Record<string, string[]> }) =>
        Object.entries(data.code_to_names).map(([code, names]) => ({
          name: names[0]!,
          aliases: names.slice(1),
          code,
          type: "unicode_emoji" as const,
        })),
      )
      .catch((err: unknown) => {
        unicode = undefined;
        throw err;
      });
  }
  return unicode;
}

/** The character of a Unicode emoji's code ("1f44d" → 👍). */
export function emojiChar(code: string): string {
  try {
    return String.fromCodePoint(...code.split("-").map((h) => Number.parseInt(h, 16)));
  } catch {
    return "";
  }
}

/**
 * Emoji whose name or alias has a word starting with `query` (words split at "_"), custom
 * emoji first, then names that start with it, then the rest, at most `limit`.
 */
export function matchEmoji(all: readonly Emoji[], query: string, limit = 50): Emoji[] {
  const q = query.toLowerCase().replace(/ /g, "_");
  const starts: Emoji[] = [];
  const words: Emoji[] = [];
  for (const e of all) {
    const names = [e.name, ...e.aliases];
    if (names.some((n) => n.startsWith(q))) starts.push(e);
    else if (names.some((n) => n.split("_").some((w) => w.startsWith(q)))) words.push(e);
    if (starts.length >= limit) break;
  }
  return [...starts, ...words].slice(0, limit);
}
