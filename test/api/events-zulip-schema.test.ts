/**
 * One event of each type (and op) this server sends, checked against Zulip's own GET /events
 * schemas (zulip-openapi.yaml, compiled by test/helpers/zulip-spec.ts) — our spec's Event schemas
 * are checked on every response already; this checks that they say what Zulip says.
 */
import { describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { zulipEventErrors } from "../helpers/zulip-spec.ts";
import { doCreateUserWithDefaultChannels } from "../../server/actions/users/users.ts";
import type { Schemas } from "../../server/http/types.ts";
import { type Body } from "../helpers/builders.ts";

const server = useTestServer({}, { events: { heartbeatMs: 300 } });
const userId = (name: string) => server.creds.users[name]!.user_id;
const channel = (name: string) => server.creds.channels[name]!.stream_id;

/**
 * Where we knowingly differ from Zulip's level-420 schema, each with why; the events are
 * checked with these fields left out, and each difference must still occur (so the list
 * shrinks when the server changes).
 */
const KNOWN: { event: string; path: string; why: string }[] = [
  {
    event: "attachment add",
    path: "/attachment/message_ids",
    why: "feature level 472 replaced `messages` by `message_ids` (contract level 496)",
  },
  {
    event: "stream create",
    path: "/streams/*/can_create_topic_group",
    why: "new in feature level 441",
  },
  {
    event: "subscription add",
    path: "/subscriptions/*/can_create_topic_group",
    why: "new in feature level 441",
  },
  {
    event: "realm_user add",
    path: "/person/is_imported_stub",
    why: "newer than the reference's level 420",
  },
  {
    event: "stream delete",
    path: "/streams/*/name",
    why: "Zulip 420's schema lists only stream_id for deleted channels",
  },
];

/** The event without the field at `path` (`*` for every element of an array). */
function drop(event: Record<string, unknown>, path: string): Record<string, unknown> {
  const copy = structuredClone(event);
  const remove = (node: unknown, keys: string[]): void => {
    if (!node || typeof node !== "object") return;
    const [key, ...rest] = keys as [string, ...string[]];
    if (key === "*" && Array.isArray(node)) for (const item of node) remove(item, rest);
    else if (rest.length === 0) delete (node as Record<string, unknown>)[key];
    else remove((node as Record<string, unknown>)[key], rest);
  };
  remove(copy, path.split("/").slice(1));
  return copy;
}

const keyOf = (e: Schemas["Event"]) => ("op" in e ? `${e.type} ${e.op}` : e.type);

describe("events against Zulip's schema", () => {
  it("sends one event of each type with exactly Zulip's fields", async () => {
    const queues: Record<string, string> = {};
    for (const who of ["iago", "hamlet", "cordelia"])
      queues[who] = (await expectSuccess(server.as(who).POST("/register", { body: {} }))).queue_id!;

    // Messages: sent, edited, moved where cordelia may not follow (delete_message for her).
    const { id: messageId } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "schema", content: "first" },
      }),
    );
    await expectSuccess(
      server.as("hamlet").PATCH("/messages/{message_id}", {
        params: { path: { message_id: messageId } },
        body: { content: "edited" },
      }),
    );
    const created = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: {
          name: "schema private",
          subscribers: [userId("iago"), userId("hamlet")],
          invite_only: true,
        },
      }),
    );
    await expectSuccess(
      server.as("iago").PATCH("/messages/{message_id}", {
        params: { path: { message_id: messageId } },
        body: { stream_id: created.id, propagate_mode: "change_all" },
      }),
    );
    // Channels and subscriptions.
    await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: { name: "schema public", subscribers: [userId("iago")], is_default_stream: true },
      }),
    );
    await expectSuccess(
      server.as("hamlet").POST("/users/me/subscriptions/properties", {
        body: {
          subscription_data: [
            { stream_id: channel("Verona"), property: "pin_to_top", value: true },
          ],
        },
      }),
    );
    await expectSuccess(
      server.as("hamlet").DELETE("/users/me/subscriptions", {
        body: { subscriptions: ["schema private"] },
      }),
    );
    // Users and bots.
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
    await doCreateUserWithDefaultChannels(server.deps, realm, {
      email: "schema@zulip.com",
      fullName: "Schema",
      role: 400,
    });
    await expectSuccess(
      server.as("iago").PATCH("/users/{user_id}", {
        params: { path: { user_id: userId("cordelia") } },
        body: { full_name: "Cordelia Lear" },
      }),
    );
    const bot = await expectSuccess(
      server
        .as("hamlet")
        .POST("/bots", { body: { full_name: "Schema Bot", short_name: "schema" } }),
    );
    await expectSuccess(
      server.as("hamlet").PATCH("/bots/{bot_id}", {
        params: { path: { bot_id: bot.user_id } },
        // Since feature level 474 the name sends no realm_bot update; a default setting does.
        body: { full_name: "Schema Bot 2", default_all_public_streams: true },
      }),
    );
    await expectSuccess(
      server.as("hamlet").PATCH("/bots/{bot_id}", {
        params: { path: { bot_id: bot.user_id } },
        body: { bot_owner_id: userId("iago") },
      }),
    );
    // The organization, groups, folders, profile fields.
    await expectSuccess(
      server.as("iago").PATCH("/realm", { body: { message_content_edit_limit_seconds: 1200 } }),
    );
    // A property_types setting: op `update` (media_preview_size is level 469's).
    await expectSuccess(server.as("iago").PATCH("/realm", { body: { media_preview_size: 150 } }));
    // A reaction, without the `user` object since level 484.
    await expectSuccess(
      server.as("iago").POST("/messages/{message_id}/reactions", {
        params: { path: { message_id: messageId } },
        body: { emoji_name: "octopus" },
      }),
    );
    await expectSuccess(
      server.as("iago").PATCH("/realm/user_settings_defaults", { body: { enter_sends: true } }),
    );
    const group = await expectSuccess(
      server.as("iago").POST("/user_groups/create", {
        body: { name: "schema", description: "", members: [userId("hamlet")] },
      }),
    );
    const groupId = (group as { group_id: number }).group_id;
    await expectSuccess(
      server.as("iago").PATCH("/user_groups/{user_group_id}", {
        params: { path: { user_group_id: groupId } },
        body: { description: "Schema checkers" },
      }),
    );
    const memberChanges: Body<"/user_groups/{user_group_id}/members", "post">[] = [
      { add: [userId("cordelia")] },
      { delete: [userId("cordelia")] },
    ];
    for (const body of memberChanges)
      await expectSuccess(
        server.as("iago").POST("/user_groups/{user_group_id}/members", {
          params: { path: { user_group_id: groupId } },
          body: body,
        }),
      );
    const other = await expectSuccess(
      server.as("iago").POST("/user_groups/create", {
        body: { name: "schema sub", description: "", members: [] },
      }),
    );
    for (const body of [
      { add: [(other as { group_id: number }).group_id] },
      { delete: [(other as { group_id: number }).group_id] },
    ])
      await expectSuccess(
        server.as("iago").POST("/user_groups/{user_group_id}/subgroups", {
          params: { path: { user_group_id: groupId } },
          body: body,
        }),
      );
    const folder = await expectSuccess(
      server
        .as("iago")
        .POST("/channel_folders/create", { body: { name: "Schema", description: "" } }),
    );
    await expectSuccess(
      server.as("iago").PATCH("/channel_folders/{channel_folder_id}", {
        params: { path: { channel_folder_id: folder.channel_folder_id } },
        body: { description: "Folders checked" },
      }),
    );
    await expectSuccess(
      server.as("iago").PATCH("/channel_folders", { body: { order: [folder.channel_folder_id] } }),
    );
    await expectSuccess(
      server.as("iago").POST("/realm/profile_fields", {
        body: { name: "Desk", field_type: 1 },
      }),
    );
    // The user's own things.
    await expectSuccess(
      server.as("hamlet").POST("/user_topics", {
        body: { stream_id: channel("Verona"), topic: "schema", visibility_policy: 1 },
      }),
    );
    await expectSuccess(
      server.as("hamlet").POST("/users/me/status", {
        body: { status_text: "checking", away: true },
      }),
    );
    const form = new FormData();
    form.append("file", new Blob(["schema"], { type: "text/plain" }), "schema.txt");
    const { url: uploaded } = await expectSuccess(
      server.as("hamlet").POST("/user_uploads", {
        body: form,
        bodySerializer: (b: unknown) => b,
        headers: { "Content-Type": null },
      }),
    );
    const attachment = await server.db.attachment.findUniqueOrThrow({
      where: { pathId: uploaded.slice("/user_uploads/".length) },
    });
    await expectSuccess(
      server.as("hamlet").DELETE("/attachments/{attachment_id}", {
        params: { path: { attachment_id: attachment.id } },
      }),
    );
    const { scheduled_message_id } = await expectSuccess(
      server.as("hamlet").POST("/scheduled_messages", {
        body: {
          type: "stream",
          to: channel("Verona"),
          topic: "later",
          content: "soon",
          scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400,
        },
      }),
    );
    await expectSuccess(
      server.as("hamlet").PATCH("/scheduled_messages/{scheduled_message_id}", {
        params: { path: { scheduled_message_id } },
        body: { content: "later still" },
      }),
    );
    await expectSuccess(
      server.as("hamlet").DELETE("/scheduled_messages/{scheduled_message_id}", {
        params: { path: { scheduled_message_id } },
      }),
    );
    // A reminder about that message's channel, made and deleted.
    const reminded = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "channel", to: "Verona", topic: "reminded", content: "remind me" },
      }),
    );
    const { reminder_id } = await expectSuccess(
      server.as("hamlet").POST("/reminders", {
        body: {
          message_id: reminded.id,
          scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400,
        },
      }),
    );
    await expectSuccess(
      server.as("hamlet").DELETE("/reminders/{reminder_id}", {
        params: { path: { reminder_id } },
      }),
    );
    await expectSuccess(
      server.as("iago").POST("/invites", {
        body: { invitee_emails: "schema-invitee@zulip.com", stream_ids: [] },
      }),
    );
    // Typing an edit of a fresh message of hamlet's.
    const typed = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "edit typing", content: "typed" },
      }),
    );
    for (const op of ["start", "stop"] as const)
      await expectSuccess(
        server.as("hamlet").POST("/messages/{message_id}/typing", {
          params: { path: { message_id: typed.id } },
          body: { op },
        }),
      );
    // Navigation views: added, updated, removed.
    const views = server.as("iago");
    await expectSuccess(
      views.POST("/navigation_views", {
        body: { fragment: "narrow/is/alerted", is_pinned: true, name: "Alerts" },
      }),
    );
    const fragment = { path: { fragment: "narrow/is/alerted" } };
    await expectSuccess(
      views.PATCH("/navigation_views/{fragment}", { params: fragment, body: { is_pinned: false } }),
    );
    await expectSuccess(views.DELETE("/navigation_views/{fragment}", { params: fragment }));

    const received: Schemas["Event"][] = [];
    for (const [who, queue_id] of Object.entries(queues))
      received.push(
        ...(
          await expectSuccess(
            server.as(who).GET("/events", { params: { query: { queue_id, dont_block: true } } }),
          )
        ).events,
      );
    // A poll that waits gets a heartbeat.
    const last = received.filter((e) => e.id >= 0).at(-1)!.id;
    received.push(
      ...(
        await expectSuccess(
          server.as("cordelia").GET("/events", {
            params: { query: { queue_id: queues.cordelia!, last_event_id: last } },
          }),
        )
      ).events.filter((e) => e.type === "heartbeat"),
    );

    const byKey = new Map<string, Schemas["Event"]>();
    for (const e of received) if (!byKey.has(keyOf(e))) byKey.set(keyOf(e), e);
    expect([...byKey.keys()].sort()).toEqual(
      [
        "attachment add",
        "attachment remove",
        "channel_folder add",
        "channel_folder reorder",
        "channel_folder update",
        "custom_profile_fields",
        "default_streams",
        "delete_message",
        "heartbeat",
        "invites_changed",
        "message",
        "muted_topics",
        "navigation_view add",
        "navigation_view remove",
        "navigation_view update",
        "presence",
        "reaction add",
        "realm update",
        "realm update_dict",
        "realm_bot add",
        "realm_bot delete",
        "realm_bot update",
        "realm_export_consent",
        "realm_user add",
        "realm_user update",
        "realm_user_settings_defaults update",
        "reminders add",
        "reminders remove",
        "scheduled_messages add",
        "scheduled_messages remove",
        "scheduled_messages update",
        "stream create",
        "stream delete",
        "subscription add",
        "subscription peer_add",
        "subscription peer_remove",
        "subscription remove",
        "subscription update",
        "typing_edit_message start",
        "typing_edit_message stop",
        "update_message",
        "user_group add",
        "user_group add_members",
        "user_group add_subgroups",
        "user_group remove_members",
        "user_group remove_subgroups",
        "user_group update",
        "user_settings update",
        "user_status",
        "user_topic",
      ].sort(),
    );

    const problems: string[] = [];
    const unused = new Set(KNOWN);
    for (const e of received) {
      let event = e as unknown as Record<string, unknown>;
      for (const known of KNOWN.filter((k) => k.event === keyOf(e))) {
        const dropped = drop(event, known.path);
        if (JSON.stringify(dropped) !== JSON.stringify(event)) unused.delete(known);
        event = dropped;
      }
      for (const error of zulipEventErrors(event as { type: string }))
        problems.push(`${keyOf(e)}: ${error}`);
    }
    expect([...new Set(problems)]).toEqual([]);
    expect([...unused].map((k) => `${k.event} ${k.path}`)).toEqual([]);
  }, 120_000);
});
