/**
 * What Zulip's mobile app (zulip-flutter) sends and decodes: register with its
 * client_capabilities (form body, JSON text for the object, as lib/api/core.dart encodes it),
 * the emoji data at `server_emoji_data_url` (lib/model/emoji.dart ServerEmojiData), polls voted on
 * through POST /submessage (lib/api/route/submessage.dart), logging out (remove_client_device), …
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

// Queues nobody polls for 3 s are collected (Zulip's 10 minutes, shortened): long enough for
// the tests' own polls, short enough to see a queue outlive it.
const server = useTestServer({}, { events: { idleQueueMs: 3000 } });

/** zulip-flutter's ApiConnection: a form body, lists and objects as JSON text. */
async function flutter(method: string, path: string, as: string, fields: Record<string, unknown>) {
  const c = server.creds.users[as]!;
  const body = new URLSearchParams(
    Object.entries(fields).map(([k, v]): [string, string] => [
      k,
      typeof v === "string" ? v : JSON.stringify(v),
    ]),
  ).toString();
  const res = await fetch(`${server.baseUrl}/api/v1/${path}`, {
    method,
    headers: {
      Authorization: "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64"),
      "Content-Type": "application/x-www-form-urlencoded",
      "User-Agent": "ZulipFlutter/30.0.263 (Android 14)",
    },
    body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** lib/api/route/events.dart registerQueue. */
const registerAsFlutter = (as: string) =>
  flutter("POST", "register", as, {
    apply_markdown: true,
    slim_presence: true,
    client_capabilities: {
      notification_settings_null: true,
      bulk_message_deletion: true,
      user_avatar_url_field_optional: true,
      stream_typing_notifications: true,
      user_settings_object: true,
      empty_topic_name: true,
      include_deactivated_groups: true,
      archived_channels: true,
    },
  });

describe("emoji data (server_emoji_data_url)", () => {
  it("is an absolute URL serving code_to_names that agrees with what reactions accept", async () => {
    const { status, body: state } = await registerAsFlutter("hamlet");
    expect(status).toBe(200);
    const named = new URL(state.server_emoji_data_url as string);
    expect(named.origin).toBe(new URL(state.realm_url as string).origin);
    // The realm's host (EXTERNAL_HOST) is not resolvable here: the same path on the test server.
    const url = new URL(named.pathname, server.baseUrl);
    // No credentials: a plain GET, as the app's HTTP client fetches it.
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toContain("immutable");
    const etag = res.headers.get("etag")!;
    const data = (await res.json()) as { code_to_names: Record<string, string[]> };
    // ServerEmojiData.fromJson: a map of code → non-empty list of names.
    for (const [code, names] of Object.entries(data.code_to_names)) {
      expect(code).toMatch(/^[0-9a-f]+(-[0-9a-f]+)*$/);
      expect(names.length).toBeGreaterThan(0);
    }
    expect(data.code_to_names["1f642"]?.[0]).toBe("smile");
    expect(data.code_to_names["1f44d"]).toContain("+1");
    // Each name listed reacts as that code; a sample of the table, first names and aliases.
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "channel", to: "Verona", topic: "emoji data", content: "react" },
      }),
    );
    const sample = Object.entries(data.code_to_names).filter((_, i) => i % 800 === 0);
    sample.push(["1f44d", data.code_to_names["1f44d"]!]);
    for (const [code, names] of sample)
      for (const name of names) {
        await expectSuccess(
          server.as("hamlet").POST("/messages/{message_id}/reactions", {
            params: { path: { message_id: id } },
            body: { emoji_name: name, emoji_code: code, reaction_type: "unicode_emoji" },
          }),
        );
        await expectSuccess(
          server.as("hamlet").DELETE("/messages/{message_id}/reactions", {
            params: { path: { message_id: id } },
            body: { emoji_name: name, emoji_code: code, reaction_type: "unicode_emoji" },
          }),
        );
      }
    // Revalidation: the same ETag is a 304; another hash is not this file.
    const again = await fetch(url, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    const stale = await fetch(new URL("/static/generated/emoji/emoji_api.0123abcd.json", url));
    expect(stale.status).toBe(404);
  });
});

describe("long-lived queues (idle_queue_timeout)", () => {
  it("keeps a queue registered with a long timeout past the default idle timeout", async () => {
    const short = await registerAsFlutter("hamlet");
    const long = await flutter("POST", "register", "hamlet", {
      fetch_event_types: ["realm"],
      idle_queue_timeout: "mobile",
    });
    const week = await flutter("POST", "register", "hamlet", {
      fetch_event_types: ["realm"],
      idle_queue_timeout: 30 * 24 * 3600,
    });
    expect(short.body.idle_queue_timeout_secs).toBe(3);
    expect(long.body.idle_queue_timeout_secs).toBe(12 * 3600);
    // Longer than Zulip's MAX_QUEUE_TIMEOUT_SECS is the maximum.
    expect(week.body.idle_queue_timeout_secs).toBe(7 * 24 * 3600);
    // Two collection ticks past the default timeout, with no poll.
    await new Promise((r) => setTimeout(r, 7500));
    const poll = (queue_id: string) =>
      server.as("hamlet").GET("/events", {
        params: { query: { queue_id, last_event_id: -1, dont_block: true } },
      });
    await expectError(
      poll(short.body.queue_id as string),
      400,
      `Bad event queue ID: ${short.body.queue_id}`,
    );
    await expectSuccess(poll(long.body.queue_id as string));
    await expectSuccess(poll(week.body.queue_id as string));
  });

  it('refuses a timeout that is not a positive number of seconds or "mobile"', async () => {
    for (const value of ["0", "-5", "desktop", "1.5"]) {
      const { status, body } = await flutter("POST", "register", "hamlet", {
        idle_queue_timeout: value,
      });
      expect(status).toBe(400);
      expect(body.result).toBe("error");
    }
  });
});

describe("a poll, voted on as zulip-flutter votes (lib/api/route/submessage.dart)", () => {
  it("the /poll message's widget, a vote through POST /submessage, the event in a second queue and GET /messages", async () => {
    const watcher = await registerAsFlutter("othello");
    expect(watcher.status).toBe(200);
    const sent = await flutter("POST", "messages", "hamlet", {
      type: "stream",
      to: server.creds.channels.Verona!.stream_id,
      topic: "flutter poll",
      content: "/poll Lunch?\nPizza\nSalad",
    });
    const messageId = sent.body.id as number;
    // zulip-flutter's PollWidget: the option key is "canned,<index>" for the question's options.
    const vote = { type: "vote", key: "canned,1", vote: 1 };
    const voted = await flutter("POST", "submessage", "cordelia", {
      message_id: messageId,
      msg_type: "widget",
      content: JSON.stringify(vote),
    });
    expect(voted).toEqual({ status: 200, body: { result: "success", msg: "" } });

    const { events } = await expectSuccess(
      server.as("othello").GET("/events", {
        params: { query: { queue_id: watcher.body.queue_id, last_event_id: -1, dont_block: true } },
      }),
    );
    const message = events.find((e) => e.type === "message");
    expect(
      message?.type === "message" && JSON.parse(message.message.submessages[0]!.content),
    ).toEqual({
      widget_type: "poll",
      extra_data: { question: "Lunch?", options: ["Pizza", "Salad"] },
    });
    expect(events.filter((e) => e.type === "submessage")).toEqual([
      {
        id: expect.any(Number),
        type: "submessage",
        msg_type: "widget",
        message_id: messageId,
        submessage_id: expect.any(Number),
        sender_id: server.creds.users.cordelia!.user_id,
        content: JSON.stringify(vote),
      },
    ]);
    const { messages } = await expectSuccess(
      server.as("othello").GET("/messages", {
        params: { query: { anchor: messageId, num_before: 0, num_after: 0 } },
      }),
    );
    expect(messages[0]!.submessages.map((s) => [s.sender_id, s.msg_type])).toEqual([
      [server.creds.users.hamlet!.user_id, "widget"],
      [server.creds.users.cordelia!.user_id, "widget"],
    ]);
    expect(JSON.parse(messages[0]!.submessages[1]!.content)).toEqual(vote);
  });
});

describe("logging out as zulip-flutter does", () => {
  it("removes its device (POST /remove_client_device) and its queue; the device is gone", async () => {
    const device = await flutter("POST", "register_client_device", "iago", {});
    expect(device.status).toBe(200);
    const queue = await registerAsFlutter("iago");
    const other = await registerAsFlutter("iago");
    const removed = await flutter("POST", "remove_client_device", "iago", {
      device_id: device.body.device_id,
    });
    expect(removed).toEqual({ status: 200, body: { result: "success", msg: "" } });
    const deleted = await flutter(
      "DELETE",
      `events?queue_id=${encodeURIComponent(queue.body.queue_id)}`,
      "iago",
      {},
    );
    expect(deleted.status).toBe(200);
    await expectError(
      server.as("iago").GET("/events", {
        params: { query: { queue_id: queue.body.queue_id, last_event_id: -1, dont_block: true } },
      }),
      400,
      `Bad event queue ID: ${queue.body.queue_id}`,
    );
    // The user's other clients hear of it, and the device can no longer be removed.
    const { events } = await expectSuccess(
      server.as("iago").GET("/events", {
        params: { query: { queue_id: other.body.queue_id, last_event_id: -1, dont_block: true } },
      }),
    );
    expect(events.filter((e) => e.type === "device")).toEqual([
      { id: expect.any(Number), type: "device", op: "remove", device_id: device.body.device_id },
    ]);
    const again = await flutter("POST", "remove_client_device", "iago", {
      device_id: device.body.device_id,
    });
    expect(again).toMatchObject({ status: 400, body: { msg: "Invalid `device_id`" } });
  });
});
