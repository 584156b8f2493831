/**
 * POST /messages/render (render_message_backend, zerver/tests/test_message_send.py
 * test_render_message...): the same HTML a sent message gets, mentions resolved, nothing sent.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { sendToChannel, untyped } from "../helpers/builders.ts";
import { uploadFile } from "../helpers/upload.ts";

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

describe("uploaded media (feature levels 437, 467, 495)", () => {
  it("Markdown image syntax renders uploaded images only; other targets stay text", async () => {
    const image = (alt: string, src: string) =>
      `<img alt="${alt}" class="inline-image" data-original-src="${src}" src="${src}">`;
    const rendered = async (content: string) =>
      (await expectSuccess(render("hamlet", content))).rendered;
    expect(await rendered("![a cat](/user_uploads/2/ab/cat.png)")).toBe(
      `<p>${image("a cat", "/user_uploads/2/ab/cat.png")}</p>`,
    );
    // Inside any block, a quote or a list included.
    expect(await rendered("> see ![q](/user_uploads/2/ab/q.jpg)")).toBe(
      `<blockquote>\n<p>see ${image("q", "/user_uploads/2/ab/q.jpg")}</p>\n</blockquote>`,
    );
    // A third-party image (level 467), or an upload that is no image: the text, its URL linked.
    expect(await rendered("![ext](https://example.com/x.png)")).toBe(
      '<p>![ext](<a href="https://example.com/x.png">https://example.com/x.png</a>)</p>',
    );
    expect(await rendered("![doc](/user_uploads/2/ab/doc.pdf)")).toBe(
      "<p>![doc](/user_uploads/2/ab/doc.pdf)</p>",
    );
  });

  it("a sent message's image claims its upload and has has_image", async () => {
    const url = await uploadFile(server, "hamlet", "kitten.png");
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "images",
      content: `![kitten](${url})`,
    });
    const { message } = await expectSuccess(
      server.as("hamlet").GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    expect(message.content).toBe(
      `<p><img alt="kitten" class="inline-image" data-original-src="${url}" src="${url}"></p>`,
    );
    const row = await server.db.message.findUniqueOrThrow({ where: { id } });
    expect(row.hasImage).toBe(true);
    const attachment = await server.db.attachment.findFirstOrThrow({
      where: { pathId: url.slice("/user_uploads/".length) },
      include: { messages: true },
    });
    expect(attachment.messages.map((m) => m.messageId)).toEqual([id]);
  });

  it("links to uploaded videos (.mov too, level 495) get a message_inline_video preview", async () => {
    const video = (href: string, title?: string) =>
      `<div class="message_inline_image message_inline_video"><a href="${href}"${
        title ? ` title="${title}"` : ""
      }><video preload="metadata" src="${href}"></video></a></div>`;
    const rendered = async (content: string) =>
      (await expectSuccess(render("hamlet", content))).rendered;
    const mov = "/user_uploads/2/ab/clip.mov";
    expect(await rendered(`[clip.mov](${mov})`)).toBe(
      `<p><a href="${mov}">clip.mov</a></p>\n${video(mov, "clip.mov")}`,
    );
    for (const ext of ["mp4", "webm"])
      expect(await rendered(`[v](/user_uploads/2/ab/v.${ext})`)).toContain(
        video(`/user_uploads/2/ab/v.${ext}`, "v"),
      );
    // Quotes get no preview; third-party videos neither (only uploads are previewed here).
    expect(await rendered(`> [clip.mov](${mov})`)).not.toContain("message_inline_video");
    expect(await rendered("[x.mp4](https://example.com/x.mp4)")).not.toContain(
      "message_inline_video",
    );
    // The organization's inline_image_preview off: no preview (image_preview_enabled).
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { inlineImagePreview: false },
    });
    try {
      expect(await rendered(`[clip.mov](${mov})`)).toBe(`<p><a href="${mov}">clip.mov</a></p>`);
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { inlineImagePreview: true },
      });
    }
    // A real client's form body, `+` for spaces.
    const { email, api_key } = server.creds.users["hamlet"]!;
    const response = await fetch(`${server.baseUrl}/api/v1/messages/render`, {
      method: "POST",
      headers: {
        Authorization: "Basic " + Buffer.from(`${email}:${api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: `content=${encodeURIComponent(`my [clip](${mov})`).replace(/%20/g, "+")}`,
    });
    expect(((await response.json()) as { rendered: string }).rendered).toBe(
      `<p>my <a href="${mov}">clip</a></p>\n${video(mov, "clip")}`,
    );
  });
});
