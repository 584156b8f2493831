/**
 * Two server processes (`npm start`'s command) on one PostgreSQL database: a queue registered
 * through one is served by both, a long-poll waiting in one wakes at once for a message sent
 * through the other (not at the heartbeat), and the queue survives a restart of the process that
 * created it. PostgreSQL only: the embedded database belongs to a single process.
 */
import { describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { sleep, useProcessPair } from "../helpers/processes.ts";

/** Long enough that a long-poll answered by the heartbeat cannot pass for a woken one. */
const HEARTBEAT_MS = 30_000;

describe.skipIf(!process.env.DATABASE_URL)(
  "two server processes on one PostgreSQL database",
  () => {
    const pair = useProcessPair({ EVENT_HEARTBEAT_MS: String(HEARTBEAT_MS) });

    it("serves a queue from either process, wakes a waiting long-poll at once, and keeps the queue across a restart", async () => {
      const hamlet = pair.cluster.creds.users.hamlet!.user_id;
      const { queue_id } = await expectSuccess(
        pair.a.as("hamlet").POST("/register", { body: { event_types: ["message"] } }),
      );

      // A long-poll waiting in A; the message is sent through B.
      const started = Date.now();
      const waiting = pair.a
        .as("hamlet")
        .GET("/events", { params: { query: { queue_id: queue_id!, last_event_id: -1 } } });
      await sleep(300);
      const sent = await expectSuccess(
        pair.b.as("othello").POST("/messages", {
          body: { type: "direct", to: [hamlet], content: "across processes" },
        }),
      );
      const woken = await expectSuccess(waiting);
      expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS / 2);
      expect(woken.events).toEqual([
        expect.objectContaining({
          type: "message",
          id: 0,
          message: expect.objectContaining({ id: sent.id }),
        }),
      ]);

      // The same queue through B gives the same event, by the same id.
      const throughB = await expectSuccess(
        pair.b.as("hamlet").GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      );
      expect(throughB.events).toEqual(woken.events);

      // A restarts; the queue lives on, in the database.
      await pair.a.stop();
      pair.a = await pair.cluster.start(pair.a.port);
      const again = await expectSuccess(
        pair.b.as("othello").POST("/messages", {
          body: { type: "direct", to: [hamlet], content: "after the restart" },
        }),
      );
      const after = await expectSuccess(
        pair.a
          .as("hamlet")
          .GET("/events", { params: { query: { queue_id: queue_id!, last_event_id: 0 } } }),
      );
      expect(after.events).toEqual([
        expect.objectContaining({
          type: "message",
          id: 1,
          message: expect.objectContaining({ id: again.id }),
        }),
      ]);
    });

    it("drops a cached user in every process when the user changes in one", async () => {
      // Both processes cache hamlet's row; changing the organization's email visibility through A
      // rewrites every user's API email, and B must serve the new one.
      await expectSuccess(pair.a.as("hamlet").GET("/users/me"));
      await expectSuccess(pair.b.as("hamlet").GET("/users/me"));
      await expectSuccess(
        pair.a.as("iago").PATCH("/realm", { body: { email_address_visibility: 3 } }),
      );
      const deadline = Date.now() + 5_000;
      let email = "";
      while (Date.now() < deadline) {
        email = (await expectSuccess(pair.b.as("hamlet").GET("/users/me"))).email;
        if (email !== "hamlet@zulip.com") break;
        await sleep(20);
      }
      expect(email).toBe(`user${pair.cluster.creds.users.hamlet!.user_id}@zulip.testserver`);
      await expectSuccess(
        pair.a.as("iago").PATCH("/realm", { body: { email_address_visibility: 1 } }),
      );
    });
  },
);
