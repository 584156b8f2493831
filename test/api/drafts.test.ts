/**
 * Drafts (zerver/tests/test_drafts.py, reference op 17): POST /drafts, GET /drafts,
 * PATCH /drafts/{draft_id}, DELETE /drafts/{draft_id}, their `drafts` events and register's
 * `drafts`, with every rule of the Draft resource.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => server.creds.users[name]!.user_id;
const channel = (name: string) => server.creds.channels[name]!.stream_id;

type Draft = {
  type: "" | "stream" | "private";
  to: number[];
  topic: string;
  content: string;
  timestamp?: number;
};

const create = (as: string, drafts: Draft[]) => server.as(as).POST("/drafts", { body: { drafts } });
const edit = (as: string, draftId: number, draft: Draft) =>
  server.as(as).PATCH("/drafts/{draft_id}", {
    params: { path: { draft_id: draftId } },
    body: { draft },
  });
const remove = (as: string, draftId: number) =>
  server.as(as).DELETE("/drafts/{draft_id}", { params: { path: { draft_id: draftId } } });
const list = async (as: string) => expectSuccess(server.as(as).GET("/drafts"));

async function queueOf(as: string) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", { body: { event_types: ["drafts"] } }),
  );
  return async () =>
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue_id!, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events.map(({ id: _id, ...event }) => event as Record<string, unknown>);
}

describe("POST /drafts and GET /drafts", () => {
  it("creates several drafts at once, in order, with an add event, and lists them oldest first", async () => {
    const next = await queueOf("othello");
    const drafts: Draft[] = [
      {
        type: "stream",
        to: [channel("Denmark")],
        topic: "sync",
        content: "later",
        timestamp: 1595479020,
      },
      {
        type: "private",
        to: [id("hamlet")],
        topic: "",
        content: "to hamlet",
        timestamp: 1595479010,
      },
      {
        type: "private",
        to: [id("hamlet"), id("cordelia")],
        topic: "",
        content: "group",
        timestamp: 1595479030,
      },
    ];
    const { ids } = await expectSuccess(create("othello", drafts));
    expect(ids).toHaveLength(3);
    const stored = drafts.map((d, i) => ({ id: ids[i]!, ...d }));
    stored[2]!.to = [id("hamlet"), id("cordelia")].sort((a, b) => a - b);
    expect(await next()).toEqual([{ type: "drafts", op: "add", drafts: stored }]);
    expect(await list("othello")).toMatchObject({
      count: 3,
      drafts: [stored[1], stored[0], stored[2]],
    });
  });

  it("creates all or none: one bad draft refuses the request", async () => {
    const before = (await list("cordelia")).count;
    await expectError(
      create("cordelia", [
        { type: "", to: [], topic: "", content: "fine" },
        { type: "stream", to: [], topic: "t", content: "no channel" },
      ]),
      400,
      "Must specify exactly 1 channel ID for channel messages",
    );
    expect((await list("cordelia")).count).toBe(before);
  });

  it("needs the drafts parameter", async () => {
    await expectError(
      server.as("cordelia").POST("/drafts", { body: untyped({}) }),
      400,
      "Missing 'drafts' argument",
    );
  });
});

describe("PATCH /drafts/{draft_id}", () => {
  it("replaces the draft; GET /drafts returns exactly the new one; the other clients get an update event", async () => {
    const { ids } = await expectSuccess(
      create("hamlet", [
        {
          type: "stream",
          to: [channel("Verona")],
          topic: "drafts",
          content: "first",
          timestamp: 1595479019,
        },
      ]),
    );
    const next = await queueOf("hamlet");
    const draft: Draft = {
      type: "stream",
      to: [channel("Denmark")],
      topic: "new topic",
      content: "new content",
      timestamp: 1595505800,
    };
    await expectSuccess(edit("hamlet", ids[0]!, draft));
    const mine = (await list("hamlet")).drafts.find((d) => d.id === ids[0]);
    expect(mine).toEqual({ id: ids[0], ...draft });
    expect(await next()).toEqual([
      { type: "drafts", op: "update", draft: { id: ids[0], ...draft } },
    ]);
  });

  it("answers 404 for a missing draft and for another user's draft, which stays unchanged", async () => {
    const { ids } = await expectSuccess(
      create("hamlet", [{ type: "", to: [], topic: "", content: "mine", timestamp: 1595479019 }]),
    );
    const draft: Draft = { type: "", to: [], topic: "", content: "theirs" };
    await expectError(edit("hamlet", 999999999, draft), 404, "Draft does not exist", {
      code: "BAD_REQUEST",
    });
    await expectError(edit("iago", ids[0]!, draft), 404, "Draft does not exist");
    const mine = (await list("hamlet")).drafts.find((d) => d.id === ids[0]);
    expect(mine?.content).toBe("mine");
  });

  it.each<[string, Draft, string]>([
    [
      "null bytes in content",
      { type: "", to: [], topic: "", content: "Some regular \u0000 content" },
      "Message must not contain null bytes",
    ],
    [
      "null bytes in a channel topic",
      { type: "stream", to: [1], topic: "a\u0000b", content: "c" },
      "Topic must not contain null bytes",
    ],
    [
      "a channel draft without a channel",
      { type: "stream", to: [], topic: "t", content: "c" },
      "Must specify exactly 1 channel ID for channel messages",
    ],
    [
      "a channel draft with two channels",
      { type: "stream", to: [1, 2], topic: "t", content: "c" },
      "Must specify exactly 1 channel ID for channel messages",
    ],
    [
      "a nonexistent channel",
      { type: "stream", to: [99999], topic: "t", content: "c" },
      "Invalid channel ID",
    ],
    [
      "a channel ID past the database's integers",
      { type: "stream", to: [2 ** 40], topic: "t", content: "c" },
      "Invalid channel ID",
    ],
    [
      "an unknown user",
      { type: "private", to: [99999999999999], topic: "", content: "c" },
      "Invalid user ID 99999999999999",
    ],
    [
      "a negative timestamp",
      { type: "", to: [], topic: "", content: "c", timestamp: -10.1 },
      "Timestamp must not be negative.",
    ],
    ["empty content", { type: "", to: [], topic: "", content: "  " }, "Message must not be empty"],
  ])("refuses %s", async (_what, draft, msg) => {
    const { ids } = await expectSuccess(
      create("hamlet", [{ type: "", to: [], topic: "", content: "before" }]),
    );
    await expectError(edit("hamlet", ids[0]!, draft), 400, msg);
    await expectError(create("hamlet", [draft]), 400, msg);
  });

  it("refuses a channel the user cannot access", async () => {
    const { ids } = await expectSuccess(
      create("hamlet", [{ type: "", to: [], topic: "", content: "before" }]),
    );
    const draft: Draft = { type: "stream", to: [channel("core team")], topic: "t", content: "c" };
    await expectError(edit("hamlet", ids[0]!, draft), 400, "Invalid channel ID");
  });

  it("uses the current time when the timestamp is absent", async () => {
    const { ids } = await expectSuccess(
      create("hamlet", [{ type: "", to: [], topic: "", content: "x", timestamp: 1 }]),
    );
    const before = Math.floor(Date.now() / 1000);
    await expectSuccess(edit("hamlet", ids[0]!, { type: "", to: [], topic: "", content: "now" }));
    const mine = (await list("hamlet")).drafts.find((d) => d.id === ids[0])!;
    expect(Number.isInteger(mine.timestamp)).toBe(true);
    expect(mine.timestamp).toBeGreaterThanOrEqual(before);
  });

  it.each<[string, Draft]>([
    [
      "a direct-message draft to nobody",
      { type: "private", to: [], topic: "ignored", content: "c" },
    ],
    ["an unaddressed draft", { type: "", to: [], topic: "ignored", content: "c" }],
  ])('stores %s as type "" with no recipients and no topic', async (_what, draft) => {
    const { ids } = await expectSuccess(
      create("hamlet", [{ type: "stream", to: [channel("Verona")], topic: "t", content: "x" }]),
    );
    await expectSuccess(edit("hamlet", ids[0]!, draft));
    const mine = (await list("hamlet")).drafts.find((d) => d.id === ids[0])!;
    expect(mine).toMatchObject({ type: "", to: [], topic: "", content: "c" });
  });
});

describe("DELETE /drafts/{draft_id}", () => {
  it("deletes the user's own draft with a remove event; another user's is missing", async () => {
    const { ids } = await expectSuccess(
      create("aaron", [{ type: "", to: [], topic: "", content: "bye" }]),
    );
    await expectError(remove("iago", ids[0]!), 404, "Draft does not exist");
    const next = await queueOf("aaron");
    await expectSuccess(remove("aaron", ids[0]!));
    expect(await next()).toEqual([{ type: "drafts", op: "remove", draft_id: ids[0] }]);
    await expectError(remove("aaron", ids[0]!), 404, "Draft does not exist");
  });
});

describe("drafts and the enable_drafts_synchronization setting", () => {
  it("refuses every draft operation while it is off, and register gives no drafts", async () => {
    const { ids } = await expectSuccess(
      create("shiva", [{ type: "", to: [], topic: "", content: "x" }]),
    );
    let state = await expectSuccess(
      server.as("shiva").POST("/register", { body: { fetch_event_types: ["drafts"] } }),
    );
    expect((state as { drafts: { id: number }[] }).drafts.map((d) => d.id)).toEqual(ids);
    await expectSuccess(
      server.as("shiva").PATCH("/settings", { body: { enable_drafts_synchronization: false } }),
    );
    const off = "User has disabled synchronizing drafts.";
    const draft: Draft = { type: "", to: [], topic: "", content: "x" };
    await expectError(server.as("shiva").GET("/drafts"), 400, off);
    await expectError(create("shiva", [draft]), 400, off);
    await expectError(edit("shiva", ids[0]!, draft), 400, off);
    await expectError(remove("shiva", ids[0]!), 400, off);
    state = await expectSuccess(
      server.as("shiva").POST("/register", { body: { fetch_event_types: ["drafts"] } }),
    );
    expect((state as { drafts: unknown[] }).drafts).toEqual([]);
  });
});

describe("register's drafts", () => {
  it("lists the drafts newest first, a group's recipients without the user", async () => {
    const { ids } = await expectSuccess(
      create("prospero", [
        {
          type: "private",
          to: [id("hamlet"), id("othello")],
          topic: "",
          content: "old",
          timestamp: 100,
        },
        { type: "stream", to: [channel("Verona")], topic: "t", content: "new", timestamp: 200 },
      ]),
    );
    const state = (await expectSuccess(
      server.as("prospero").POST("/register", { body: { fetch_event_types: ["drafts"] } }),
    )) as unknown as { drafts: Record<string, unknown>[] };
    expect(state.drafts).toEqual([
      {
        id: ids[1],
        type: "stream",
        to: [channel("Verona")],
        topic: "t",
        content: "new",
        timestamp: 200,
      },
      {
        id: ids[0],
        type: "private",
        to: [id("hamlet"), id("othello")].sort((a, b) => a - b),
        topic: "",
        content: "old",
        timestamp: 100,
      },
    ]);
  });
});
