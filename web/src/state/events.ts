/**
 * The real-time loop: one event queue (POST /json/register, then long-polls of /json/events),
 * through the typed client's eventQueue, which registers again when the queue is gone
 * (BAD_EVENT_QUEUE_ID: a server restart, a queue left unpolled) and backs off while the server
 * cannot be reached. Each registration rebuilds the state it carries and reloads the view, so
 * nothing sent meanwhile is missed; the connection banner follows the loop.
 */
import { batch, signal } from "@preact/signals";
import { eventQueue, ZulipApiError } from "../../../client/src/index.ts";
import { api, toLogin } from "../api.ts";
import { dmMembers } from "../narrow.ts";
import type { Msg, UnreadMsgs, User, ZulipEvent } from "../types.ts";
import { confirmSent } from "./compose.ts";
import { allLists, dropLists, store, updateStored } from "./messages.ts";
import {
  applyRegister,
  me,
  noteDm,
  realm,
  replaceSubscription,
  replaceUser,
  setPresences,
  subscriptions,
  twentyFourHour,
  updateMe,
  users,
} from "./model.ts";
import { resetPresenceCursor } from "./presence.ts";
import { REGISTER, takeEarlyRegister } from "./register.ts";
import { noteTopic, resetTopics } from "./topics.ts";
import { typingEvent } from "./typing.ts";
import {
  markAllRead,
  markRead,
  markUnread,
  moveUnread,
  noteMessage,
  resetUnread,
} from "./unread.ts";

export const queueId = signal<string | undefined>(undefined);

type RegisterHandler = (state: Record<string, unknown>, again: boolean) => void;
type EventHandler = (event: ZulipEvent) => void;
const registerHandlers: RegisterHandler[] = [];
const eventHandlers = new Map<string, EventHandler[]>();

/**
 * A feature's share of each registration: `handler` reads the register state's sections it keeps
 * (`again` is true when a lost queue was replaced). Called inside the same batch as the core's.
 */
export function onRegister(handler: RegisterHandler) {
  registerHandlers.push(handler);
}

/** A feature's handler of one event type, called after the core's own (if any), in its batch. */
export function onEvent(type: string, handler: EventHandler) {
  const list = eventHandlers.get(type);
  if (list) list.push(handler);
  else eventHandlers.set(type, [handler]);
}
/** undefined while connected; otherwise when the next attempt is due (ms since the epoch). */
export const connection = signal<{ retryAt: number; error: string } | undefined>(undefined);
/** Bumped at each registration: the view reloads its list from the server. */
export const registrations = signal(0);

let stop: AbortController | undefined;
let probing = false;
/** Set at the first registration: any later one replaces a lost queue and reloads the view. */
let registeredOnce = false;

export function startEvents(onFirst: () => void) {
  stop?.abort();
  stop = new AbortController();
  const loop = eventQueue(api, {
    register: REGISTER,
    pending: takeEarlyRegister(),
    signal: stop.signal,
    heartbeats: true,
    onRegister(state) {
      batch(() => {
        applyRegister(state);
        resetUnread(
          (state as Record<string, unknown>).unread_msgs as UnreadMsgs | undefined,
          me.value.id,
        );
        queueId.value = state.queue_id ?? undefined;
        connection.value = undefined;
        for (const h of registerHandlers) h(state, registeredOnce);
        if (registeredOnce) {
          dropLists();
          resetTopics();
          resetPresenceCursor();
          registrations.value++;
        }
      });
      if (!registeredOnce) {
        registeredOnce = true;
        onFirst();
      }
    },
    onRetry(error, waitMs) {
      connection.value = { retryAt: Date.now() + waitMs, error: String(error) };
      void probe(waitMs);
    },
  });
  void (async () => {
    try {
      for await (const event of loop) {
        if (connection.value) connection.value = undefined;
        batch(() => {
          apply(event);
          for (const h of eventHandlers.get(event.type) ?? []) h(event);
        });
      }
    } catch (err) {
      if (err instanceof ZulipApiError && err.status === 401) toLogin();
      connection.value = { retryAt: 0, error: err instanceof Error ? err.message : String(err) };
    }
  })();
}

/**
 * While the loop waits to retry, or waits on a long-poll that may park for a minute once the
 * server is back, a light request tells whether the server answers again.
 */
async function probe(waitMs: number) {
  if (probing) return;
  probing = true;
  try {
    await new Promise((r) => setTimeout(r, waitMs + 200));
    while (connection.value) {
      try {
        const { response } = await api.GET("/server_settings");
        if (response.ok) {
          connection.value = undefined;
          break;
        }
      } catch {
        // still unreachable
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  } finally {
    probing = false;
  }
}

/** Retry now (the banner's button): a new loop; the queue, if it survived, is simply registered again. */
export function retryNow() {
  startEvents(() => {});
}

function touchLists() {
  for (const list of allLists()) list.touch();
}

function messageEvent(m: Msg, flags: string[], localId: string | undefined) {
  const msg: Msg = { ...m, flags };
  store.set(msg.id, msg);
  noteMessage(msg);
  if (msg.type === "private") noteDm(dmMembers(msg), msg.id);
  else if (msg.stream_id !== undefined) noteTopic(msg.stream_id, msg.subject, msg.id);
  for (const list of allLists()) list.consider(msg);
  confirmSent(msg, localId);
}

function apply(event: ZulipEvent) {
  switch (event.type) {
    case "heartbeat":
      return;
    case "message":
      return messageEvent(event.message as Msg, event.flags, event.local_message_id);
    case "update_message": {
      const moved: Msg[] = [];
      const newStream = event.new_stream_id;
      const newName =
        newStream !== undefined ? subscriptions.value.get(newStream)?.name : undefined;
      for (const id of event.message_ids) {
        const next = updateStored(id, (m) => {
          const n: Msg = { ...m };
          if (id === event.message_id && event.rendered_content !== undefined) {
            n.content = event.rendered_content;
            // A search's highlighting of the old content is stale: the new content shows.
            delete n.match_content;
            if (!event.rendering_only) n.last_edit_timestamp = event.edit_timestamp;
          }
          if (event.subject !== undefined) {
            n.subject = event.subject;
            delete n.match_subject;
            n.topic_links = event.topic_links ?? [];
          }
          if (newStream !== undefined) {
            n.stream_id = newStream;
            if (newName !== undefined) n.display_recipient = newName;
          }
          if (event.subject !== undefined || newStream !== undefined)
            n.last_moved_timestamp = event.edit_timestamp;
          return n;
        });
        if (next) {
          moved.push(next);
          if (next.type === "stream" && next.stream_id !== undefined)
            noteTopic(next.stream_id, next.subject, next.id);
        }
      }
      moveUnread(moved);
      for (const list of allLists()) for (const m of moved) list.consider(m);
      return;
    }
    case "delete_message": {
      const ids = new Set(
        event.message_ids ?? (event.message_id !== undefined ? [event.message_id] : []),
      );
      for (const id of ids) store.delete(id);
      markRead(ids);
      for (const list of allLists()) list.remove(ids);
      return;
    }
    case "reaction": {
      const { message_id, emoji_code, emoji_name, reaction_type, user_id } = event;
      const next = updateStored(message_id, (m) => ({
        ...m,
        reactions:
          event.op === "add"
            ? [
                ...m.reactions.filter(
                  (r) =>
                    !(
                      r.user_id === user_id &&
                      r.emoji_code === emoji_code &&
                      r.reaction_type === reaction_type
                    ),
                ),
                { emoji_code, emoji_name, reaction_type, user_id },
              ]
            : m.reactions.filter(
                (r) =>
                  !(
                    r.user_id === user_id &&
                    r.emoji_code === emoji_code &&
                    r.reaction_type === reaction_type
                  ),
              ),
      }));
      if (next) for (const list of allLists()) list.consider(next);
      return;
    }
    case "update_message_flags": {
      if (event.flag === "read") {
        if (event.op === "add") {
          if (event.all) markAllRead();
          else markRead(event.messages);
        } else
          markUnread(
            event.messages.map((id) => store.get(id)).filter((m): m is Msg => m !== undefined),
          );
      }
      for (const id of event.messages) {
        const next = updateStored(id, (m) => ({
          ...m,
          flags:
            event.op === "add"
              ? [...new Set([...m.flags, event.flag])]
              : m.flags.filter((f) => f !== event.flag),
        }));
        if (next) for (const list of allLists()) list.consider(next);
      }
      return;
    }
    case "subscription": {
      if (event.op === "add") {
        const next = new Map(subscriptions.value);
        for (const s of event.subscriptions) next.set(s.stream_id, s);
        subscriptions.value = next;
      } else if (event.op === "remove") {
        const next = new Map(subscriptions.value);
        for (const s of event.subscriptions) next.delete(s.stream_id);
        subscriptions.value = next;
      } else if (event.op === "update") {
        const { property, value } = event as {
          stream_id: number;
          property: string;
          value: unknown;
        };
        replaceSubscription(event.stream_id, (s) => ({ ...s, [property]: value }));
      }
      return;
    }
    case "stream": {
      if (event.op === "update") {
        const { property, value, stream_id } = event as {
          stream_id: number;
          property: string;
          value: unknown;
        };
        replaceSubscription(stream_id, (s) => ({ ...s, [property]: value }));
        if (property === "name") touchLists();
      } else if (event.op === "delete") {
        const next = new Map(subscriptions.value);
        for (const s of event.streams as { stream_id: number }[]) next.delete(s.stream_id);
        subscriptions.value = next;
      }
      return;
    }
    case "realm_user": {
      if (event.op === "add") {
        const person = event.person;
        users.value = new Map(users.value).set(person.user_id, person);
      } else if (event.op === "update") {
        const person = event.person as Partial<User> & { user_id: number };
        replaceUser(person.user_id, (u) => ({ ...u, ...person }));
        updateMe(person);
        touchLists();
      }
      return;
    }
    case "presence": {
      if (event.presences) setPresences(event.presences, undefined, false);
      return;
    }
    case "typing":
      return typingEvent(event);
    case "user_settings": {
      if (event.op === "update" && event.property === "twenty_four_hour_time") {
        twentyFourHour.value = event.value === true;
        touchLists();
      }
      return;
    }
    case "realm": {
      if (event.op === "update" && event.property === "name")
        realm.value = { ...realm.value, name: String(event.value) };
      else if (event.op === "update_dict") {
        const data = event.data as Record<string, unknown>;
        if (typeof data.name === "string") realm.value = { ...realm.value, name: data.name };
      }
      return;
    }
    default:
      return;
  }
}
