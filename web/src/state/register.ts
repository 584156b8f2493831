/**
 * The first requests, sent as the app's very first act (main.tsx), before the rest of the app is
 * fetched and evaluated: the registration (POST /register), whose answer (the state of 10,000
 * people, 50,000 unread ids) is the slowest part of the first screen, and the first messages of
 * the view the URL names (GET /messages, as the feed asks for them). The event loop
 * (state/events.ts) takes the registration as its first, the message list (state/messages.ts)
 * the messages. Only the typed client, narrow.ts and this module are loaded before they are sent.
 */
import { unwrap } from "../../../client/src/index.ts";
import { api, call } from "../api.ts";
import { narrowTerms, parseHash, type Narrow } from "../narrow.ts";
import type { RegisterState } from "../types.ts";
import { FETCH_EVENT_TYPES } from "./register-types.ts";

/** A view's first fetch: messages before and after its anchor (Zulip's web app: 60 and 150). */
export const FIRST_BEFORE = 50;
export const FIRST_AFTER = 100;

/** Zulip's web app's capabilities (web/src/ui_init.ts), with typing in channels and simplified presence. */
export const REGISTER = {
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  include_subscribers: false as const,
  fetch_event_types: FETCH_EVENT_TYPES,
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: false,
    stream_typing_notifications: true,
    user_settings_object: true,
    empty_topic_name: true,
    simplified_presence_events: true,
  },
};

let early: Promise<RegisterState> | undefined;

/** Sends the first registration now; the event loop's start takes it. */
export function registerEarly() {
  early = unwrap(api.POST("/register", { body: REGISTER }));
  // Handled where the event loop awaits it; until then, not an unhandled rejection.
  early.catch(() => {});
}

/** The registration sent early, once (undefined afterwards: the loop registers by itself). */
export function takeEarlyRegister(): Promise<RegisterState> | undefined {
  const p = early;
  early = undefined;
  return p;
}

/** GET /messages's parameters, as the app asks for a view's messages. */
export function messagesQuery(
  narrow: Narrow,
  anchor: number | "first_unread" | "newest",
  before: number,
  after: number,
  includeAnchor: boolean,
  myId: number,
) {
  return {
    anchor,
    num_before: before,
    num_after: after,
    include_anchor: includeAnchor,
    narrow: narrowTerms(narrow, myId),
    apply_markdown: true,
    client_gravatar: false,
    allow_empty_topic_name: true,
  };
}

export function getMessages(query: ReturnType<typeof messagesQuery>) {
  return call(api.GET("/messages", { params: { query } }));
}

const earlyMessages = new Map<string, ReturnType<typeof getMessages>>();

/** Where the last registration's `web_home_view` is remembered (state/home.ts writes it). */
export const HOME_VIEW_KEY = "home-view";

/**
 * Whether the view to open is a page rather than a feed: the URL names none and the home view,
 * as the last registration gave it (Zulip's default, the Inbox, when never seen), is the Inbox
 * or Recent conversations. That page is drawn from the registration alone; the All messages
 * feed behind it is fetched once the registration has answered, not beside it, where its
 * statements (first_unread over all of a reader's messages) would slow the registration down.
 */
export function homePageFirst(): boolean {
  if (location.hash !== "" && location.hash !== "#") return false;
  let remembered: string | null = null;
  try {
    remembered = localStorage.getItem(HOME_VIEW_KEY);
  } catch {
    // Storage refused (a privacy mode): Zulip's default home view.
  }
  return remembered !== "all_messages";
}

/**
 * Fetches the first messages of the view the URL names (All messages when none), with the
 * parameters the app's first load of that view uses (state/view.ts, app.tsx: before the
 * registration, so my id is not known yet). Not when the home page comes first (homePageFirst).
 */
export function fetchViewEarly() {
  if (homePageFirst()) return;
  const v = parseHash(location.hash) ?? { narrow: { kind: "all" } };
  const query = messagesQuery(
    v.narrow,
    v.near ?? "first_unread",
    FIRST_BEFORE,
    FIRST_AFTER,
    true,
    0,
  );
  const request = getMessages(query);
  request.catch(() => {});
  earlyMessages.set(JSON.stringify(query), request);
}

/** The early fetch with exactly these parameters, once. */
export function takeEarlyMessages(query: ReturnType<typeof messagesQuery>) {
  const key = JSON.stringify(query);
  const request = earlyMessages.get(key);
  earlyMessages.delete(key);
  return request;
}
