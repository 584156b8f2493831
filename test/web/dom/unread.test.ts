/**
 * The unread counts (web/src/state/unread.ts): added up by conversation (a topic's spellings
 * together, muted topics and channels out of the total), and left as they are, not computed
 * again over every unread message, when a fetched message was already known unread.
 */
import { describe, expect, it } from "vitest";

// user-topics.ts reaches the API client, which reads the page's CSRF token and origin.
Object.assign(globalThis, {
  document: { querySelector: () => null },
  location: { origin: "http://localhost", href: "http://localhost/" },
});
const { counts, markRead, noteMessage, resetUnread } =
  await import("../../../web/src/state/unread.ts");
const { userTopics, MUTED, UNMUTED } = await import("../../../web/src/state/user-topics.ts");
const { subscriptions } = await import("../../../web/src/state/model.ts");
type Msg = import("../../../web/src/types.ts").Msg;
type Subscription = import("../../../web/src/types.ts").Subscription;

const ME = 8;
const streamMsg = (id: number, streamId: number, topic: string, flags: string[] = []) =>
  ({ id, type: "stream", stream_id: streamId, subject: topic, flags }) as unknown as Msg;

describe("unread counts", () => {
  it("adds up by conversation, a topic's spellings together, mutes out of the total", () => {
    subscriptions.value = new Map([
      [1, { stream_id: 1, name: "Verona", is_muted: false } as Subscription],
      [2, { stream_id: 2, name: "Denmark", is_muted: true } as Subscription],
    ]);
    userTopics.value = new Map([
      ["1:muted", MUTED],
      ["2:unmuted here", UNMUTED],
    ]);
    resetUnread(
      {
        streams: [
          { stream_id: 1, topic: "Lunch", unread_message_ids: [10, 12] },
          { stream_id: 1, topic: "lunch", unread_message_ids: [15] },
          { stream_id: 1, topic: "muted", unread_message_ids: [11] },
          { stream_id: 2, topic: "anything", unread_message_ids: [13, 14] },
          { stream_id: 2, topic: "Unmuted here", unread_message_ids: [16] },
        ],
        pms: [{ other_user_id: 9, unread_message_ids: [20, 21] }],
        huddles: [{ user_ids_string: "8,9,10", unread_message_ids: [22] }],
        mentions: [12],
      },
      ME,
    );
    const c = counts.value;
    // 3 Lunch + 1 unmuted topic of the muted channel + 3 DMs.
    expect(c.total).toBe(7);
    expect(c.mentions).toBe(1);
    expect(c.byStream.get(1)).toBe(4);
    expect(c.byStream.get(2)).toBe(3);
    expect(c.byTopic.get(1)?.get("lunch")).toEqual({ topic: "Lunch", count: 3, maxId: 15 });
    expect(c.byTopic.get(1)?.get("muted")).toEqual({ topic: "muted", count: 1, maxId: 11 });
    expect(c.byDm.get("8,9")).toBe(2);
    expect(c.byDm.get("8,9,10")).toBe(1);
    expect(c.dmTotal).toBe(3);

    // A fetched message already known unread changes nothing: the same counts, not recomputed.
    noteMessage(streamMsg(10, 1, "Lunch"));
    expect(counts.value).toBe(c);
    // A new one, or one now mentioning me, does.
    noteMessage(streamMsg(30, 1, "LUNCH"));
    expect(counts.value.byTopic.get(1)?.get("lunch")).toEqual({
      topic: "Lunch",
      count: 4,
      maxId: 30,
    });
    expect(counts.value.total).toBe(8);
    noteMessage(streamMsg(15, 1, "lunch", ["mentioned"]));
    expect(counts.value.mentions).toBe(2);
    markRead([10, 11, 30]);
    expect(counts.value.byStream.get(1)).toBe(2);
    // The topic's newest unread was read: the next newest is its newest now.
    expect(counts.value.byTopic.get(1)?.get("lunch")).toEqual({
      topic: "Lunch",
      count: 2,
      maxId: 15,
    });
    expect(counts.value.byTopic.get(1)?.has("muted")).toBe(false);
    expect(counts.value.total).toBe(6);
    // The newest of a conversation read, others of it still unread: the next newest is found.
    noteMessage(streamMsg(31, 1, "Lunch"));
    noteMessage(streamMsg(32, 1, "Lunch"));
    expect(counts.value.byTopic.get(1)?.get("lunch")?.maxId).toBe(32);
    markRead([32]);
    expect(counts.value.byTopic.get(1)?.get("lunch")).toEqual({
      topic: "Lunch",
      count: 3,
      maxId: 31,
    });
  });
});
