/**
 * Narrows: what the feed shows, as Zulip's web app names them in the URL fragment
 * (web/src/hash_util.ts): `#feed` (All messages), `#narrow/channel/9-Verona`,
 * `#narrow/channel/9-Verona/topic/greetings`, `#narrow/dm/9-Othello` (the other members' ids),
 * `#narrow/is/mentioned`, `#narrow/is/starred`, `#narrow/search/words`, `#narrow/sender/9-Othello`,
 * any list of `/operator/operand` terms (negated as `/-operator/`), and `/near/ID` after any of
 * them for a view anchored at a message. Also the search box's text for a narrow and back (Zulip's
 * operators: `channel:Verona topic:"two words" -sender:me is:unread has:link words`), the
 * server's narrow terms, the title, and whether a message belongs to one (messages that arrive live).
 */
import { t } from "./i18n.ts";
import type { NarrowTerm, Msg } from "./types.ts";

/**
 * One term of a narrow, as Zulip's Filter holds them: `channel` (an id, or a name not known
 * here), `topic`, `sender` (a user id, `me`, or an email), `dm` (user ids or emails, joined by
 * commas), `is`, `has`, `search` (the free text), `near`... each possibly negated.
 */
export interface Term {
  operator: string;
  operand: string;
  negated?: boolean;
}

export type Narrow =
  | { kind: "all" }
  | { kind: "channel"; streamId: number }
  | { kind: "topic"; streamId: number; topic: string }
  | { kind: "dm"; userIds: number[] }
  | { kind: "mentioned" }
  | { kind: "starred" }
  | { kind: "search"; query: string }
  | { kind: "sender"; userId: number }
  /** Any other combination of terms (a search with operators). */
  | { kind: "terms"; terms: Term[] };

export interface View {
  narrow: Narrow;
  /** `/near/ID`: open at this message rather than at the first unread. */
  near?: number;
}

const HASH_REPLACEMENTS: Record<string, string> = { "%": ".", "(": ".28", ")": ".29", ".": ".2E" };

/** Zulip's encodeHashComponent: percent-encoding with `.` for `%`, so that dots survive. */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s).replace(/[%().]/g, (c) => HASH_REPLACEMENTS[c]!);
}

export function decodeHashComponent(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\./g, "%"));
  } catch {
    return s;
  }
}

/** `9-Verona`: the id, then the name with spaces as dashes (only the id is read back). */
function channelSlug(streamId: number, name: string | undefined): string {
  return `${streamId}-${encodeHashComponent((name ?? "").replace(/ /g, "-"))}`;
}

export function sortedIds(ids: readonly number[]): number[] {
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** Zulip's synonyms, each read as the operator it stands for. */
const SYNONYMS: Record<string, string> = {
  stream: "channel",
  subject: "topic",
  "pm-with": "dm",
  from: "sender",
  streams: "channels",
};
/** The operators the search box and the fragment take (after SYNONYMS). */
export const OPERATORS = new Set([
  "channel",
  "channels",
  "topic",
  "sender",
  "dm",
  "dm-including",
  "is",
  "has",
  "in",
  "search",
  "near",
  "id",
  "with",
  "mentions",
]);

function canonicalTerm(operator: string, operand: string, negated: boolean): Term {
  const op = SYNONYMS[operator] ?? operator;
  let value = operand;
  if (op === "is" || op === "has" || op === "in") value = operand.toLowerCase();
  if (op === "is" && value === "private") value = "dm";
  return negated
    ? { operator: op, operand: value, negated: true }
    : { operator: op, operand: value };
}

const isId = (s: string) => /^\d+$/.test(s);
const isIdList = (s: string) => /^\d+(,\d+)*$/.test(s);

/** A narrow's terms (`near` is the view's, not the narrow's). */
export function termsOf(n: Narrow, myId: number): Term[] {
  switch (n.kind) {
    case "all":
      return [];
    case "channel":
      return [{ operator: "channel", operand: String(n.streamId) }];
    case "topic":
      return [
        { operator: "channel", operand: String(n.streamId) },
        { operator: "topic", operand: n.topic },
      ];
    case "dm": {
      const all = sortedIds(n.userIds);
      const others = all.filter((id) => id !== myId);
      return [{ operator: "dm", operand: (others.length ? others : [myId]).join(",") }];
    }
    case "mentioned":
    case "starred":
      return [{ operator: "is", operand: n.kind }];
    case "search":
      return [{ operator: "search", operand: n.query }];
    case "sender":
      return [{ operator: "sender", operand: String(n.userId) }];
    case "terms":
      return n.terms;
  }
}

/** The narrow of a list of terms: one of the simple kinds where it is one (their hashes and keys). */
export function narrowOf(terms: readonly Term[]): Narrow {
  if (terms.length === 0) return { kind: "all" };
  if (!terms.some((x) => x.negated)) {
    const [a, b] = terms;
    if (terms.length === 1 && a) {
      if (a.operator === "channel" && isId(a.operand))
        return { kind: "channel", streamId: Number(a.operand) };
      if (a.operator === "dm" && isIdList(a.operand))
        return { kind: "dm", userIds: a.operand.split(",").map(Number) };
      if (a.operator === "is" && (a.operand === "mentioned" || a.operand === "starred"))
        return { kind: a.operand };
      if (a.operator === "search") return { kind: "search", query: a.operand };
      if (a.operator === "sender" && isId(a.operand))
        return { kind: "sender", userId: Number(a.operand) };
    }
    if (
      terms.length === 2 &&
      a?.operator === "channel" &&
      isId(a.operand) &&
      b?.operator === "topic"
    )
      return { kind: "topic", streamId: Number(a.operand), topic: b.operand };
  }
  return { kind: "terms", terms: [...terms] };
}

export function narrowKey(n: Narrow): string {
  switch (n.kind) {
    case "channel":
      return `c:${n.streamId}`;
    case "topic":
      return `t:${n.streamId}:${n.topic.toLowerCase()}`;
    case "dm":
      return `d:${sortedIds(n.userIds).join(",")}`;
    case "search":
      return `s:${n.query}`;
    case "sender":
      return `u:${n.userId}`;
    case "terms":
      return `q:${JSON.stringify(n.terms.map((x) => [x.negated ? `-${x.operator}` : x.operator, x.operand]))}`;
    default:
      return n.kind;
  }
}

export interface Names {
  channelName(streamId: number): string | undefined;
  userName(userId: number): string | undefined;
  myId: number;
}

/** Zulip's people.emails_to_slug: `9-Othello,-the-Moor` for one user, `9,10-group` for more. */
function peopleSlug(ids: number[], names: Names): string {
  const suffix =
    ids.length >= 2
      ? "group"
      : // Zulip's people.pm_with_url: the name, runs of spaces and URL-unsafe characters as "-".
        (names.userName(ids[0]!) ?? "unk").replace(/[ "%/<>`\p{C}]+/gu, "-");
  return `${ids.join(",")}-${suffix}`;
}

/** One term in a fragment (Zulip's hash_util.encode_operand). */
function encodeTerm(x: Term, names: Names): string {
  let operand: string;
  if (x.operator === "channel" && isId(x.operand))
    operand = channelSlug(Number(x.operand), names.channelName(Number(x.operand)));
  else if ((x.operator === "dm" || x.operator === "sender") && isIdList(x.operand))
    operand = peopleSlug(x.operand.split(",").map(Number), names);
  else operand = encodeHashComponent(x.operand);
  return `/${x.negated ? "-" : ""}${x.operator}/${operand}`;
}

export function hashOf(view: View, names: Names): string {
  const n = view.narrow;
  const terms = termsOf(n, names.myId);
  const hash =
    terms.length === 0
      ? view.near === undefined
        ? "#feed"
        : "#narrow"
      : `#narrow${terms.map((x) => encodeTerm(x, names)).join("")}`;
  return view.near === undefined ? hash : `${hash}/near/${view.near}`;
}

/** A fragment's operand (Zulip's hash_util.decode_operand): the ids of a people slug. */
function decodeOperand(operator: string, operand: string): string | undefined {
  if (operator === "channel") {
    const id = /^\d+/.exec(operand)?.[0];
    return id ?? decodeHashComponent(operand);
  }
  if (operator === "dm" || operator === "sender" || operator === "dm-including") {
    const ids = /^\d+(,\d+)*/.exec(operand)?.[0];
    if (ids) return ids;
    const decoded = decodeHashComponent(operand);
    return decoded.includes("@") || decoded === "me" ? decoded : undefined;
  }
  return decodeHashComponent(operand);
}

/** The view a fragment names, or undefined when it names none we show (then: All messages). */
export function parseHash(hash: string): View | undefined {
  const h = hash.replace(/^#/, "");
  if (h === "" || h === "feed" || h === "all_messages" || h === "narrow")
    return { narrow: { kind: "all" } };
  const parts = h.split("/");
  if (parts[0] !== "narrow") return undefined;
  const terms: Term[] = [];
  let near: number | undefined;
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const raw = parts[i]!;
    const negated = raw.startsWith("-");
    const op = SYNONYMS[raw.replace(/^-/, "")] ?? raw.replace(/^-/, "");
    if (!OPERATORS.has(op)) return undefined;
    if (op === "near" || op === "id" || op === "with") {
      near = Number.parseInt(parts[i + 1]!, 10);
      continue;
    }
    const operand = decodeOperand(op, parts[i + 1]!);
    // A DM fragment naming nobody shows nothing (an empty `dm` names no conversation).
    if (operand === undefined || operand === "") {
      if (op === "dm") continue;
      return undefined;
    }
    terms.push(canonicalTerm(op, operand, negated));
  }
  if (near !== undefined && !Number.isInteger(near)) near = undefined;
  const narrow = narrowOf(terms);
  return near === undefined ? { narrow } : { narrow, near };
}

/** One term as GET /messages takes it: ids as numbers. */
function serverTerm(x: Term): NarrowTerm {
  let operand: string | number | number[] = x.operand;
  if ((x.operator === "channel" || x.operator === "sender") && isId(x.operand))
    operand = Number(x.operand);
  else if (x.operator === "dm" && isIdList(x.operand)) operand = x.operand.split(",").map(Number);
  return x.negated
    ? { operator: x.operator, operand, negated: true }
    : { operator: x.operator, operand };
}

/** The terms of GET /messages for a narrow. */
export function narrowTerms(n: Narrow, myId: number): NarrowTerm[] {
  return termsOf(n, myId).map(serverTerm);
}

/** The DM conversation of a message: every member's id, sorted (the sender included). */
export function dmMembers(m: Pick<Msg, "display_recipient">): number[] {
  return Array.isArray(m.display_recipient) ? sortedIds(m.display_recipient.map((u) => u.id)) : [];
}

/** Whether a message matches one term (negation aside); undefined where only the server knows. */
function matchesTerm(x: Term, m: Msg, myId: number): boolean | undefined {
  switch (x.operator) {
    case "channel":
      if (!isId(x.operand)) return undefined;
      return m.type === "stream" && m.stream_id === Number(x.operand);
    case "topic":
      return m.type === "stream" && m.subject.toLowerCase() === x.operand.toLowerCase();
    case "dm": {
      if (!isIdList(x.operand)) return undefined;
      if (m.type !== "private") return false;
      const want = sortedIds([...x.operand.split(",").map(Number), myId]).join(",");
      return dmMembers(m).join(",") === want;
    }
    case "sender":
      if (x.operand === "me") return m.sender_id === myId;
      if (isId(x.operand)) return m.sender_id === Number(x.operand);
      return m.sender_email.toLowerCase() === x.operand.toLowerCase();
    case "is":
      switch (x.operand) {
        case "mentioned":
          return m.flags.some((f) => f === "mentioned" || f.endsWith("wildcard_mentioned"));
        case "starred":
          return m.flags.includes("starred");
        case "dm":
          return m.type === "private";
        case "alerted":
          return m.flags.includes("has_alert_word");
        case "resolved":
          return m.type === "stream" && m.subject.startsWith("✔ ");
        default:
          return undefined;
      }
    case "near":
      return true;
    default:
      return undefined;
  }
}

/** Whether a message arriving live belongs in a narrow; undefined where only the server knows (search). */
export function matches(n: Narrow, m: Msg, myId: number): boolean | undefined {
  if (n.kind === "all") return true;
  let known = true;
  for (const x of termsOf(n, myId)) {
    const r = matchesTerm(x, m, myId);
    if (r === undefined) known = false;
    else if (r === !!x.negated) return false;
  }
  return known ? true : undefined;
}

export function sameNarrow(a: Narrow, b: Narrow): boolean {
  return narrowKey(a) === narrowKey(b);
}

/** Whether a narrow is a search (its results carry the server's highlighting). */
export function isSearch(n: Narrow): boolean {
  return (
    n.kind === "search" || (n.kind === "terms" && n.terms.some((x) => x.operator === "search"))
  );
}

/** The feed's accessible name and the page title's first part. */
export function narrowTitle(n: Narrow, names: Names): string {
  switch (n.kind) {
    case "all":
      return t("All messages");
    case "channel":
      return `#${names.channelName(n.streamId) ?? t("unknown channel")}`;
    case "topic":
      return `#${names.channelName(n.streamId) ?? t("unknown channel")} > ${n.topic}`;
    case "dm": {
      const others = sortedIds(n.userIds).filter((id) => id !== names.myId);
      if (others.length === 0) return t("Messages with yourself");
      return t("Messages with {names}", {
        names: others.map((id) => names.userName(id) ?? t("unknown user")).join(", "),
      });
    }
    case "mentioned":
      return t("Mentions");
    case "starred":
      return t("Starred messages");
    case "sender":
      return t("Messages sent by {name}", { name: names.userName(n.userId) ?? t("unknown user") });
    case "search":
    case "terms":
      return t("Search results for {query}", { query: searchText(n, names) });
  }
}

/** What the search box needs besides names: from a name or an email to an id, and back. */
export interface Directory extends Names {
  channelId(name: string): number | undefined;
  /** A user by email (or full name), case-insensitively. */
  userId(emailOrName: string): number | undefined;
  userEmail(userId: number): string | undefined;
}

/** An operand as typed: quoted where it holds a space or a quote. */
function quote(s: string): string {
  return /[\s"]/.test(s) ? `"${s.replace(/"/g, "")}"` : s;
}

/** The search box's text for a narrow (Zulip's Filter.unparse), names in place of ids. */
export function searchText(n: Narrow, names: Names | Directory): string {
  const dir = "userEmail" in names ? names : undefined;
  const person = (id: string) =>
    isId(id) ? (dir?.userEmail(Number(id)) ?? names.userName(Number(id)) ?? id) : id;
  return termsOf(n, names.myId)
    .map((x) => {
      if (x.operator === "search") return x.negated ? `-search:${quote(x.operand)}` : x.operand;
      let operand = x.operand;
      if (x.operator === "channel" && isId(operand))
        operand = names.channelName(Number(operand)) ?? operand;
      else if (x.operator === "sender" || x.operator === "dm" || x.operator === "dm-including")
        operand = operand.split(",").map(person).join(",");
      return `${x.negated ? "-" : ""}${x.operator}:${quote(operand)}`;
    })
    .join(" ");
}

export interface Token {
  /** Where the token starts in the text, and where it ends. */
  start: number;
  end: number;
  negated: boolean;
  /** The operator as typed (lower-cased), or undefined for free text. */
  operator: string | undefined;
  operand: string;
}

/**
 * The search box's text as tokens: `operator:operand` (operator one of Zulip's, `-` before it
 * negates; the operand "quoted" or with `+` for spaces), and words or "quoted phrases" of free text.
 */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  const re = /(-?)([a-z][a-z-]*):("([^"]*)"?|\S*)|"[^"]*"?|\S+/gi;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    const op = m[2]?.toLowerCase();
    if (op !== undefined && OPERATORS.has(SYNONYMS[op] ?? op)) {
      const quoted = m[4];
      let operand = quoted ?? m[3] ?? "";
      if (quoted === undefined) {
        operand = operand.replace(/\+/g, " ");
        try {
          operand = decodeURIComponent(operand);
        } catch {
          // a lone "%": as typed
        }
      }
      out.push({ start, end, negated: m[1] === "-", operator: op, operand });
    } else out.push({ start, end, negated: false, operator: undefined, operand: m[0] });
  }
  return out;
}

/** The terms of the search box's text (Zulip's Filter.parse): names and emails become ids where known. */
export function parseSearch(text: string, dir: Directory): { terms: Term[]; near?: number } {
  const terms: Term[] = [];
  const words: string[] = [];
  let near: number | undefined;
  for (const tok of tokenize(text)) {
    if (tok.operator === undefined) {
      words.push(tok.operand);
      continue;
    }
    const op = SYNONYMS[tok.operator] ?? tok.operator;
    let operand = tok.operand.trim();
    if (!operand) continue;
    if (op === "near" || op === "id" || op === "with") {
      if (isId(operand)) near = Number(operand);
      continue;
    }
    if (op === "search") {
      if (tok.negated) terms.push({ operator: "search", operand, negated: true });
      else words.push(operand);
      continue;
    }
    if (op === "channel") operand = String(dir.channelId(operand) ?? operand);
    else if (op === "sender" || op === "mentions") {
      if (operand.toLowerCase() === "me") operand = "me";
      else operand = String(dir.userId(operand) ?? operand);
    } else if (op === "dm" || op === "dm-including") {
      const ids = operand.split(",").map((p) => dir.userId(p.trim()));
      if (ids.every((id) => id !== undefined)) operand = sortedIds(ids).join(",");
    }
    terms.push(canonicalTerm(op, operand, tok.negated));
  }
  const free = words.join(" ").trim();
  // Zulip puts the free text last.
  if (free) terms.push({ operator: "search", operand: free });
  return near === undefined ? { terms } : { terms, near };
}
