/**
 * Navigation views (zerver/tests/test_navigation_views.py): GET and POST /navigation_views,
 * PATCH and DELETE /navigation_views/{fragment}, their `navigation_view` events and register's
 * `navigation_views`.
 */
import { describe, expect, it } from "vitest";
import { asUser, openQueue, untyped } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

const add = (as: string, body: { fragment: string; is_pinned: boolean; name?: string }) =>
  server.as(as).POST("/navigation_views", { body });
const edit = (as: string, fragment: string, body: { is_pinned?: boolean; name?: string }) =>
  server.as(as).PATCH("/navigation_views/{fragment}", { params: { path: { fragment } }, body });
const remove = (as: string, fragment: string) =>
  server.as(as).DELETE("/navigation_views/{fragment}", { params: { path: { fragment } } });
const list = async (as: string) =>
  (await expectSuccess(server.as(as).GET("/navigation_views"))).navigation_views;

/** A request as python-zulip-api or zulip-js sends it: Basic auth, form body or query string. */
function rawRequest(as: string, method: string, path: string, body?: string) {
  const { email, api_key } = server.creds.users[as]!;
  return fetch(`${server.baseUrl}/api/v1${path}`, {
    method,
    headers: {
      Authorization: `Basic ${Buffer.from(`${email}:${api_key}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
}

describe("navigation views", () => {
  it("adds built-in and custom views, updates and removes them, with events and register state", async () => {
    // As in Zulip, the state is asked for as `navigation_views`, the events are `navigation_view`.
    const queue = await openQueue(asUser(server, "iago"), {
      event_types: ["navigation_views", "navigation_view"],
    });
    expect(queue.state.navigation_views).toEqual([]);
    await expectSuccess(add("iago", { fragment: " inbox ", is_pinned: false }));
    await expectSuccess(
      add("iago", { fragment: "narrow/is/alerted", is_pinned: true, name: " Alert words " }),
    );
    const inbox = { fragment: "inbox", is_pinned: false, name: null };
    const alerted = { fragment: "narrow/is/alerted", is_pinned: true, name: "Alert words" };
    expect(await list("iago")).toEqual([inbox, alerted]);
    expect(await queue.nextEvents()).toEqual([
      { id: expect.any(Number), type: "navigation_view", op: "add", navigation_view: inbox },
      { id: expect.any(Number), type: "navigation_view", op: "add", navigation_view: alerted },
    ]);

    await expectSuccess(edit("iago", "narrow/is/alerted", { is_pinned: false, name: "Alerts" }));
    await expectSuccess(edit("iago", "inbox", { is_pinned: true }));
    // Neither field: Zulip saves and sends an update with empty data.
    await expectSuccess(edit("iago", "inbox", {}));
    const ev = (fragment: string, data: object) => ({
      id: expect.any(Number),
      type: "navigation_view",
      op: "update",
      fragment,
      data,
    });
    expect(await queue.nextEvents()).toEqual([
      ev("narrow/is/alerted", { name: "Alerts", is_pinned: false }),
      ev("inbox", { is_pinned: true }),
      ev("inbox", {}),
    ]);
    const renamed = { ...alerted, is_pinned: false, name: "Alerts" };
    const registered = await expectSuccess(
      server.as("iago").POST("/register", { body: { fetch_event_types: ["navigation_views"] } }),
    );
    expect(registered.navigation_views).toEqual([{ ...inbox, is_pinned: true }, renamed]);

    await expectSuccess(remove("iago", "inbox"));
    expect(await list("iago")).toEqual([renamed]);
    expect(await queue.nextEvents()).toEqual([
      { id: expect.any(Number), type: "navigation_view", op: "remove", fragment: "inbox" },
    ]);
    await expectError(remove("iago", "inbox"), 404, "Navigation view does not exist.");
  });

  it("refuses with Zulip's texts in Zulip's order, storing nothing", async () => {
    await expectSuccess(
      add("cordelia", { fragment: "narrow/is/dm", is_pinned: true, name: "DMs" }),
    );
    const before = await list("cordelia");
    await expectError(
      add("cordelia", { fragment: "  ", is_pinned: true }),
      400,
      "fragment cannot be blank",
    );
    await expectError(
      add("cordelia", { fragment: "x", is_pinned: true, name: " " }),
      400,
      "name cannot be blank",
    );
    await expectError(
      add("cordelia", { fragment: "recent", is_pinned: true, name: "Recent" }),
      400,
      "Built-in views cannot have a custom name.",
    );
    await expectError(
      add("cordelia", { fragment: "narrow/is/private", is_pinned: true }),
      400,
      "Custom views must have a valid name.",
    );
    await expectError(
      add("cordelia", { fragment: "narrow/is/dm", is_pinned: true, name: "Other" }),
      400,
      "Navigation view already exists.",
    );
    await expectError(
      add("cordelia", { fragment: "narrow/is/unread", is_pinned: true, name: "DMs" }),
      400,
      "Navigation view already exists.",
    );
    await expectError(
      server.as("cordelia").POST("/navigation_views", { body: untyped({ fragment: "feed" }) }),
      400,
      "Missing 'is_pinned' argument",
    );
    // A built-in view's name is refused before its existence is checked.
    await expectError(
      edit("cordelia", "feed", { name: "Feed" }),
      400,
      "Built-in views cannot have a custom name.",
    );
    // Its own name counts as taken, as in Zulip.
    await expectError(
      edit("cordelia", "narrow/is/dm", { name: "DMs" }),
      400,
      "Navigation view already exists.",
    );
    await expectError(
      edit("cordelia", "feed", { is_pinned: true }),
      404,
      "Navigation view does not exist.",
    );
    expect(await list("cordelia")).toEqual(before);
  });

  it("keeps each user's views their own", async () => {
    await expectSuccess(add("hamlet", { fragment: "drafts", is_pinned: true }));
    await expectError(
      edit("othello", "drafts", { is_pinned: false }),
      404,
      "Navigation view does not exist.",
    );
    await expectError(remove("othello", "drafts"), 404, "Navigation view does not exist.");
    expect(await list("othello")).toEqual([]);
    // The same fragment and name are free for another user.
    await expectSuccess(add("othello", { fragment: "drafts", is_pinned: false }));
    expect(await list("hamlet")).toEqual([{ fragment: "drafts", is_pinned: true, name: null }]);
  });

  it("takes a form body with JSON booleans and + for spaces, and zulip-js's query-string PATCH", async () => {
    const made = await rawRequest(
      "aaron",
      "POST",
      "/navigation_views",
      "fragment=narrow%2Fis%2Falerted&is_pinned=true&name=Alert+words",
    );
    expect(made).toMatchObject({ status: 200, body: { result: "success" } });
    const patched = await rawRequest(
      "aaron",
      "PATCH",
      "/navigation_views/narrow%2Fis%2Falerted?is_pinned=false&name=My+alerts",
    );
    expect(patched).toMatchObject({ status: 200, body: { result: "success" } });
    expect(await list("aaron")).toEqual([
      { fragment: "narrow/is/alerted", is_pinned: false, name: "My alerts" },
    ]);
    const notJson = await rawRequest(
      "aaron",
      "POST",
      "/navigation_views",
      "fragment=feed&is_pinned=yes",
    );
    expect(notJson.status).toBe(400);
    const deleted = await rawRequest("aaron", "DELETE", "/navigation_views/narrow%2Fis%2Falerted");
    expect(deleted).toMatchObject({ status: 200, body: { result: "success" } });
    expect(await list("aaron")).toEqual([]);
  });
});
