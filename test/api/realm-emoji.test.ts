/**
 * Custom emoji (zerver/tests/test_realm_emoji.py): POST /realm/emoji/{name} with a multipart
 * file (as zulip-js, python-zulip-api and curl send it), Zulip's name rules and refusals,
 * the organization's can_add_custom_emoji_group, GET /realm/emoji, DELETE /realm/emoji/{name}
 * (deactivation), the public image URL, `realm_emoji` events and register's `realm_emoji`.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { zulipEventErrors } from "../helpers/zulip-spec.ts";

const server = useTestServer({ maxEmojiFileSizeMib: 1 });
const MiB = 1024 * 1024;
const id = (name: string) => server.creds.users[name]!.user_id;

/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

const basic = (who: string) => {
  const { email, api_key } = server.creds.users[who]!;
  return `Basic ${Buffer.from(`${email}:${api_key}`).toString("base64")}`;
};

/** POST /realm/emoji/{name} with plain fetch; the JSON answer is checked against the spec. */
async function upload(
  as: string,
  name: string,
  files: { field?: string; filename?: string; type?: string; data?: Buffer }[] = [{}],
) {
  const form = new FormData();
  for (const f of files)
    form.append(
      f.field ?? "file",
      new Blob([f.data ?? PNG], { type: f.type ?? "image/png" }),
      f.filename ?? "img.png",
    );
  const url = `${server.baseUrl}/api/v1/realm/emoji/${name}`;
  const response = await fetch(url, {
    method: "POST",
    headers: { Authorization: basic(as) },
    body: form,
  });
  const json = (await response.json()) as Record<string, unknown>;
  expect(checkResponse("POST", url, response.status, json)).toBeNull();
  return { status: response.status, json };
}
const uploaded = async (as: string, name: string) =>
  expect(await upload(as, name)).toMatchObject({ status: 200, json: { result: "success" } });
const refused = async (request: Promise<{ status: number; json: unknown }>, msg: string) =>
  expect(await request).toMatchObject({ status: 400, json: { result: "error", msg } });

const list = async (as = "hamlet") =>
  (await expectSuccess(server.as(as).GET("/realm/emoji"))).emoji;
const byName = async (name: string) => Object.values(await list()).filter((e) => e.name === name);
const remove = (as: string, name: string) =>
  server.as(as).DELETE("/realm/emoji/{emoji_name}", { params: { path: { emoji_name: name } } });

describe("uploading", () => {
  it("stores the image, lists it in Zulip's shape, serves it publicly, and tells every user", async () => {
    const hamlet = await queueOf(server, "hamlet", ["realm_emoji"]);
    await uploaded("iago", "my_emoji");
    const [emoji] = await byName("my_emoji");
    const realmId = server.creds.realm.id;
    expect(emoji).toEqual({
      id: expect.stringMatching(/^[0-9]+$/),
      name: "my_emoji",
      source_url: expect.stringMatching(
        new RegExp(`^/user_avatars/${realmId}/emoji/images/[0-9a-f]{8}\\.png$`),
      ),
      still_url: null,
      deactivated: false,
      author_id: id("iago"),
    });
    const image = await fetch(`${server.baseUrl}${emoji!.source_url}`);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG);
    expect(
      (await fetch(`${server.baseUrl}/user_avatars/${realmId}/emoji/images/00000000.png`)).status,
    ).toBe(404);

    const events = await hamlet();
    expect(events).toEqual([{ type: "realm_emoji", op: "update", realm_emoji: await list() }]);
    expect(zulipEventErrors({ ...events[0]!, id: 0 })).toEqual([]);
    const { realm_emoji } = await expectSuccess(
      server.as("othello").POST("/register", { body: { fetch_event_types: ["realm_emoji"] } }),
    );
    expect(realm_emoji).toEqual(await list());

    // Usable at once, in reactions too.
    const messageId = (
      await expectSuccess(
        server.as("hamlet").POST("/messages", {
          body: { type: "stream", to: "Verona", topic: "emoji", content: "hi" },
        }),
      )
    ).id;
    await expectSuccess(
      server.as("othello").POST("/messages/{message_id}/reactions", {
        params: { path: { message_id: messageId } },
        body: { emoji_name: "my_emoji" },
      }),
    );
  });

  it("applies Zulip's name rules (spaces become underscores)", async () => {
    await refused(
      upload("iago", "my_em*oji"),
      "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
    );
    await refused(
      upload("iago", "my_EMoji"),
      "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
    );
    await refused(
      upload("iago", "my_emoji_"),
      "Emoji names must end with either a letter or digit.",
    );
    await refused(upload("iago", "%20"), "Emoji name is missing");
    await uploaded("iago", "party%20time");
    expect(await byName("party_time")).toHaveLength(1);
  });

  it("refuses guests, users outside can_add_custom_emoji_group, a name in use, and built-in names to non-administrators", async () => {
    await refused(upload("polonius", "guest_emoji"), "Not allowed for guest users");
    const realmId = server.creds.realm.id;
    const admins = await server.db.namedUserGroup.findFirstOrThrow({
      where: { realmId, name: "role:administrators" },
    });
    const before = await server.db.realm.findUniqueOrThrow({ where: { id: realmId } });
    await server.db.realm.update({
      where: { id: realmId },
      data: { canAddCustomEmojiGroupId: admins.id },
    });
    try {
      await refused(upload("othello", "members_emoji"), "Insufficient permission");
      await uploaded("iago", "admins_emoji");
    } finally {
      await server.db.realm.update({
        where: { id: realmId },
        data: { canAddCustomEmojiGroupId: before.canAddCustomEmojiGroupId },
      });
    }
    await uploaded("othello", "members_emoji");
    await refused(
      upload("hamlet", "members_emoji"),
      "A custom emoji with this name already exists.",
    );
    await refused(upload("othello", "laughing"), "Only administrators can override default emoji.");
    await uploaded("iago", "smile");
  });

  it("takes exactly one image of a known type, within MAX_EMOJI_FILE_SIZE_MIB", async () => {
    await refused(
      upload("iago", "two_files", [{}, { field: "f2" }]),
      "You must upload exactly one file.",
    );
    await refused(upload("iago", "no_file", []), "You must upload exactly one file.");
    await refused(
      upload("iago", "big_file", [{ data: Buffer.alloc(MiB + 1, 1) }]),
      "Uploaded file is larger than the allowed limit of 1 MiB",
    );
    await refused(
      upload("iago", "text_file", [{ type: "text/plain", filename: "notes.txt" }]),
      "Invalid image format",
    );
    // A part without a type (python-zulip-api) is typed by its file name.
    const boundary = "----emoji";
    const raw = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="img.gif"\r\n\r\n`,
      ),
      PNG,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const response = await fetch(`${server.baseUrl}/api/v1/realm/emoji/untyped`, {
      method: "POST",
      headers: {
        Authorization: basic("iago"),
        "Content-Type": `multipart/form-data; boundary=${boundary}`,
      },
      body: raw,
    });
    expect(response.status, await response.text()).toBe(200);
    expect((await byName("untyped"))[0]!.source_url).toMatch(/\.gif$/);
    // Nothing was stored for the refusals.
    for (const name of ["two_files", "no_file", "big_file", "text_file"])
      expect(await byName(name)).toEqual([]);
  });
});

describe("deactivating", () => {
  it("follows Zulip's rules: administrators any, others their own; the emoji stays listed as deactivated and may be uploaded again", async () => {
    await expectError(remove("iago", "invalid_emoji"), 404, "Emoji 'invalid_emoji' does not exist");
    await uploaded("othello", "own_1");
    await uploaded("othello", "own_2");
    await expectError(
      remove("cordelia", "own_1"),
      400,
      "Must be an organization administrator or emoji author",
    );
    const hamlet = await queueOf(server, "hamlet", ["realm_emoji"]);
    await expectSuccess(remove("othello", "own_1"));
    await expectSuccess(remove("iago", "own_2"));
    expect((await byName("own_1"))[0]!.deactivated).toBe(true);
    const events = await hamlet();
    expect(events).toHaveLength(2);
    expect(events[1]).toEqual({ type: "realm_emoji", op: "update", realm_emoji: await list() });
    await expectError(remove("othello", "own_1"), 404, "Emoji 'own_1' does not exist");
    await uploaded("othello", "own_1");
    expect((await byName("own_1")).map((e) => e.deactivated)).toEqual([true, false]);
  });
});

describe("individual_emoji_changes (feature level 491)", () => {
  it("a queue that declares it gets each emoji as it is added or deactivated; one without, the whole set", async () => {
    const granular = await queueOf(server, "hamlet", ["realm_emoji"], {
      individual_emoji_changes: true,
    });
    const legacy = await queueOf(server, "othello", ["realm_emoji"]);
    await uploaded("iago", "granular");
    const [emoji] = await byName("granular");
    await expectSuccess(remove("iago", "granular"));
    expect(await granular()).toEqual([
      { type: "realm_emoji", op: "add", emoji },
      { type: "realm_emoji", op: "update_one", emoji_id: emoji!.id, data: { deactivated: true } },
    ]);
    const whole = await legacy();
    expect(whole.map((e) => e.type === "realm_emoji" && e.op)).toEqual(["update", "update"]);
    expect(whole[1]).toEqual({ type: "realm_emoji", op: "update", realm_emoji: await list() });
  });

  it("the capability as zulip-flutter sends it: JSON text in a form body; event ids without gaps", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/register`, {
      method: "POST",
      headers: {
        Authorization: basic("cordelia"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        event_types: JSON.stringify(["realm_emoji"]),
        client_capabilities: JSON.stringify({ individual_emoji_changes: true }),
      }).toString(),
    });
    const { queue_id } = (await response.json()) as { queue_id: string };
    await uploaded("iago", "flutter_one");
    const { events } = await expectSuccess(
      server.as("cordelia").GET("/events", {
        params: { query: { queue_id, last_event_id: -1, dont_block: true } },
      }),
    );
    expect(events.map((e) => [e.id, e.type === "realm_emoji" && e.op])).toEqual([[0, "add"]]);
  });
});
