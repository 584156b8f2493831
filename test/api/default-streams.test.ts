/**
 * POST and DELETE /default_streams (zerver/views/streams.py add_default_stream,
 * remove_default_stream; zerver/tests/test_default_channels.py): administrators only, Zulip's
 * texts, the `default_streams` event and register's `realm_default_streams` as channel IDs
 * (feature level 330).
 */
import { describe, expect, it } from "vitest";
import { asUser, createChannel, ofType, openQueue } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { realClient } from "../helpers/real-client.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const uid = (name: string) => server.creds.users[name]!.user_id;
const add = (as: string, stream_id: number) =>
  server.as(as).POST("/default_streams", { body: { stream_id } });
const remove = (as: string, stream_id: number) =>
  server.as(as).DELETE("/default_streams", { body: { stream_id } });
const defaults = async (as = "hamlet") =>
  (
    await expectSuccess(
      server.as(as).POST("/register", { body: { fetch_event_types: ["default_streams"] } }),
    )
  ).realm_default_streams;

describe("default channels", () => {
  it("adds and removes a channel, telling everyone the new list of IDs", async () => {
    const { id } = await createChannel(server.as("iago"), { name: "defaults one" });
    const queue = await openQueue(asUser(server, "cordelia"), { event_types: ["default_streams"] });
    await expectSuccess(add("iago", id));
    const [added] = ofType(await queue.nextEvents(), "default_streams");
    expect(added?.default_streams).toContain(id);
    expect(added?.default_streams.every((x) => typeof x === "number")).toBe(true);
    expect(await defaults()).toEqual(added?.default_streams);
    // Adding it again changes nothing and tells nobody.
    await expectSuccess(add("iago", id));
    expect(ofType(await queue.nextEvents(), "default_streams")).toEqual([]);
    await expectSuccess(remove("iago", id));
    const [removed] = ofType(await queue.nextEvents(), "default_streams");
    expect(removed?.default_streams).not.toContain(id);
    expect(await defaults()).not.toContain(id);
  });

  it("refuses non-administrators, private channels and unknown ones with Zulip's texts", async () => {
    const { id } = await createChannel(server.as("iago"), { name: "defaults two" });
    const notAllowed = "You do not have permission to change default channels.";
    await expectError(add("hamlet", id), 400, notAllowed);
    await expectError(remove("hamlet", id), 400, notAllowed);
    await expectError(add("iago", 987654), 400, "Invalid channel ID");
    await expectError(remove("iago", 987654), 400, "Invalid channel ID");
    const { id: secret } = await createChannel(server.as("iago"), {
      name: "defaults private",
      invite_only: true,
      subscribers: [uid("iago")],
    });
    await expectError(add("iago", secret), 400, "Private channels cannot be made default.");
    // A private channel the administrator cannot read is not there for them (access_stream_by_id).
    const { id: hidden } = await createChannel(server.as("hamlet"), {
      name: "defaults hidden",
      invite_only: true,
      subscribers: [uid("hamlet")],
    });
    await expectError(add("iago", hidden), 400, "Invalid channel ID");
    expect(await defaults()).not.toContain(id);
  });

  it("accepts a form body with the ID as JSON text (python-zulip-api, zulip-js)", async () => {
    const { id } = await createChannel(server.as("iago"), { name: "defaults form" });
    const added = await realClient(server, "iago", "POST", "/default_streams", { stream_id: id });
    expect(added).toMatchObject({ status: 200, body: { result: "success" } });
    expect(await defaults()).toContain(id);
    const removed = await realClient(server, "iago", "DELETE", "/default_streams", {
      stream_id: id,
    });
    expect(removed).toMatchObject({ status: 200, body: { result: "success" } });
    expect(await defaults()).not.toContain(id);
    const text = await realClient(server, "iago", "POST", "/default_streams", { stream_id: '"x"' });
    expect(text).toMatchObject({ status: 400, body: { msg: "stream_id is not an integer" } });
    const raw = await realClient(server, "iago", "POST", "/default_streams", { stream_id: "x" });
    expect(raw).toMatchObject({ status: 400, body: { msg: "stream_id is not valid JSON" } });
  });
});
