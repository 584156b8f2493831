/** The shared test builders (test/helpers/builders.ts), as test/README.md shows them. */
import { describe, expect, it } from "vitest";
import {
  asUser,
  createChannel,
  ofType,
  openQueue,
  RefusedError,
  sendDirect,
  sendToChannel,
} from "../helpers/builders.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

describe("test builders", () => {
  it("send to a channel and directly, seen by a queue's nextEvents with the spec's event types", async () => {
    const hamlet = asUser(server, "hamlet");
    const queue = await openQueue(asUser(server, "othello"), { event_types: ["message"] });
    const { id } = await sendToChannel(hamlet, { to: "Verona", topic: "t", content: "x" });
    const dm = await sendDirect(hamlet, {
      to: [server.creds.users.othello!.user_id],
      content: "y",
    });
    const messages = ofType(await queue.nextEvents(), "message");
    expect(messages.map((e) => [e.message.id, e.message.content])).toEqual([
      [id, "x"],
      [dm.id, "y"],
    ]);
    // Read events are acknowledged: the next read has only what came after.
    expect(await queue.nextEvents()).toEqual([]);
    expect(await queue.allEvents()).toEqual([]);
  });

  it("createChannel, then a refusal thrown with Zulip's status and msg", async () => {
    const iago = asUser(server, "iago");
    const { id } = await createChannel(iago, { name: "builders", invite_only: true });
    expect(id).toBeGreaterThan(0);
    const refused = await sendToChannel(asUser(server, "hamlet"), {
      to: "builders",
      topic: "t",
      content: "x",
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RefusedError);
    expect(refused).toMatchObject({
      status: 400,
      code: "BAD_REQUEST",
      message: "/api/v1/messages: 400 Not authorized to send to channel 'builders'",
    });
    expect(() => asUser(server, "nobody")).toThrow("No user 'nobody'");
  });
});
