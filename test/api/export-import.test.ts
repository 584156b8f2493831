/**
 * Moving an organization out and in: the development organization exported in Zulip's format
 * (lib/export/export-realm.ts, a .tar.gz), imported back as a new organization on the same
 * server (actions/realm/import-zulip.ts), and the two compared through the API as their users see
 * them: register's state and the messages with their flags and reactions. Then the refusals:
 * an organization that exists, a truncated file, a reference to a user the export lacks, an
 * unknown format; each leaves nothing behind.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { doImportZulip, ImportError } from "../../server/actions/realm/import-zulip.ts";
import { unpackArchive } from "../../server/lib/export/archive.ts";
import { exportRealm } from "../../server/lib/export/export-realm.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { fetchAsHost } from "../helpers/host-fetch.ts";
import { useTestServer } from "../helpers/server.ts";
import { zulipExportFixture } from "../fixtures/zulip-export.ts";
import { slackExportFixture } from "../fixtures/slack-export.ts";
import { convertSlackExport } from "../../server/lib/export/slack.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";

const server = useTestServer();
let work: string;
let unpacked: string;
let imported: { realmId: number; stringId: string };

beforeAll(() => {
  work = mkdtempSync(join(os.tmpdir(), "export-test-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const id = (name: string) => server.creds.users[name]!.user_id;
const verona = () => server.creds.channels.Verona!.stream_id;

/** A client of the imported organization, as the user of that email there. */
async function importedAs(email: string): Promise<ZulipClient> {
  const user = await server.db.userProfile.findFirstOrThrow({
    where: { realmId: imported.realmId, deliveryEmail: email },
  });
  return createZulipClient({
    baseUrl: server.baseUrl,
    email: user.email,
    apiKey: user.apiKey,
    fetch: fetchAsHost(`${imported.stringId}.${server.deps.config.externalHost}`),
    middleware: [specCheckMiddleware],
  });
}

/** What a user sees of an organization, with ids replaced by what they name. */
async function view(client: ZulipClient) {
  const state = (await expectSuccess(
    client.POST("/register", {
      body: {
        fetch_event_types: [
          "realm",
          "realm_user",
          "subscription",
          "user_topic",
          "alert_words",
          "realm_user_groups",
          "custom_profile_fields",
          "muted_users",
        ],
        include_subscribers: true,
      },
    }),
  )) as any;
  const emailOf = new Map<number, string>(
    state.realm_users.map((u: any) => [u.user_id, u.delivery_email ?? u.email]),
  );
  const { messages } = (await expectSuccess(
    client.GET("/messages", {
      params: { query: { anchor: "newest", num_before: 1000, num_after: 0 } },
    }),
  )) as any;
  // Each channel's topics with their latest message (the database's channel_topic summary),
  // that message named by what it says.
  const said = new Map<number, string>(
    messages.map((m: any) => [m.id, `${m.timestamp} ${m.content}`]),
  );
  const channelTopics: string[] = [];
  for (const s of state.subscriptions) {
    const { topics } = (await expectSuccess(
      client.GET("/users/me/{stream_id}/topics", { params: { path: { stream_id: s.stream_id } } }),
    )) as any;
    for (const t of topics) channelTopics.push(`${s.name}|${t.name}|${said.get(t.max_id)}`);
  }
  return {
    realm: { name: state.realm_name, waiting: state.realm_waiting_period_threshold },
    channelTopics: channelTopics.sort(),
    users: state.realm_users
      .map((u: any) => `${u.delivery_email ?? u.email}|${u.full_name}|${u.role}|${u.is_bot}`)
      .sort(),
    subscriptions: state.subscriptions
      .map((s: any) => `${s.name}|${s.color}|${s.pin_to_top}|${s.is_muted}|${s.subscribers.length}`)
      .sort(),
    topics: state.user_topics.map((t: any) => `${t.topic_name}|${t.visibility_policy}`).sort(),
    alertWords: [...state.alert_words].sort(),
    groups: state.realm_user_groups
      .map(
        (g: any) =>
          `${g.name}|${g.members
            .map((m: number) => emailOf.get(m))
            .sort()
            .join(",")}`,
      )
      .sort(),
    profileFields: state.custom_profile_fields.map((f: any) => `${f.name}|${f.type}`),
    muted: state.muted_users.map((m: any) => emailOf.get(m.id)),
    messages: messages.map((m: any) => ({
      content: m.content,
      topic: m.subject,
      sender: m.sender_email,
      type: m.type,
      timestamp: m.timestamp,
      flags: [...m.flags].sort(),
      to:
        typeof m.display_recipient === "string"
          ? m.display_recipient
          : m.display_recipient.map((r: any) => r.email).sort(),
      reactions: m.reactions.map((r: any) => `${r.emoji_name}|${emailOf.get(r.user_id)}`).sort(),
    })),
  };
}

describe("export and import-zulip", () => {
  it("an exported organization imports as a new one that its users see the same: users, channels, subscriptions, groups, topics, alert words, messages with flags and reactions", async () => {
    const hamlet = server.as("hamlet");
    // Things to carry: a reaction, a star, a muted topic, an alert word, direct messages, a group.
    const { id: dm } = await expectSuccess(
      hamlet.POST("/messages", {
        body: { type: "direct", to: JSON.stringify([id("othello")]), content: "Just us **two**" },
      }),
    );
    await expectSuccess(
      hamlet.POST("/messages", {
        body: {
          type: "direct",
          to: JSON.stringify([id("othello"), id("cordelia")]),
          content: "The three of us",
        },
      }),
    );
    const { id: posted } = await expectSuccess(
      hamlet.POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "moving", content: "We are moving :tada:" },
      }),
    );
    // The same topic named otherwise by a later message: the topic takes the later name.
    await expectSuccess(
      server.as("othello").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "Moving", content: "So are we" },
      }),
    );
    await expectSuccess(
      server.as("othello").POST("/messages/{message_id}/reactions", {
        params: { path: { message_id: posted } },
        body: { emoji_name: "tada" },
      }),
    );
    await expectSuccess(
      hamlet.POST("/messages/flags", { body: { messages: [dm], op: "add", flag: "starred" } }),
    );
    await expectSuccess(
      hamlet.POST("/user_topics", {
        body: { stream_id: verona(), topic: "moving", visibility_policy: 1 },
      }),
    );
    await expectSuccess(hamlet.POST("/users/me/alert_words", { body: { alert_words: ["zebra"] } }));
    await expectSuccess(
      server.as("iago").POST("/user_groups/create", {
        body: { name: "movers", description: "They move", members: [id("hamlet"), id("iago")] },
      }),
    );
    const before = await view(hamlet);

    const realm = await server.db.realm.findFirstOrThrow({ orderBy: { id: "asc" } });
    const result = await exportRealm(server.db, realm.id, work, "zulip-export-test");
    expect(result.messages).toBe(before.messages.length);
    unpacked = join(work, "unpacked");
    await unpackArchive(result.tarball, unpacked);
    const realmJson = JSON.parse(
      readFileSync(join(unpacked, "zulip-export-test", "realm.json"), "utf8"),
    );
    // Zulip's format: foreign keys by field name, times as float seconds, flags as a mask.
    expect(realmJson.import_source).toBe("zulip");
    expect(realmJson.zerver_userprofile[0]).toHaveProperty("realm", realm.id);
    expect(typeof realmJson.zerver_userprofile[0].date_joined).toBe("number");
    const messageFile = JSON.parse(
      readFileSync(join(unpacked, "zulip-export-test", "messages-000001.json"), "utf8"),
    );
    expect(messageFile.zerver_message[0]).toHaveProperty("sender");
    expect(messageFile.zerver_usermessage[0]).toHaveProperty("flags_mask");

    const done = await doImportZulip(server.deps, unpacked, { subdomain: "imported" });
    imported = done;
    expect(done).toMatchObject({ stringId: "imported", messages: before.messages.length });
    expect(done.realmId).not.toBe(realm.id);

    const after = await view(await importedAs("hamlet@zulip.com"));
    expect(after).toEqual(before);
    // The imported organization's users are its own: a send there reaches its users only.
    const { id: sent } = await expectSuccess(
      (await importedAs("hamlet@zulip.com")).POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "moved", content: "Arrived" },
      }),
    );
    expect(sent).toBeGreaterThan(posted);
  });

  it("refuses an organization that exists, a truncated file, a reference the export lacks and a newer format, with one line naming the file, leaving nothing behind", async () => {
    const root = join(unpacked, "zulip-export-test");
    const realms = await server.db.realm.count();
    const refused = async (dir: string, subdomain: string) => {
      const err = await doImportZulip(server.deps, dir, { subdomain }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ImportError);
      expect((err as Error).message).not.toContain("\n");
      expect(await server.db.realm.count()).toBe(realms);
      return (err as Error).message;
    };
    expect(await refused(unpacked, "imported")).toBe(
      "an organization with the subdomain 'imported' exists already: an import makes a new organization (give another with --subdomain)",
    );

    const messages = readFileSync(join(root, "messages-000001.json"), "utf8");
    writeFileSync(join(root, "messages-000001.json"), messages.slice(0, messages.length / 2));
    expect(await refused(unpacked, "truncated")).toMatch(
      /^messages-000001\.json: not a complete JSON object/,
    );
    writeFileSync(join(root, "messages-000001.json"), messages);

    const realmText = readFileSync(join(root, "realm.json"), "utf8");
    const data = JSON.parse(realmText);
    const sub = data.zerver_subscription.at(-1);
    sub.user_profile = 999_999;
    writeFileSync(join(root, "realm.json"), JSON.stringify(data));
    expect(await refused(unpacked, "dangling")).toBe(
      `realm.json: zerver_subscription row ${sub.id}: user_profile 999999 is not in the export`,
    );
    writeFileSync(join(root, "realm.json"), realmText);

    const made = readFileSync(join(root, "export.json"), "utf8");
    writeFileSync(join(root, "export.json"), JSON.stringify({ zulip_export_format: 99 }));
    expect(await refused(unpacked, "future")).toBe(
      "export.json: format version 99 is newer than this server reads (1)",
    );
    writeFileSync(join(root, "export.json"), made);
  });
});

describe("import-zulip of an export Zulip made", () => {
  it("imports Zulip's format: system bots and mirror dummies as users, messages rendered where the export has no rendering, flags, reactions to custom emoji, profile fields of users, muting, groups and the group DM", async () => {
    const dir = join(work, "from-zulip");
    mkdirSync(dir, { recursive: true });
    for (const [file, data] of Object.entries(zulipExportFixture()))
      writeFileSync(join(dir, file), JSON.stringify(data));
    const done = await doImportZulip(server.deps, dir);
    expect(done).toMatchObject({ stringId: "acme", users: 5, channels: 1, messages: 4 });
    imported = done;
    const bob = await importedAs("bob@acme.example");
    const idOf = async (email: string) =>
      (
        await server.db.userProfile.findFirstOrThrow({
          where: { realmId: done.realmId, deliveryEmail: email },
        })
      ).id;

    const { messages } = (await expectSuccess(
      bob.GET("/messages", {
        params: { query: { anchor: "oldest", num_before: 0, num_after: 10 } },
      }),
    )) as any;
    expect(
      messages.map((m: any) => [m.sender_email, m.subject, m.content, [...m.flags].sort()]),
    ).toEqual([
      ["alice@acme.example", "lunch", "<p>Pizza at noon?</p>", ["starred"]],
      ["alice@acme.example", "", "<p>hi <strong>Bob</strong></p>", []],
      ["carol@acme.example", "", "<p>All three of us</p>", []],
      [
        "notification-bot@zulip.com",
        "channel events",
        "<p><strong>Public</strong> channel created.</p>",
        [],
      ],
    ]);
    // Times as Zulip wrote them (float seconds).
    expect(messages[0].timestamp).toBe(1_700_000_000 + 3600 + 100);
    const emoji = await server.db.realmEmoji.findFirstOrThrow({ where: { realmId: done.realmId } });
    expect(messages[0].reactions).toMatchObject([
      { emoji_name: "party", emoji_code: String(emoji.id), reaction_type: "realm_emoji" },
    ]);

    const state = (await expectSuccess(
      bob.POST("/register", {
        body: {
          fetch_event_types: ["realm_user", "user_topic", "realm_user_groups", "realm"],
          include_subscribers: true,
        },
      }),
    )) as any;
    expect(state.realm_name).toBe("Acme");
    const users = new Map(state.realm_users.map((u: any) => [u.email, u]));
    expect((users.get("bob@acme.example") as any).profile_data).toEqual({
      [String(
        (await server.db.customProfileField.findFirstOrThrow({ where: { realmId: done.realmId } }))
          .id,
      )]: { value: JSON.stringify([await idOf("alice@acme.example")]) },
    });
    expect(users.has("notification-bot@zulip.com")).toBe(true);
    // The mirror dummy is an inactive user.
    expect(users.has("dave@old.example")).toBe(false);
    expect(
      (
        await server.db.userProfile.findFirstOrThrow({
          where: { realmId: done.realmId, deliveryEmail: "dave@old.example" },
        })
      ).isActive,
    ).toBe(false);
    expect(state.user_topics.map((t: any) => [t.topic_name, t.visibility_policy])).toEqual([
      ["Lunch", 1],
    ]);
    const ops = state.realm_user_groups.find((g: any) => g.name === "ops");
    expect(ops.members.sort()).toEqual(
      [await idOf("bob@acme.example"), await idOf("carol@acme.example")].sort(),
    );

    // The group DM's hash was made again from its members: a new message joins the conversation.
    const { id } = await expectSuccess(
      bob.POST("/messages", {
        body: {
          type: "direct",
          to: JSON.stringify([await idOf("alice@acme.example"), await idOf("carol@acme.example")]),
          content: "Still here",
        },
      }),
    );
    const sent = (await expectSuccess(
      bob.GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
    )) as any;
    expect(sent.message.recipient_id).toBe(messages[2].recipient_id);
  });
});

describe("import-slack", () => {
  it("maps a Slack export as Zulip's importer does: users and roles, public and private channels, threads as topics, DMs and group DMs, markup, reactions; and says what it could not map", async () => {
    const dir = join(work, "slack");
    for (const [file, data] of Object.entries(slackExportFixture())) {
      mkdirSync(join(dir, file, ".."), { recursive: true });
      writeFileSync(join(dir, file), JSON.stringify(data));
    }
    const converted = join(work, "slack-converted");
    const report = convertSlackExport(dir, converted, {
      name: "Acme on Slack",
      stringId: "acmeslack",
      fakeEmailDomain: "zulip.testserver",
    });
    expect(report).toEqual({
      users: 6,
      channels: 3,
      messages: 10,
      unmapped: [
        "1 channel_join events skipped",
        "1 reactions with a custom or unknown emoji skipped",
        "1 files linked, not copied",
      ],
    });
    imported = await doImportZulip(server.deps, converted);
    expect(imported).toMatchObject({ stringId: "acmeslack", users: 6, channels: 3, messages: 10 });

    const ann = await importedAs("ann@acme.example");
    const state = (await expectSuccess(
      ann.POST("/register", {
        body: {
          fetch_event_types: ["realm", "realm_user", "subscription"],
          include_subscribers: true,
        },
      }),
    )) as any;
    expect(state.realm_name).toBe("Acme on Slack");
    const people = Object.fromEntries(
      state.realm_users.map((u: any) => [u.full_name, [u.role, u.is_bot, u.timezone]]),
    );
    expect(people).toMatchObject({
      "Ann Owner": [100, false, "Europe/Paris"],
      "Ben Admin": [200, false, ""],
      "Cat Member": [400, false, ""],
      "Gus Guest": [600, false, ""],
    });
    expect(people["Old Timer"]).toBeUndefined(); // deactivated
    expect(people["Deploy Bot"]?.[1]).toBe(true);
    const channels = Object.fromEntries(
      state.subscriptions.map((s: any) => [s.name, [s.invite_only, s.subscribers.length]]),
    );
    expect(channels).toEqual({ general: [false, 3], random: [false, 4], leads: [true, 2] }); // Old Timer is deactivated

    const { messages } = (await expectSuccess(
      ann.GET("/messages", {
        params: {
          query: { anchor: "oldest", num_before: 0, num_after: 20, apply_markdown: false },
        },
      }),
    )) as any;
    const seen = messages.map((m: any) => [
      m.sender_full_name,
      typeof m.display_recipient === "string"
        ? `${m.display_recipient} > ${m.subject}`
        : m.display_recipient
            .map((r: any) => r.full_name)
            .sort()
            .join(", "),
      m.content,
    ]);
    expect(seen).toEqual([
      [
        "Ann Owner",
        "general > imported from Slack",
        "Welcome @**Cat Member**! See #**random** and [the handbook](https://acme.example/handbook). **Bold** *italic* ~~gone~~",
      ],
      ["Ben Admin", "general > Release plan for Friday?", "Release plan for Friday?"],
      ["Cat Member", "general > Release plan for Friday?", "I can do it"],
      ["Ann Owner", "general > Release plan for Friday?", "@**all** ship it"],
      ["Gus Guest", "random > imported from Slack", "Hi from a guest"],
      ["Ben Admin", "leads > imported from Slack", "Just the leads"],
      ["Ann Owner", "Ann Owner, Cat Member", "Private word, @**Cat Member**"],
      ["Cat Member", "Ann Owner, Cat Member", "Sure"],
      ["Ben Admin", "Ann Owner, Ben Admin, Cat Member", "The three of us"],
      [
        "Deploy Bot",
        "general > imported from Slack",
        "Deployed <v2>\n[log.txt](https://files.slack.com/files-pri/T1-F001/log.txt)",
      ],
    ]);
    // Its reactions, by the emoji's name and code.
    expect(messages[0].reactions.map((r: any) => [r.emoji_name, r.emoji_code]).sort()).toEqual([
      ["tada", "1f389"],
      ["tada", "1f389"],
    ]);
    // Imported history is read; a mention is still one.
    expect(messages[6].flags.sort()).toEqual(["read"]);
    // Rendered here, with the organization's users and channels: mentions and links are real.
    const rendered = (await expectSuccess(
      ann.GET("/messages/{message_id}", { params: { path: { message_id: messages[0].id } } }),
    )) as any;
    expect(rendered.message.content).toContain(
      `<span class="user-mention" data-user-id="${(await server.db.userProfile.findFirstOrThrow({ where: { realmId: imported.realmId, deliveryEmail: "cat@acme.example" } })).id}">@Cat Member</span>`,
    );
    expect(rendered.message.content).toContain('class="stream" data-stream-id=');
    const cat = await importedAs("cat@acme.example");
    const catsView = (await expectSuccess(
      cat.GET("/messages/{message_id}", { params: { path: { message_id: messages[6].id } } }),
    )) as any;
    expect(catsView.message.flags.sort()).toEqual(["mentioned", "read"]);
  });
});
