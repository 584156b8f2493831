/**
 * Data exports (zerver/tests/test_realm_export.py): an administrator requests one, the
 * background loop (workers/realm-exports.ts, run by hand here) makes it, the administrators hear
 * of it by `realm_export` events and the requester by the notification bot, and its tarball is
 * downloaded from the export's URL and holds what its type allows. Then Zulip's refusals in
 * order (the week's limit, an organization too large, no owner to name), deleting, a failure,
 * a process that died mid-export, and the consents with their event.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unpackArchive } from "../../server/lib/export/archive.ts";
import { exportRoot } from "../../server/actions/realm/import-zulip.ts";
import { uploadsRoot } from "../../server/lib/uploads/uploads.ts";
import { untyped } from "../helpers/builders.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { uploadFile } from "../helpers/upload.ts";
import { zulipEventErrors } from "../helpers/zulip-spec.ts";
import { doImportZulip } from "../../server/actions/realm/import-zulip.ts";
import { doCreateUserWithDefaultChannels } from "../../server/actions/users/users.ts";

const server = useTestServer(
  { zulipAdministrator: "help@example.net" },
  { realmExports: "manual" },
);
const user = (name: string) => server.creds.users[name]!;
const basic = (name: string) =>
  "Basic " + Buffer.from(`${user(name).email}:${user(name).api_key}`).toString("base64");

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(os.tmpdir(), "realm-export-test-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const listExports = async () =>
  (await expectSuccess(server.as("iago").GET("/export/realm"))).exports;

/** Downloads an export's tarball by its URL (no credentials) and unpacks it. */
async function download(url: string) {
  const response = await fetch(server.baseUrl + new URL(url).pathname);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/gzip");
  const dir = mkdtempSync(join(work, "unpacked-"));
  const tarball = join(dir, "export.tar.gz");
  writeFileSync(tarball, Buffer.from(await response.arrayBuffer()));
  await unpackArchive(tarball, join(dir, "out"));
  const root = exportRoot(join(dir, "out"));
  const realm = JSON.parse(readFileSync(join(root, "realm.json"), "utf8"));
  const messages = JSON.parse(readFileSync(join(root, "messages-000001.json"), "utf8"));
  return { root, realm, messages };
}

async function setConsent(name: string, value: boolean) {
  await expectSuccess(
    server.as(name).PATCH("/settings", { body: { allow_private_data_export: value } }),
  );
}

describe("POST /export/realm and the export it makes", () => {
  it("makes a standard export of what consenting users may share: their DMs, the public channels, the others as deactivated placeholders, no secrets", async () => {
    const iagoEvents = await queueOf(server, "iago", ["realm_export"]);
    const hamletEvents = await queueOf(server, "hamlet", ["realm_export"]);
    // A DM between two users who did not consent, and one from a user who did.
    const secret = `secret ${Date.now()}`;
    const shared = `shared ${Date.now()}`;
    await expectSuccess(
      server.as("othello").POST("/messages", {
        body: { type: "direct", to: [user("cordelia").user_id], content: secret },
      }),
    );
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [user("cordelia").user_id], content: shared },
      }),
    );
    await setConsent("hamlet", true);

    // No owner consents yet: Zulip's refusal, nothing recorded.
    await setConsent("desdemona", false);
    await expectError(
      server.as("iago").POST("/export/realm", { body: { export_type: 2 } }),
      400,
      "Make sure at least one Organization Owner is consenting to the export or contact help@example.net for help.",
    );
    expect(await listExports()).toEqual([]);

    await setConsent("desdemona", true);
    const { id } = await expectSuccess(
      server.as("iago").POST("/export/realm", { body: { export_type: 2 } }),
    );
    const [pending] = await listExports();
    expect(pending).toMatchObject({
      id,
      acting_user_id: user("iago").user_id,
      export_url: null,
      pending: true,
      export_type: 2,
      deleted_timestamp: null,
      failed_timestamp: null,
    });

    expect(await server.realmExports.deliverDue()).toEqual({ succeeded: [id], failed: [] });
    const [made] = await listExports();
    expect(made).toMatchObject({ id, pending: false, failed_timestamp: null });
    expect(made!.export_url).toMatch(
      /^http:\/\/zulip\.testserver\/user_avatars\/exports\/\d+\/[A-Za-z0-9_-]{24}\/zulip-export-[0-9a-f]{12}\.tar\.gz$/,
    );

    // The administrators heard of the request and of the export; a member did not.
    const events = await iagoEvents();
    expect(events.map((e: any) => e.exports.at(-1).pending)).toEqual([true, false]);
    expect(events.at(-1)).toEqual({ type: "realm_export", exports: [made] });
    // As Zulip documents the event (with the id a queue gives every event).
    expect(zulipEventErrors({ id: 1, ...(events.at(-1) as { type: string }) })).toEqual([]);
    expect(await hamletEvents()).toEqual([]);
    // The requester is told by the notification bot.
    const { messages: dms } = await expectSuccess(
      server.as("iago").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 1,
            num_after: 0,
            narrow: [{ operator: "is", operand: "dm" }],
          },
        },
      }),
    );
    expect(dms[0]).toMatchObject({
      sender_email: expect.stringMatching(/^notification-bot@/),
      content:
        '<p>Your data export is complete. <a href="/#organization/data-exports-admin">View and download exports</a>.</p>',
    });

    const { root, realm, messages } = await download(made!.export_url!);
    const contents = messages.zerver_message.map((m: any) => m.content);
    expect(contents).toContain(shared);
    expect(contents).not.toContain(secret);
    const users = new Map<number, any>(realm.zerver_userprofile.map((u: any) => [u.id, u]));
    expect(users.get(user("hamlet").user_id)).toMatchObject({ is_active: true });
    expect(users.get(user("othello").user_id)).toMatchObject({
      is_active: false,
      is_mirror_dummy: true,
    });
    for (const u of users.values()) {
      expect(u).not.toHaveProperty("api_key");
      expect(u).not.toHaveProperty("password_hash");
    }
    // Flags only of consenting users.
    const consenting = new Set(
      realm.zerver_userprofile.filter((u: any) => u.is_active).map((u: any) => u.id),
    );
    expect(messages.zerver_usermessage.every((um: any) => consenting.has(um.user_profile))).toBe(
      true,
    );
    // And it imports: the placeholders as deactivated users, the messages it holds.
    const imported = await doImportZulip(server.deps, root, { subdomain: "consented" });
    expect(imported.messages).toBe(
      await server.db.message.count({ where: { realmId: imported.realmId } }),
    );
    expect(
      await server.db.userProfile.findFirst({
        where: { realmId: imported.realmId, deliveryEmail: user("othello").email },
        select: { isActive: true },
      }),
    ).toEqual({ isActive: false });
    await setConsent("hamlet", false);
  });

  it("makes a public export: public channels only, nobody's private data, hidden addresses made up", async () => {
    await expectSuccess(
      server.as("hamlet").POST("/users/me/alert_words", { body: { alert_words: ["zebra"] } }),
    );
    await expectSuccess(
      server.as("cordelia").PATCH("/settings", { body: { email_address_visibility: 4 } }),
    );
    // An upload in a direct message stays out; one in a public channel goes in, file and all.
    const privateUpload = await uploadFile(server, "hamlet", "private.txt", "for Othello only");
    const publicUpload = await uploadFile(server, "hamlet", "public.txt", "for everyone");
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "direct", to: [user("othello").user_id], content: `[p](${privateUpload})` },
      }),
    );
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "files", content: `[f](${publicUpload})` },
      }),
    );
    const { id } = await expectSuccess(server.as("desdemona").POST("/export/realm", {}));
    expect(await server.realmExports.deliverDue()).toEqual({ succeeded: [id], failed: [] });
    const made = (await listExports()).find((e) => e.id === id)!;
    expect(made).toMatchObject({ export_type: 1, pending: false });
    const { root, realm, messages } = await download(made.export_url!);
    const { zerver_attachment } = JSON.parse(readFileSync(join(root, "attachment.json"), "utf8"));
    const exported = zerver_attachment.map((a: any) => a.path_id);
    const pathOf = (url: string) => url.replace(/^\/user_uploads\//, "");
    expect(exported).toContain(pathOf(publicUpload));
    expect(exported).not.toContain(pathOf(privateUpload));
    expect(readFileSync(join(root, "uploads", pathOf(publicUpload)), "utf8")).toBe("for everyone");
    const records = JSON.parse(readFileSync(join(root, "uploads", "records.json"), "utf8"));
    expect(records.map((r: any) => r.path)).not.toContain(pathOf(privateUpload));
    const privateRecipients = new Set(
      realm.zerver_stream.filter((s: any) => s.invite_only).map((s: any) => s.recipient),
    );
    const channelRecipients = new Set(realm.zerver_stream.map((s: any) => s.recipient));
    for (const m of messages.zerver_message) {
      expect(channelRecipients.has(m.recipient)).toBe(true);
      expect(privateRecipients.has(m.recipient)).toBe(false);
    }
    expect(realm.zerver_alertword).toEqual([]);
    expect(realm.zerver_usertopic).toEqual([]);
    expect(realm.zerver_huddle).toEqual([]);
    const cordelia = realm.zerver_userprofile.find((u: any) => u.id === user("cordelia").user_id);
    expect(cordelia).toMatchObject({ is_active: false, is_mirror_dummy: true });
    expect(cordelia.delivery_email).toMatch(/^exported-user-[0-9a-f]{16}@/);
    await expectSuccess(
      server.as("cordelia").PATCH("/settings", { body: { email_address_visibility: 1 } }),
    );
  });

  it("takes a form body with the type as JSON text, and refuses another type", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/export/realm`, {
      method: "POST",
      headers: {
        Authorization: basic("iago"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "export_type=1",
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: "success", id: expect.any(Number) });
    await expectError(
      server.as("iago").POST("/export/realm", { body: { export_type: untyped(3) } }),
      400,
      "Invalid export_type: Value error, Not in the list of possible values",
    );
  });

  it("refuses a sixth request in a week, and records nothing", async () => {
    // Three were requested above; two more reach Zulip's limit of five.
    for (let i = (await listExports()).length; i < 5; i++)
      await expectSuccess(server.as("iago").POST("/export/realm", {}));
    const before = await listExports();
    await expectError(server.as("iago").POST("/export/realm", {}), 400, "Exceeded rate limit.");
    expect(await listExports()).toEqual(before);
    const made = await server.realmExports.deliverDue();
    expect(made.failed).toEqual([]);
    expect(made.succeeded).toHaveLength(before.filter((e) => e.pending).length);
    // The week is counted from the requests' dates: older ones no longer count.
    await server.db.realmExport.updateMany({
      where: { realmId: server.creds.realm.id },
      data: { dateRequested: new Date(Date.now() - 8 * 86_400_000) },
    });
  });

  it("sends an organization whose uploads exceed 20 GiB to the server's administrator", async () => {
    const owner = user("iago").user_id;
    const big = Array.from({ length: 11 }, (_, i) => ({
      realmId: server.creds.realm.id,
      ownerId: owner,
      fileName: `huge-${i}.bin`,
      pathId: `${server.creds.realm.id}/huge/${i}/huge.bin`,
      size: 2 * 1024 * 1024 * 1024 - 1,
    }));
    await server.db.attachment.createMany({ data: big });
    try {
      await expectError(
        server.as("iago").POST("/export/realm", {}),
        400,
        "Please request a manual export from help@example.net.",
      );
    } finally {
      await server.db.attachment.deleteMany({
        where: { pathId: { in: big.map((b) => b.pathId) } },
      });
    }
  });

  it("is for administrators only", async () => {
    await expectError(
      server.as("shiva").POST("/export/realm", { body: { export_type: 1 } }),
      400,
      "Must be an organization administrator",
    );
    await expectError(
      server.as("hamlet").GET("/export/realm"),
      400,
      "Must be an organization administrator",
    );
  });
});

describe("making exports: failures and a process that died", () => {
  it("records a failure (the store refusing the file), which then cannot be deleted", async () => {
    const { id } = await expectSuccess(server.as("iago").POST("/export/realm", {}));
    // Where the store keeps exports is a file: putting the tarball there fails.
    const exportsDir = join(uploadsRoot(server.deps.config), "avatars", "exports");
    rmSync(exportsDir, { recursive: true, force: true });
    mkdirSync(join(exportsDir, ".."), { recursive: true });
    writeFileSync(exportsDir, "not a directory");
    try {
      expect(await server.realmExports.deliverDue()).toEqual({ succeeded: [], failed: [id] });
    } finally {
      rmSync(exportsDir, { force: true });
    }
    const failed = (await listExports()).find((e) => e.id === id)!;
    expect(failed).toMatchObject({ pending: false, export_url: null });
    expect(failed.failed_timestamp).toEqual(expect.any(Number));
    await expectError(
      server
        .as("iago")
        .DELETE("/export/realm/{export_id}", { params: { path: { export_id: id } } }),
      400,
      "Export failed, nothing to delete",
    );
  });

  it("makes again an export whose process died, once its claim ran out", async () => {
    const { id } = await expectSuccess(server.as("iago").POST("/export/realm", {}));
    await expectError(
      server
        .as("iago")
        .DELETE("/export/realm/{export_id}", { params: { path: { export_id: id } } }),
      400,
      "Export still in progress",
    );
    // Another process claimed it and died: its claim is still running, then ran out.
    await server.db.realmExport.update({
      where: { id },
      data: { status: 2, claimedBy: "dead", claimedUntil: new Date(Date.now() + 60_000) },
    });
    expect(await server.realmExports.deliverDue()).toEqual({ succeeded: [], failed: [] });
    await server.db.realmExport.update({
      where: { id },
      data: { claimedUntil: new Date(Date.now() - 1) },
    });
    expect(await server.realmExports.deliverDue()).toEqual({ succeeded: [id], failed: [] });
  });
});

describe("DELETE /export/realm/{export_id}", () => {
  it("deletes a made export's file and keeps it listed as deleted; refuses again, and another organization's", async () => {
    const made = (await listExports()).find((e) => e.export_url !== null)!;
    const events = await queueOf(server, "desdemona", ["realm_export"]);
    await expectSuccess(
      server
        .as("desdemona")
        .DELETE("/export/realm/{export_id}", { params: { path: { export_id: made.id } } }),
    );
    const deleted = (await listExports()).find((e) => e.id === made.id)!;
    expect(deleted).toMatchObject({ export_url: null, pending: false });
    expect(deleted.deleted_timestamp).toEqual(expect.any(Number));
    expect((await fetch(server.baseUrl + new URL(made.export_url!).pathname)).status).toBe(404);
    expect((await events()).map((e: any) => e.type)).toEqual(["realm_export"]);
    await expectError(
      server
        .as("iago")
        .DELETE("/export/realm/{export_id}", { params: { path: { export_id: made.id } } }),
      400,
      "Export already deleted",
    );
    await expectError(
      server
        .as("iago")
        .DELETE("/export/realm/{export_id}", { params: { path: { export_id: 99_999_999 } } }),
      400,
      "Invalid data export ID",
    );
    // Beyond the database's integers too.
    await expectError(
      server
        .as("iago")
        .DELETE("/export/realm/{export_id}", { params: { path: { export_id: 2 ** 31 } } }),
      400,
      "Invalid data export ID",
    );
  });
});

describe("GET /export/realm/consents", () => {
  it("gives each active human user's allow_private_data_export, following the setting, and tells the administrators", async () => {
    const events = await queueOf(server, "iago", ["realm_export_consent"]);
    const memberEvents = await queueOf(server, "othello", ["realm_export_consent"]);
    await setConsent("hamlet", true);
    // A user who joins enters the list too (their consent, the organization's default).
    const realm = await server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
    const joined = await doCreateUserWithDefaultChannels(server.deps, realm, {
      email: "newcomer@zulip.com",
      fullName: "Newcomer",
      role: 400,
    });
    const received = await events();
    expect(received).toEqual([
      { type: "realm_export_consent", user_id: user("hamlet").user_id, consented: true },
      { type: "realm_export_consent", user_id: joined.id, consented: false },
    ]);
    expect(zulipEventErrors({ id: 1, ...(received[0] as { type: string }) })).toEqual([]);
    expect(await memberEvents()).toEqual([]);
    const { export_consents } = await expectSuccess(
      server.as("iago").GET("/export/realm/consents"),
    );
    const consents = new Map(export_consents.map((c) => [c.user_id, c.consented]));
    expect(consents.get(user("hamlet").user_id)).toBe(true);
    expect(consents.get(user("othello").user_id)).toBe(false);
    const humans = await server.db.userProfile.count({
      where: { realmId: server.creds.realm.id, isActive: true, isBot: false },
    });
    expect(export_consents).toHaveLength(humans);
    const bot = await server.db.userProfile.findFirst({
      where: { realmId: server.creds.realm.id, isBot: true },
    });
    expect(consents.has(bot!.id)).toBe(false);
  });

  it("is for administrators only", async () => {
    await expectError(
      server.as("polonius").GET("/export/realm/consents"),
      400,
      "Must be an organization administrator",
    );
  });
});
