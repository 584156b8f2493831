/**
 * PATCH /users/me/subscriptions (update_subscriptions_backend): the caller joins `add` and leaves
 * `delete` in one transaction, with both views' answers merged, every check of POST and DELETE
 * /users/me/subscriptions, and nothing changed when any of them fails (zerver/tests/test_subs.py
 * test_successful_subscriptions_remove / test_compose_views_rollback).
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { asUser, ofType, openQueue, type Body } from "../helpers/builders.ts";
import { realClient } from "../helpers/real-client.ts";

const server = useTestServer();
const id = (name: string) => server.creds.users[name]!.user_id;
const update = (as: string, body: Body<"/users/me/subscriptions", "patch">) =>
  server.as(as).PATCH("/users/me/subscriptions", { body });
const subscriptionsOf = async (as: string) =>
  (await expectSuccess(server.as(as).GET("/users/me/subscriptions", { params: { query: {} } })))
    .subscriptions;
const names = async (as: string) => (await subscriptionsOf(as)).map((s) => s.name).sort();

describe("PATCH /users/me/subscriptions", () => {
  it("joins and leaves in one request sent as python-zulip-api does, with both answers and both events", async () => {
    const queue = await openQueue(asUser(server, "hamlet"), { event_types: ["subscription"] });
    const { status, body } = await realClient(
      server,
      "hamlet",
      "PATCH",
      "/users/me/subscriptions",
      {
        add: [
          { name: "Venice", color: "#e79ab5" },
          { name: "bulk new one", description: "Made in bulk" },
        ],
        delete: ["Scotland"],
      },
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      result: "success",
      msg: "",
      subscribed: { [String(id("hamlet"))]: ["Venice", "bulk new one"] },
      already_subscribed: {},
      removed: ["Scotland"],
      not_removed: [],
    });
    const subs = await subscriptionsOf("hamlet");
    expect(subs.find((s) => s.name === "Venice")?.color).toBe("#e79ab5");
    expect(subs.some((s) => s.name === "Scotland")).toBe(false);
    const created = await server.db.stream.findFirstOrThrow({ where: { name: "bulk new one" } });
    expect(created).toMatchObject({ description: "Made in bulk", creatorId: id("hamlet") });
    const events = await queue.nextEvents();
    expect(
      ofType(events, "subscription", "add").flatMap((e) => e.subscriptions.map((s) => s.name)),
    ).toEqual(expect.arrayContaining(["Venice", "bulk new one"]));
    expect(ofType(events, "subscription", "remove")[0]?.subscriptions).toEqual([
      expect.objectContaining({ name: "Scotland" }),
    ]);
  });

  it("answers already_subscribed and not_removed, and takes zulip-js's query-string PATCH", async () => {
    const { status, body } = await realClient(
      server,
      "iago",
      "PATCH",
      "/users/me/subscriptions",
      { add: [{ name: "Verona" }], delete: ["Rome", "Rome"] },
      { inQuery: true },
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({
      subscribed: {},
      already_subscribed: { [String(id("iago"))]: ["Verona"] },
      removed: ["Rome"],
    });
    const again = await expectSuccess(update("iago", { delete: ["Rome"] }));
    expect(again).toMatchObject({ removed: [], not_removed: ["Rome"], subscribed: {} });
    expect(await names("iago")).not.toContain("Rome");
  });

  it("can leave a channel the same request created", async () => {
    const result = await expectSuccess(
      update("othello", { add: [{ name: "here and gone" }], delete: ["here and gone"] }),
    );
    expect(result).toMatchObject({
      subscribed: { [String(id("othello"))]: ["here and gone"] },
      removed: ["here and gone"],
    });
    expect(await names("othello")).not.toContain("here and gone");
  });

  it("says there is nothing to do without add or delete", async () => {
    const nothing = 'Nothing to do. Specify at least one of "add" or "delete".';
    await expectError(update("hamlet", {}), 400, nothing);
    await expectError(update("hamlet", { add: [], delete: [] }), 400, nothing);
    const form = await realClient(server, "hamlet", "PATCH", "/users/me/subscriptions", {});
    expect(form).toMatchObject({ status: 400, body: { msg: nothing } });
  });

  it("undoes the additions when a removal fails, and creates nothing", async () => {
    const before = await names("cordelia");
    expect(before).not.toContain("Venice");
    await expectError(
      update("cordelia", {
        add: [{ name: "Venice" }, { name: "never made" }],
        delete: ["no such channel", "Rome"],
      }),
      400,
      "Channel(s) (no such channel) do not exist",
    );
    expect(await names("cordelia")).toEqual(before);
    expect(await server.db.stream.findFirst({ where: { name: "never made" } })).toBeNull();
  });

  it("refuses a private channel the caller cannot access, and leaves the removals undone", async () => {
    const secret = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: { name: "bulk secret", invite_only: true, subscribers: [id("iago")] },
      }),
    );
    expect(secret.id).toBeGreaterThan(0);
    await expectError(
      update("hamlet", { add: [{ name: "bulk secret" }], delete: ["Verona"] }),
      400,
      "Unable to access channel (bulk secret).",
    );
    expect(await names("hamlet")).toContain("Verona");
  });

  it("refuses guests, even when they only leave", async () => {
    await expectError(
      update("polonius", { delete: ["Verona"] }),
      400,
      "Not allowed for guest users",
    );
    expect(await names("polonius")).toContain("Verona");
  });

  it("checks a channel to create as POST /users/me/subscriptions does", async () => {
    await expectError(
      update("hamlet", { add: [{ name: "" }] }),
      400,
      "Channel name can't be empty.",
    );
    // Zulip checks the colour in AddSubscriptionData; the validator names the parameter.
    await expectError(
      update("hamlet", { add: [{ name: "Verona", color: "red" }] }),
      400,
      'Invalid add[0]["color"]',
    );
  });
});
