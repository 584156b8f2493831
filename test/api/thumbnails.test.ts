/**
 * Thumbnails of uploaded images (Zulip 9+, zerver/tests/test_thumbnail.py and test_markdown.py):
 * made when an image is uploaded, served at /user_uploads/thumbnail/<path_id>/<format> to those
 * who may see the original, and shown in messages with Zulip's preview markup.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { sendToChannel } from "../helpers/builders.ts";
import { basicAuth } from "../helpers/upload.ts";

const dataDir = mkdtempSync(join(tmpdir(), "thumbnails-test-"));
const server = useTestServer({ dataDir });
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: "teal" } })
    .png()
    .toBuffer();

/** A GIF of `frames` frames of 30×20, each a different shade. */
function animatedGif(frames: number) {
  const [w, h] = [30, 20];
  const raw = Buffer.alloc(w * h * frames * 4);
  for (let i = 0; i < raw.length; i += 4) {
    raw[i] = Math.floor(i / (w * h * 4)) * 80;
    raw[i + 3] = 255;
  }
  return sharp(raw, { raw: { width: w, height: h * frames, channels: 4, pageHeight: h } })
    .gif({ loop: 0, delay: Array(frames).fill(100) })
    .toBuffer();
}

async function upload(name: string, data: Buffer, type: string, as = "hamlet") {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(data)], { type }), name);
  const response = await fetch(`${server.baseUrl}/api/v1/user_uploads`, {
    method: "POST",
    headers: { Authorization: basicAuth(server, as) },
    body: form,
  });
  expect(response.status).toBe(200);
  const url = ((await response.json()) as { url: string }).url;
  return { url, pathId: url.slice("/user_uploads/".length) };
}

async function get(path: string, as: string) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    headers: { Authorization: basicAuth(server, as) },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, bytes };
}

const thumb = (pathId: string, name = "840x560.webp") =>
  `/user_uploads/thumbnail/${pathId}/${name}`;

const render = async (content: string) =>
  (await expectSuccess(server.as("hamlet").POST("/messages/render", { body: { content } })))
    .rendered;

describe("thumbnails of uploaded images", () => {
  it("are made at upload, no larger than 840x560 in webp, with the original's dimensions recorded", async () => {
    const { pathId } = await upload("wide.png", await png(1200, 900), "image/png");
    const row = await server.db.imageAttachment.findUniqueOrThrow({ where: { pathId } });
    expect(row).toMatchObject({
      originalWidthPx: 1200,
      originalHeightPx: 900,
      frames: 1,
      contentType: "image/png",
    });
    const served = await get(thumb(pathId), "hamlet");
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/webp");
    expect(served.headers.get("cache-control")).toBe("private, immutable");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    const meta = await sharp(served.bytes).metadata();
    expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({
      format: "webp",
      width: 747,
      height: 560,
    });
    // A small image is not enlarged; a still image has no animated version.
    const small = await upload("small.png", await png(40, 30), "image/png");
    const smallMeta = await sharp((await get(thumb(small.pathId), "hamlet")).bytes).metadata();
    expect([smallMeta.width, smallMeta.height]).toEqual([40, 30]);
    expect((await get(thumb(small.pathId, "840x560-anim.webp"), "hamlet")).status).toBe(404);
    expect((await get(thumb(small.pathId, "100x100.webp"), "hamlet")).status).toBe(404);
  });

  it("keep an animation's frames in the -anim format, and its first frame in the still one", async () => {
    const { pathId } = await upload("spin.gif", await animatedGif(3), "image/gif");
    const row = await server.db.imageAttachment.findUniqueOrThrow({ where: { pathId } });
    expect(row.frames).toBe(3);
    const anim = await sharp((await get(thumb(pathId, "840x560-anim.webp"), "hamlet")).bytes)
      .metadata()
      .then((m) => m.pages);
    const still = await sharp((await get(thumb(pathId), "hamlet")).bytes)
      .metadata()
      .then((m) => m.pages ?? 1);
    expect({ anim, still }).toEqual({ anim: 3, still: 1 });
    expect(await render(`[spin.gif](/user_uploads/${pathId})`)).toBe(
      `<p><a href="/user_uploads/${pathId}">spin.gif</a></p>\n` +
        `<div class="message_inline_image"><a href="/user_uploads/${pathId}" title="spin.gif">` +
        `<img data-animated="true" data-original-content-type="image/gif" data-original-dimensions="30x20" src="${thumb(pathId, "840x560-anim.webp")}"></a></div>`,
    );
  });

  it("are refused to whoever may not see the original, with the original's error", async () => {
    const { url, pathId } = await upload("private.png", await png(50, 50), "image/png");
    const original = await get(url, "othello");
    const thumbnail = await get(thumb(pathId), "othello");
    expect(original.status).toBe(403);
    expect({ status: thumbnail.status, body: thumbnail.bytes.toString() }).toEqual({
      status: original.status,
      body: original.bytes.toString(),
    });
    expect(JSON.parse(thumbnail.bytes.toString()).msg).toBe(
      "You are not authorized to view this file.",
    );
    // Once a message shares it, the recipient gets the thumbnail too.
    await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "thumbnails",
      content: `[private.png](${url})`,
    });
    expect((await get(thumb(pathId), "othello")).status).toBe(200);
    // An unknown upload: the original's 404.
    const realmId = server.creds.realm.id;
    const unknown = await get(thumb(`${realmId}/ff/nothing/x.png`), "hamlet");
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.bytes.toString()).msg).toBe(
      "This file does not exist or has been deleted.",
    );
  });

  it("are shown in messages with Zulip's markup, for a link and for Markdown image syntax", async () => {
    const { url, pathId } = await upload("photo.png", await png(1200, 900), "image/png");
    const img = `data-original-content-type="image/png" data-original-dimensions="1200x900"`;
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "thumbnails",
      content: `[photo.png](${url})`,
    });
    const { message } = await expectSuccess(
      server.as("othello").GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    expect(message.content).toBe(
      `<p><a href="${url}">photo.png</a></p>\n` +
        `<div class="message_inline_image"><a href="${url}" title="photo.png"><img ${img} src="${thumb(pathId)}"></a></div>`,
    );
    expect(await render(`![a photo](${url})`)).toBe(
      `<p><img alt="a photo" class="inline-image" ${img} data-original-src="${url}" src="${thumb(pathId)}"></p>`,
    );
    // Two images in one paragraph: their previews after it, in order.
    const other = await upload("other.png", await png(20, 10), "image/png");
    const both = await render(`[photo.png](${url}) and [other.png](${other.url})`);
    expect(both.indexOf(thumb(pathId))).toBeLessThan(both.indexOf(thumb(other.pathId)));
    expect(both).toMatch(/^<p>.*<\/p>\n<div class="message_inline_image">.*<\/div><div/);
    // No preview in a quote; none with the organization's inline_image_preview off.
    expect(await render(`> [photo.png](${url})`)).not.toContain("message_inline_image");
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { inlineImagePreview: false },
    });
    try {
      expect(await render(`[photo.png](${url})`)).toBe(`<p><a href="${url}">photo.png</a></p>`);
    } finally {
      await server.db.realm.update({
        where: { id: server.creds.realm.id },
        data: { inlineImagePreview: true },
      });
    }
  });

  it("are not made for files that are no images or do not decode, which render without preview", async () => {
    const broken = await upload("broken.png", Buffer.from("not a png at all"), "image/png");
    const text = await upload("notes.txt", Buffer.from("hello"), "text/plain");
    for (const f of [broken, text])
      expect(await server.db.imageAttachment.findUnique({ where: { pathId: f.pathId } })).toBe(
        null,
      );
    expect((await get(thumb(broken.pathId), "hamlet")).status).toBe(404);
    expect(await render(`[broken.png](${broken.url})`)).toBe(
      `<p><a href="${broken.url}">broken.png</a></p>`,
    );
    expect(await render(`![broken](${broken.url})`)).toBe(
      `<p><img alt="broken" class="inline-image" data-original-src="${broken.url}" src="${broken.url}"></p>`,
    );
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "thumbnails",
      content: `[broken.png](${broken.url}) [notes.txt](${text.url})`,
    });
    expect(id).toBeGreaterThan(0);
  });

  it("go with their upload when it is deleted", async () => {
    const { pathId } = await upload("gone.png", await png(60, 40), "image/png");
    const file = join(dataDir, "uploads", "thumbnail", pathId, "840x560.webp");
    expect(existsSync(file)).toBe(true);
    const { attachments } = await expectSuccess(server.as("hamlet").GET("/attachments"));
    const attachment = attachments.find((a) => a.path_id === pathId)!;
    await expectSuccess(
      server.as("hamlet").DELETE("/attachments/{attachment_id}", {
        params: { path: { attachment_id: attachment.id } },
      }),
    );
    expect(existsSync(file)).toBe(false);
    expect(await server.db.imageAttachment.findUnique({ where: { pathId } })).toBe(null);
  });

  it("are listed in the register response's server_thumbnail_formats", async () => {
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    );
    expect(state.server_thumbnail_formats).toEqual([
      {
        name: "840x560-anim.webp",
        max_width: 840,
        max_height: 560,
        format: "webp",
        animated: true,
      },
      { name: "840x560.webp", max_width: 840, max_height: 560, format: "webp", animated: false },
    ]);
  });
});
