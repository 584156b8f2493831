/**
 * Saved snippets (zerver/tests/test_saved_snippets.py): GET and POST /saved_snippets, PATCH and
 * DELETE /saved_snippets/{saved_snippet_id}, their `saved_snippets` events and register's
 * `saved_snippets`.
 */
import { describe, expect, it } from "vitest";
import { asUser, openQueue, untyped } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { realClient } from "../helpers/real-client.ts";

const server = useTestServer();

const create = (as: string, title: string, content: string) =>
  server.as(as).POST("/saved_snippets", { body: { title, content } });
const edit = (as: string, id: number, body: { title?: string; content?: string }) =>
  server.as(as).PATCH("/saved_snippets/{saved_snippet_id}", {
    params: { path: { saved_snippet_id: id } },
    body,
  });
const remove = (as: string, id: number) =>
  server.as(as).DELETE("/saved_snippets/{saved_snippet_id}", {
    params: { path: { saved_snippet_id: id } },
  });
const list = async (as: string) =>
  (await expectSuccess(server.as(as).GET("/saved_snippets"))).saved_snippets;

describe("saved snippets", () => {
  it("creates (stripped), lists, edits and deletes, with an event each and register state", async () => {
    const queue = await openQueue(asUser(server, "iago"), { event_types: ["saved_snippets"] });
    expect(queue.state.saved_snippets).toEqual([]);
    const before = Math.floor(Date.now() / 1000);
    const { saved_snippet_id: id } = await expectSuccess(
      create("iago", "  Welcome ", "\nWelcome to the organization.  "),
    );
    const created = await list("iago");
    expect(created).toEqual([
      {
        id,
        title: "Welcome",
        content: "Welcome to the organization.",
        date_created: expect.any(Number),
      },
    ]);
    expect(created[0]!.date_created).toBeGreaterThanOrEqual(before - 1);
    const snippet = created[0]!;
    expect(await queue.nextEvents()).toEqual([
      { id: expect.any(Number), type: "saved_snippets", op: "add", saved_snippet: snippet },
    ]);

    // Only the content: the title stays.
    await expectSuccess(edit("iago", id, { content: " New text " }));
    const edited = { ...snippet, content: "New text" };
    expect(await list("iago")).toEqual([edited]);
    // Neither field: success and no event (Zulip exits early).
    await expectSuccess(edit("iago", id, {}));
    await expectSuccess(edit("iago", id, { title: "Renamed" }));
    const renamed = { ...edited, title: "Renamed" };
    expect(await queue.nextEvents()).toEqual([
      { id: expect.any(Number), type: "saved_snippets", op: "update", saved_snippet: edited },
      { id: expect.any(Number), type: "saved_snippets", op: "update", saved_snippet: renamed },
    ]);
    const registered = await expectSuccess(
      server.as("iago").POST("/register", { body: { fetch_event_types: ["saved_snippets"] } }),
    );
    expect(registered.saved_snippets).toEqual([renamed]);

    await expectSuccess(remove("iago", id));
    expect(await list("iago")).toEqual([]);
    expect(await queue.nextEvents()).toEqual([
      { id: expect.any(Number), type: "saved_snippets", op: "remove", saved_snippet_id: id },
    ]);
    await expectError(remove("iago", id), 404, "Saved snippet does not exist.");
  });

  it("refuses blank and too-long fields with Zulip's texts, storing nothing", async () => {
    await expectError(create("cordelia", "   ", "x"), 400, "title cannot be blank");
    await expectError(create("cordelia", "t", " \n "), 400, "content cannot be blank");
    await expectError(
      create("cordelia", "x".repeat(61), "c"),
      400,
      "title is too long (limit: 60 characters)",
    );
    await expectError(
      create("cordelia", "t", "x".repeat(10001)),
      400,
      "content is too long (limit: 10000 characters)",
    );
    await expectError(
      server.as("cordelia").POST("/saved_snippets", { body: untyped({ title: "t" }) }),
      400,
      "Missing 'content' argument",
    );
    // Limits count after stripping, in code points.
    await expectSuccess(create("cordelia", `  ${"☃".repeat(60)}  `, "c"));
    const [kept] = await list("cordelia");
    await expectError(edit("cordelia", kept!.id, { title: " " }), 400, "title cannot be blank");
    expect(await list("cordelia")).toEqual([kept]);
  });

  it("treats another user's snippet, and an unknown one, as missing", async () => {
    const { saved_snippet_id: id } = await expectSuccess(create("hamlet", "mine", "secret"));
    await expectError(edit("othello", id, { title: "x" }), 404, "Saved snippet does not exist.");
    await expectError(remove("othello", id), 404, "Saved snippet does not exist.");
    await expectError(remove("othello", 2 ** 31 + 5), 404, "Saved snippet does not exist.");
    expect(await list("othello")).toEqual([]);
    expect((await list("hamlet")).map((s) => s.title)).toEqual(["mine"]);
  });

  it("takes python-zulip-api's form body, + for spaces, and PATCH parameters in the query string", async () => {
    const made = await realClient(server, "aaron", "POST", "/saved_snippets", {
      title: "Hello there",
      content: "Hi 👋",
    });
    expect(made).toMatchObject({ status: 200, body: { result: "success" } });
    const id = made.body.saved_snippet_id as number;
    const patched = await realClient(
      server,
      "aaron",
      "PATCH",
      `/saved_snippets/${id}`,
      { title: "Query title" },
      { inQuery: true },
    );
    expect(patched).toMatchObject({ status: 200, body: { result: "success" } });
    expect(await list("aaron")).toMatchObject([{ id, title: "Query title", content: "Hi 👋" }]);
    const deleted = await realClient(server, "aaron", "DELETE", `/saved_snippets/${id}`);
    expect(deleted).toMatchObject({ status: 200, body: { result: "success" } });
  });
});
