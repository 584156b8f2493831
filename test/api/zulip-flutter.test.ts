/**
 * What Zulip's mobile app (zulip-flutter) sends and decodes: register with its
 * client_capabilities (form body, JSON text for the object, as lib/api/core.dart encodes it),
 * the emoji data at `server_emoji_data_url` (lib/model/emoji.dart ServerEmojiData), …
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
