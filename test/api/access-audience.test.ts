/**
 * Who hears of an action on a message follows who may read it (lib/access/messages.ts, the
 * channel rule turned round), including the content-group path: a user in a private channel's
 * can_subscribe_group reads its messages without a subscription, so once they have a
 * user_message row for one (here, by starring it) they hear of its reactions and its deletion;
 * and a message moved into such a channel is not taken from them (update_message, not
 * delete_message).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { queueOf } from "../helpers/event-queue.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();
const id = (name: string) => server.creds.users[name]!.user_id;

async function createChannel(name: string, settings: Record<string, unknown>) {
  return (
    await expectSuccess(
      server.as("desdemona").POST("/channels/create", { body: { name, ...settings } as never }),
    )
  ).id;
}
const send = async (to: number, content: string) =>
  (
    await expectSuccess(
      server.as("desdemona").POST("/messages", {
        body: { type: "channel", to, topic: "audience", content } as never,
      }),
    )
  ).id;
const star = (as: string, messageId: number) =>
  expectSuccess(
    server.as(as).POST("/messages/flags", {
      body: { messages: [messageId], op: "add", flag: "starred" } as never,
    }),
  );
const hamletOnly = () => ({
  can_subscribe_group: { direct_members: [id("hamlet")], direct_subgroups: [] },
});

describe("the audience of an action on a message includes its content-group readers", () => {
  let shared: number;
  beforeAll(async () => {
    shared = await createChannel("audience shared", {
      subscribers: [id("desdemona"), id("othello")],
      invite_only: true,
      history_public_to_subscribers: true,
      ...hamletOnly(),
    });
  });

  it("reactions and deletions reach a can_subscribe_group member with a row", async () => {
    const messageId = await send(shared, "react here");
    // hamlet may read it (content group, shared history): starring gives him a row; aaron may not.
    await star("hamlet", messageId);
    expect(
      (
        await server.as("aaron").POST("/messages/flags", {
          body: { messages: [messageId], op: "add", flag: "starred" } as never,
        })
      ).error,
    ).toBeDefined();
    const hamlet = await queueOf(server, "hamlet", ["reaction", "delete_message"]);
    const aaron = await queueOf(server, "aaron", ["reaction", "delete_message"]);
    const othello = await queueOf(server, "othello", ["reaction", "delete_message"]);

    await expectSuccess(
      server.as("othello").POST("/messages/{message_id}/reactions", {
        params: { path: { message_id: messageId } },
        body: { emoji_name: "smile" } as never,
      }),
    );
    await expectSuccess(
      server.as("desdemona").DELETE("/messages/{message_id}", {
        params: { path: { message_id: messageId } },
      }),
    );
    const types = async (read: () => Promise<any[]>) =>
      (await read()).map((e) => `${e.type}${e.op ? `:${e.op}` : ""}`);
    expect(await types(hamlet)).toEqual(["reaction:add", "delete_message"]);
    expect(await types(othello)).toEqual(["reaction:add", "delete_message"]);
    expect(await types(aaron)).toEqual([]);
  });

  it("a message moved into a channel whose can_subscribe_group holds a user stays theirs", async () => {
    const from = await createChannel("audience from", {
      subscribers: [id("desdemona"), id("hamlet"), id("cordelia")],
    });
    const messageId = await send(from, "move me");
    const hamlet = await queueOf(server, "hamlet", ["update_message", "delete_message"]);
    const cordelia = await queueOf(server, "cordelia", ["update_message", "delete_message"]);
    await expectSuccess(
      server.as("desdemona").PATCH("/messages/{message_id}", {
        params: { path: { message_id: messageId } },
        body: { stream_id: shared, propagate_mode: "change_one" } as never,
      }),
    );
    // hamlet (in the target's can_subscribe_group) may still read it; cordelia may not.
    expect((await hamlet()).map((e) => e.type)).toEqual(["update_message"]);
    expect((await cordelia()).map((e) => e.type)).toEqual(["delete_message"]);
    await expectSuccess(
      server.as("hamlet").GET("/messages/{message_id}", {
        params: { path: { message_id: messageId } },
      }),
    );
  });
});
