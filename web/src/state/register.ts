/**
 * The first registration (POST /register), sent as the app's very first act (main.tsx), before
 * the rest of the app is fetched and evaluated: the server's answer (the state of 10,000 people,
 * 50,000 unread ids) is the slowest part of the first screen, so it starts with the HTML. The
 * event loop (state/events.ts) takes it as its first registration. Only the typed client and this
 * module are loaded before it is sent.
 */
import { unwrap } from "../../../client/src/index.ts";
import { api } from "../api.ts";
import type { RegisterState } from "../types.ts";

/** Zulip's web app's capabilities (web/src/ui_init.ts), with typing in channels and simplified presence. */
export const REGISTER = {
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  include_subscribers: false as const,
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
