/**
 * PATCH /users/me/subscriptions/{stream_id} and POST /users/me/subscriptions/properties
 * (zerver/tests/test_subs.py SubscriptionPropertiesTest).
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const patch = (
  as: string,
  streamId: number,
  body: Body<"/users/me/subscriptions/{stream_id}", "patch">,
) =>
  server.as(as).PATCH("/users/me/subscriptions/{stream_id}", {
    params: { path: { stream_id: streamId } },
    body: body,
  });
const subscription = async (as: string, name: string) =>
  (
    await expectSuccess(server.as(as).GET("/users/me/subscriptions", { params: { query: {} } }))
  ).subscriptions.find((s) => s.name === name)!;
const queueFor = async (as: string) =>
  (
    await expectSuccess(
      server.as(as).POST("/register", { body: { event_types: ["subscription"] } }),
    )
  ).queue_id!;
const eventsOf = async (as: string, queue: string) =>
  (
    (
      await expectSuccess(
        server.as(as).GET("/events", {
          params: { query: { queue_id: queue, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as any[]
  ).filter((e) => e.type === "subscription");

describe("PATCH /users/me/subscriptions/{stream_id}", () => {
  it("changes each property, with one event each", async () => {
    const queue = await queueFor("hamlet");
    await expectSuccess(
      patch("hamlet", channel("Verona"), { property: "color", value: "#c2c2c2" }),
    );
    await expectSuccess(
      patch("hamlet", channel("Verona"), { property: "pin_to_top", value: true }),
    );
    await expectSuccess(
      patch("hamlet", channel("Verona"), { property: "desktop_notifications", value: false }),
    );
    expect(await subscription("hamlet", "Verona")).toMatchObject({
      color: "#c2c2c2",
      pin_to_top: true,
      desktop_notifications: false,
      audible_notifications: null,
    });
    expect(await eventsOf("hamlet", queue)).toEqual([
      expect.objectContaining({
        op: "update",
        property: "color",
        value: "#c2c2c2",
        stream_id: channel("Verona"),
      }),
      expect.objectContaining({ property: "pin_to_top", value: true }),
      expect.objectContaining({ property: "desktop_notifications", value: false }),
    ]);
  });

  it("sends two events for is_muted and in_home_view, in_home_view the inverse", async () => {
    const queue = await queueFor("othello");
    await expectSuccess(
      patch("othello", channel("Verona"), { property: "in_home_view", value: false }),
    );
    expect(await subscription("othello", "Verona")).toMatchObject({
      is_muted: true,
      in_home_view: false,
    });
    await expectSuccess(
      patch("othello", channel("Verona"), { property: "is_muted", value: false }),
    );
    expect(await subscription("othello", "Verona")).toMatchObject({
      is_muted: false,
      in_home_view: true,
    });
    expect((await eventsOf("othello", queue)).map((e) => [e.property, e.value])).toEqual([
      ["in_home_view", false],
      ["is_muted", true],
      ["in_home_view", true],
      ["is_muted", false],
    ]);
  });

  it("answers Zulip's errors and changes nothing", async () => {
    await expectError(
      patch("hamlet", channel("Verona"), { property: untyped("invalid"), value: true }),
      400,
      "Unknown subscription property: invalid",
    );
    await expectError(
      patch("hamlet", 121212, { property: "color", value: "#c2c2c2" }),
      400,
      "Invalid channel ID",
    );
    await expectError(
      patch("hamlet", channel("core team"), { property: "color", value: "#c2c2c2" }),
      400,
      "Invalid channel ID",
    );
    await expectSuccess(
      server.as("hamlet").DELETE("/users/me/subscriptions", { body: { subscriptions: ["Rome"] } }),
    );
    await expectError(
      patch("hamlet", channel("Rome"), { property: "pin_to_top", value: true }),
      400,
      `Not subscribed to channel ID ${channel("Rome")}`,
    );
    await expectError(
      patch("hamlet", channel("Verona"), { property: "is_muted", value: "yes" }),
      400,
      "is_muted is not a boolean",
    );
    await expectError(
      patch("hamlet", channel("Verona"), { property: "color", value: "red" }),
      400,
      "color is not a valid hex color code",
    );
    await expectError(
      patch("hamlet", channel("Verona"), untyped({ property: "color" })),
      400,
      "Missing 'value' argument",
      { code: "REQUEST_VARIABLE_MISSING" },
    );
  });

  it("takes the encodings zulip-js sends: query string, JSON true, an unquoted colour", async () => {
    const hamlet = server.creds.users.hamlet!;
    const auth = "Basic " + Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString("base64");
    const viaQuery = await fetch(
      `${server.baseUrl}/api/v1/users/me/subscriptions/${channel("Denmark")}?property=color&value=%23abcdef`,
      { method: "PATCH", headers: { Authorization: auth } },
    );
    expect(viaQuery.status).toBe(200);
    const viaForm = await fetch(
      `${server.baseUrl}/api/v1/users/me/subscriptions/${channel("Denmark")}`,
      {
        method: "PATCH",
        headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
        body: "property=wildcard_mentions_notify&value=true",
      },
    );
    expect(viaForm.status).toBe(200);
    expect(await subscription("hamlet", "Denmark")).toMatchObject({
      color: "#abcdef",
      wildcard_mentions_notify: true,
    });
  });
});

describe("POST /users/me/subscriptions/properties", () => {
  it("applies every change, or none when one is bad", async () => {
    await expectSuccess(
      server.as("cordelia").POST("/users/me/subscriptions/properties", {
        body: {
          subscription_data: [
            { stream_id: channel("Verona"), property: "pin_to_top", value: true },
            { stream_id: channel("Verona"), property: "color", value: "#f00" },
          ],
        },
      }),
    );
    expect(await subscription("cordelia", "Verona")).toMatchObject({
      pin_to_top: true,
      color: "#f00",
    });
    await expectError(
      server.as("cordelia").POST("/users/me/subscriptions/properties", {
        body: {
          subscription_data: [
            { stream_id: channel("Verona"), property: "pin_to_top", value: false },
            { stream_id: channel("Verona"), property: "color", value: "#nothex" },
          ],
        },
      }),
      400,
      "Invalid subscription_data[1]: Value error, color is not a valid hex color code",
    );
    expect(await subscription("cordelia", "Verona")).toMatchObject({ pin_to_top: true });
    await expectError(
      server.as("cordelia").POST("/users/me/subscriptions/properties", {
        body: {
          subscription_data: [{ stream_id: channel("Verona"), property: "bogus", value: true }],
        },
      }),
      400,
      "Unknown subscription property: bogus",
    );
  });
});
