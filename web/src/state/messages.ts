/**
 * Messages: one store of every message fetched (by id; a changed message is replaced by a new
 * object, so a row renders again only when its own message changed), and a list per narrow
 * viewed recently: the contiguous ids fetched around an anchor, with whether the oldest and the
 * newest are reached. Lists stay cached (the last LIST_CACHE narrows), kept current by events,
 * so going back to a narrow shows it at once.
 */
import { batch, signal } from "@preact/signals";
import { matches, narrowKey, type Narrow } from "../narrow.ts";
import type { Msg } from "../types.ts";
import { me } from "./model.ts";
import { api, call } from "../api.ts";
import { noteMessage } from "./unread.ts";
import {
  FIRST_AFTER,
  FIRST_BEFORE,
  getMessages,
  messagesQuery,
  takeEarlyMessages,
} from "./register.ts";

export const store = new Map<number, Msg>();

/**
 * How many messages a fetch asks for on each side (Zulip's web app: 60 before, 150 after, then
 * 100s): FIRST_BEFORE and FIRST_AFTER (state/register.ts, which fetches a view's first early).
 */
export { FIRST_AFTER, FIRST_BEFORE };
export const BATCH = 100;
const LIST_CACHE = 8;
/**
 * Ids a list holds at most, well above the feed's window (250) and a fetch (100): past it, a
 * fetch at one end lets go of the other end, and the store of the messages no list holds, so
 * that an hour of scrolling back through a long channel keeps the heap flat. The end let go is
 * fetched again if scrolled back to.
 */
export const MAX_LIST_IDS = 1000;

export class MessageList {
  readonly key: string;
  ids: number[] = [];
  foundOldest = false;
  foundNewest = false;
  /** Set once the first fetch answered. */
  loaded = false;
  loadingOlder = false;
  loadingNewer = false;
  error: string | undefined;
  /** Where the first fetch was anchored: the message the view opens at. */
  anchorId: number | undefined;
  /** Bumped on every change, for the views that show this list. */
  readonly version = signal(0);

  constructor(readonly narrow: Narrow) {
    this.key = narrowKey(narrow);
  }

  private bump() {
    this.version.value++;
  }

  /** Whether an id falls within the stretch of history this list holds. */
  covers(id: number): boolean {
    if (!this.loaded) return false;
    const first = this.ids[0];
    const last = this.ids[this.ids.length - 1];
    return (
      (this.foundOldest || (first !== undefined && id >= first)) &&
      (this.foundNewest || (last !== undefined && id <= last))
    );
  }

  private merge(messages: Msg[]) {
    const set = new Set(this.ids);
    // One change of the unread state for the whole batch (its effects run once, not per message).
    batch(() => {
      for (const m of messages) {
        remember(m);
        set.add(m.id);
      }
    });
    this.ids = [...set].sort((a, b) => a - b);
  }

  /** The first fetch, while it is under way. */
  loading: Promise<void> | undefined;

  /** The first fetch (once: a second call gets the one under way). */
  load(anchor: number | "first_unread" | "newest"): Promise<void> {
    this.loading ??= this.fetchFirst(anchor);
    return this.loading;
  }

  /** A fetch made before the event queue existed may have missed what was sent in between. */
  async catchUp() {
    if (!this.loaded || !this.foundNewest) return;
    const last = this.ids[this.ids.length - 1];
    try {
      const res =
        last === undefined
          ? await fetchMessages(this.narrow, "newest", FIRST_BEFORE, 0)
          : await fetchMessages(this.narrow, last, 0, BATCH, false);
      this.merge(res.messages);
      this.foundNewest = res.found_newest;
      this.bump();
    } catch {
      // the view still shows what it had
    }
  }

  private async fetchFirst(anchor: number | "first_unread" | "newest") {
    this.error = undefined;
    try {
      const res = await fetchMessages(this.narrow, anchor, FIRST_BEFORE, FIRST_AFTER);
      this.ids = [];
      this.merge(res.messages);
      this.foundOldest = res.found_oldest;
      this.foundNewest = res.found_newest;
      this.anchorId = typeof res.anchor === "number" && res.anchor < 1e15 ? res.anchor : undefined;
      this.loaded = true;
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    }
    this.bump();
  }

  loadOlder() {
    return this.loadBeyond(true);
  }

  loadNewer() {
    return this.loadBeyond(false);
  }

  /** The next BATCH past the oldest (or newest) id held, unless that end is reached. */
  private async loadBeyond(older: boolean) {
    const busy = older ? this.loadingOlder : this.loadingNewer;
    if (busy || (older ? this.foundOldest : this.foundNewest) || !this.loaded) return;
    const edge = older ? this.ids[0] : this.ids[this.ids.length - 1];
    if (edge === undefined) return;
    const setLoading = (on: boolean) => {
      if (older) this.loadingOlder = on;
      else this.loadingNewer = on;
      this.bump();
    };
    setLoading(true);
    try {
      const res = await fetchMessages(
        this.narrow,
        edge,
        older ? BATCH : 0,
        older ? 0 : BATCH,
        false,
      );
      this.merge(res.messages);
      if (older) this.foundOldest = res.found_oldest;
      else this.foundNewest = res.found_newest;
      this.trim(older);
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      setLoading(false);
    }
  }

  /** Past MAX_LIST_IDS, lets go of the end away from the one just fetched (`older`: the newest). */
  private trim(older: boolean) {
    const over = this.ids.length - MAX_LIST_IDS;
    if (over <= 0) return;
    let dropped: number[];
    if (older) {
      dropped = this.ids.slice(MAX_LIST_IDS);
      this.ids = this.ids.slice(0, MAX_LIST_IDS);
      this.foundNewest = false;
    } else {
      dropped = this.ids.slice(0, over);
      this.ids = this.ids.slice(over);
      this.foundOldest = false;
    }
    forget(dropped, this);
  }

  /** A message that arrived, changed or moved: added where it belongs, removed where it no longer does. */
  consider(m: Msg) {
    const belongs = matches(this.narrow, m, me.value.id);
    if (belongs === undefined) {
      if (this.ids.includes(m.id)) this.bump();
      return;
    }
    const at = this.ids.indexOf(m.id);
    if (belongs && at < 0 && this.covers(m.id)) {
      const last = this.ids[this.ids.length - 1];
      if (last === undefined || m.id > last) this.ids = [...this.ids, m.id];
      else this.ids = [...this.ids, m.id].sort((a, b) => a - b);
      this.bump();
    } else if (!belongs && at >= 0) {
      this.ids = this.ids.filter((id) => id !== m.id);
      this.bump();
    } else if (at >= 0) this.bump();
  }

  remove(ids: Set<number>) {
    const kept = this.ids.filter((id) => !ids.has(id));
    if (kept.length !== this.ids.length) {
      this.ids = kept;
      this.bump();
    }
  }

  /** Something shown by every row changed (a user's name, a setting). */
  touch() {
    this.bump();
  }
}

const lists = new Map<string, MessageList>();

/** The cached list of a narrow, or a new one (not yet loaded). */
export function listFor(narrow: Narrow): MessageList {
  const key = narrowKey(narrow);
  let list = lists.get(key);
  if (list) lists.delete(key);
  else list = new MessageList(narrow);
  lists.set(key, list);
  while (lists.size > LIST_CACHE) {
    const oldest = lists.values().next().value!;
    lists.delete(oldest.key);
    forget(oldest.ids);
  }
  return list;
}

/** Drops from the store the messages among `ids` that no cached list (but `except`) holds. */
function forget(ids: readonly number[], except?: MessageList) {
  if (!ids.length) return;
  const held = new Set<number>();
  for (const l of lists.values()) if (l !== except) for (const id of l.ids) held.add(id);
  for (const id of ids) if (!held.has(id)) store.delete(id);
}

/** Forgets a narrow's cached list (one that does not reach a message asked for). */
export function resetList(narrow: Narrow) {
  lists.delete(narrowKey(narrow));
}

export function allLists(): Iterable<MessageList> {
  return lists.values();
}

/** After a new registration (the old queue is gone): every list is refetched when next shown. */
export function dropLists() {
  lists.clear();
}

function remember(m: Msg) {
  store.set(m.id, m);
  noteMessage(m);
}

async function fetchMessages(
  narrow: Narrow,
  anchor: number | "first_unread" | "newest",
  before: number,
  after: number,
  includeAnchor = true,
) {
  const query = messagesQuery(narrow, anchor, before, after, includeAnchor, me.value.id);
  // The view's first fetch, sent by main.tsx before the app was loaded.
  return takeEarlyMessages(query) ?? getMessages(query);
}

/** A message as it is now, with a change (events replace, never mutate). */
export function updateStored(id: number, change: (m: Msg) => Msg): Msg | undefined {
  const old = store.get(id);
  if (!old) return undefined;
  const next = change(old);
  store.set(id, next);
  return next;
}

/** One message by id, fetched when it is not in the store (a sent message whose event is late). */
export async function fetchOne(id: number): Promise<Msg | undefined> {
  const known = store.get(id);
  if (known) return known;
  const res = await call(
    api.GET("/messages/{message_id}", {
      params: {
        path: { message_id: id },
        query: { apply_markdown: true, allow_empty_topic_name: true },
      },
    }),
  );
  const m = res.message as Msg;
  remember(m);
  return m;
}
