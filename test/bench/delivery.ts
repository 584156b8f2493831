/**
 * Delivery latency through the event queue: user A registers a queue (event_types ["message"])
 * on `pollBase` and long-polls it; user B sends a channel message through `sendBase` (the same
 * server, or another process on the same database). Measured, per message: from the POST's
 * response to the poll's response carrying the message (negative when the event arrives first),
 * and from the POST's start. Sequential; each poll gives up after `timeoutMs`. With the `typing`
 * probe, B sends A typing notifications instead (start and stop in turn) and A's queue takes
 * `typing` events.
 */
import { randomBytes } from "node:crypto";

export interface DeliveryResult {
  /** ms from the POST's response to the event's arrival, per delivered message. */
  afterResponse: number[];
  /** ms from the POST's start to the event's arrival. */
  afterStart: number[];
  attempts: number;
  timedOut: number;
  /** Why the run stopped early, if it did. */
  stopped?: string;
}

/** A form body, as python-zulip-api sends one. */
export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
export const FORM = "application/x-www-form-urlencoded";

/** A request whose answer must be a Zulip success; its JSON. */
export async function call(url: string, init: RequestInit): Promise<any> {
  const res = await fetch(url, init);
  const body = (await res.json().catch(() => ({}))) as { result?: string; msg?: string };
  if (!res.ok || body.result !== "success")
    throw new Error(`${init.method ?? "GET"} ${url}: HTTP ${res.status} ${body.msg ?? ""}`);
  return body;
}

export async function measureDelivery(opts: {
  pollBase: string;
  sendBase: string;
  authA: string;
  authB: string;
  count: number;
  timeoutMs: number;
  maxConsecutiveTimeouts: number;
  /** What B sends: a channel message (default), or a typing notification to A (user id `to`). */
  probe?: { kind: "message" } | { kind: "typing"; to: number };
}): Promise<DeliveryResult> {
  const { pollBase, sendBase, authA, authB } = opts;
  const probe = opts.probe ?? { kind: "message" };
  const reg = await call(`${pollBase}/register`, {
    method: "POST",
    headers: { authorization: authA, "content-type": FORM },
    body: form({ event_types: JSON.stringify([probe.kind]) }),
  });
  const queueId: string = reg.queue_id;
  let lastEventId: number = reg.last_event_id;
  const result: DeliveryResult = { afterResponse: [], afterStart: [], attempts: 0, timedOut: 0 };
  let consecutive = 0;

  /** Polls until an event carries `nonce` (then returns its arrival time) or the deadline passes. */
  async function pollFor(nonce: string, deadline: number): Promise<number | "timeout"> {
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) return "timeout";
      const url = `${pollBase}/events?${form({ queue_id: queueId, last_event_id: String(lastEventId) })}`;
      let res: Response;
      try {
        res = await fetch(url, {
          headers: { authorization: authA },
          signal: AbortSignal.timeout(Math.ceil(left)),
        });
      } catch (e) {
        if ((e as Error).name === "TimeoutError" || (e as Error).name === "AbortError")
          return "timeout";
        throw e;
      }
      const arrived = performance.now();
      const body = (await res.json()) as {
        result: string;
        msg?: string;
        events?: { id: number; type: string; op?: string; message?: { content?: string } }[];
      };
      if (!res.ok || body.result !== "success")
        throw new Error(`GET /events: HTTP ${res.status} ${body.msg ?? ""}`);
      let found = false;
      for (const ev of body.events ?? []) {
        lastEventId = Math.max(lastEventId, ev.id);
        if (ev.type === "message" && ev.message?.content?.includes(nonce)) found = true;
        // Typing carries no text: the op sent (start and stop alternate) marks the event.
        if (ev.type === "typing" && ev.op === nonce) found = true;
      }
      if (found) return arrived;
    }
  }

  try {
    for (let i = 0; i < opts.count; i++) {
      const nonce =
        probe.kind === "typing"
          ? i % 2
            ? "stop"
            : "start"
          : `d${i}x${randomBytes(6).toString("hex")}`;
      result.attempts++;
      const poll = pollFor(nonce, performance.now() + opts.timeoutMs);
      poll.catch(() => {}); // awaited below; no unhandled rejection while the POST runs
      await new Promise((r) => setTimeout(r, 15)); // the poll is parked on the server
      const start = performance.now();
      await call(`${sendBase}/${probe.kind === "typing" ? "typing" : "messages"}`, {
        method: "POST",
        headers: { authorization: authB, "content-type": FORM },
        body: form(
          probe.kind === "typing"
            ? { op: nonce, to: JSON.stringify([probe.to]) }
            : { type: "stream", to: "Verona", topic: "delivery", content: `delivery ${nonce}` },
        ),
      });
      const responded = performance.now();
      const arrived = await poll;
      if (arrived === "timeout") {
        result.timedOut++;
        if (++consecutive >= opts.maxConsecutiveTimeouts) {
          result.stopped = `stopped after ${consecutive} consecutive timeouts`;
          break;
        }
        continue;
      }
      consecutive = 0;
      result.afterResponse.push(arrived - responded);
      result.afterStart.push(arrived - start);
    }
  } finally {
    await fetch(`${pollBase}/events`, {
      method: "DELETE",
      headers: { authorization: authA, "content-type": FORM },
      body: form({ queue_id: queueId }),
    })
      .then((r) => r.arrayBuffer())
      .catch(() => {});
  }
  return result;
}
