/**
 * What the compose box's typeahead offers, all from the register state (no request per key, but
 * a channel's topic history, fetched once): people (`@`), the organization's user groups (`@`,
 * system groups hidden as Zulip hides them), the wildcard mentions, channels (`#`), a channel's
 * topics (`#channel>` and the Topic field) and emoji (`:`).
 *
 * People are looked up in an index built once per change of `users` (lower-cased names, their
 * words and emails), so that a keypress scans 10,000 people in well under a frame; results are
 * capped. Ranking as Zulip's: people of the current conversation and recent senders first, then
 * names that start with the query, then names with a word that does, then emails.
 */
import { groupList, type UserGroup } from "./groups.ts";
import { subscriptions, users } from "./model.ts";
import { sortedTopics, type Topic } from "./topics.ts";
import type { Subscription, User } from "../types.ts";

interface IndexedUser {
  user: User;
  name: string;
  /** The name's words, each after a space: " othello the moor of venice". */
  words: string;
  email: string;
}

let indexOf: ReadonlyMap<number, User> | undefined;
let index: IndexedUser[] = [];
let nameCounts = new Map<string, number>();

/** The index of active people, rebuilt only when `users` was replaced. */
function userIndex(): IndexedUser[] {
  const all = users.value;
  if (all === indexOf) return index;
  indexOf = all;
  const next: IndexedUser[] = [];
  const counts = new Map<string, number>();
  for (const u of all.values()) {
    if (!u.is_active) continue;
    const name = u.full_name.toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
    next.push({
      user: u,
      name,
      words: " " + name.split(/[\s,.()-]+/).join(" "),
      email: (u.delivery_email ?? u.email).toLowerCase(),
    });
  }
  next.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  index = next;
  nameCounts = counts;
  lastQuery = undefined;
  return index;
}

/** Builds the people index ahead of the first keypress (a field that offers people got the focus). */
export function warmUserIndex() {
  userIndex();
}

/** The last query's matches: a longer query (the next keypress) searches only among them. */
let lastQuery: string | undefined;
let lastHits: IndexedUser[] = [];

function hitsFor(q: string): IndexedUser[] {
  const all = userIndex();
  const pool = lastQuery !== undefined && q.startsWith(lastQuery) ? lastHits : all;
  const word = " " + q;
  const hits: IndexedUser[] = [];
  for (const e of pool)
    if (e.name.startsWith(q) || e.words.includes(word) || e.email.startsWith(q)) hits.push(e);
  lastQuery = q;
  lastHits = hits;
  return hits;
}

/**
 * Active people matching `query` (by the start of their name, of a word of it, or of their
 * email), those in `preferred` first, at most `limit`.
 */
export function matchUsers(
  query: string,
  options: { preferred?: readonly number[]; exclude?: ReadonlySet<number>; limit?: number } = {},
): User[] {
  const q = query.trim().toLowerCase();
  const limit = options.limit ?? 8;
  const rank = new Map<number, number>();
  (options.preferred ?? []).forEach((id, i) => rank.set(id, i));
  const preferred: IndexedUser[] = [];
  const prefix: User[] = [];
  const word: User[] = [];
  const email: User[] = [];
  for (const entry of hitsFor(q)) {
    const id = entry.user.user_id;
    if (options.exclude?.has(id)) continue;
    if (rank.has(id)) preferred.push(entry);
    else if (entry.name.startsWith(q)) {
      if (prefix.length < limit) prefix.push(entry.user);
    } else if (entry.words.includes(" " + q)) {
      if (word.length < limit) word.push(entry.user);
    } else if (email.length < limit) email.push(entry.user);
  }
  preferred.sort((a, b) => rank.get(a.user.user_id)! - rank.get(b.user.user_id)!);
  return [...preferred.map((e) => e.user), ...prefix, ...word, ...email].slice(0, limit);
}

/** The Markdown that mentions `user`: `@**Name**`, or Zulip's `@**Name|id**` for a shared name. */
export function mentionSyntax(user: User, silent: boolean): string {
  userIndex();
  const shared = (nameCounts.get(user.full_name.toLowerCase()) ?? 0) > 1;
  return `@${silent ? "_" : ""}**${user.full_name}${shared ? `|${user.user_id}` : ""}**`;
}

/** Non-system, active user groups whose name has a word starting with `query`. */
export function matchGroups(query: string, limit = 4): UserGroup[] {
  const q = query.trim().toLowerCase();
  return groupList()
    .filter(
      (g) =>
        !g.is_system_group &&
        !g.deactivated &&
        g.name
          .toLowerCase()
          .split(/[\s_-]+/)
          .concat(g.name.toLowerCase())
          .some((w) => w.startsWith(q)),
    )
    .slice(0, limit);
}

/** Zulip's wildcard mentions, for channel messages (`topic` and `channel`/`all`/`everyone`). */
export const WILDCARDS = ["all", "everyone", "channel", "topic"] as const;

export function matchWildcards(query: string): (typeof WILDCARDS)[number][] {
  const q = query.trim().toLowerCase();
  return WILDCARDS.filter((w) => w.startsWith(q));
}

/** My channels whose name (or a word of it) starts with `query`, name-prefix ones first. */
export function matchChannels(query: string, limit = 8): Subscription[] {
  const q = query.trim().toLowerCase();
  const starts: Subscription[] = [];
  const words: Subscription[] = [];
  for (const s of subscriptions.value.values()) {
    const name = s.name.toLowerCase();
    if (name.startsWith(q)) starts.push(s);
    else if (name.split(/[\s_-]+/).some((w) => w.startsWith(q))) words.push(s);
  }
  const byName = (a: Subscription, b: Subscription) => a.name.localeCompare(b.name);
  return [...starts.sort(byName), ...words.sort(byName)].slice(0, limit);
}

export function channelByName(name: string): Subscription | undefined {
  const n = name.trim().toLowerCase();
  for (const s of subscriptions.value.values()) if (s.name.toLowerCase() === n) return s;
  return undefined;
}

/** A channel's known topics containing `query` (start of the name first), most recent first. */
export function matchTopics(streamId: number, query: string, limit = 8): Topic[] {
  const q = query.trim().toLowerCase();
  const all = sortedTopics(streamId);
  const starts = all.filter((t) => t.name.toLowerCase().startsWith(q));
  const within = q
    ? all.filter((t) => !t.name.toLowerCase().startsWith(q) && t.name.toLowerCase().includes(q))
    : [];
  return [...starts, ...within].slice(0, limit);
}
