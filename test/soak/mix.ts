/**
 * The mixed load of `npm run soak`: what several users of the development organization do, with
 * the weights of each kind of request (out of their sum), and the event-queue clients that run
 * beside them. Every request here is meant to succeed: any non-2xx answer or network error is a
 * failure of the run.
 */

export interface SoakUser {
  name: string;
  id: number;
  auth: string;
  /** The user's own recent messages (newest last), which they may edit. */
  own: number[];
  /** Whether the user's last typing notification was a start (the next is then a stop). */
  typing: boolean;
}

export interface Outcome {
  kind: string;
  ok: boolean;
  status: number;
  /** Zulip's `msg` or the network error, when not ok. */
  error?: string;
}

export class Client {
  /** Recent channel messages (Verona, Denmark: everyone is subscribed), newest last. */
  readonly recent: number[] = [];
  private sent = 0;
  constructor(
    readonly base: string,
    readonly users: SoakUser[],
  ) {}

  async call(
    user: SoakUser,
    method: string,
    path: string,
    params: Record<string, unknown> = {},
    signal?: AbortSignal,
  ): Promise<{ status: number; body: any }> {
    const form = new URLSearchParams(
      Object.entries(params).map(([k, v]): [string, string] => [
        k,
        typeof v === "string" ? v : JSON.stringify(v),
      ]),
    );
    const query = method === "GET";
    const res = await fetch(this.base + path + (query && form.size ? `?${form}` : ""), {
      method,
      headers: {
        authorization: user.auth,
        ...(query ? {} : { "content-type": "application/x-www-form-urlencoded" }),
      },
      body: query ? undefined : form,
      signal,
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = { msg: text.slice(0, 200) };
    }
    return { status: res.status, body };
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(Math.random() * xs.length)]!;
  }
  private remember(list: number[], id: number, keep: number) {
    list.push(id);
    if (list.length > keep) list.splice(0, list.length - keep);
  }
  private other(user: SoakUser): SoakUser {
    for (;;) {
      const u = this.pick(this.users);
      if (u !== user) return u;
    }
  }
  private recentId(): number {
    return this.pick(this.recent.slice(-50));
  }

  /**
   * The operations, by kind, with their weights: a chat client mostly reads, types and reports
   * presence; sends are one in eight; edits, searches and flag changes are rarer.
   */
  readonly mix: { kind: string; weight: number; run: (u: SoakUser) => Promise<any> }[] = [
    {
      // Channel messages (four in five), in ten topics of two channels, or a direct message.
      kind: "send",
      weight: 12,
      run: async (u) => {
        const n = ++this.sent;
        const content = `Soak message ${n} about word${n % 20}, with **bold** and a [link](https://example.com/${n}).`;
        const channel = Math.random() < 0.8;
        const r = await this.call(
          u,
          "POST",
          "/messages",
          channel
            ? {
                type: "channel",
                to: this.pick(["Verona", "Denmark"]),
                topic: `soak ${n % 10}`,
                content,
              }
            : { type: "direct", to: [this.other(u).id], content },
        );
        if (r.status === 200) {
          this.remember(u.own, r.body.id, 20);
          if (channel) this.remember(this.recent, r.body.id, 500);
        }
        return r;
      },
    },
    {
      // The combined feed or a channel, newest 50: opening the app or switching views.
      kind: "read",
      weight: 18,
      run: (u) =>
        this.call(u, "GET", "/messages", {
          anchor: "newest",
          num_before: 50,
          num_after: 0,
          narrow: Math.random() < 0.5 ? [] : [{ operator: "channel", operand: "Verona" }],
        }),
    },
    {
      kind: "read one",
      weight: 10,
      run: (u) => this.call(u, "GET", `/messages/${this.recentId()}`),
    },
    {
      // A topic, around a message: clicking on a notification.
      kind: "narrow",
      weight: 8,
      run: (u) =>
        this.call(u, "GET", "/messages", {
          anchor: this.recentId(),
          num_before: 25,
          num_after: 25,
          narrow: [
            { operator: "channel", operand: "Verona" },
            { operator: "topic", operand: `soak ${Math.floor(Math.random() * 10)}` },
          ],
        }),
    },
    {
      kind: "search",
      weight: 4,
      run: (u) =>
        this.call(u, "GET", "/messages", {
          anchor: "newest",
          num_before: 20,
          num_after: 0,
          narrow: [{ operator: "search", operand: `word${Math.floor(Math.random() * 20)}` }],
        }),
    },
    {
      // An edit of one of the user's own recent messages (a send when they have none yet).
      kind: "edit",
      weight: 4,
      run: (u) =>
        u.own.length === 0
          ? this.mix[0]!.run(u)
          : this.call(u, "PATCH", `/messages/${this.pick(u.own)}`, {
              content: `Edited at ${Date.now()}: soak word${Math.floor(Math.random() * 20)}`,
            }),
    },
    {
      kind: "flags",
      weight: 6,
      run: (u) =>
        this.call(u, "POST", "/messages/flags", {
          messages: [this.recentId(), this.recentId()],
          op: Math.random() < 0.8 ? "add" : "remove",
          flag: Math.random() < 0.8 ? "read" : "starred",
        }),
    },
    {
      // Start and stop in turn, to one user (two in three) or in a channel's topic.
      kind: "typing",
      weight: 14,
      run: (u) => {
        u.typing = !u.typing;
        const op = u.typing ? "start" : "stop";
        return Math.random() < 0.67
          ? this.call(u, "POST", "/typing", { op, to: [this.other(u).id] })
          : this.call(u, "POST", "/typing", {
              type: "channel",
              op,
              stream_id: this.veronaId,
              topic: "soak 1",
            });
      },
    },
    {
      // The client's periodic report; one in ten says the user just did something.
      kind: "presence",
      weight: 12,
      run: (u) =>
        this.call(u, "POST", "/users/me/presence", {
          status: "active",
          ...(Math.random() < 0.1 ? { new_user_input: true } : { ping_only: true }),
        }),
    },
  ];
  veronaId = 0;
  private readonly total = this.mix.reduce((s, m) => s + m.weight, 0);

  /** One request of the mix, as a random user: its kind and whether it succeeded. */
  async one(): Promise<Outcome> {
    let r = Math.random() * this.total;
    const op = this.mix.find((m) => (r -= m.weight) < 0) ?? this.mix.at(-1)!;
    return this.outcome(op.kind, () => op.run(this.pick(this.users)));
  }

  async outcome(kind: string, fn: () => Promise<{ status: number; body: any }>): Promise<Outcome> {
    try {
      const { status, body } = await fn();
      const ok = status >= 200 && status < 300 && body?.result === "success";
      return { kind, ok, status, ...(ok ? {} : { error: `${status} ${body?.msg ?? ""}` }) };
    } catch (e) {
      return { kind, ok: false, status: 0, error: (e as Error).message };
    }
  }
}

/**
 * An event-queue client per user: registers a queue, long-polls it, acknowledging what it got
 * (last_event_id), and every `renewMs` deletes the queue and registers again (a client
 * reloading), until stop(). Each register, poll and delete is reported to `record`.
 */
export function runPollers(
  client: Client,
  renewMs: number,
  record: (o: Outcome, startedAt: number) => void,
): { registered: Promise<unknown>; stop(): Promise<void> } {
  const controller = new AbortController();
  let stopping = false;
  const firsts: Promise<void>[] = [];
  const loop = async (u: SoakUser, registered: () => void) => {
    while (!stopping) {
      let t0 = performance.now();
      let queue: { id: string; last: number } | undefined;
      const reg = await client.outcome("register", async () => {
        const r = await client.call(u, "POST", "/register", {}, controller.signal);
        if (r.status === 200) queue = { id: r.body.queue_id, last: r.body.last_event_id };
        return r;
      });
      registered();
      if (stopping) return;
      record(reg, t0);
      if (!queue) {
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const renewAt = performance.now() + renewMs * (0.5 + Math.random());
      while (!stopping && performance.now() < renewAt) {
        t0 = performance.now();
        const q = queue;
        const poll = await client.outcome("events", async () => {
          const r = await client.call(
            u,
            "GET",
            "/events",
            { queue_id: q.id, last_event_id: q.last },
            controller.signal,
          );
          if (r.status === 200)
            for (const e of r.body.events as { id: number }[]) q.last = Math.max(q.last, e.id);
          return r;
        });
        if (stopping) return;
        record(poll, t0);
        if (!poll.ok) break;
      }
      t0 = performance.now();
      const queueId = queue.id;
      const del = await client.outcome("unregister", () =>
        client.call(u, "DELETE", "/events", { queue_id: queueId }, controller.signal),
      );
      if (stopping) return;
      record(del, t0);
    }
  };
  const loops = client.users.map((u) => {
    let registered!: () => void;
    firsts.push(new Promise<void>((r) => (registered = r)));
    return loop(u, registered);
  });
  return {
    /** Settles once every client's first register has been answered. */
    registered: Promise.all(firsts),
    async stop() {
      stopping = true;
      controller.abort();
      await Promise.allSettled(loops);
    },
  };
}
