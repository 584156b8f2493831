/**
 * Channel folders: POST /channel_folders/create, GET /channel_folders, PATCH
 * /channel_folders/{id}, a channel's folder_id, and their events (zerver/tests/test_channel_folders.py).
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { asUser, type Body, openQueue, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const create = (as: string, body: Body<"/channel_folders/create", "post">) =>
  server.as(as).POST("/channel_folders/create", { body: body });
const update = (
  as: string,
  folderId: number,
  body: Body<"/channel_folders/{channel_folder_id}", "patch">,
) =>
  server.as(as).PATCH("/channel_folders/{channel_folder_id}", {
    params: { path: { channel_folder_id: folderId } },
    body: body,
  });
const list = async (as: string, includeArchived?: boolean) =>
  (
    await expectSuccess(
      server.as(as).GET("/channel_folders", {
        params: {
          query: includeArchived === undefined ? {} : { include_archived: includeArchived },
        },
      }),
    )
  ).channel_folders;

describe("POST /channel_folders/create", () => {
  it("is for administrators, renders the description and answers the new id", async () => {
    await expectError(
      create("shiva", { name: "Frontend", description: "" }),
      400,
      "Must be an organization administrator",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
    const queue = (
      await expectSuccess(
        server.as("polonius").POST("/register", { body: { event_types: ["channel_folder"] } }),
      )
    ).queue_id!;
    const { channel_folder_id } = await expectSuccess(
      create("iago", { name: " Frontend ", description: "Channels for **frontend** discussions" }),
    );
    const folder = (await list("polonius")).find((f) => f.id === channel_folder_id)!;
    expect(folder).toMatchObject({
      name: "Frontend",
      rendered_description: "<p>Channels for <strong>frontend</strong> discussions</p>",
      is_archived: false,
      creator_id: server.creds.users.iago!.user_id,
    });
    const events = (
      await expectSuccess(
        server.as("polonius").GET("/events", {
          params: { query: { queue_id: queue, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as any[];
    expect(events.find((e) => e.type === "channel_folder")).toMatchObject({
      op: "add",
      channel_folder: { id: channel_folder_id, name: "Frontend" },
    });
    const { channel_folder_id: second } = await expectSuccess(
      create("iago", { name: "Empty one", description: "" }),
    );
    expect((await list("hamlet")).find((f) => f.id === second)).toMatchObject({
      rendered_description: "",
    });
    expect((await list("hamlet")).find((f) => f.id === second)!.order).toBeGreaterThan(
      folder.order,
    );
  });

  it("checks the name: duplicate (any case), empty, NUL, too long; the description must be sent", async () => {
    await expectSuccess(create("iago", { name: "Backend", description: "" }));
    await expectError(
      create("iago", { name: "BACKEND", description: "" }),
      400,
      "Channel folder 'BACKEND' already exists",
    );
    await expectError(
      create("iago", { name: "   ", description: "" }),
      400,
      "Channel folder name can't be empty.",
    );
    await expectError(
      create("iago", { name: "abc\u0000", description: "" }),
      400,
      "Invalid character in channel folder name, at position 4.",
    );
    await expectError(
      create("iago", { name: "x".repeat(61), description: "" }),
      400,
      "name is too long (limit: 60 characters)",
    );
    await expectError(
      create("iago", untyped({ name: "No description" })),
      400,
      "Missing 'description' argument",
      { code: "REQUEST_VARIABLE_MISSING" },
    );
  });
});

describe("PATCH /channel_folders/{channel_folder_id}", () => {
  it("renames, re-describes and archives; archived folders are listed only on request", async () => {
    const { channel_folder_id: id } = await expectSuccess(
      create("iago", { name: "Misc", description: "" }),
    );
    await expectError(
      update("hamlet", id, { name: "Other" }),
      400,
      "Must be an organization administrator",
      { code: "UNAUTHORIZED_PRINCIPAL" },
    );
    await expectError(update("iago", 99999, { name: "Other" }), 400, "Invalid channel folder ID");
    await expectError(
      update("iago", id, { name: "backend" }),
      400,
      "Channel folder 'backend' already exists",
    );
    await expectSuccess(update("iago", id, { name: "Miscellany", description: "*odd*" }));
    expect((await list("hamlet")).find((f) => f.id === id)).toMatchObject({
      name: "Miscellany",
      rendered_description: "<p><em>odd</em></p>",
    });
    await expectSuccess(update("iago", id, { is_archived: true }));
    expect((await list("hamlet")).some((f) => f.id === id)).toBe(false);
    expect((await list("hamlet", true)).find((f) => f.id === id)).toMatchObject({
      is_archived: true,
    });
  });

  it("refuses to archive a folder that still holds channels; a channel takes a folder_id", async () => {
    const { channel_folder_id: id } = await expectSuccess(
      create("iago", { name: "Holding", description: "" }),
    );
    const { id: streamId } = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: { name: "in a folder", subscribers: [], folder_id: id },
      }),
    );
    const { stream } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/streams/{stream_id}", { params: { path: { stream_id: streamId } } }),
    );
    expect(stream.folder_id).toBe(id);
    await expectError(
      update("iago", id, { is_archived: true }),
      400,
      "You need to remove all the channels from this folder to archive it.",
    );
  });

  it("takes a form body with is_archived as JSON text in the query string", async () => {
    const { channel_folder_id: id } = await expectSuccess(
      create("iago", { name: "Form folder", description: "" }),
    );
    const iago = server.creds.users.iago!;
    const response = await fetch(
      `${server.baseUrl}/api/v1/channel_folders/${id}?is_archived=true`,
      {
        method: "PATCH",
        headers: {
          Authorization: "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: "description=Kept+for+later",
      },
    );
    expect(response.status).toBe(200);
    expect((await list("hamlet", true)).find((f) => f.id === id)).toMatchObject({
      is_archived: true,
      description: "Kept for later",
    });
  });

  it("register carries every folder", async () => {
    const state = (await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["channel_folder"] } }),
    )) as any;
    expect(state.channel_folders.map((f: any) => f.name)).toEqual(
      expect.arrayContaining(["Frontend", "Backend"]),
    );
  });
});

describe("PATCH /channel_folders", () => {
  const allIds = async () => (await list("iago", true)).map((f) => f.id);
  const reorder = (as: string, order: number[]) =>
    server.as(as).PATCH("/channel_folders", { body: { order } });

  it("reorders every folder, archived ones too, and tells everyone with the list as sent", async () => {
    await expectSuccess(create("iago", { name: "Reorder A", description: "" }));
    const { channel_folder_id: archived } = await expectSuccess(
      create("iago", { name: "Reorder B", description: "" }),
    );
    await expectSuccess(update("iago", archived, { is_archived: true }));
    const queue = await openQueue(asUser(server, "hamlet"), { event_types: ["channel_folder"] });
    const reversed = (await allIds()).reverse();
    // An ID of no folder is ignored, and stays in the event.
    const sent = [...reversed, 99999];
    await expectSuccess(reorder("iago", sent));
    expect(await allIds()).toEqual(reversed);
    const listed = await list("hamlet", true);
    expect(listed.map((f) => f.order)).toEqual(reversed.map((_, i) => i));
    expect(await queue.nextEvents()).toEqual([
      { id: expect.any(Number), type: "channel_folder", op: "reorder", order: sent },
    ]);
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["channel_folder"] } }),
    );
    expect(state.channel_folders!.map((f) => f.id)).toEqual(reversed);
  });

  it("refuses non-administrators and a list missing a folder, changing nothing", async () => {
    const before = await allIds();
    await expectError(
      reorder("hamlet", [...before].reverse()),
      400,
      "Must be an organization administrator",
    );
    await expectError(reorder("iago", before.slice(1)), 400, "Invalid order mapping.");
    await expectError(
      server.as("iago").PATCH("/channel_folders", { body: untyped({}) }),
      400,
      "Missing 'order' argument",
    );
    expect(await allIds()).toEqual(before);
  });

  it("takes order as JSON text in a form body and in zulip-js's query string", async () => {
    const iago = server.creds.users.iago!;
    const send = (query: string, body: string) =>
      fetch(`${server.baseUrl}/api/v1/channel_folders${query}`, {
        method: "PATCH",
        headers: {
          Authorization: "Basic " + Buffer.from(`${iago.email}:${iago.api_key}`).toString("base64"),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body,
      });
    const ids = await allIds();
    const swapped = [...ids.slice(1), ids[0]!];
    expect((await send("", `order=${encodeURIComponent(JSON.stringify(swapped))}`)).status).toBe(
      200,
    );
    expect(await allIds()).toEqual(swapped);
    expect((await send(`?order=${encodeURIComponent(JSON.stringify(ids))}`, "")).status).toBe(200);
    expect(await allIds()).toEqual(ids);
  });
});
