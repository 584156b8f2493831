/**
 * Marking messages read as they are seen (Zulip's unread_ops.ts): a message row that has been on
 * screen is read at once here (every count follows), and the ids go to the server in one
 * POST /json/messages/flags per moment of reading, not one per message.
 */
import { api, call } from "../api.ts";
import { isUnread, markRead, markUnread } from "./unread.ts";
import { store } from "./messages.ts";

const queued = new Set<number>();
let timer: ReturnType<typeof setTimeout> | undefined;
const FLUSH_MS = 250;
/**
 * Set by "Mark as unread from here" (Zulip's message_lists.current.prevent_reading): what is on
 * screen stays unread until the view changes.
 */
export const reading = { paused: false };

export function sawMessage(id: number) {
  if (reading.paused || !isUnread(id)) return;
  queued.add(id);
  markRead([id]);
  timer ??= setTimeout(() => void flush(), FLUSH_MS);
}

async function flush() {
  timer = undefined;
  const ids = [...queued];
  queued.clear();
  if (!ids.length) return;
  try {
    await call(api.POST("/messages/flags", { body: { messages: ids, op: "add", flag: "read" } }));
  } catch {
    // Not stored: unread again, so that they are marked when next seen.
    markUnread(ids.map((id) => store.get(id)).filter((m) => m !== undefined));
  }
}
