/**
 * Own avatar (zerver/tests/test_upload.py AvatarTest): POST /users/me/avatar with a multipart
 * image, the new URL in GET /users/me, register, GET /users and messages, the image served at
 * it resized as Zulip's resize_avatar does (100×100 and 500×500 PNGs, cut from the middle, an
 * animation's first frame), the `realm_user` event, Zulip's refusals (not exactly one file, too
 * large, not an image, not decodable, too many pixels, avatar changes disabled for
 * non-administrators), the multipart body python-zulip-api sends, avatars stored before
 * resizing, and DELETE /users/me/avatar back to Gravatar.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { storedFilePath } from "../../server/lib/uploads/upload-storage.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { zulipEventErrors } from "../helpers/zulip-spec.ts";

const server = useTestServer({ maxAvatarFileSizeMib: 1 });
const MiB = 1024 * 1024;
const id = (name: string) => server.creds.users[name]!.user_id;

/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

/** A solid image of this size and colour, encoded as `format`. */
const solid = (
  width: number,
  height: number,
  background: string,
  format: "png" | "jpeg" | "gif" = "png",
) =>
  sharp({ create: { width, height, channels: 3, background } })
    .toFormat(format)
    .toBuffer();

/** A 4000×3000 JPEG photo: red, but for blue bands 400 pixels wide on its left and right. */
async function photo(): Promise<Buffer> {
  const band = await solid(400, 3000, "#0000ff");
  return sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#ff0000" } })
    .composite([
      { input: band, left: 0, top: 0 },
      { input: band, left: 3600, top: 0 },
    ])
    .jpeg()
    .toBuffer();
}

/** A PNG whose header claims 10000×9001 pixels (one more than 90,000,000), with almost no data. */
function pixelBomb(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(10000, 0);
  ihdr.writeUInt32BE(9001, 4);
  ihdr[8] = 8; // 8 bits per sample
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.alloc(30001))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** GETs an image URL of the server: its status, type, headers and, for an image, its size and format. */
async function fetchImage(url: string) {
  const response = await fetch(`${server.baseUrl}${url}`);
  const body = Buffer.from(await response.arrayBuffer());
  const meta = response.ok ? await sharp(body).metadata() : null;
  return { response, body, meta };
}

/** The colour of one pixel of an image, as `#rrggbb`. */
async function pixel(image: Buffer, x: number, y: number): Promise<string> {
  const { data, info } = await sharp(image)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * 3;
  return (
    "#" + [data[i], data[i + 1], data[i + 2]].map((c) => c!.toString(16).padStart(2, "0")).join("")
  );
}

const basic = (who: string) => {
  const { email, api_key } = server.creds.users[who]!;
  return `Basic ${Buffer.from(`${email}:${api_key}`).toString("base64")}`;
};

/** POST /users/me/avatar with plain fetch (multipart); the JSON answer is checked against the spec. */
async function upload(
  as: string,
  files: { field?: string; filename?: string; type?: string; data?: Buffer }[] = [{}],
) {
  const form = new FormData();
  for (const f of files)
    form.append(
      f.field ?? "file",
      new Blob([f.data ?? PNG], { type: f.type ?? "image/png" }),
      f.filename ?? "me.png",
    );
  const url = `${server.baseUrl}/api/v1/users/me/avatar`;
  const response = await fetch(url, {
    method: "POST",
    headers: { Authorization: basic(as) },
    body: form,
  });
  const json = (await response.json()) as Record<string, unknown>;
  expect(checkResponse("POST", url, response.status, json)).toBeNull();
  return { status: response.status, json };
}
const refused = async (request: Promise<{ status: number; json: unknown }>, msg: string) =>
  expect(await request).toMatchObject({ status: 400, json: { result: "error", msg } });

const me = async (as: string) => expectSuccess(server.as(as).GET("/users/me"));
const setDisabled = (value: boolean) =>
  expectSuccess(server.as("iago").PATCH("/realm", { body: { avatar_changes_disabled: value } }));

async function sendAndFetchAvatar(as: string, options: { client_gravatar?: boolean } = {}) {
  const { id: messageId } = await expectSuccess(
    server.as(as).POST("/messages", {
      body: { type: "stream", to: "Verona", topic: "avatar", content: "new face" },
    }),
  );
  const { messages } = await expectSuccess(
    server.as("othello").GET("/messages", {
      params: {
        query: {
          anchor: messageId,
          num_before: 0,
          num_after: 0,
          client_gravatar: options.client_gravatar ?? false,
        },
      },
    }),
  );
  return messages[0]!.avatar_url;
}

/** The names in a directory's parent, or none when it does not exist. */
async function readdirIfAny(pathInside: string): Promise<string[]> {
  return readdir(dirname(pathInside)).catch(() => []);
}

describe("uploading an avatar", () => {
  it("stores the image, serves it at the new URL everywhere, and tells every user", async () => {
    const othello = await queueOf(server, "othello", ["realm_user"]);
    const before = await me("hamlet");
    const res = await upload("hamlet");
    expect(res.status).toBe(200);
    const url = res.json.avatar_url as string;
    const realmId = server.creds.realm.id;
    expect(url).toMatch(
      new RegExp(
        `^/user_avatars/${realmId}/[0-9a-f]{40}\\.png\\?version=${before.avatar_version + 1}$`,
      ),
    );
    const after = await me("hamlet");
    expect(after.avatar_url).toBe(url);
    expect(after.avatar_version).toBe(before.avatar_version + 1);

    // Even a 1×1 image is scaled up to fill both squares, as libvips' thumbnail does in Zulip.
    const { response: image, meta } = await fetchImage(url);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
    expect(image.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(image.headers.get("cache-control")).toContain("max-age=31536000");
    expect(meta).toMatchObject({ format: "png", width: 100, height: 100 });
    const medium = await fetchImage(url.replace(".png", "-medium.png"));
    expect(medium.response.headers.get("content-type")).toBe("image/png");
    expect(medium.meta).toMatchObject({ format: "png", width: 500, height: 500 });
    // The original is kept, never served.
    expect((await fetch(`${server.baseUrl}${url.replace(".png?", ".original?")}`)).status).toBe(
      404,
    );
    expect(
      (await fetch(`${server.baseUrl}/user_avatars/${realmId}/${"0".repeat(40)}.png`)).status,
    ).toBe(404);

    // Messages carry it, even for client_gravatar (an upload is not a Gravatar).
    expect(await sendAndFetchAvatar("hamlet")).toBe(url);
    expect(await sendAndFetchAvatar("hamlet", { client_gravatar: true })).toBe(url);
    const { members } = await expectSuccess(
      server.as("othello").GET("/users", { params: { query: { client_gravatar: true } } }),
    );
    expect(members.find((u) => u.user_id === id("hamlet"))!.avatar_url).toBe(url);
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["realm_user"] } }),
    );
    expect(state.avatar_url).toBe(url);
    expect(state.avatar_source).toBe("U");

    const events = await othello();
    expect(events).toEqual([
      {
        type: "realm_user",
        op: "update",
        person: {
          user_id: id("hamlet"),
          avatar_source: "U",
          avatar_url: url,
          avatar_url_medium: url.replace(".png?", "-medium.png?"),
          avatar_version: after.avatar_version,
        },
      },
    ]);
    expect(zulipEventErrors({ ...events[0]!, id: 0 })).toEqual([]);

    // A second upload replaces the first: a new URL, the old images gone.
    const second = await upload("hamlet", [
      { data: await solid(8, 8, "#00ff00", "gif"), type: "image/gif", filename: "me.gif" },
    ]);
    const url2 = second.json.avatar_url as string;
    expect(url2).toMatch(/^\/user_avatars\/\d+\/[0-9a-f]{40}\.png\?version=/);
    const gif = await fetchImage(url2);
    expect(gif.response.headers.get("content-type")).toBe("image/png");
    expect(gif.meta).toMatchObject({ format: "png", width: 100, height: 100 });
    expect((await fetch(`${server.baseUrl}${url}`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}${url.replace(".png", "-medium.png")}`)).status).toBe(
      404,
    );
  });

  it("resizes a 4000×3000 photo to 100×100 and 500×500, cut square from its middle", async () => {
    const res = await upload("aaron", [
      { data: await photo(), type: "image/jpeg", filename: "x.jpg" },
    ]);
    expect(res.status).toBe(200);
    const url = res.json.avatar_url as string;
    const small = await fetchImage(url);
    expect(small.meta).toMatchObject({ format: "png", width: 100, height: 100 });
    // Only the middle 3000×3000 square is left: the blue bands are cut off.
    for (const [x, y] of [
      [0, 0],
      [99, 0],
      [0, 99],
      [99, 99],
      [50, 50],
    ] as const)
      expect(await pixel(small.body, x, y)).toMatch(/^#f[0-9a-f]00[0-9a-f]{2}$/);
    const medium = await fetchImage((await me("aaron")).avatar_url!.replace(".png", "-medium.png"));
    expect(medium.meta).toMatchObject({ format: "png", width: 500, height: 500 });
    expect(await pixel(medium.body, 0, 250)).toMatch(/^#f[0-9a-f]00[0-9a-f]{2}$/);
    // Smaller than the original by far (a 30-pixel avatar no longer loads the whole photo).
    expect(small.body.length).toBeLessThan(5000);
  });

  it("keeps an animated GIF's first frame, as a PNG still", async () => {
    const frames = [await solid(40, 30, "#ff0000"), await solid(40, 30, "#0000ff")];
    const gif = await sharp(frames, { join: { animated: true } })
      .gif()
      .toBuffer();
    expect((await sharp(gif).metadata()).pages).toBe(2);
    const res = await upload("aaron", [{ data: gif, type: "image/gif", filename: "party.gif" }]);
    const small = await fetchImage(res.json.avatar_url as string);
    expect(small.meta).toMatchObject({ format: "png", width: 100, height: 100 });
    expect(small.meta!.pages ?? 1).toBe(1);
    expect(await pixel(small.body, 50, 50)).toBe("#ff0000");
  });

  it("takes the multipart body python-zulip-api sends (the file's path as field name, no part type)", async () => {
    // python-zulip-api's upload: `files=[open(path, "rb")]`, which requests sends as one part
    // named by the path, with the file's base name and no Content-Type of its own.
    const boundary = randomBytes(16).toString("hex");
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="/home/hamlet/me.jpg"; filename="me.jpg"\r\n\r\n`,
      ),
      await solid(300, 200, "#00ff00", "jpeg"),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const response = await fetch(`${server.baseUrl}/api/v1/users/me/avatar`, {
      method: "POST",
      headers: {
        Authorization: basic("cordelia"),
        "Content-Type": `multipart/form-data; boundary=${boundary}`,
        "User-Agent": "ZulipPython/0.9.0",
      },
      body,
    });
    const json = (await response.json()) as { avatar_url: string };
    expect(response.status).toBe(200);
    const small = await fetchImage(json.avatar_url);
    expect(small.meta).toMatchObject({ format: "png", width: 100, height: 100 });
    expect(await pixel(small.body, 10, 10)).toMatch(/^#[0-9a-f]{2}f[0-9a-f][0-9a-f]{2}$/);
    await expectSuccess(server.as("cordelia").DELETE("/users/me/avatar"));
  });

  it("refuses what does not decode as an image, or has too many pixels, changing nothing", async () => {
    const before = await me("cordelia");
    const files = async () =>
      (
        await readdirIfAny(
          storedFilePath(server.deps.config, `avatars/${server.creds.realm.id}/x`)!,
        )
      ).sort();
    const filesBefore = await files();
    for (const [data, msg] of [
      [
        Buffer.from("this is no image at all"),
        "Could not decode image; did you upload an image file?",
      ],
      [PNG.subarray(0, 20), "Could not decode image; did you upload an image file?"],
      [pixelBomb(), "Image size exceeds limit."],
    ] as const) {
      const res = await upload("cordelia", [{ data, type: "image/png", filename: "me.png" }]);
      expect(res).toMatchObject({ status: 400, json: { result: "error", msg, code: "BAD_IMAGE" } });
    }
    expect(await me("cordelia")).toEqual(before);
    expect(await files()).toEqual(filesBefore);
  });

  it("still serves an avatar stored before resizing, its medium URL by the same file", async () => {
    const realmId = server.creds.realm.id;
    const hash = randomBytes(20).toString("hex") + ".jpg";
    const jpeg = await solid(64, 48, "#123456", "jpeg");
    const path = storedFilePath(server.deps.config, `avatars/${realmId}/${hash}`)!;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, jpeg);
    await server.db.userProfile.update({
      where: { id: id("prospero") },
      data: { avatarSource: "U", avatarHash: hash, avatarVersion: { increment: 1 } },
    });
    const url = (await me("prospero")).avatar_url!;
    expect(url).toMatch(/\.jpg\?version=\d+$/);
    const image = await fetchImage(url);
    expect(image.response.headers.get("content-type")).toBe("image/jpeg");
    expect(image.body).toEqual(jpeg);
    const medium = await fetchImage(url.replace(".jpg", "-medium.jpg"));
    expect(medium.body).toEqual(jpeg);
    // A new upload replaces it (and removes the old file).
    await upload("prospero");
    expect((await fetch(`${server.baseUrl}${url}`)).status).toBe(404);
  });

  it("refuses anything but exactly one image within max_avatar_file_size_mib", async () => {
    const before = await me("cordelia");
    await refused(upload("cordelia", []), "You must upload exactly one avatar.");
    await refused(upload("cordelia", [{}, { field: "f2" }]), "You must upload exactly one avatar.");
    await refused(
      upload("cordelia", [{ data: Buffer.alloc(MiB + 1, 1) }]),
      "Uploaded file is larger than the allowed limit of 1 MiB",
    );
    expect(await upload("cordelia", [{ type: "text/plain", filename: "notes.txt" }])).toMatchObject(
      { status: 400, json: { msg: "Invalid image format", code: "BAD_IMAGE" } },
    );
    // A body without any file at all.
    const plain = await fetch(`${server.baseUrl}/api/v1/users/me/avatar`, {
      method: "POST",
      headers: { Authorization: basic("cordelia") },
    });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { msg: string }).msg).toBe(
      "You must upload exactly one avatar.",
    );
    expect(await me("cordelia")).toEqual(before);
    const { max_avatar_file_size_mib } = await expectSuccess(
      server.as("cordelia").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    );
    expect(max_avatar_file_size_mib).toBe(1);
  });

  it("follows avatar_changes_disabled: members refused, administrators allowed", async () => {
    await setDisabled(true);
    try {
      const { realm_avatar_changes_disabled } = await expectSuccess(
        server.as("othello").POST("/register", { body: { fetch_event_types: ["realm"] } }),
      );
      expect(realm_avatar_changes_disabled).toBe(true);
      await refused(upload("othello"), "Avatar changes are disabled in this organization.");
      await refused(upload("othello", []), "You must upload exactly one avatar.");
      const res = await server.as("othello").DELETE("/users/me/avatar");
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ msg: "Avatar changes are disabled in this organization." });
      expect((await upload("iago")).status).toBe(200);
    } finally {
      await setDisabled(false);
    }
    expect((await upload("othello")).status).toBe(200);
  });
});

describe("deleting an avatar", () => {
  it("goes back to the Gravatar, in the answer, GET /users/me and the event", async () => {
    await upload("prospero");
    const othello = await queueOf(server, "othello", ["realm_user"]);
    const { avatar_url } = await expectSuccess(server.as("prospero").DELETE("/users/me/avatar"));
    expect(avatar_url).toMatch(
      /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=\d+$/,
    );
    const after = await me("prospero");
    expect(after.avatar_url).toBe(avatar_url);
    const [event] = await othello();
    expect(event).toMatchObject({
      type: "realm_user",
      op: "update",
      person: { user_id: id("prospero"), avatar_source: "G", avatar_url },
    });
    // With client_gravatar a Gravatar is the client's to compute again.
    expect(await sendAndFetchAvatar("prospero", { client_gravatar: true })).toBeNull();
  });
});

describe("GET /avatar/{email_or_id}", () => {
  const redirect = async (path: string, as: string | null = "othello") => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      headers: as ? { Authorization: basic(as) } : {},
      redirect: "manual",
    });
    return { status: response.status, location: response.headers.get("location") };
  };

  it("redirects to a user's avatar by id or email, medium, with the query string carried over", async () => {
    await upload("hamlet");
    const { avatar_url, email } = await me("hamlet");
    const medium = avatar_url!.replace(".png?", "-medium.png?");
    expect(await redirect(`/avatar/${id("hamlet")}`)).toEqual({
      status: 302,
      location: avatar_url,
    });
    expect(await redirect(`/avatar/${encodeURIComponent(email)}`)).toEqual({
      status: 302,
      location: avatar_url,
    });
    expect(await redirect(`/avatar/${id("hamlet")}/medium`)).toEqual({
      status: 302,
      location: medium,
    });
    expect(await redirect(`/avatar/${id("hamlet")}/medium?foo=bar`)).toEqual({
      status: 302,
      location: `${medium}&foo=bar`,
    });
    // The redirect leads to the image.
    const image = await fetchImage(medium);
    expect(image.meta).toMatchObject({ width: 500, height: 500 });
  });

  it("gives nobody's address its Gravatar, and asks for authentication", async () => {
    const { location } = await redirect("/avatar/nobody%40example.com");
    expect(location).toMatch(
      /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/,
    );
    expect((await redirect(`/avatar/${id("hamlet")}`, null)).status).toBe(401);
  });
});
