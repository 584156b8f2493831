/**
 * The start-up of Zulip's own clients, replayed: their POST /register as they encode it, then
 * every field their start-up reads, with the type they decode it as.
 *
 * - zulip-flutter (the mobile app), lib/api/route/events.dart registerQueue and the
 *   non-nullable fields of lib/api/model/initial_snapshot.g.dart and model.g.dart (commit
 *   e989e4f6): ApiConnection.post sends each parameter JSON-encoded in a form body.
 * - zulip-terminal, zulipterminal/model.py (commit 97007b4b): Model.__init__ registers through
 *   python-zulip-api (form body, non-strings JSON-encoded) with its initial_data_to_fetch and
 *   event_actions, then reads the fields listed below (helper.py classify_unread_counts too).
 */
import { describe, expect, it } from "vitest";
import { checkResponse } from "../helpers/spec-check.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer();

/** POST /register with a form body exactly as the client writes it. */
async function registerAs(as: string, fields: Record<string, string>) {
  const c = server.creds.users[as]!;
  const url = `${server.baseUrl}/api/v1/register`;
  const response = await fetch(url, {
    method: "POST",
    headers: {
      Authorization: "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64"),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams(fields).toString(),
  });
  const body = (await response.json()) as Record<string, any>;
  expect(checkResponse("POST", url, response.status, body)).toBeNull();
  expect(response.status).toBe(200);
  return body;
}

type Kind = "num" | "String" | "bool" | "List" | "Map";
const isKind = (value: unknown, kind: Kind) =>
  kind === "num"
    ? typeof value === "number"
    : kind === "String"
      ? typeof value === "string"
      : kind === "bool"
        ? typeof value === "boolean"
        : kind === "List"
          ? Array.isArray(value)
          : value !== null && typeof value === "object" && !Array.isArray(value);

/** Each field the client reads, with the type it decodes; returns the problems. */
function problems(where: string, value: Record<string, unknown>, fields: [string, Kind][]) {
  return fields
    .filter(([key, kind]) => !isKind(value[key], kind))
    .map(([key, kind]) => `${where}.${key}: expected ${kind}, got ${JSON.stringify(value[key])}`);
}

// zulip-flutter: the fields InitialSnapshot.fromJson and the nested fromJson decode without `?`.
const FLUTTER_SNAPSHOT: [string, Kind][] = [
  ["last_event_id", "num"],
  ["zulip_feature_level", "num"],
  ["zulip_version", "String"],
  ["zulip_merge_base", "String"],
  ["alert_words", "List"],
  ["custom_profile_fields", "List"],
  ["max_stream_name_length", "num"],
  ["max_topic_length", "num"],
  ["server_presence_ping_interval_seconds", "num"],
  ["server_presence_offline_threshold_seconds", "num"],
  ["muted_users", "List"],
  ["presences", "Map"],
  ["realm_emoji", "Map"],
  ["realm_user_groups", "List"],
  ["recent_private_conversations", "List"],
  ["subscriptions", "List"],
  ["unread_msgs", "Map"],
  ["starred_messages", "List"],
  ["streams", "List"],
  ["user_status", "Map"],
  ["user_settings", "Map"],
  ["user_topics", "List"],
  ["realm_wildcard_mention_policy", "num"],
  ["realm_name", "String"],
  ["realm_waiting_period_threshold", "num"],
  ["realm_allow_message_editing", "bool"],
  ["realm_enable_read_receipts", "bool"],
  ["realm_icon_url", "String"],
  ["realm_presence_disabled", "bool"],
  ["realm_default_external_accounts", "Map"],
  ["max_file_upload_size_mib", "num"],
  ["server_emoji_data_url", "String"],
  ["event_queue_longpoll_timeout_seconds", "num"],
  ["realm_users", "List"],
  ["realm_non_active_users", "List"],
  ["cross_realm_bots", "List"],
];
const FLUTTER_USER_SETTINGS: [string, Kind][] = [
  ["starred_message_counts", "bool"],
  ["display_emoji_reaction_users", "bool"],
  ["emojiset", "String"],
  ["presence_enabled", "bool"],
];
const FLUTTER_UNREAD: [string, Kind][] = [
  ["count", "num"],
  ["pms", "List"],
  ["streams", "List"],
  ["huddles", "List"],
  ["mentions", "List"],
  ["old_unreads_missing", "bool"],
];
const FLUTTER_USER: [string, Kind][] = [
  ["user_id", "num"],
  ["email", "String"],
  ["full_name", "String"],
  ["date_joined", "String"],
  ["is_active", "bool"],
  ["is_bot", "bool"],
  ["role", "num"],
  ["timezone", "String"],
  ["avatar_version", "num"],
];
const FLUTTER_CHANNEL: [string, Kind][] = [
  ["stream_id", "num"],
  ["name", "String"],
  ["description", "String"],
  ["rendered_description", "String"],
  ["date_created", "num"],
  ["invite_only", "bool"],
  ["is_web_public", "bool"],
  ["history_public_to_subscribers", "bool"],
];
const FLUTTER_SUBSCRIPTION: [string, Kind][] = [
  ...FLUTTER_CHANNEL,
  ["pin_to_top", "bool"],
  ["is_muted", "bool"],
  ["color", "String"],
];
const FLUTTER_GROUP: [string, Kind][] = [
  ["id", "num"],
  ["members", "List"],
  ["direct_subgroup_ids", "List"],
  ["name", "String"],
  ["description", "String"],
  ["is_system_group", "bool"],
];
/** Flutter's enums: values outside the map fail to decode. */
const WILDCARD_MENTION_POLICIES = [1, 2, 3, 5, 6, 7];
const EMOJISETS = ["google", "google-blob", "twitter", "text"];

describe("zulip-flutter start-up", () => {
  it("registers as the app does and decodes every field it requires", async () => {
    // Seed what the decoders walk: a DM conversation and a group DM, so lists are not empty.
    const hamletId = server.creds.users.hamlet!.user_id;
    await server.as("othello").POST("/messages", {
      body: { type: "private", to: `[${hamletId}]`, content: "start-up" },
    });
    const state = await registerAs("hamlet", {
      apply_markdown: "true",
      client_gravatar: "false",
      slim_presence: "true",
      client_capabilities: JSON.stringify({
        notification_settings_null: true,
        bulk_message_deletion: true,
        user_avatar_url_field_optional: true,
        stream_typing_notifications: true,
        user_settings_object: true,
        include_deactivated_groups: true,
        empty_topic_name: true,
        individual_emoji_changes: true,
      }),
    });
    const found = [
      ...problems("state", state, FLUTTER_SNAPSHOT),
      ...problems("user_settings", state.user_settings, FLUTTER_USER_SETTINGS),
      ...problems("unread_msgs", state.unread_msgs, FLUTTER_UNREAD),
      ...state.unread_msgs.pms.flatMap((p: any) =>
        problems("pms[]", p, [
          ["other_user_id", "num"],
          ["unread_message_ids", "List"],
        ]),
      ),
      ...state.unread_msgs.streams.flatMap((s: any) =>
        problems("streams[]", s, [
          ["topic", "String"],
          ["stream_id", "num"],
          ["unread_message_ids", "List"],
        ]),
      ),
      ...["realm_users", "realm_non_active_users", "cross_realm_bots"].flatMap((key) =>
        state[key].flatMap((u: any) => problems(`${key}[]`, u, FLUTTER_USER)),
      ),
      ...state.subscriptions.flatMap((s: any) =>
        problems("subscriptions[]", s, FLUTTER_SUBSCRIPTION),
      ),
      ...state.streams.flatMap((s: any) => problems("streams[]", s, FLUTTER_CHANNEL)),
      ...state.realm_user_groups.flatMap((g: any) =>
        problems("realm_user_groups[]", g, FLUTTER_GROUP),
      ),
      ...state.recent_private_conversations.flatMap((c: any) =>
        problems("recent_private_conversations[]", c, [
          ["max_message_id", "num"],
          ["user_ids", "List"],
        ]),
      ),
    ];
    expect(found).toEqual([]);
    expect(WILDCARD_MENTION_POLICIES).toContain(state.realm_wildcard_mention_policy);
    expect(EMOJISETS).toContain(state.user_settings.emojiset);
    // Uri.parse must accept them.
    for (const key of ["realm_icon_url", "server_emoji_data_url"])
      expect(() => new URL(state[key], "http://x")).not.toThrow();
    expect(state.unread_msgs.pms.length).toBeGreaterThan(0);
    expect(state.recent_private_conversations.length).toBeGreaterThan(0);
  });
});

describe("zulip-terminal start-up", () => {
  const INITIAL_DATA_TO_FETCH = [
    "realm",
    "presence",
    "subscription",
    "message",
    "starred_messages",
    "update_message_flags",
    "muted_topics",
    "realm_user",
    "realm_user_groups",
    "user_settings",
    "realm_emoji",
    "custom_profile_fields",
    "zulip_version",
  ];
  const EVENT_ACTIONS = [
    "message",
    "update_message",
    "reaction",
    "submessage",
    "subscription",
    "typing",
    "update_message_flags",
    "user_settings",
    "realm_emoji",
    "realm_user",
  ];
  // python-zulip-api's register(): narrow defaults to [], every non-string JSON-encoded.
  const registerBody = (fetch: string[] | null) => ({
    event_types: JSON.stringify(EVENT_ACTIONS),
    narrow: "[]",
    fetch_event_types: JSON.stringify(fetch),
    client_gravatar: "true",
    apply_markdown: "true",
    include_subscribers: "true",
  });

  it("registers with its fetch types and finds every field Model.__init__ reads", async () => {
    const data = await registerAs("hamlet", registerBody(INITIAL_DATA_TO_FETCH));
    const found = problems("initial_data", data, [
      ["zulip_version", "String"],
      ["zulip_feature_level", "num"],
      ["presences", "Map"],
      ["realm_users", "List"],
      ["cross_realm_bots", "List"],
      ["subscriptions", "List"],
      ["realm_message_retention_days", "num"],
      ["muted_topics", "List"],
      ["realm_user_groups", "List"],
      ["unread_msgs", "Map"],
      ["realm_emoji", "Map"],
      ["user_settings", "Map"],
      ["starred_messages", "List"],
      ["custom_profile_fields", "List"],
      ["realm_name", "String"],
      ["realm_allow_message_editing", "bool"],
      ["realm_allow_edit_history", "bool"],
      ["user_id", "num"],
      ["email", "String"],
      ["full_name", "String"],
      ["max_message_id", "num"],
      ["queue_id", "String"],
      ["last_event_id", "num"],
    ]);
    expect(found).toEqual([]);
    // What it reads inside them.
    for (const key of [
      "send_private_typing_notifications",
      "twenty_four_hour_time",
      "pm_content_in_desktop_notifications",
    ])
      expect(data.user_settings).toHaveProperty(key);
    for (const s of data.subscriptions)
      for (const key of [
        "name",
        "stream_id",
        "color",
        "description",
        "pin_to_top",
        "is_muted",
        "desktop_notifications",
        "subscribers",
      ])
        expect(s).toHaveProperty(key);
    for (const u of [...data.realm_users, ...data.cross_realm_bots])
      for (const key of ["user_id", "email", "full_name", "is_bot"]) expect(u).toHaveProperty(key);
    for (const g of data.realm_user_groups)
      for (const key of ["id", "name", "members", "description"]) expect(g).toHaveProperty(key);
    for (const pm of data.unread_msgs.pms) expect(pm.sender_id).toBeTypeOf("number");
    for (const key of ["pms", "streams", "huddles", "mentions"])
      expect(Array.isArray(data.unread_msgs[key])).toBe(true);
    // muted_topics are [channel, topic, date muted] triples (feature level 1 on).
    for (const t of data.muted_topics) expect(t).toHaveLength(3);
    // Its presence loop reads "presences" keyed by email (no slim_presence).
    expect(Object.keys(data.presences).every((k) => k.includes("@"))).toBe(true);
  });

  it("re-registers without fetch types and still gets max_message_id, queue_id and last_event_id", async () => {
    const data = await registerAs("hamlet", registerBody(null));
    expect(
      problems("response", data, [
        ["max_message_id", "num"],
        ["queue_id", "String"],
        ["last_event_id", "num"],
      ]),
    ).toEqual([]);
  });
});
