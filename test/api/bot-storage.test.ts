/**
 * A bot's storage (PUT/GET/DELETE /bot_storage, zerver/views/storage.py), as python-zulip-api's
 * `update_storage`, `get_storage` and `remove_storage` send it: form bodies and query strings
 * with JSON text. The size limit is lowered to 100 characters, as Zulip's own test does.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { realClient } from "../helpers/real-client.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer({ botStorageSizeLimit: 100 });
const BOT = "default-bot";

const get = (as: string, keys?: string[]) =>
  server.as(as).GET("/bot_storage", { params: { query: keys ? { keys } : {} } });

describe("bot storage", () => {
  it("stores, reads some or all, updates, and removes some then all, as python-zulip-api sends it", async () => {
    const initial = { "key 1": "value 1", "key 2": "value 2", "key 3": "value 3" };
    expect(
      await realClient(server, BOT, "PUT", "/bot_storage", { storage: initial }),
    ).toMatchObject({
      status: 200,
      body: { result: "success" },
    });
    const some = await realClient(server, BOT, "GET", "/bot_storage", { keys: ["key 1", "key 3"] });
    expect(some.body.storage).toEqual({ "key 1": "value 1", "key 3": "value 3" });
    expect((await expectSuccess(get(BOT))).storage).toEqual(initial);

    await expectSuccess(
      server.as(BOT).PUT("/bot_storage", {
        body: { storage: { "key 1": "new value", "key 4": "value 4" } },
      }),
    );
    const updated = { ...initial, "key 1": "new value", "key 4": "value 4" };
    expect((await expectSuccess(get(BOT))).storage).toEqual(updated);

    await expectError(get(BOT, ["key 1", "nonexistent key"]), 400, "Key does not exist.");
    const removed = await realClient(server, BOT, "DELETE", "/bot_storage", {
      keys: ["key 1", "key 2"],
    });
    expect(removed.status).toBe(200);
    expect((await expectSuccess(get(BOT))).storage).toEqual({
      "key 3": "value 3",
      "key 4": "value 4",
    });

    // An existing and a missing key: nothing is removed.
    await expectError(
      server.as(BOT).DELETE("/bot_storage", { body: { keys: ["key 3", "nonexistent key"] } }),
      400,
      "Key does not exist.",
    );
    expect(Object.keys((await expectSuccess(get(BOT))).storage)).toEqual(["key 3", "key 4"]);

    await expectSuccess(server.as(BOT).DELETE("/bot_storage", {}));
    expect((await expectSuccess(get(BOT))).storage).toEqual({});
  });

  it("refuses values that are not strings, and storage beyond the limit, changing nothing", async () => {
    const bad = await realClient(server, BOT, "PUT", "/bot_storage", {
      storage: { foo: [1, 2, 3] },
    });
    expect(bad).toMatchObject({
      status: 400,
      body: { result: "error", msg: 'storage["foo"] is not a string' },
    });

    const key = "capacity-filling entry";
    await expectSuccess(
      server
        .as(BOT)
        .PUT("/bot_storage", { body: { storage: { [key]: "x".repeat(100 - key.length) } } }),
    );
    await expectError(
      server
        .as(BOT)
        .PUT("/bot_storage", { body: { storage: { "too much data": "a few bits too long" } } }),
      400,
      "Request exceeds storage limit by 32 characters. The limit is 100 characters.",
    );
    expect(Object.keys((await expectSuccess(get(BOT))).storage)).toEqual([key]);
    // Replacing a value counts its old size out; characters, not bytes, count.
    await expectSuccess(
      server
        .as(BOT)
        .PUT("/bot_storage", { body: { storage: { [key]: "é".repeat(100 - key.length) } } }),
    );
    // Another bot's storage is its own.
    await expectSuccess(
      server
        .as("notification-bot")
        .PUT("/bot_storage", { body: { storage: { "normal entry": "abcd" } } }),
    );
    expect((await expectSuccess(get("notification-bot"))).storage).toEqual({
      "normal entry": "abcd",
    });
    expect(Object.keys((await expectSuccess(get(BOT))).storage)).toEqual([key]);
  });

  it("is for bots only", async () => {
    await expectError(
      server.as("hamlet").PUT("/bot_storage", { body: { storage: {} } }),
      400,
      "Must be a bot user",
    );
    await expectError(get("hamlet"), 400, "Must be a bot user");
    await expectError(server.as("hamlet").DELETE("/bot_storage", {}), 400, "Must be a bot user");
  });
});
