/**
 * A message to a big audience, at 10,000 people (issue 34): the organization's channel of
 * everyone ("everyone at scale", made once by its owner through the API and kept), then
 *
 * - the send: POST /messages to it, one client, the median of several (target ≤ 100 ms for all
 *   10,000 users);
 * - its fan-out: `queues` users (the first by id, half on each of two server processes on the
 *   database) each register a queue for messages and park a long-poll; the owner sends; every
 *   poll must answer with the message. Per send: how long after the POST's response each poll
 *   answered; the p99 over every poll of every send (target ≤ 250 ms), and how many never did.
 *
 * The long-polls are real HTTP requests held open by this process (Node's fetch opens a
 * connection for each: its agent sets no limit per origin). Queues are deleted at the end.
 */
import { randomBytes } from "node:crypto";
import { call, form, FORM } from "./delivery.ts";
import type { Query } from "./scale-fixture.ts";

const CHANNEL = "everyone at scale";
const basic = (email: string, key: string) =>
  "Basic " + Buffer.from(`${email}:${key}`).toString("base64");

export interface FanoutResult {
  subscribers: number;
  sendMs: number[];
  /** ms from the POST's response to each poll's answer, every poll of every send. */
  afterResponse: number[];
  missed: number;
  queues: number;
}

/** The channel of everyone, made (as the owner, with every active user) when missing. */
async function everyone(q: Query, base: string, owner: { email: string; api_key: string }) {
  const realm = (await q("SELECT id FROM realm WHERE string_id = 'scale'"))[0].id as number;
  const active = (
    await q("SELECT id FROM user_profile WHERE realm_id = $1 AND is_active AND NOT is_bot", [realm])
  ).map((r) => r.id as number);
  const have = await q(
    `SELECT count(*)::int AS n FROM stream s JOIN subscription sub ON sub.recipient_id = s.recipient_id AND sub.active
     WHERE s.realm_id = $1 AND s.name = $2`,
    [realm, CHANNEL],
  );
  if ((have[0]?.n ?? 0) < active.length)
    await call(`${base}/users/me/subscriptions`, {
      method: "POST",
      headers: { authorization: basic(owner.email, owner.api_key), "content-type": FORM },
      body: form({
        subscriptions: JSON.stringify([{ name: CHANNEL }]),
        principals: JSON.stringify(active),
      }),
    });
  return active.length;
}

export async function measureFanout(opts: {
  query: Query;
  /** Two processes' API bases (…/api/v1) on the same database. */
  bases: [string, string];
  owner: { email: string; api_key: string };
  queues: number;
  sends: number;
}): Promise<FanoutResult> {
  const { query: q, bases, owner } = opts;
  const subscribers = await everyone(q, bases[0], owner);
  const ownerAuth = basic(owner.email, owner.api_key);
  const sendMs: number[] = [];
  // The send alone, with no queue parked.
  for (let i = 0; i < opts.sends + 2; i++) {
    const t0 = performance.now();
    await call(`${bases[0]}/messages`, {
      method: "POST",
      headers: { authorization: ownerAuth, "content-type": FORM },
      body: form({ type: "stream", to: CHANNEL, topic: "fan-out", content: `send ${i}` }),
    });
    if (i >= 2) sendMs.push(performance.now() - t0);
  }

  const users = (
    await q(
      `SELECT u.delivery_email AS email, u.api_key FROM user_profile u
       JOIN realm r ON r.id = u.realm_id AND r.string_id = 'scale'
       WHERE u.is_active AND NOT u.is_bot AND u.delivery_email <> $1 ORDER BY u.id LIMIT $2`,
      [owner.email, opts.queues],
    )
  ).map((u, i) => ({ auth: basic(u.email, u.api_key), base: bases[i % 2]! }));
  const queues = await Promise.all(
    users.map(async (u) => {
      const reg = await call(`${u.base}/register`, {
        method: "POST",
        headers: { authorization: u.auth, "content-type": FORM },
        body: form({ event_types: JSON.stringify(["message"]), fetch_event_types: "[]" }),
      });
      return { ...u, id: reg.queue_id as string, last: reg.last_event_id as number };
    }),
  );

  const afterResponse: number[] = [];
  let missed = 0;
  try {
    for (let i = 0; i < opts.sends; i++) {
      const nonce = `f${i}x${randomBytes(6).toString("hex")}`;
      const arrivals = queues.map(async (queue) => {
        const deadline = performance.now() + 10_000;
        for (;;) {
          const left = deadline - performance.now();
          if (left <= 0) return null;
          const res = await fetch(
            `${queue.base}/events?${form({ queue_id: queue.id, last_event_id: String(queue.last) })}`,
            {
              headers: { authorization: queue.auth },
              signal: AbortSignal.timeout(Math.ceil(left)),
            },
          ).catch(() => null);
          if (!res) return null;
          const arrived = performance.now();
          const body = (await res.json()) as {
            events?: { id: number; type: string; message?: { content?: string } }[];
          };
          let found = false;
          for (const ev of body.events ?? []) {
            queue.last = Math.max(queue.last, ev.id);
            if (ev.type === "message" && ev.message?.content?.includes(nonce)) found = true;
          }
          if (found) return arrived;
        }
      });
      // Every poll parked on its server before the send.
      await new Promise((r) => setTimeout(r, 1500));
      await call(`${bases[0]}/messages`, {
        method: "POST",
        headers: { authorization: ownerAuth, "content-type": FORM },
        body: form({ type: "stream", to: CHANNEL, topic: "fan-out", content: `fan-out ${nonce}` }),
      });
      const responded = performance.now();
      for (const arrived of await Promise.all(arrivals)) {
        if (arrived === null) missed++;
        else afterResponse.push(arrived - responded);
      }
    }
  } finally {
    await Promise.all(
      queues.map((queue) =>
        fetch(`${queue.base}/events`, {
          method: "DELETE",
          headers: { authorization: queue.auth, "content-type": FORM },
          body: form({ queue_id: queue.id }),
        })
          .then((r) => r.arrayBuffer())
          .catch(() => {}),
      ),
    );
  }
  return { subscribers, sendMs, afterResponse, missed, queues: queues.length };
}
