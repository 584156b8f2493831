/**
 * POST /messages/render (render_message_backend, zerver/tests/test_message_send.py
 * test_render_message...): the same HTML a sent message gets, mentions resolved, nothing sent.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { untyped } from "../helpers/builders.ts";

const server = useTestServer();
const render = (as: string, content: string) =>
  server.as(as).POST("/messages/render", { body: { content } });

describe("POST /messages/render", () => {
  it("renders as sending does, mentions included, and sends nothing", async () => {
    expect((await expectSuccess(render("hamlet", "**foo**"))).rendered).toBe(
      "<p><strong>foo</strong></p>",
    );
    const content = "Hi @**Othello, the Moor of Venice** in #**Verona** :smile:";
    const { rendered } = await expectSuccess(render("hamlet", content));
    const before = await server.db.message.count();
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "render", content },
      }),
    );
    const { message } = await expectSuccess(
      server.as("hamlet").GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    expect(rendered).toBe(message.content);
    expect(rendered).toContain('data-user-id="');
    await expectSuccess(render("hamlet", "nothing is sent"));
    expect(await server.db.message.count()).toBe(before + 1);
  });

  it("needs content, and takes a python-zulip-api form body", async () => {
    await expectError(
      server.as("hamlet").POST("/messages/render", { body: untyped({}) }),
      400,
      "Missing 'content' argument",
      { code: "REQUEST_VARIABLE_MISSING", var_name: "content" },
    );
    const { email, api_key } = server.creds.users["hamlet"]!;
    const response = await fetch(`${server.baseUrl}/api/v1/messages/render`, {
      method: "POST",
      headers: {
        Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
        "User-Agent": "ZulipPython/0.9.0",
      },
      body: "content=%2A%2Ahello+world%2A%2A",
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      result: "success",
      msg: "",
      rendered: "<p><strong>hello world</strong></p>",
    });
  });
});
