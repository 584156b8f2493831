/**
 * Narrows: what the feed shows, as Zulip's web app names them in the URL fragment
 * (web/src/hash_util.ts): `#feed` (All messages), `#narrow/channel/9-Verona`,
 * `#narrow/channel/9-Verona/topic/greetings`, `#narrow/dm/9-Othello` (the other members' ids),
 * `#narrow/is/mentioned`, `#narrow/is/starred`, `#narrow/search/words`, and `/near/ID` after any
 * of them for a view anchored at a message. Also the server's narrow terms for each, the title,
 * and whether a message belongs to one (for messages that arrive live).
 */
import type { NarrowTerm, Msg } from "./types.ts";

export type Narrow =
  | { kind: "all" }
  | { kind: "channel"; streamId: number }
  | { kind: "topic"; streamId: number; topic: string }
  | { kind: "dm"; userIds: number[] }
  | { kind: "mentioned" }
  | { kind: "starred" }
  | { kind: "sender"; userId: number }
  | { kind: "search"; query: string };

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
      return `from:${n.userId}`;
    default:
      return n.kind;
  }
}

export interface Names {
  channelName(streamId: number): string | undefined;
  userName(userId: number): string | undefined;
  myId: number;
}

export function hashOf(view: View, names: Names): string {
  const n = view.narrow;
  let hash: string;
  switch (n.kind) {
    case "all":
      hash = view.near === undefined ? "#feed" : "#narrow";
      break;
    case "channel":
      hash = `#narrow/channel/${channelSlug(n.streamId, names.channelName(n.streamId))}`;
      break;
    case "topic":
      hash = `#narrow/channel/${channelSlug(n.streamId, names.channelName(n.streamId))}/topic/${encodeHashComponent(n.topic)}`;
      break;
    case "dm": {
      const all = sortedIds(n.userIds);
      const others = all.filter((id) => id !== names.myId);
      // The other members; a conversation with oneself is named by one's own id.
      const ids = others.length ? others : all;
      const suffix =
        others.length >= 2
          ? "group"
          : // Zulip's people.pm_with_url: the name, runs of spaces and URL-unsafe characters as "-".
            (names.userName(ids[0]!) ?? "unk").replace(/[ "%/<>`\p{C}]+/gu, "-");
      hash = `#narrow/dm/${ids.join(",")}-${suffix}`;
      break;
    }
    case "mentioned":
    case "starred":
      hash = `#narrow/is/${n.kind}`;
      break;
    case "sender":
      hash = `#narrow/sender/${n.userId}-${(names.userName(n.userId) ?? "unk").replace(/[ "%/<>`\p{C}]+/gu, "-")}`;
      break;
    case "search":
      hash = `#narrow/search/${encodeHashComponent(n.query)}`;
      break;
  }
  return view.near === undefined ? hash : `${hash}/near/${view.near}`;
}

/** The view a fragment names, or undefined when it names none we show (then: All messages). */
export function parseHash(hash: string): View | undefined {
  const h = hash.replace(/^#/, "");
  if (h === "" || h === "feed" || h === "all_messages" || h === "narrow")
    return { narrow: { kind: "all" } };
  const parts = h.split("/");
  if (parts[0] !== "narrow") return undefined;
  let streamId: number | undefined;
  let topic: string | undefined;
  let userIds: number[] | undefined;
  let is: string | undefined;
  let search: string | undefined;
  let sender: number | undefined;
  let near: number | undefined;
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const op = parts[i]!;
    const operand = parts[i + 1]!;
    switch (op) {
      case "channel":
      case "stream":
        streamId = Number.parseInt(operand, 10);
        break;
      case "topic":
      case "subject":
        topic = decodeHashComponent(operand);
        break;
      case "dm":
      case "pm-with":
        userIds = operand
          .split("-")[0]!
          .split(",")
          .map((s) => Number.parseInt(s, 10))
          .filter((x) => Number.isInteger(x) && x > 0);
        break;
      case "is":
        is = operand;
        break;
      case "sender":
        sender = Number.parseInt(operand, 10);
        break;
      case "search":
        search = decodeHashComponent(operand);
        break;
      case "near":
      case "id":
      case "with":
        near = Number.parseInt(operand, 10);
        break;
      default:
        return undefined;
    }
  }
  if (near !== undefined && !Number.isInteger(near)) near = undefined;
  let narrow: Narrow;
  if (streamId !== undefined && Number.isInteger(streamId))
    narrow =
      topic !== undefined ? { kind: "topic", streamId, topic } : { kind: "channel", streamId };
  else if (userIds?.length) narrow = { kind: "dm", userIds };
  else if (sender !== undefined && Number.isInteger(sender) && sender > 0)
    narrow = { kind: "sender", userId: sender };
  else if (is === "mentioned" || is === "starred") narrow = { kind: is };
  else if (is === "dm" || is === "private") return undefined;
  else if (search) narrow = { kind: "search", query: search };
  else narrow = { kind: "all" };
  return near === undefined ? { narrow } : { narrow, near };
}

/** The terms of GET /messages for a narrow. */
export function narrowTerms(n: Narrow, myId: number): NarrowTerm[] {
  switch (n.kind) {
    case "all":
      return [];
    case "channel":
      return [{ operator: "channel", operand: n.streamId }];
    case "topic":
      return [
        { operator: "channel", operand: n.streamId },
        { operator: "topic", operand: n.topic },
      ];
    case "dm": {
      const others = sortedIds(n.userIds).filter((id) => id !== myId);
      return [{ operator: "dm", operand: others.length ? others : [myId] }];
    }
    case "mentioned":
    case "starred":
      return [{ operator: "is", operand: n.kind }];
    case "search":
      return [{ operator: "search", operand: n.query }];
    case "sender":
      return [{ operator: "sender", operand: n.userId }];
  }
}

/** The DM conversation of a message: every member's id, sorted (the sender included). */
export function dmMembers(m: Pick<Msg, "display_recipient">): number[] {
  return Array.isArray(m.display_recipient) ? sortedIds(m.display_recipient.map((u) => u.id)) : [];
}

/** Whether a message arriving live belongs in a narrow; undefined where only the server knows (search). */
export function matches(n: Narrow, m: Msg, myId: number): boolean | undefined {
  switch (n.kind) {
    case "all":
      return true;
    case "channel":
      return m.type === "stream" && m.stream_id === n.streamId;
    case "topic":
      return (
        m.type === "stream" &&
        m.stream_id === n.streamId &&
        m.subject.toLowerCase() === n.topic.toLowerCase()
      );
    case "dm": {
      if (m.type !== "private") return false;
      const want = sortedIds([...n.userIds, myId]).join(",");
      return dmMembers(m).join(",") === want;
    }
    case "mentioned":
      return m.flags.some((f) => f === "mentioned" || f.endsWith("wildcard_mentioned"));
    case "starred":
      return m.flags.includes("starred");
    case "search":
      return undefined;
    case "sender":
      return m.sender_id === n.userId;
  }
}

export function sameNarrow(a: Narrow, b: Narrow): boolean {
  return narrowKey(a) === narrowKey(b);
}

/** The feed's accessible name and the page title's first part. */
export function narrowTitle(n: Narrow, names: Names): string {
  switch (n.kind) {
    case "all":
      return "All messages";
    case "channel":
      return `#${names.channelName(n.streamId) ?? "unknown channel"}`;
    case "topic":
      return `#${names.channelName(n.streamId) ?? "unknown channel"} > ${n.topic}`;
    case "dm": {
      const others = sortedIds(n.userIds).filter((id) => id !== names.myId);
      if (others.length === 0) return `Messages with yourself`;
      return `Messages with ${others.map((id) => names.userName(id) ?? "unknown user").join(", ")}`;
    }
    case "mentioned":
      return "Mentions";
    case "starred":
      return "Starred messages";
    case "search":
      return `Search results for ${n.query}`;
    case "sender":
      return `Messages sent by ${names.userName(n.userId) ?? "unknown user"}`;
  }
}
