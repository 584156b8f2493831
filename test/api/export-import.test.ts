/**
 * Moving an organization out and in: the development organization exported in Zulip's format
 * (lib/export/export-realm.ts, a .tar.gz), imported back as a new organization on the same
 * server (actions/realm/import-zulip.ts), and the two compared through the API as their users see
 * them: register's state, the messages with their flags and reactions, and the files (an upload
 * a message links, an image's thumbnail, an avatar, a custom emoji) served by the new
 * organization under its own path ids. Then the refusals: an organization that exists, a
 * truncated file, a reference to a user the export lacks, an unknown format, a file the records
 * name that the export lacks; each leaves nothing behind, files included. Then Zulip's own
 * format with its files, and Slack's, whose files are downloaded with the workspace's token from
 * a Slack served on loopback.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { dirname, join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZulipClient, type ZulipClient } from "../../client/src/index.ts";
import { doImportZulip, ImportError } from "../../server/actions/realm/import-zulip.ts";
import { unpackArchive } from "../../server/lib/export/archive.ts";
import { exportRealm } from "../../server/lib/export/export-realm.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { fetchAsHost } from "../helpers/host-fetch.ts";
import { useTestServer } from "../helpers/server.ts";
import { FIXTURE_PNG, FIXTURE_UPLOAD, zulipExportFixture } from "../fixtures/zulip-export.ts";
import { SLACK_FILE, slackExportFixture } from "../fixtures/slack-export.ts";
import { convertSlackExport } from "../../server/lib/export/slack.ts";
import { realmImagePathId } from "../../server/lib/realm/realm.ts";
import { uploadStorage } from "../../server/lib/uploads/upload-storage.ts";
import { specCheckMiddleware } from "../helpers/spec-check.ts";
import { basicAuth, uploadFile } from "../helpers/upload.ts";

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

const importedUser = (email: string) =>
  server.db.userProfile.findFirstOrThrow({
    where: { realmId: imported.realmId, deliveryEmail: email },
  });
const importedHost = () => `${imported.stringId}.${server.deps.config.externalHost}`;

/** A client of the imported organization, as the user of that email there. */
async function importedAs(email: string): Promise<ZulipClient> {
  const user = await importedUser(email);
  return createZulipClient({
    baseUrl: server.baseUrl,
    email: user.email,
    apiKey: user.apiKey,
    fetch: fetchAsHost(importedHost()),
    middleware: [specCheckMiddleware],
  });
}

/** A file of the imported organization, fetched on its host (as the user of that email there). */
async function importedFile(path: string, email?: string) {
  const headers: Record<string, string> = {};
  if (email) {
    const user = await importedUser(email);
    headers.Authorization = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}`;
  }
  const response = await fetchAsHost(importedHost())(server.baseUrl + path, { headers });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** POST an image in a multipart body as the web app does (an avatar, a custom emoji). */
async function postImage(path: string, as: string, data: Buffer) {
  const form = new FormData();
  form.append("file", new Blob([data], { type: "image/png" }), "image.png");
  const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
    method: "POST",
    headers: { Authorization: basicAuth(server, as) },
    body: form,
  });
  expect(response.status).toBe(200);
}

/** Every file in the upload store (the test server's is the local disk), by path id. */
function storedFiles(): string[] {
  const root = join(server.deps.config.dataDir, "uploads");
  const out: string[] = [];
  const walk = (dir: string, prefix: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === ".incoming") continue;
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else out.push(prefix + entry.name);
    }
  };
  walk(root, "");
  return out.sort();
}

/** An upload's path id in a link: `/user_uploads/<realm>/<hex>/<random>/` made one placeholder. */
const UPLOAD_PATH = /\/user_uploads\/(thumbnail\/)?\d+\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{24}\//g;

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
    messages.map((m: any) => [
      m.id,
      `${m.timestamp} ${m.content.replace(UPLOAD_PATH, "/user_uploads/$1…/")}`,
    ]),
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
      // Uploads have new path ids in the new organization (checked apart).
      content: m.content.replace(UPLOAD_PATH, "/user_uploads/$1…/"),
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
    // Files: an upload and an image linked by a message, an avatar, a custom emoji.
    const notes = await uploadFile(server, "hamlet", "moving notes.txt", "What we take with us");
    const picture = await uploadFile(server, "hamlet", "view.png", FIXTURE_PNG, "image/png");
    const { id: withFiles } = await expectSuccess(
      hamlet.POST("/messages", {
        body: {
          type: "stream",
          to: "Verona",
          topic: "moving",
          content: `[notes](${notes}) and [the view](${picture})`,
        },
      }),
    );
    await postImage("/users/me/avatar", "hamlet", FIXTURE_PNG);
    await postImage("/realm/emoji/moving_van", "iago", FIXTURE_PNG);
    const oldHamlet = await server.db.userProfile.findUniqueOrThrow({
      where: { id: id("hamlet") },
    });
    const before = await view(hamlet);

    const realm = await server.db.realm.findFirstOrThrow({ orderBy: { id: "asc" } });
    const result = await exportRealm(
      server.db,
      realm.id,
      work,
      "zulip-export-test",
      await uploadStorage(server.deps.config),
    );
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

    // The files as Zulip's local storage exports them: records sorted by path, with its keys.
    const exported = (file: string) =>
      JSON.parse(readFileSync(join(unpacked, "zulip-export-test", file), "utf8"));
    const oldNotes = notes.slice("/user_uploads/".length);
    const uploads = exported("uploads/records.json");
    expect(uploads.map((r: any) => r.path)).toEqual(uploads.map((r: any) => r.path).sort());
    expect(uploads.find((r: any) => r.path === oldNotes)).toEqual({
      realm_id: realm.id,
      user_profile_id: id("hamlet"),
      user_profile_email: server.creds.users.hamlet!.email,
      s3_path: oldNotes,
      path: oldNotes,
      size: "What we take with us".length,
      last_modified: expect.any(Number),
      content_type: null,
    });
    expect(readFileSync(join(unpacked, "zulip-export-test", "uploads", oldNotes), "utf8")).toBe(
      "What we take with us",
    );
    expect(
      exported("attachment.json").zerver_attachment.find((a: any) => a.path_id === oldNotes),
    ).toMatchObject({
      file_name: "moving notes.txt",
      owner: id("hamlet"),
      realm: realm.id,
      size: "What we take with us".length,
      messages: [withFiles],
      scheduled_messages: [],
    });
    const avatarBase = `${realm.id}/${oldHamlet.avatarHash!.replace(/\.png$/, "")}`;
    expect(
      exported("avatars/records.json")
        .filter((r: any) => r.user_profile_id === id("hamlet"))
        .map((r: any) => [r.path, r.avatar_version]),
    ).toEqual([
      [`${avatarBase}.original`, oldHamlet.avatarVersion],
      [`${avatarBase}.png`, oldHamlet.avatarVersion],
    ]);
    expect(exported("emoji/records.json")).toEqual([
      expect.objectContaining({ name: "moving_van", author: id("iago"), deactivated: false }),
    ]);
    expect(exported("realm_icons/records.json")).toEqual([]);

    const storedBefore = storedFiles().length;
    const done = await doImportZulip(server.deps, unpacked, { subdomain: "imported" });
    imported = done;
    expect(done).toMatchObject({
      stringId: "imported",
      messages: before.messages.length,
      files: { uploads: 2, avatars: 1, emoji: 1, realmIcons: 0 },
    });
    expect(done.realmId).not.toBe(realm.id);
    // Two uploads and the image's thumbnail, the avatar's three sizes, the emoji: in the store.
    expect(storedFiles().length).toBe(storedBefore + 3 + 3 + 1);

    const after = await view(await importedAs("hamlet@zulip.com"));
    expect(after).toEqual(before);

    // The message links its uploads under new path ids of the new organization, which serve
    // the same bytes; the image's thumbnail was made again.
    const { messages: importedMessages } = (await expectSuccess(
      (await importedAs("hamlet@zulip.com")).GET("/messages", {
        params: { query: { anchor: "newest", num_before: 5, num_after: 0 } },
      }),
    )) as any;
    const linking = importedMessages.find((m: any) => m.content.includes("moving-notes.txt"));
    const newNotes = /href="(\/user_uploads\/[^"]+\/moving-notes\.txt)"/.exec(linking.content)![1]!;
    expect(newNotes).toMatch(new RegExp(`^/user_uploads/${done.realmId}/`));
    expect(newNotes).not.toBe(notes);
    const got = await importedFile(newNotes, "hamlet@zulip.com");
    expect(got.status).toBe(200);
    expect(got.bytes.toString()).toBe("What we take with us");
    const thumbnail = /src="(\/user_uploads\/thumbnail\/[^"]+)"/.exec(linking.content)![1]!;
    expect(thumbnail).toMatch(new RegExp(`^/user_uploads/thumbnail/${done.realmId}/`));
    expect(await importedFile(thumbnail, "hamlet@zulip.com")).toMatchObject({
      status: 200,
      type: "image/webp",
    });
    // The old path id is still the old organization's file, not the new one's to see.
    expect((await importedFile(notes, "hamlet@zulip.com")).status).toBe(403);

    // The avatar, under a new name, in both sizes (the medium one made again from the original).
    const me = (await expectSuccess(
      (await importedAs("hamlet@zulip.com")).GET("/users/me"),
    )) as any;
    expect(me.avatar_url).toMatch(
      new RegExp(`^/user_avatars/${done.realmId}/[0-9a-f]{40}\\.png\\?version=\\d+$`),
    );
    expect(me.avatar_url).not.toContain(oldHamlet.avatarHash!);
    for (const [url, size] of [
      [me.avatar_url.split("?")[0], 100],
      [me.avatar_url.split("?")[0].replace(/\.png$/, "-medium.png"), 500],
    ] as const) {
      const image = await importedFile(url);
      expect(image).toMatchObject({ status: 200, type: "image/png" });
      expect((await sharp(image.bytes).metadata()).width).toBe(size);
    }

    // The custom emoji, listed and served from the new organization.
    const { emoji } = (await expectSuccess(
      (await importedAs("hamlet@zulip.com")).GET("/realm/emoji"),
    )) as any;
    const van = Object.values(emoji).find((e: any) => e.name === "moving_van") as any;
    expect(van.source_url).toMatch(new RegExp(`^/user_avatars/${done.realmId}/emoji/images/`));
    const image = await importedFile(van.source_url);
    expect(image.status).toBe(200);
    expect(image.bytes.equals(FIXTURE_PNG)).toBe(true);
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

    // A file the records name that the export lacks: refused before anything is written.
    const stored = storedFiles();
    const [first] = JSON.parse(readFileSync(join(root, "uploads", "records.json"), "utf8"));
    const file = join(root, "uploads", first.path);
    const bytes = readFileSync(file);
    rmSync(file);
    expect(await refused(unpacked, "nofile")).toBe(
      `uploads/records.json: record 1 (${first.path}): uploads/${first.path} is missing from the export`,
    );
    writeFileSync(file, bytes);
    expect(storedFiles()).toEqual(stored);

    // A refusal after the files were stored (they go in before the messages): they go again.
    const broken = JSON.parse(messages);
    broken.zerver_usermessage.at(-1).user_profile = 999_999;
    writeFileSync(join(root, "messages-000001.json"), JSON.stringify(broken));
    expect(await refused(unpacked, "halfway")).toMatch(
      /^messages-000001\.json: zerver_usermessage row \{.*\}: user_profile 999999 is not in the export$/,
    );
    writeFileSync(join(root, "messages-000001.json"), messages);
    expect(storedFiles()).toEqual(stored);
  });
});

describe("import-zulip of an export Zulip made", () => {
  it("imports Zulip's format: system bots and mirror dummies as users, messages rendered where the export has no rendering, flags, reactions to custom emoji, profile fields of users, muting, groups and the group DM", async () => {
    const dir = join(work, "from-zulip");
    for (const [file, data] of Object.entries(zulipExportFixture())) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(
        join(dir, file),
        typeof data === "string" || Buffer.isBuffer(data) ? data : JSON.stringify(data),
      );
    }
    const done = await doImportZulip(server.deps, dir);
    expect(done).toMatchObject({
      stringId: "acme",
      users: 5,
      channels: 1,
      messages: 5,
      files: { uploads: 1, avatars: 1, emoji: 1, realmIcons: 1 },
    });
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
      [
        "bob@acme.example",
        "lunch",
        expect.stringMatching(
          new RegExp(
            `^<p><a href="/user_uploads/${done.realmId}/[0-9a-f]{1,2}/[A-Za-z0-9_-]{24}/spec\\.txt">spec\\.txt</a></p>$`,
          ),
        ),
        ["read"],
      ],
    ]);
    // The upload, at the link rewritten to its new path id (Zulip's fix_upload_links).
    const link = /href="([^"]+)"/.exec(messages[4].content)![1]!;
    expect(link).not.toContain(FIXTURE_UPLOAD.pathId);
    expect(await importedFile(link, "carol@acme.example")).toMatchObject({
      status: 200,
      type: "text/plain; charset=utf-8",
      bytes: Buffer.from(FIXTURE_UPLOAD.bytes),
    });
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
    // Alice's avatar (Zulip's `<hash>.png` and `.original`) under a name of this server.
    const aliceAvatar = (users.get("alice@acme.example") as any).avatar_url.split("?")[0];
    expect(aliceAvatar).toMatch(new RegExp(`^/user_avatars/${done.realmId}/[0-9a-f]{40}\\.png$`));
    expect(await importedFile(aliceAvatar)).toMatchObject({ status: 200, type: "image/png" });
    expect((await importedFile(aliceAvatar.replace(".png", "-medium.png"))).status).toBe(200);
    // Carol's avatar file does not decode: she has Gravatar's (register leaves its URL to the
    // client, as for every Gravatar), as Zulip's process_avatars leaves her.
    expect((users.get("carol@acme.example") as any).avatar_url).toBeNull();
    expect(await importedUser("carol@acme.example")).toMatchObject({
      avatarSource: "G",
      avatarHash: null,
    });
    // The custom emoji's image, re-based on the new organization's id.
    expect(await importedFile(`/user_avatars/${done.realmId}/emoji/images/5.png`)).toMatchObject({
      status: 200,
      bytes: FIXTURE_PNG,
    });
    // The icon, where its URL names it (this server does not serve icons yet: read from the store).
    expect(state.realm_icon_url).toBe(`/user_avatars/${done.realmId}/realm/icon.png?version=2`);
    const storage = await uploadStorage(server.deps.config);
    for (const name of ["icon.png", "icon.original"]) {
      const icon = await storage.read(realmImagePathId(done.realmId, name));
      expect(icon).not.toBeNull();
      icon!.body.destroy();
      expect(icon!.size).toBe(FIXTURE_PNG.length);
    }
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
    const report = await convertSlackExport(dir, converted, {
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

  it("with the workspace's token downloads each file Slack hosts (Authorization: Bearer) and makes it an upload the message links; without the token, or refused, the file stays linked to Slack and is reported as not copied", async () => {
    const token = "xoxb-1234-acme";
    const asked: (string | undefined)[] = [];
    // Slack's file host on loopback: the file for the workspace's token, its sign-in page otherwise.
    const slack = http.createServer((req, res) => {
      asked.push(req.headers.authorization);
      if (req.url !== SLACK_FILE.path) return void res.writeHead(404).end();
      if (req.headers.authorization !== `Bearer ${token}`)
        return void res.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in</html>");
      res.writeHead(200, { "content-type": "text/plain" }).end(SLACK_FILE.bytes);
    });
    await new Promise<void>((resolve) => slack.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(slack.address() as AddressInfo).port}`;
    try {
      const dir = join(work, "slack-with-files");
      for (const [file, data] of Object.entries(slackExportFixture(`http://${host}`))) {
        mkdirSync(dirname(join(dir, file)), { recursive: true });
        writeFileSync(join(dir, file), JSON.stringify(data));
      }
      const convert = (out: string, with_?: string) =>
        convertSlackExport(dir, join(work, out), {
          name: "Acme files",
          stringId: "acmefiles",
          fakeEmailDomain: "zulip.testserver",
          token: with_,
          hosts: [host],
        });

      expect((await convert("slack-no-token")).unmapped).toContain("1 files linked, not copied");
      expect(asked).toEqual([]);
      expect((await convert("slack-wrong-token", "xoxb-9-other")).unmapped).toContain(
        "1 files linked, not copied (the download failed)",
      );
      expect(asked).toEqual(["Bearer xoxb-9-other"]);

      const report = await convert("slack-token", token);
      expect(asked.at(-1)).toBe(`Bearer ${token}`);
      expect(report.unmapped.filter((line) => line.includes("files"))).toEqual([]);
      imported = await doImportZulip(server.deps, join(work, "slack-token"));
      expect(imported).toMatchObject({ stringId: "acmefiles", files: { uploads: 1 } });

      const attachment = await server.db.attachment.findFirstOrThrow({
        where: { realmId: imported.realmId },
        include: { messages: true },
      });
      expect(attachment).toMatchObject({
        fileName: "log.txt",
        size: Buffer.byteLength(SLACK_FILE.bytes),
        contentType: "text/plain",
        ownerId: (await importedUser("u006@zulip.testserver")).id,
      });
      const { messages } = (await expectSuccess(
        (await importedAs("ann@acme.example")).GET("/messages", {
          params: {
            query: { anchor: "newest", num_before: 1, num_after: 0, apply_markdown: false },
          },
        }),
      )) as any;
      expect(messages[0]).toMatchObject({
        id: attachment.messages[0]!.messageId,
        sender_full_name: "Deploy Bot",
        content: `Deployed <v2>\n[log.txt](/user_uploads/${attachment.pathId})`,
      });
      expect(await importedFile(`/user_uploads/${attachment.pathId}`, "ann@acme.example")).toEqual({
        status: 200,
        type: "text/plain; charset=utf-8",
        bytes: Buffer.from(SLACK_FILE.bytes),
      });
    } finally {
      await new Promise((resolve) => slack.close(resolve));
    }
  });
});

describe("export and import-zulip: what users keep", () => {
  it("carries edit history, statuses, saved snippets, scheduled messages, navigation views, channel folders and playgrounds", async () => {
    const hamlet = server.as("hamlet");
    const iago = server.as("iago");
    const { id: edited } = await expectSuccess(
      hamlet.POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "drafts", content: "first words" },
      }),
    );
    await expectSuccess(
      hamlet.PATCH("/messages/{message_id}", {
        params: { path: { message_id: edited } },
        body: { content: "second words", topic: "final" },
      }),
    );
    await expectSuccess(hamlet.POST("/users/me/status", { body: { status_text: "moving house" } }));
    await expectSuccess(
      hamlet.POST("/saved_snippets", { body: { title: "greeting", content: "Hello there" } }),
    );
    await expectSuccess(
      hamlet.POST("/scheduled_messages", {
        body: {
          type: "stream",
          to: verona(),
          topic: "later",
          content: "Sent tomorrow",
          scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400,
        },
      }),
    );
    await expectSuccess(
      hamlet.POST("/navigation_views", {
        body: { fragment: "narrow/channel/verona", is_pinned: true, name: "Verona" },
      }),
    );
    await expectSuccess(
      iago.POST("/channel_folders/create", { body: { name: "Cities", description: "Places" } }),
    );
    await expectSuccess(
      iago.POST("/realm/playgrounds", {
        body: {
          name: "Python",
          pygments_language: "python",
          url_template: "https://py.example/?c={code}",
        },
      }),
    );

    /** What hamlet keeps, as register and the history endpoint give it. */
    const kept = async (client: ZulipClient, messageId: number) => {
      const state = (await expectSuccess(
        client.POST("/register", {
          body: {
            fetch_event_types: [
              "user_status",
              "saved_snippets",
              "scheduled_messages",
              "navigation_views",
              "channel_folders",
              "realm_playgrounds",
            ],
          },
        }),
      )) as any;
      const { message_history } = await expectSuccess(
        client.GET("/messages/{message_id}/history", {
          params: { path: { message_id: messageId } },
        }),
      );
      return {
        statuses: Object.values(state.user_status).map((s: any) => s.status_text),
        snippets: state.saved_snippets.map((s: any) => `${s.title}|${s.content}`),
        scheduled: state.scheduled_messages.map(
          (m: any) => `${m.topic}|${m.content}|${m.scheduled_delivery_timestamp}`,
        ),
        views: state.navigation_views.map((v: any) => `${v.fragment}|${v.name}|${v.is_pinned}`),
        folders: state.channel_folders.map((f: any) => `${f.name}|${f.description}`),
        playgrounds: state.realm_playgrounds.map((p: any) => `${p.name}|${p.url_template}`),
        // Ids are the new organization's: the channel's by whether it is there.
        history: message_history.map(({ user_id: _u, stream, ...h }: any) => ({
          ...h,
          stream: stream !== undefined,
        })),
      };
    };
    const before = await kept(hamlet, edited);
    expect(before.history).toHaveLength(2);

    const realm = await server.db.realm.findFirstOrThrow({ orderBy: { id: "asc" } });
    const result = await exportRealm(
      server.db,
      realm.id,
      work,
      "zulip-export-kept",
      await uploadStorage(server.deps.config),
    );
    const dir = join(work, "unpacked-kept");
    await unpackArchive(result.tarball, dir);
    const done = await doImportZulip(server.deps, dir, { subdomain: "kept" });
    const user = await server.db.userProfile.findFirstOrThrow({
      where: { realmId: done.realmId, deliveryEmail: "hamlet@zulip.com" },
    });
    const client = createZulipClient({
      baseUrl: server.baseUrl,
      email: user.email,
      apiKey: user.apiKey,
      fetch: fetchAsHost(`kept.${server.deps.config.externalHost}`),
      middleware: [specCheckMiddleware],
    });
    const moved = await server.db.message.findFirstOrThrow({
      where: { realmId: done.realmId, content: "second words" },
      select: { id: true },
    });
    expect(await kept(client, moved.id)).toEqual(before);
  });
});
