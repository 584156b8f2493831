/**
 * The event log: events exist exactly when their change committed, and a queue gets every event
 * once even when transactions commit out of the order in which they took their log ids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tx } from "../../server/db/index.ts";
import { appendEvents, storedUserData } from "../../server/events/log.ts";
import { asUser, openQueue, sendToChannel } from "../helpers/builders.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const onPostgres = Boolean(process.env.DATABASE_URL);

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A marker event, of a type the spec knows (a user status), labelled by its text. */
function marker(label: string) {
  return { type: "user_status", user_id: server.creds.users.hamlet!.user_id, status_text: label };
}

/**
 * Runs a transaction that appends a marker event for hamlet, then waits for `release` before
 * committing. `started` resolves once its event is written (its log id taken).
 */
function heldTransaction(
  label: string,
  release: Promise<void>,
  beforeAppend?: (tx: Tx) => Promise<void>,
) {
  const started = deferred();
  const done = server.db.$transaction(
    async (tx) => {
      await beforeAppend?.(tx);
      await appendEvents(
        tx,
        server.creds.realm.id,
        [{ event: marker(label), users: [server.creds.users.hamlet!.user_id] }],
        [],
      );
      started.resolve();
      await release;
    },
    { timeout: 20_000 },
  );
  return { started: started.promise, done };
}

async function registerMarkers() {
  return (
    await expectSuccess(
      server.as("hamlet").POST("/register", { body: { event_types: ["user_status"] } }),
    )
  ).queue_id!;
}

async function poll(queue_id: string, last_event_id = -1) {
  return (
    await expectSuccess(
      server
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id, last_event_id, dont_block: true } } }),
    )
  ).events as {
    id: number;
    type: string;
    status_text?: string;
  }[];
}

describe("event log", () => {
  it("logs no event for a change that rolled back", async () => {
    const queue = await registerMarkers();
    await expect(
      server.db.$transaction(async (tx) => {
        await appendEvents(
          tx,
          server.creds.realm.id,
          [
            {
              event: marker("rolled back"),
              users: [server.creds.users.hamlet!.user_id],
            },
          ],
          [],
        );
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await poll(queue)).toEqual([]);
  });

  it.skipIf(!onPostgres)(
    "delivers an event that committed after a later one only once the earlier commits, and each exactly once",
    async () => {
      const queue = await registerMarkers();
      // A takes its log id first, B second; B commits first.
      const releaseA = deferred();
      const a = heldTransaction("A", releaseA.promise);
      await a.started;
      const b = heldTransaction("B", Promise.resolve());
      await b.done;
      // B has committed, but A (older, still running) could still commit an event with a lower
      // id: nothing past A's transaction is delivered yet.
      expect(await poll(queue)).toEqual([]);
      releaseA.resolve();
      await a.done;
      const events = await poll(queue);
      expect(events.map((e) => e.status_text)).toEqual(["A", "B"]);
      expect(events.map((e) => e.id)).toEqual([0, 1]);
      // Acknowledged: nothing again.
      expect(await poll(queue, 1)).toEqual([]);
    },
  );

  it.skipIf(!onPostgres)(
    "does not skip an event whose transaction took its id before a reader moved past a later one",
    async () => {
      const queue = await registerMarkers();
      // A's transaction starts (takes its transaction id) first but appends last; B commits meanwhile.
      const releaseA = deferred();
      const appendA = deferred();
      const a = heldTransaction("A", releaseA.promise, async (tx) => {
        await tx.$executeRaw`SELECT pg_current_xact_id()`;
        await appendA.promise;
      });
      await new Promise((r) => setTimeout(r, 50));
      const b = heldTransaction("B", Promise.resolve());
      await b.done;
      appendA.resolve();
      await a.started;
      const first = await poll(queue);
      expect(first).toEqual([]);
      releaseA.resolve();
      await a.done;
      const events = await poll(queue);
      expect(events.map((e) => e.status_text).sort()).toEqual(["A", "B"]);
      expect(events.map((e) => e.id)).toEqual([0, 1]);
    },
  );

  it("wakes a waiting long-poll as soon as the event commits, not at the heartbeat", async () => {
    const slow = await startTestServer({ eventHeartbeatMs: 20_000 });
    try {
      const queue_id = (
        await expectSuccess(
          slow.as("hamlet").POST("/register", { body: { event_types: ["message"] } }),
        )
      ).queue_id!;
      const started = Date.now();
      const waiting = slow
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id, last_event_id: -1 } } });
      await new Promise((r) => setTimeout(r, 200));
      await expectSuccess(
        slow.as("othello").POST("/messages", {
          body: { type: "direct", to: [slow.creds.users.hamlet!.user_id], content: "wake up" },
        }),
      );
      const { events } = await expectSuccess(waiting);
      expect(events).toEqual([expect.objectContaining({ type: "message", id: 0 })]);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await slow.close();
    }
  });

  it("stores a message's flags once for the recipients who share them, and gives each their own", async () => {
    expect(
      storedUserData(
        new Map([
          [1, { flags: ["read"] }],
          [2, { flags: [] }],
          [3, { flags: [] }],
          [4, { flags: ["mentioned"] }],
        ]),
      ),
    ).toEqual({ "*": { flags: [] }, "1": { flags: ["read"] }, "4": { flags: ["mentioned"] } });
    // No two alike: each by id.
    expect(storedUserData(new Map([[1, { flags: ["read"] }]]))).toEqual({
      "1": { flags: ["read"] },
    });
    expect(storedUserData(undefined)).toBeNull();

    const queues = await Promise.all(
      ["hamlet", "othello", "cordelia", "iago"].map((name) =>
        openQueue(asUser(server, name), { event_types: ["message"] }),
      ),
    );
    const { id } = await sendToChannel(asUser(server, "hamlet"), {
      to: "Verona",
      topic: "flags for each",
      content: "hello @**Othello, the Moor of Venice**",
      read_by_sender: true,
    });
    const flags = await Promise.all(
      queues.map(async (q) => {
        const event = (await q.nextEvents()).find(
          (e) => e.type === "message" && e.message.id === id,
        );
        return event?.type === "message" ? event.flags : null;
      }),
    );
    // The sender has read it; othello is mentioned; the others have it unread.
    expect(flags).toEqual([["read"], ["mentioned"], [], []]);
    const [row] = await server.db.$queryRaw<{ user_data: Record<string, unknown> }[]>`
      SELECT user_data FROM event_log WHERE type = 'message' AND (event->'message'->>'id')::int = ${id}`;
    expect(row!.user_data["*"]).toEqual({ flags: [] });
    expect(row!.user_data[String(server.creds.users.cordelia!.user_id)]).toBeUndefined();
  });
});
