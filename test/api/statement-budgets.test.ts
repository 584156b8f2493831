/**
 * SQL statements per request on a warm server (a count, never a timing): authentication is one
 * cached lookup, rows are read once, and a send writes in one short transaction. Counted at the
 * driver adapter, BEGIN and COMMIT included (server/db/statements.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
const seen: RequestInfo[] = [];

beforeAll(async () => {
  server = await startTestServer();
  server.deps.observe = (info) => seen.push(info);
});
afterAll(() => server?.close());

/** Runs the request twice (the first warms the caches) and returns the second's statement count. */
async function statementsOf(operationId: string, request: () => Promise<unknown>): Promise<number> {
  await request();
  seen.length = 0;
  await request();
  const info = seen.filter((i) => i.operationId === operationId);
  expect(info).toHaveLength(1);
  if (process.env.SHOW_STATEMENTS) console.log(operationId, info[0]!.statements);
  return info[0]!.statements;
}

describe("statement budgets", () => {
  it("GET /messages/{message_id}: at most 2", async () => {
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: {
          type: "stream",
          to: "Denmark",
          topic: "budget",
          content: "**bold** and @**Othello, the Moor of Venice**",
        },
      }),
    );
    const n = await statementsOf("get-message", () =>
      expectSuccess(
        server
          .as("othello")
          .GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
      ),
    );
    expect(n).toBeLessThanOrEqual(2);
    expect(n).toBeGreaterThan(0);
  });

  it("GET /messages/{message_id} of a channel's history (no row of the reader's): at most 2", async () => {
    const { id } = await expectSuccess(
      server.as("iago").POST("/messages", {
        body: { type: "stream", to: "Scotland", topic: "budget", content: "history" },
      }),
    );
    // Cordelia is not subscribed to Scotland, a public channel with shared history.
    const n = await statementsOf("get-message", () =>
      expectSuccess(
        server
          .as("cordelia")
          .GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
      ),
    );
    expect(n).toBeLessThanOrEqual(2);
  });

  it("GET /users/me: at most 1", async () => {
    const n = await statementsOf("get-own-user", () =>
      expectSuccess(server.as("hamlet").GET("/users/me")),
    );
    expect(n).toBeLessThanOrEqual(1);
  });

  it("POST /messages to a channel: at most 6, BEGIN and COMMIT included", async () => {
    const n = await statementsOf("send-message", () =>
      expectSuccess(
        server.as("hamlet").POST("/messages", {
          body: { type: "stream", to: "Verona", topic: "budget", content: "Hello **budget**" },
        }),
      ),
    );
    expect(n).toBeLessThanOrEqual(6);
  });

  it("POST /messages to a channel by id with a mention: at most 7 (the mention's lookup)", async () => {
    const verona = server.creds.channels.Verona!.stream_id;
    const n = await statementsOf("send-message", () =>
      expectSuccess(
        server.as("hamlet").POST("/messages", {
          body: {
            type: "stream",
            to: verona,
            topic: "budget",
            content: "Hi @**Othello, the Moor of Venice**",
          },
        }),
      ),
    );
    expect(n).toBeLessThanOrEqual(7);
  });

  it("counts each request's own statements when requests overlap", async () => {
    seen.length = 0;
    await Promise.all(
      Array.from({ length: 8 }, () => expectSuccess(server.as("hamlet").GET("/users/me"))),
    );
    const counts = seen.filter((i) => i.operationId === "get-own-user").map((i) => i.statements);
    expect(counts).toEqual(Array(8).fill(1));
  });

  it("PATCH /messages/{message_id} moving a whole topic: the same statements for 5 messages as for 60", async () => {
    /** Statements of one change_all move (with both notices) of a fresh topic of n messages. */
    const moveOf = async (n: number, topic: string) => {
      const rows = Array.from({ length: n }, (_, i) => ({ topic, content: `Message ${i}` }));
      let last = 0;
      for (const row of rows)
        last = (
          await expectSuccess(
            server.as("hamlet").POST("/messages", {
              body: { type: "stream", to: "Verona", topic: row.topic, content: row.content },
            }),
          )
        ).id;
      seen.length = 0;
      await expectSuccess(
        server.as("iago").PATCH("/messages/{message_id}", {
          params: { path: { message_id: last } },
          body: {
            topic: `${topic} moved`,
            propagate_mode: "change_all",
            send_notification_to_old_thread: true,
          },
        }),
      );
      const info = seen.filter((i) => i.operationId === "update-message");
      expect(info).toHaveLength(1);
      return info[0]!.statements;
    };
    await moveOf(2, "warm-up");
    const small = await moveOf(5, "small topic");
    const large = await moveOf(60, "large topic");
    if (process.env.SHOW_STATEMENTS) console.log("update-message", small, large);
    expect(large).toBe(small);
    expect(small).toBeLessThanOrEqual(30);
  });

  it("channel, subscription and group lists: three statements each, however many channels and groups", async () => {
    const streams = await statementsOf("get-streams", () =>
      expectSuccess(server.as("hamlet").GET("/streams", { params: { query: {} } })),
    );
    const subscriptions = await statementsOf("get-subscriptions", () =>
      expectSuccess(server.as("hamlet").GET("/users/me/subscriptions", { params: { query: {} } })),
    );
    const groups = await statementsOf("get-user-groups", () =>
      expectSuccess(server.as("hamlet").GET("/user_groups", { params: { query: {} } })),
    );
    if (process.env.SHOW_STATEMENTS)
      console.log(
        "get-streams",
        streams,
        "get-subscriptions",
        subscriptions,
        "get-user-groups",
        groups,
      );
    expect(streams).toBeLessThanOrEqual(3);
    expect(subscriptions).toBeLessThanOrEqual(3);
    expect(groups).toBeLessThanOrEqual(3);
  });
});
