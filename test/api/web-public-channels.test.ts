/**
 * Web-public channels, on a server with WEB_PUBLIC_STREAMS_ENABLED: the organization's spectator
 * access and can_create_web_public_channel_group decide; guests see them without subscribing.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { createChannel } from "../helpers/builders.ts";

const server = useTestServer({ webPublicStreamsEnabled: true });
const create = (as: string, body: Parameters<typeof createChannel>[1]) =>
  server.as(as).POST("/channels/create", { body: { subscribers: [], ...body } });

describe("web-public channels", () => {
  it("need the organization's spectator access and can_create_web_public_channel_group (owners by default)", async () => {
    await expectError(
      create("desdemona", { name: "open to all", is_web_public: true }),
      400,
      "Web-public channels are not enabled.",
    );
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { enableSpectatorAccess: true },
    });
    await expectError(
      create("iago", { name: "open to all", is_web_public: true }),
      400,
      "Insufficient permission",
    );
    const { id } = await expectSuccess(
      create("desdemona", { name: "open to all", is_web_public: true, description: "" }),
    );
    const { stream } = await expectSuccess(
      server.as("polonius").GET("/streams/{stream_id}", { params: { path: { stream_id: id } } }),
    );
    expect(stream).toMatchObject({
      is_web_public: true,
      invite_only: false,
      history_public_to_subscribers: true,
    });
    const { streams } = await expectSuccess(
      server.as("polonius").GET("/streams", { params: { query: { include_web_public: true } } }),
    );
    expect(streams.map((s) => s.name)).toContain("open to all");
    const [notice] = (
      await expectSuccess(
        server.as("desdemona").GET("/messages", {
          params: {
            query: {
              anchor: "newest",
              num_before: 1,
              num_after: 0,
              narrow: [
                { operator: "channel", operand: "open to all" },
                { operator: "topic", operand: "channel events" },
              ],
            },
          },
        }),
      )
    ).messages;
    expect(notice!.content).toContain("<strong>Web-public</strong> channel created by");
    expect(notice!.content).toContain("<em>No description.</em>");
  });

  it("makes a default channel for administrators, with the default_streams event", async () => {
    const queue = (
      await expectSuccess(
        server.as("hamlet").POST("/register", { body: { event_types: ["default_streams"] } }),
      )
    ).queue_id!;
    const { id } = await expectSuccess(
      create("iago", { name: "for everyone", is_default_stream: true }),
    );
    const events = (
      await expectSuccess(
        server.as("hamlet").GET("/events", {
          params: { query: { queue_id: queue, last_event_id: -1, dont_block: true } },
        }),
      )
    ).events as any[];
    expect(events.find((e) => e.type === "default_streams")?.default_streams).toContain(id);
    const { streams } = await expectSuccess(
      server.as("hamlet").GET("/streams", {
        params: {
          query: { include_public: false, include_subscribed: false, include_default: true },
        },
      }),
    );
    expect(streams.map((s) => s.stream_id)).toEqual([id]);
  });
});
