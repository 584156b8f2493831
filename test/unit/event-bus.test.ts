/**
 * The event bus's wake-ups (server/events/index.ts), in the one interleaving that can lose one: a
 * long-poll that starts waiting while the bus is reading the log. The read was asked for the
 * users already waiting, so its rows come back without the newcomer; if its window reaches past
 * where the newcomer's poll stopped, the next window starts beyond the newcomer's event, and
 * nothing would wake it before the heartbeat (found by test/cli/event-stress.test.ts in CI).
 *
 * The bus runs on the test server's real database through a pass-through that can hold a
 * statement's answer back, so that the interleaving happens every time rather than by chance.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../../server/db/index.ts";
import { EventBus } from "../../server/events/index.ts";
import { logEvents } from "../../server/actions/transaction.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts?.close());

/** Holds back the answer of the next statement whose text contains `marker`, until released. */
class Gate {
  private armed: string | null = null;
  private open: (() => void) | undefined;
  reached!: Promise<void>;
  private signal: (() => void) | undefined;

  arm(marker: string) {
    this.armed = marker;
    this.reached = new Promise((resolve) => (this.signal = resolve));
  }
  release() {
    this.open?.();
  }
  async pass(sql: string) {
    if (this.armed === null || !sql.includes(this.armed)) return;
    this.armed = null;
    const held = new Promise<void>((resolve) => (this.open = resolve));
    this.signal!();
    await held;
  }
}

/** The database, with every `$queryRaw` answer passed through the gates first. */
function gated(db: PrismaClient, gates: Gate[]): PrismaClient {
  return new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (prop === "$queryRaw")
        return async (strings: TemplateStringsArray, ...values: unknown[]) => {
          const rows = await target.$queryRaw<unknown>(strings, ...values);
          for (const gate of gates) await gate.pass(strings.join("?"));
          return rows;
        };
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("EventBus", () => {
  it("wakes a long-poll that began waiting while the log was being read past its poll", async () => {
    const polls = new Gate();
    const windows = new Gate();
    const bus = new EventBus(
      // Wake-ups come from this process's commits here (afterCommit), not from NOTIFY.
      { prisma: gated(ts.db, [polls, windows]), listen: async () => async () => {} },
      { heartbeatMs: 60_000 },
    );
    await bus.ready();
    try {
      const realmId = ts.creds.realm.id;
      const hamlet = ts.creds.users.hamlet!.user_id;
      const cordelia = ts.creds.users.cordelia!.user_id;
      const register = (userId: number) =>
        bus.register({
          realmId,
          userId,
          eventTypes: null,
          options: {
            applyMarkdown: true,
            clientGravatar: false,
            allPublicStreams: false,
            clientCapabilities: {},
          },
          narrow: [],
        });
      const hamletQueue = await register(hamlet);
      const cordeliaQueue = await register(cordelia);

      // Hamlet's long-poll waits in the bus.
      const hamletPoll = bus.fetch(hamletQueue, hamlet, -1, false);
      await settle();
      await settle();

      // Cordelia's poll finds nothing and is held between its statement and its wait.
      polls.arm("FOR UPDATE");
      const cordeliaPoll = bus.fetch(cordeliaQueue, cordelia, -1, false);
      await polls.reached;

      // An event for each commits; the bus reads the log for Hamlet (the only one waiting), and
      // that read's answer is held until Cordelia waits too.
      windows.arm("LEFT JOIN event_log");
      await logEvents({ db: ts.db, events: bus }, realmId, [
        { event: { type: "alert_words", alert_words: ["for hamlet"] }, users: [hamlet] },
        { event: { type: "alert_words", alert_words: ["for cordelia"] }, users: [cordelia] },
      ]);
      await windows.reached;
      polls.release();
      await settle();
      await settle();
      windows.release();

      const timeout = new Promise<"not woken">((resolve) =>
        setTimeout(() => resolve("not woken"), 5_000),
      );
      expect(await Promise.race([hamletPoll, timeout])).toEqual([
        expect.objectContaining({ type: "alert_words", alert_words: ["for hamlet"], id: 0 }),
      ]);
      expect(await Promise.race([cordeliaPoll, timeout])).toEqual([
        expect.objectContaining({ type: "alert_words", alert_words: ["for cordelia"], id: 0 }),
      ]);
    } finally {
      bus.close();
    }
  });
});
