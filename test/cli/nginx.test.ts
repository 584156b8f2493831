/**
 * The deployment of docs/operations.md's "Several processes behind nginx": deploy/nginx.conf itself (its
 * ports replaced) in front of two server processes on one PostgreSQL database, every request
 * through nginx. Which process answered a request is read from nginx's access log
 * ($upstream_addr). A queue is read through both processes, a message sent through either
 * reaches every queue, /health answers, and under a load of sends one process is killed with -9:
 * every send answered 200 is stored once and delivered once, later requests go to the survivor,
 * and a long-poll parked on the killed process is resent by nginx to the survivor (GET is
 * idempotent and the queue lives in the database), so the client just gets its events: it never
 * has to re-register. PostgreSQL only; skipped, saying why, without DATABASE_URL or nginx.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { freePort } from "../helpers/net.ts";
import { nginxBinary, startNginx, type Nginx } from "../helpers/nginx.ts";
import { sleep, useProcessPair } from "../helpers/processes.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";

const nginxInstalled = nginxBinary() !== undefined;
const skip = !process.env.DATABASE_URL
  ? "DATABASE_URL is unset (two processes need a PostgreSQL database)"
  : !nginxInstalled
    ? "nginx is not installed (apt-get install -y nginx)"
    : undefined;
if (skip) console.warn(`test/cli/nginx.test.ts skipped: ${skip}`);

const SENDERS = 4;
const SENDS_EACH = 30;
/** Sends answered before the kill. */
const KILL_AFTER = 40;

describe.skipIf(skip !== undefined)("two server processes behind nginx", () => {
  const pair = useProcessPair({ RATE_LIMITING: "false" });
  let nginx: Nginx;
  beforeAll(async () => {
    nginx = await startNginx([pair.a.port, pair.b.port], await freePort());
  });
  afterAll(async () => {
    await nginx?.stop();
  });

  /** The typed client of a development user, through nginx. */
  const as = (name: string): ZulipClient => {
    const c = (pair.cluster.creds.users[name] ?? pair.cluster.creds.bots[name])!;
    return createZulipClient({
      baseUrl: nginx.baseUrl,
      email: c.email,
      apiKey: c.api_key,
      middleware: [specCheckMiddleware],
    });
  };
  const userId = (name: string) => pair.cluster.creds.users[name]!.user_id;
  const upstream = (port: number) => `127.0.0.1:${port}`;
  /** The processes that answered the access log's polls of a queue. */
  const pollsOf = async (queueId: string) =>
    (await nginx.accessLog()).filter(
      (l) => l.uri === "/api/v1/events" && l.queueId === queueId && l.status === 200,
    );

  it("serves each queue through both processes, and a message sent through either reaches every queue", async () => {
    const users = ["hamlet", "othello", "cordelia", "iago"];
    const queues = await Promise.all(
      users.map(async (user) => {
        const { queue_id } = await expectSuccess(
          as(user).POST("/register", { body: { event_types: ["message"] } }),
        );
        return { user, id: queue_id! };
      }),
    );
    // Two sends one after the other: nginx's round robin gives them one process each.
    const sent: number[] = [];
    for (const from of ["hamlet", "othello"]) {
      const to = users.filter((u) => u !== from).map(userId);
      sent.push(
        (
          await expectSuccess(
            as(from).POST("/messages", {
              body: { type: "direct", to, content: `through nginx from ${from}` },
            }),
          )
        ).id,
      );
    }
    const sends = (await nginx.accessLog()).filter((l) => l.uri === "/api/v1/messages");
    expect(new Set(sends.map((l) => l.upstreams.at(-1))).size).toBe(2);

    // Each queue read twice in a row (so once through each process): the same two events.
    for (const queue of queues) {
      for (let i = 0; i < 2; i++) {
        const { events } = await expectSuccess(
          as(queue.user).GET("/events", {
            params: { query: { queue_id: queue.id, last_event_id: -1, dont_block: true } },
          }),
        );
        expect(events.map((e) => (e.type === "message" ? e.message.id : e.type))).toEqual(sent);
      }
      const answeredBy = (await pollsOf(queue.id)).map((l) => l.upstreams.at(-1));
      expect(answeredBy).toHaveLength(2);
      expect(new Set(answeredBy)).toEqual(new Set([upstream(pair.a.port), upstream(pair.b.port)]));
    }
  }, 60_000);

  it("answers /health through nginx", async () => {
    const res = await fetch(`${nginx.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: "success", msg: "" });
  });

  it("loses and duplicates no acknowledged send when a process is killed with -9 under load, and fails its long-polls over", async () => {
    const recipients = ["hamlet", "cordelia"];
    const killed = pair.a;
    const survivor = upstream(pair.b.port);

    // Queues that receive every send (polled throughout), and two of prospero's that receive
    // nothing until the end: their long-polls, sent together, are parked one on each process.
    const register = async (user: string) =>
      (
        await expectSuccess(
          as(user).POST("/register", { body: { event_types: ["message"], apply_markdown: false } }),
        )
      ).queue_id!;
    const loaded = await Promise.all(
      recipients.map(async (user) => ({ user, id: await register(user) })),
    );
    const parked = [await register("prospero"), await register("prospero")];

    /**
     * Polls a queue through nginx until `done()`: a failed poll (a 5xx or a lost connection) is
     * repeated with the same last_event_id; BAD_EVENT_QUEUE_ID would fail the test, as the queue
     * lives in the database.
     */
    const poll = async (user: string, queueId: string, done: (contents: string[]) => boolean) => {
      const contents: string[] = [];
      let last = -1;
      let failed = 0;
      while (!done(contents)) {
        let result;
        try {
          result = await as(user).GET("/events", {
            params: { query: { queue_id: queueId, last_event_id: last } },
          });
        } catch {
          failed++;
          await sleep(50);
          continue;
        }
        const data = await expectSuccess(Promise.resolve(result));
        for (const event of data.events) {
          last = event.id;
          if (event.type === "message") contents.push(event.message.content);
        }
      }
      return { contents, failed };
    };

    const parkedPolls = parked.map((id) =>
      poll("prospero", id, (contents) => contents.includes("the end")),
    );
    await sleep(500);

    // The load: SENDERS concurrent loops through nginx; A is killed once KILL_AFTER sends are answered.
    const acked = new Map<string, number>();
    const unacked: string[] = [];
    const afterExit: string[] = [];
    let exited = false;
    let answered = 0;
    let killing: Promise<unknown> | undefined;
    const othello = as("othello");
    const senders = Array.from({ length: SENDERS }, async (_, s) => {
      for (let i = 0; i < SENDS_EACH; i++) {
        const token = `tok-${s}-${i}`;
        const startedAfterExit = exited;
        try {
          const { data } = await othello.POST("/messages", {
            body: { type: "direct", to: recipients.map(userId), content: token },
          });
          if (data) acked.set(token, data.id);
          else unacked.push(token);
        } catch {
          unacked.push(token); // nginx's 502 page: not a Zulip answer
        }
        if (startedAfterExit) afterExit.push(token);
        if (++answered === KILL_AFTER) {
          killing = new Promise((r) => killed.child.once("exit", r)).then(() => (exited = true));
          killed.child.kill("SIGKILL");
        }
      }
    });
    const polls = loaded.map((q) => poll(q.user, q.id, (contents) => contents.includes("the end")));
    await Promise.all(senders);
    await killing;

    // Requests after the kill keep working: nginx finds the killed process refusing connections
    // and sends them to the survivor.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${nginx.baseUrl}/health`);
      expect(res.status).toBe(200);
    }
    await expectSuccess(
      othello.POST("/messages", {
        body: { type: "direct", to: [...recipients, "prospero"].map(userId), content: "the end" },
      }),
    );
    const received = await Promise.all(polls);
    const parkedReceived = await Promise.all(parkedPolls);

    // At least the sends in flight at the kill may be lost (502, perhaps stored); every send
    // started once the process had exited was answered 200.
    expect(acked.size + unacked.length).toBe(SENDERS * SENDS_EACH);
    expect(acked.size).toBeGreaterThan(KILL_AFTER);
    expect(afterExit.length).toBeGreaterThan(0);
    expect(afterExit.filter((t) => !acked.has(t))).toEqual([]);

    // Every acknowledged send is stored, once; none is stored twice, acknowledged or not.
    const { messages } = await expectSuccess(
      as("hamlet").GET("/messages", {
        params: {
          query: { anchor: "newest", num_before: 1000, num_after: 0, apply_markdown: false },
        },
      }),
    );
    const stored = messages.map((m) => m.content).filter((c) => c.startsWith("tok-"));
    expect(stored.length).toBe(new Set(stored).size);
    const hamlet = as("hamlet");
    await Promise.all(
      [...acked].map(async ([token, id]) => {
        expect(stored).toContain(token);
        const { message } = await expectSuccess(
          hamlet.GET("/messages/{message_id}", {
            params: { path: { message_id: id }, query: { apply_markdown: false } },
          }),
        );
        expect(message.content).toBe(token);
      }),
    );
    // Each queue got every stored send once, and "the end".
    for (const { contents } of received) {
      const tokens = contents.filter((c) => c.startsWith("tok-"));
      expect(tokens.length).toBe(new Set(tokens).size);
      expect(new Set(tokens)).toEqual(new Set(stored));
      expect(contents.at(-1)).toBe("the end");
    }

    // The long-poll parked on the killed process was resent to the survivor by nginx: its log
    // line names both, and the client got "the end" without a failed poll or a new queue.
    for (const { contents, failed } of parkedReceived) {
      expect(contents).toEqual(["the end"]);
      expect(failed).toBe(0);
    }
    const parkedUpstreams = (await Promise.all(parked.map(pollsOf))).flatMap((lines) =>
      lines.map((l) => l.upstreams),
    );
    expect(parkedUpstreams).toContainEqual([upstream(killed.port), survivor]);
  }, 60_000);
});
