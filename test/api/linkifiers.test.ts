/**
 * Linkifiers (zerver/tests/test_realm_linkifiers.py, test_markdown.py linkifier cases): Zulip's
 * checks and texts, administrators only, `realm_linkifiers` events and register state, and their
 * effect on rendering (not inside code or links, after bare URLs) and on `topic_links`, with the
 * cached list dropped on every change.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";
import { sendToChannel } from "../helpers/builders.ts";

const server = useTestServer();
const ISSUES = "https://github.com/zulip/zulip/issues/{id}";
/** A linkifier object without reverse-linkification fields (levels 471 and 478). */
const plain = { example_input: null, reverse_template: null, alternative_url_templates: [] };
const add = (as: string, pattern: string, url_template: string) =>
  server.as(as).POST("/realm/filters", { body: { pattern, url_template } });
const list = async () =>
  (await expectSuccess(server.as("hamlet").GET("/realm/linkifiers", {}))).linkifiers;
const registered = async (capabilities: Record<string, boolean>) =>
  (
    (await expectSuccess(
      server.as("hamlet").POST("/register", {
        body: {
          fetch_event_types: ["realm_linkifiers"],
          client_capabilities: capabilities,
        },
      }),
    )) as any
  ).realm_linkifiers;
/** Sends as hamlet to Verona; the message as GET /messages/{id} shows it. */
const rendered = async (topic: string, content: string) => {
  const { id } = await sendToChannel(server.as("hamlet"), { to: "Verona", topic, content });
  return (
    await expectSuccess(
      server.as("hamlet").GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    )
  ).message;
};

describe("linkifiers", () => {
  it("adds, lists, changes, reorders and removes, with events and register state", async () => {
    const events = await queueOf(server, "hamlet", ["realm_linkifiers"], {
      linkifier_url_template: true,
    });
    // Zulip sends realm_linkifiers only to clients that know URL templates (level 176).
    const legacyEvents = await queueOf(server, "hamlet", ["realm_linkifiers"]);
    const { id } = await expectSuccess(add("iago", "  #(?P<id>[0-9]+) ", ` ${ISSUES}`));
    const first = { id, pattern: "#(?P<id>[0-9]+)", url_template: ISSUES, ...plain };
    expect(await list()).toEqual([first]);
    expect(await registered({ linkifier_url_template: true })).toEqual([first]);
    // Zulip leaves them out for clients that do not know URL templates.
    expect(await registered({})).toEqual([]);

    const { id: second } = await expectSuccess(
      add("iago", "JIRA-(?P<key>[A-Z]+)", "https://jira.example.com/{key}"),
    );
    await expectSuccess(
      server.as("iago").PATCH("/realm/filters/{filter_id}", {
        params: { path: { filter_id: second } },
        body: { pattern: "JIRA-(?P<key>[0-9]+)", url_template: "https://jira.example.com/{key}" },
      }),
    );
    await expectSuccess(
      server.as("iago").PATCH("/realm/linkifiers", {
        body: { ordered_linkifier_ids: [second, id] },
      }),
    );
    const reordered = [
      {
        id: second,
        pattern: "JIRA-(?P<key>[0-9]+)",
        url_template: "https://jira.example.com/{key}",
        ...plain,
      },
      first,
    ];
    expect(await list()).toEqual(reordered);
    await expectSuccess(
      server.as("iago").DELETE("/realm/filters/{filter_id}", {
        params: { path: { filter_id: second } },
      }),
    );
    expect(await list()).toEqual([first]);
    expect((await events()).map((e: any) => e.realm_linkifiers.map((l: any) => l.id))).toEqual([
      [id],
      [id, second],
      [id, second],
      [second, id],
      [id],
    ]);
    expect(await legacyEvents()).toEqual([]);
    await expectSuccess(
      server
        .as("iago")
        .DELETE("/realm/filters/{filter_id}", { params: { path: { filter_id: id } } }),
    );
  });

  it("refuses what Zulip refuses, with its texts", async () => {
    await expectError(
      add("hamlet", "#(?P<id>[0-9]+)", ISSUES),
      400,
      "Must be an organization administrator",
      {
        code: "UNAUTHORIZED_PRINCIPAL",
      },
    );
    await expectError(
      add("iago", "#(?P<id>[0-9]+)", "https://x.example/{id"),
      400,
      "Invalid URL template.",
    );
    await expectError(
      add("iago", "#(?P<id>[0-9]+)", "https://x.example/ {id}"),
      400,
      "Invalid URL template.",
    );
    await expectError(
      add("iago", "(?=a)#(?P<id>[0-9]+)", ISSUES),
      400,
      "Bad regular expression: invalid perl operator: (?=",
    );
    await expectError(
      add("iago", "#(?P<id>[0-9]+)", "https://x.example/{id}/{other}"),
      400,
      "Group 'other' in URL template is not present in linkifier pattern.",
    );
    await expectError(
      add("iago", "#(?P<id>[0-9]+)-(?P<b>x)", ISSUES),
      400,
      "Group 'b' in linkifier pattern is not present in URL template.",
    );
    await expectError(
      add("iago", "#(?P<id>[0-9]+)\0", ISSUES),
      400,
      "Invalid character in linkifier pattern, at position 16.",
    );
    const { id } = await expectSuccess(add("iago", "#(?P<id>[0-9]+)", ISSUES));
    await expectError(
      add("iago", "#(?P<id>[0-9]+)", ISSUES),
      400,
      "Realm filter with this Realm and Pattern already exists.",
    );
    const patch = (filter_id: number) =>
      server.as("iago").PATCH("/realm/filters/{filter_id}", {
        params: { path: { filter_id } },
        body: { pattern: "x(?P<id>y)", url_template: ISSUES },
      });
    await expectError(patch(987654), 400, "Linkifier not found.");
    await expectError(
      server
        .as("iago")
        .DELETE("/realm/filters/{filter_id}", { params: { path: { filter_id: 987654 } } }),
      400,
      "Linkifier not found.",
    );
    const reorder = (ordered_linkifier_ids: number[]) =>
      server.as("iago").PATCH("/realm/linkifiers", { body: { ordered_linkifier_ids } });
    await expectError(
      reorder([id, id]),
      400,
      "The ordered list must not contain duplicated linkifiers",
    );
    await expectError(
      reorder([id, 987654]),
      400,
      "The ordered list must enumerate all existing linkifiers exactly once",
    );
    await expectError(
      server
        .as("othello")
        .DELETE("/realm/filters/{filter_id}", { params: { path: { filter_id: id } } }),
      400,
      "Must be an organization administrator",
    );
    await expectSuccess(
      server
        .as("iago")
        .DELETE("/realm/filters/{filter_id}", { params: { path: { filter_id: id } } }),
    );
  });

  it("links content (not in code or links) and topics, and stops once removed", async () => {
    const { id } = await expectSuccess(add("iago", "#(?P<id>[0-9]+)", ISSUES));
    const queue = await queueOf(server, "othello", ["message"]);
    const message = await rendered(
      "fix #42 at https://example.com/a",
      "See #123, `#456`, [#789](https://example.org) and x#1.",
    );
    expect(message.content).toBe(
      '<p>See <a href="https://github.com/zulip/zulip/issues/123">#123</a>, <code>#456</code>, ' +
        '<a href="https://example.org">#789</a> and x#1.</p>',
    );
    const topicLinks = [
      { text: "#42", url: "https://github.com/zulip/zulip/issues/42" },
      { text: "https://example.com/a", url: "https://example.com/a" },
    ];
    expect(message.topic_links).toEqual(topicLinks);
    const [event] = (await queue()) as any[];
    expect(event.message.topic_links).toEqual(topicLinks);
    // Rendering alone, as a client previews it.
    expect(
      (
        await expectSuccess(
          server.as("hamlet").POST("/messages/render", { body: { content: "#7" } }),
        )
      ).rendered,
    ).toBe('<p><a href="https://github.com/zulip/zulip/issues/7">#7</a></p>');

    await expectSuccess(
      server
        .as("iago")
        .DELETE("/realm/filters/{filter_id}", { params: { path: { filter_id: id } } }),
    );
    const after = await rendered("fix #42", "See #123");
    expect(after.content).toBe("<p>See #123</p>");
    expect(after.topic_links).toEqual([]);
  });

  it("takes a python-zulip-api form body", async () => {
    const { email, api_key } = server.creds.users["iago"]!;
    const response = await fetch(`${server.baseUrl}/api/v1/realm/filters`, {
      method: "POST",
      headers: {
        Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
        "User-Agent": "ZulipPython/0.9.0",
      },
      body: new URLSearchParams({
        pattern: "T(?P<n>[0-9]+)",
        url_template: "https://tickets.example.com/view?n={n}",
      }).toString(),
    });
    const body = (await response.json()) as { id: number };
    expect(response.status).toBe(200);
    expect(body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
    const reorder = await fetch(`${server.baseUrl}/api/v1/realm/linkifiers`, {
      method: "PATCH",
      headers: {
        Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: `ordered_linkifier_ids=${encodeURIComponent(JSON.stringify([body.id]))}`,
    });
    expect(reorder.status).toBe(200);
    expect((await list()).map((l) => l.url_template)).toEqual([
      "https://tickets.example.com/view?n={n}",
    ]);
  });
});

describe("reverse linkification fields (feature levels 471 and 478)", () => {
  const IDS = "#(?P<id>[0-9]+)";
  const post = (body: Record<string, unknown>) =>
    server.as("iago").POST("/realm/filters", {
      body: { pattern: IDS, url_template: ISSUES, ...body },
    });
  const patch = (filter_id: number, body: Record<string, unknown>) =>
    server.as("iago").PATCH("/realm/filters/{filter_id}", {
      params: { path: { filter_id } },
      body: { pattern: IDS, url_template: ISSUES, ...body },
    });
  const remove = (filter_id: number) =>
    server.as("iago").DELETE("/realm/filters/{filter_id}", { params: { path: { filter_id } } });

  it("stores, sends and clears example_input, reverse_template and alternative_url_templates", async () => {
    const events = await queueOf(server, "hamlet", ["realm_linkifiers"], {
      linkifier_url_template: true,
    });
    const { id } = await expectSuccess(
      post({
        example_input: " #2468 ",
        reverse_template: "#{id}",
        alternative_url_templates: ["https://github.com/zulip/zulip/pull/{id}"],
      }),
    );
    const full = {
      id,
      pattern: IDS,
      url_template: ISSUES,
      example_input: "#2468",
      reverse_template: "#{id}",
      alternative_url_templates: ["https://github.com/zulip/zulip/pull/{id}"],
    };
    expect((await list()).filter((l) => l.id === id)).toEqual([full]);
    expect(
      (await registered({ linkifier_url_template: true })).filter((l: any) => l.id === id),
    ).toEqual([full]);
    // Left out on PATCH: kept.
    await expectSuccess(patch(id, {}));
    expect((await list()).filter((l) => l.id === id)).toEqual([full]);
    // An empty text clears (Zulip: "pass an empty string during PATCH to set … back to null").
    await expectSuccess(patch(id, { reverse_template: "", alternative_url_templates: [] }));
    expect((await list()).filter((l) => l.id === id)).toEqual([
      { ...full, reverse_template: null, alternative_url_templates: [] },
    ]);
    await expectSuccess(patch(id, { example_input: " " }));
    expect((await list()).filter((l) => l.id === id)).toEqual([
      { id, pattern: IDS, url_template: ISSUES, ...plain },
    ]);
    const sent = (await events()).map((e: any) => e.realm_linkifiers.find((l: any) => l.id === id));
    expect(sent).toEqual([
      full,
      full,
      { ...full, reverse_template: null, alternative_url_templates: [] },
      { id, pattern: IDS, url_template: ISSUES, ...plain },
    ]);
    await expectSuccess(remove(id));
  });

  it("refuses with Zulip's texts, changing nothing", async () => {
    const before = await list();
    await expectError(
      post({ example_input: "no number" }),
      400,
      "Example input does not match the linkifier pattern.",
    );
    await expectError(
      post({ example_input: "#12", reverse_template: "#{id" }),
      400,
      "Invalid auto-conversion field: missing '}' character.",
    );
    await expectError(
      post({ example_input: "#12", reverse_template: "#{}" }),
      400,
      "Invalid auto-conversion field: empty field name.",
    );
    await expectError(
      post({ example_input: "#12", reverse_template: "#{num}" }),
      400,
      "Group 'num' in auto-conversion field is not present in linkifier pattern.",
    );
    await expectError(
      post({ example_input: "#12", reverse_template: "issue {id}" }),
      400,
      "Example text does not match auto-conversion field.",
    );
    await expectError(
      post({ alternative_url_templates: ["https://x.example/{id"] }),
      400,
      "Invalid URL template.",
    );
    await expectError(
      post({ alternative_url_templates: ["https://x.example/{other}"] }),
      400,
      "Group 'other' in URL template is not present in linkifier pattern.",
    );
    // `{{` and `}}` are literal braces.
    const { id } = await expectSuccess(
      server.as("iago").POST("/realm/filters", {
        body: {
          pattern: "\\{(?P<id>[0-9]+)\\}",
          url_template: ISSUES,
          example_input: "{7}",
          reverse_template: "{{{id}}}",
        },
      }),
    );
    await expectError(
      patch(id, { reverse_template: "#{id}" }),
      400,
      "Example input does not match the linkifier pattern.",
    );
    expect((await list()).find((l) => l.id === id)?.reverse_template).toBe("{{{id}}}");
    await expectSuccess(remove(id));
    expect(await list()).toEqual(before);
  });

  it("takes a form body with the list as JSON text", async () => {
    const { email, api_key } = server.creds.users["iago"]!;
    const response = await fetch(`${server.baseUrl}/api/v1/realm/filters`, {
      method: "POST",
      headers: {
        Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        pattern: "U(?P<n>[0-9]+)",
        url_template: "https://tickets.example.com/view?n={n}",
        example_input: "U12",
        reverse_template: "U{n}",
        alternative_url_templates: JSON.stringify(["https://old.example.com/{n}"]),
      }).toString(),
    });
    const body = (await response.json()) as { id: number };
    expect(response.status).toBe(200);
    expect((await list()).find((l) => l.id === body.id)).toMatchObject({
      example_input: "U12",
      reverse_template: "U{n}",
      alternative_url_templates: ["https://old.example.com/{n}"],
    });
    await expectSuccess(remove(body.id));
  });
});
