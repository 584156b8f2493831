/**
 * Own avatar (zerver/tests/test_upload.py AvatarTest): POST /users/me/avatar with a multipart
 * image, the new URL in GET /users/me, register, GET /users and messages, the image served at
 * it, the `realm_user` event, Zulip's refusals (not exactly one file, too large, not an image,
 * avatar changes disabled for non-administrators), and DELETE /users/me/avatar back to Gravatar.
 */
import { describe, expect, it } from "vitest";
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
const GIF = Buffer.from("R0lGODlhAQABAAAAACw=", "base64");

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

    const image = await fetch(`${server.baseUrl}${url}`);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
    expect(image.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(image.headers.get("cache-control")).toContain("max-age=31536000");
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG);
    const medium = await fetch(`${server.baseUrl}${url.replace(".png", "-medium.png")}`);
    expect(Buffer.from(await medium.arrayBuffer())).toEqual(PNG);
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

    // A second upload replaces the first: a new URL, the old image gone.
    const second = await upload("hamlet", [{ data: GIF, type: "image/gif", filename: "me.gif" }]);
    const url2 = second.json.avatar_url as string;
    expect(url2).toMatch(/\.gif\?version=/);
    const gif = await fetch(`${server.baseUrl}${url2}`);
    expect(gif.headers.get("content-type")).toBe("image/gif");
    expect(Buffer.from(await gif.arrayBuffer())).toEqual(GIF);
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
    await refused(
      upload("cordelia", [{ type: "text/plain", filename: "notes.txt" }]),
      "Invalid image format",
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
