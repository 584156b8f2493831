/**
 * My presence, reported as Zulip's web app does (web/src/activity.ts): at start and every
 * minute, "active" while the page is shown and had input in the last five minutes, else "idle";
 * the answer carries everyone's presence since the last report (`last_update_id`).
 */
import { api, call } from "../api.ts";
import type { PresenceTimes } from "../types.ts";
import { setPresences } from "./model.ts";

const PING_MS = 60_000;
const IDLE_AFTER_MS = 5 * 60_000;
let lastInput = Date.now();
let newInput = true;
let lastUpdateId = -1;
let timer: ReturnType<typeof setTimeout> | undefined;

function status(): "active" | "idle" {
  return document.visibilityState === "visible" && Date.now() - lastInput < IDLE_AFTER_MS
    ? "active"
    : "idle";
}

async function report() {
  clearTimeout(timer);
  try {
    const res = await call(
      api.POST("/users/me/presence", {
        body: {
          status: status(),
          new_user_input: newInput,
          slim_presence: true,
          last_update_id: lastUpdateId,
        },
      }),
    );
    newInput = false;
    if (res.presences)
      setPresences(
        res.presences as Record<string, PresenceTimes>,
        res.server_timestamp,
        lastUpdateId < 0,
      );
    if (res.presence_last_update_id !== undefined) lastUpdateId = res.presence_last_update_id;
  } catch {
    // the event loop's banner says when the server cannot be reached
  }
  timer = setTimeout(() => void report(), PING_MS);
}

export function startPresence() {
  const input = () => {
    const wasIdle = status() === "idle";
    lastInput = Date.now();
    newInput = true;
    if (wasIdle) void report();
  };
  for (const type of ["keydown", "pointerdown", "wheel", "mousemove", "focus", "touchstart"])
    window.addEventListener(type, input, { passive: true, capture: true });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") input();
  });
  void report();
}

/** After a new registration the full presence came with it: start counting again. */
export function resetPresenceCursor() {
  lastUpdateId = -1;
}
