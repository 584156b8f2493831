/**
 * Drafts, as Zulip's web app keeps them (web/src/drafts.ts): what is in the compose box is saved
 * as you type (debounced) as a draft of its conversation, in localStorage and, when the user's
 * `enable_drafts_synchronization` is on, on the server too (`/drafts`, register `drafts`, events
 * `drafts` add/update/remove). Going back to a conversation restores its draft; sending (or
 * emptying the box) deletes it. `d` opens the Drafts page.
 */
import { signal } from "@preact/signals";
import { api, call } from "../api.ts";
import { bindKey } from "../keys.ts";
import { sortedIds } from "../narrow.ts";
import { onEvent, onRegister } from "./events.ts";
import { displayTopic, me, subscriptions, users } from "./model.ts";
import { t } from "../i18n.ts";
import type { Conversation } from "./typing.ts";
import { goPage } from "./view.ts";

export interface LocalDraft {
  /** This browser's id of the draft. */
  id: string;
  /** The server's id, once synchronized. */
  serverId?: number;
  target: Conversation | undefined;
  content: string;
  /** UNIX seconds of the last edit. */
  timestamp: number;
}

interface ServerDraft {
  id: number;
  type: "" | "stream" | "private";
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

/** All drafts, by their local id. */
export const drafts = signal<ReadonlyMap<string, LocalDraft>>(new Map());
export const syncDrafts = signal(false);

/** A conversation's key: channel and topic (case-insensitive), or the DM's recipients. */
export function conversationKey(t: Conversation | undefined): string {
  if (!t) return "";
  return t.kind === "stream"
    ? `s:${t.streamId}:${t.topic.trim().toLowerCase()}`
    : `d:${sortedIds(t.userIds).join(",")}`;
}

/** "#channel > topic", or the names of a DM's recipients. */
export function conversationLabel(target: Conversation | undefined): string {
  if (!target) return t("No recipient");
  if (target.kind === "stream")
    return `#${subscriptions.value.get(target.streamId)?.name ?? t("Unknown channel")} > ${displayTopic(target.topic)}`;
  const names = target.userIds.map((id) => users.value.get(id)?.full_name ?? t("Unknown user"));
  return names.length ? names.join(", ") : t("No recipient");
}

export function draftFor(t: Conversation | undefined): LocalDraft | undefined {
  const key = conversationKey(t);
  if (!key) return undefined;
  for (const d of drafts.value.values()) if (conversationKey(d.target) === key) return d;
  return undefined;
}

function storageKey() {
  return `drafts:${me.value.id}`;
}

function persist() {
  try {
    localStorage.setItem(storageKey(), JSON.stringify([...drafts.value.values()]));
  } catch {
    // storage full or unavailable: the drafts live on in memory (and on the server)
  }
}

function setDrafts(next: Map<string, LocalDraft>) {
  drafts.value = next;
  persist();
}

let counter = 0;
function newId() {
  return `${Date.now().toString(36)}-${(counter++).toString(36)}`;
}

function toServer(d: LocalDraft) {
  const t = d.target;
  return {
    type: !t ? ("" as const) : t.kind === "stream" ? ("stream" as const) : ("private" as const),
    to: !t ? [] : t.kind === "stream" ? [t.streamId] : t.userIds,
    topic: t?.kind === "stream" ? t.topic : "",
    content: d.content,
    timestamp: Math.floor(d.timestamp),
  };
}

function fromServer(s: ServerDraft, id: string): LocalDraft {
  const target: Conversation | undefined =
    s.type === "stream" && s.to[0] !== undefined
      ? { kind: "stream", streamId: s.to[0], topic: s.topic }
      : s.type === "private"
        ? { kind: "dm", userIds: sortedIds(s.to) }
        : undefined;
  return { id, serverId: s.id, target, content: s.content, timestamp: s.timestamp };
}

/** Drafts being created on the server (local id), so that the `add` event finds its own. */
const creating = new Set<string>();

async function pushToServer(id: string) {
  const d = drafts.value.get(id);
  if (!d || !syncDrafts.value) return;
  try {
    if (d.serverId !== undefined) {
      await call(
        api.PATCH("/drafts/{draft_id}", {
          params: { path: { draft_id: d.serverId } },
          body: { draft: toServer(d) },
        }),
      );
      return;
    }
    if (creating.has(id)) return;
    creating.add(id);
    try {
      const { ids } = await call(api.POST("/drafts", { body: { drafts: [toServer(d)] } }));
      const serverId = ids[0];
      if (serverId === undefined) return;
      const next = new Map(drafts.value);
      // The `add` event may have come first and made an entry of its own.
      for (const [k, other] of next) if (other.serverId === serverId && k !== id) next.delete(k);
      const mine = next.get(id);
      if (mine) {
        next.set(id, { ...mine, serverId });
        setDrafts(next);
        // Edited meanwhile: send the newer text.
        if (
          mine.content !== d.content ||
          conversationKey(mine.target) !== conversationKey(d.target)
        )
          void pushToServer(id);
      } else {
        // Deleted meanwhile.
        setDrafts(next);
        void api.DELETE("/drafts/{draft_id}", { params: { path: { draft_id: serverId } } });
      }
    } finally {
      creating.delete(id);
    }
  } catch {
    // Kept locally; synchronized at the next edit or registration.
  }
}

/** Saves `content` as the draft `id` (a new one when undefined) of `target`; returns its id. */
export function saveDraft(
  id: string | undefined,
  target: Conversation | undefined,
  content: string,
) {
  const old = id !== undefined ? drafts.value.get(id) : undefined;
  const draftId = old?.id ?? newId();
  if (old && old.content === content && conversationKey(old.target) === conversationKey(target))
    return draftId;
  const next = new Map(drafts.value);
  next.set(draftId, {
    id: draftId,
    ...(old?.serverId !== undefined ? { serverId: old.serverId } : {}),
    target,
    content,
    timestamp: Date.now() / 1000,
  });
  setDrafts(next);
  void pushToServer(draftId);
  return draftId;
}

export function deleteDraft(id: string) {
  const d = drafts.value.get(id);
  if (!d) return;
  const next = new Map(drafts.value);
  next.delete(id);
  setDrafts(next);
  if (d.serverId !== undefined && syncDrafts.value)
    void api
      .DELETE("/drafts/{draft_id}", { params: { path: { draft_id: d.serverId } } })
      .catch(() => {});
}

function readStorage(): LocalDraft[] {
  try {
    const raw = localStorage.getItem(storageKey());
    const list = raw ? (JSON.parse(raw) as LocalDraft[]) : [];
    return Array.isArray(list) ? list.filter((d) => typeof d?.id === "string") : [];
  } catch {
    return [];
  }
}

onRegister((state) => {
  const settings = state.user_settings as Record<string, unknown> | undefined;
  syncDrafts.value = settings?.enable_drafts_synchronization !== false;
  const server = (state.drafts as ServerDraft[] | undefined) ?? [];
  const next = new Map<string, LocalDraft>();
  const byServerId = new Map(server.map((s) => [s.id, s]));
  const unsynced: string[] = [];
  for (const d of readStorage()) {
    if (d.serverId !== undefined && syncDrafts.value) {
      // The server's copy wins; one deleted there (elsewhere) goes here too.
      const s = byServerId.get(d.serverId);
      if (s) {
        next.set(d.id, fromServer(s, d.id));
        byServerId.delete(d.serverId);
      }
    } else {
      next.set(d.id, d);
      if (d.serverId === undefined) unsynced.push(d.id);
    }
  }
  for (const s of byServerId.values()) {
    const id = newId();
    next.set(id, fromServer(s, id));
  }
  setDrafts(next);
  if (syncDrafts.value) for (const id of unsynced) void pushToServer(id);
});

function localIdOf(serverId: number): string | undefined {
  for (const d of drafts.value.values()) if (d.serverId === serverId) return d.id;
  return undefined;
}

onEvent("drafts", (event) => {
  const e = event as unknown as {
    op: "add" | "update" | "remove";
    drafts?: ServerDraft[];
    draft?: ServerDraft;
    draft_id?: number;
  };
  const next = new Map(drafts.value);
  if (e.op === "add")
    for (const s of e.drafts ?? []) {
      if (localIdOf(s.id) !== undefined) continue;
      // Our own draft being created: its POST answer attaches the id.
      const own = [...creating].some((id) => {
        const d = drafts.value.get(id);
        return d && d.serverId === undefined && d.content === s.content;
      });
      if (own) continue;
      const id = newId();
      next.set(id, fromServer(s, id));
    }
  else if (e.op === "update" && e.draft) {
    const id = localIdOf(e.draft.id) ?? newId();
    next.set(id, fromServer(e.draft, id));
  } else if (e.op === "remove" && e.draft_id !== undefined) {
    const id = localIdOf(e.draft_id);
    if (id !== undefined) next.delete(id);
  }
  setDrafts(next);
});

onEvent("user_settings", (event) => {
  const e = event as unknown as { op: string; property?: string; value?: unknown };
  if (e.op === "update" && e.property === "enable_drafts_synchronization")
    syncDrafts.value = e.value === true;
});

bindKey("d", () => goPage("drafts"));
