/**
 * The upload store on both backends (lib/uploads/upload-storage.ts): the same flows on the local disk
 * and on a real S3-compatible server on loopback (s3rver): upload, serving (on S3 a redirect to
 * a presigned URL, fetched like a browser follows it), access refused as before, temporary URLs,
 * custom emoji images, images' thumbnails, the retention loop deleting unclaimed and archived
 * uploads' files, and reading a file back as a stream (an organization export's files).
 * test/api/uploads.test.ts covers the rest of uploads in detail on the local disk.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessageRetention } from "../../server/workers/retention.ts";
import { createApp } from "../../server/app.ts";
import { configFromEnv, type Config } from "../../server/config.ts";
import { signingKey } from "../../server/lib/uploads/uploads.ts";
import { uploadStorage } from "../../server/lib/uploads/upload-storage.ts";
import { exportFiles } from "../../server/lib/export/export-files.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";
import { useTestServer } from "../helpers/server.ts";
import { basicAuth, uploadFile } from "../helpers/upload.ts";

/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
const DAY = 86_400_000;

describe.each(["local disk", "S3"] as const)("uploads on the %s", (backend) => {
  let s3: TestS3 | undefined;
  const overrides: Partial<Config> = {};
  if (backend === "S3") {
    // Before the server starts (hooks run in order), so that it is configured for this bucket.
    beforeAll(async () => {
      s3 = await startS3();
      overrides.s3 = s3.config;
    });
    afterAll(() => s3?.close());
  }
  const server = useTestServer(overrides);
  const retention = () => new MessageRetention(server.deps, { intervalMs: 3_600_000 });

  /** A path id's bytes in the store (the bucket's object, or the file under DATA_DIR), or null. */
  const stored = async (pathId: string): Promise<Buffer | null> => {
    if (s3) return s3.object(pathId);
    const file = join(server.deps.config.dataDir, "uploads", pathId);
    return existsSync(file) ? readFileSync(file) : null;
  };

  /**
   * A file URL fetched as a browser does: with S3 the server answers a redirect to a presigned
   * URL of the bucket (valid 60 s, as Zulip's), which is then fetched without credentials.
   */
  async function getFile(path: string, as?: string, baseUrl = server.baseUrl) {
    const headers: Record<string, string> = as ? { Authorization: basicAuth(server, as) } : {};
    let response = await fetch(baseUrl + path, { headers, redirect: "manual" });
    let redirected = false;
    if (response.status === 302) {
      const location = new URL(response.headers.get("location")!);
      expect(location.origin + location.pathname).toMatch(
        new RegExp(`^${s3!.config.endpointUrl}/${s3!.config.bucket}/`),
      );
      expect(location.searchParams.get("X-Amz-Expires")).toBe("60");
      response = await fetch(location);
      redirected = true;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const json = response.headers.get("content-type")?.startsWith("application/json")
      ? (JSON.parse(bytes.toString()) as { msg: string })
      : undefined;
    return { status: response.status, headers: response.headers, bytes, json, redirected };
  }

  async function served(path: string, as?: string, baseUrl?: string) {
    const r = await getFile(path, as, baseUrl);
    expect(r.status).toBe(200);
    expect(r.redirected).toBe(backend === "S3");
    return r;
  }

  it("stores an upload and serves it with today's headers, inline or as a download", async () => {
    const url = await uploadFile(server, "hamlet", "notes.txt", "hamlet's notes");
    const pathId = url.slice("/user_uploads/".length);
    expect((await stored(pathId))?.toString()).toBe("hamlet's notes");

    const file = await served(url, "hamlet");
    expect(file.bytes.toString()).toBe("hamlet's notes");
    expect(file.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(file.headers.get("content-disposition")).toBe('inline; filename="notes.txt"');
    expect(file.headers.get("cache-control")).toBe("private, immutable");
    const download = await served(
      url.replace("/user_uploads/", "/user_uploads/download/"),
      "hamlet",
    );
    expect(download.headers.get("content-disposition")).toBe('attachment; filename="notes.txt"');
    expect(download.bytes.toString()).toBe("hamlet's notes");

    if (s3) {
      // Nothing of it stays on this machine's disk.
      const uploads = join(server.deps.config.dataDir, "uploads");
      expect(readdirSync(uploads).filter((f) => f !== ".incoming")).toEqual([]);
      expect(readdirSync(join(uploads, ".incoming"))).toEqual([]);
    }
  });

  it("reads a stored file back as a stream, with its size and time (what an export copies), and nothing for a path id it lacks", async () => {
    const url = await uploadFile(server, "hamlet", "read.txt", "read me back");
    const pathId = url.slice("/user_uploads/".length);
    const storage = await uploadStorage(server.deps.config);
    const file = await storage.read(pathId);
    expect(file).toMatchObject({ size: "read me back".length, lastModified: expect.any(Date) });
    expect(Math.abs(file!.lastModified.getTime() - Date.now())).toBeLessThan(60_000);
    const chunks: Buffer[] = [];
    for await (const chunk of file!.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe("read me back");
    expect(await storage.read(`${pathId}.gone`)).toBeNull();

    // An organization export's files come from this store, whichever it is.
    const dir = mkdtempSync(join(tmpdir(), "export-files-"));
    try {
      const exported = await exportFiles(server.db, storage, server.creds.realm.id, dir);
      expect(exported.missing).toEqual([]);
      expect(readFileSync(join(dir, "uploads", pathId), "utf8")).toBe("read me back");
      const records = JSON.parse(readFileSync(join(dir, "uploads", "records.json"), "utf8"));
      expect(records.find((r: { path: string }) => r.path === pathId)).toMatchObject({
        s3_path: pathId,
        size: "read me back".length,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses others before any redirect, as before", async () => {
    const url = await uploadFile(server, "hamlet", "private.txt");
    for (const [as, status, msg] of [
      ["othello", 403, "You are not authorized to view this file."],
      [undefined, 401, "Not logged in: API authentication or user session required"],
    ] as const) {
      const r = await getFile(url, as);
      expect({ status: r.status, msg: r.json?.msg, redirected: r.redirected }).toEqual({
        status,
        msg,
        redirected: false,
      });
    }
    const realmId = server.creds.realm.id;
    const unknown = await getFile(`/user_uploads/${realmId}/ff/gg/none.txt`, "hamlet");
    expect([unknown.status, unknown.json?.msg]).toEqual([
      404,
      "This file does not exist or has been deleted.",
    ]);
  });

  it("serves a temporary URL without credentials, and refuses it once expired", async () => {
    const url = await uploadFile(server, "hamlet", "temp.txt", "temporary");
    const [realm_id_str, ...rest] = url.slice("/user_uploads/".length).split("/");
    const { url: temporary } = await expectSuccess(
      server.as("hamlet").GET("/user_uploads/{realm_id_str}/{filename}", {
        params: { path: { realm_id_str: realm_id_str!, filename: rest.join("/") } },
      }),
    );
    expect(temporary).toMatch(/^\/user_uploads\/temporary\/[0-9A-F]+\/temp\.txt$/);
    const file = await served(temporary);
    expect(file.bytes.toString()).toBe("temporary");
    expect(file.headers.get("content-disposition")).toBe('inline; filename="temp.txt"');
    // The key that signs it is the database's, which every machine shares.
    expect(await server.db.serverSecret.count()).toBe(1);

    const realNow = server.deps.now;
    server.deps.now = () => new Date(Date.now() + 61_000);
    try {
      const expired = await getFile(temporary);
      expect([expired.status, expired.json?.msg, expired.redirected]).toEqual([
        400,
        "Invalid token",
        false,
      ]);
    } finally {
      server.deps.now = realNow;
    }
  });

  it("serves a custom emoji's image publicly, and keeps it when the emoji is deactivated", async () => {
    const form = new FormData();
    form.append("file", new Blob([PNG], { type: "image/png" }), "img.png");
    const response = await fetch(`${server.baseUrl}/api/v1/realm/emoji/store_test`, {
      method: "POST",
      headers: { Authorization: basicAuth(server, "iago") },
      body: form,
    });
    expect(response.status).toBe(200);
    const { emoji } = await expectSuccess(server.as("hamlet").GET("/realm/emoji"));
    const sourceUrl = Object.values(emoji).find((e) => e.name === "store_test")!.source_url;
    const pathId = sourceUrl.replace(/^\/user_avatars\//, "avatars/");
    expect(await stored(pathId)).toEqual(PNG);

    const image = await served(sourceUrl);
    expect(image.bytes).toEqual(PNG);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("cache-control")).toBe("public, max-age=86400");

    await expectSuccess(
      server.as("iago").DELETE("/realm/emoji/{emoji_name}", {
        params: { path: { emoji_name: "store_test" } },
      }),
    );
    // Zulip only deactivates: old messages and reactions still show the image.
    expect(await stored(pathId)).toEqual(PNG);
  });

  it("deletes an unclaimed upload's file after DELETE_UNCLAIMED_ATTACHMENTS_WEEKS, and keeps a claimed one", async () => {
    const unclaimed = (await uploadFile(server, "hamlet", "unclaimed.txt")).slice(
      "/user_uploads/".length,
    );
    const claimedUrl = await uploadFile(server, "hamlet", "claimed.txt");
    const claimed = claimedUrl.slice("/user_uploads/".length);
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "files", content: `[c](${claimedUrl})` },
      }),
    );
    await server.db.attachment.updateMany({
      where: { pathId: { in: [unclaimed, claimed] } },
      data: { createTime: new Date(Date.now() - 6 * 7 * DAY) },
    });
    const report = await retention().deliverDue();
    expect(report.filesDeleted).toBe(1);
    expect(await stored(unclaimed)).toBeNull();
    expect(await stored(claimed)).not.toBeNull();
    expect(await server.db.attachment.count({ where: { pathId: unclaimed } })).toBe(0);
  });

  it("stores an image's thumbnail beside it, serves it as webp, and deletes it with it", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(PNG)], { type: "image/png" }), "pixel.png");
    const response = await fetch(`${server.baseUrl}/api/v1/user_uploads`, {
      method: "POST",
      headers: { Authorization: basicAuth(server, "hamlet") },
      body: form,
    });
    const pathId = ((await response.json()) as { url: string }).url.slice("/user_uploads/".length);
    const thumbnail = `thumbnail/${pathId}/840x560.webp`;
    expect((await stored(thumbnail))?.subarray(8, 12).toString()).toBe("WEBP");
    const file = await served(`/user_uploads/${thumbnail}`, "hamlet");
    expect(file.headers.get("content-type")).toBe("image/webp");
    expect(file.bytes.subarray(8, 12).toString()).toBe("WEBP");
    const refused = await getFile(`/user_uploads/${thumbnail}`, "othello");
    expect([refused.status, refused.redirected]).toEqual([403, false]);

    await server.db.attachment.updateMany({
      where: { pathId },
      data: { createTime: new Date(Date.now() - 6 * 7 * DAY) },
    });
    expect((await retention().deliverDue()).filesDeleted).toBe(1);
    expect(await stored(pathId)).toBeNull();
    expect(await stored(thumbnail)).toBeNull();
    expect(await server.db.imageAttachment.count({ where: { pathId } })).toBe(0);
  });

  it("deletes a deleted message's upload once the archive is vacuumed, not before", async () => {
    const url = await uploadFile(server, "hamlet", "archived.txt");
    const pathId = url.slice("/user_uploads/".length);
    const { id } = await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: "Verona", topic: "archive", content: `[a](${url})` },
      }),
    );
    await expectSuccess(
      server
        .as("hamlet")
        .DELETE("/messages/{message_id}", { params: { path: { message_id: id } } }),
    );
    await server.db.attachment.updateMany({
      where: { pathId },
      data: { createTime: new Date(Date.now() - 6 * 7 * DAY) },
    });
    // An archived message still links it.
    expect((await retention().deliverDue()).filesDeleted).toBe(0);
    expect(await stored(pathId)).not.toBeNull();

    const { archiveTransactionId } = await server.db.archivedMessage.findUniqueOrThrow({
      where: { id },
    });
    await server.db.archiveTransaction.update({
      where: { id: archiveTransactionId },
      data: { timestamp: new Date(Date.now() - 31 * DAY) },
    });
    expect((await retention().deliverDue()).filesDeleted).toBeGreaterThanOrEqual(1);
    expect(await stored(pathId)).toBeNull();
  });

  if (backend === "S3")
    it("lets another machine, with a DATA_DIR of its own, serve the files and the temporary URLs", async () => {
      const url = await uploadFile(server, "hamlet", "shared.txt", "shared");
      const dataDir = mkdtempSync(join(tmpdir(), "second-machine-"));
      const other: Server = await new Promise((resolve) => {
        // Its own database client (the test's handle is another object than the server's), so
        // it reads the signing key from the database rather than from the first one's cache.
        const app = createApp({
          ...server.deps,
          db: server.db,
          config: { ...server.deps.config, dataDir },
        });
        const s = app.listen(0, "127.0.0.1", () => resolve(s));
      });
      try {
        const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
        expect((await served(url, "hamlet", otherUrl)).bytes.toString()).toBe("shared");
        const [realm_id_str, ...rest] = url.slice("/user_uploads/".length).split("/");
        const { url: temporary } = await expectSuccess(
          server.as("hamlet").GET("/user_uploads/{realm_id_str}/{filename}", {
            params: { path: { realm_id_str: realm_id_str!, filename: rest.join("/") } },
          }),
        );
        expect((await served(temporary, undefined, otherUrl)).bytes.toString()).toBe("shared");
      } finally {
        other.closeAllConnections();
        await new Promise((resolve) => other.close(resolve));
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

  if (backend === "S3")
    it("makes one signing key when processes that have none ask for it at once", async () => {
      const saved = await server.db.serverSecret.findMany();
      await server.db.serverSecret.deleteMany();
      try {
        // Fresh handles on the database: each is a process that has no key in memory yet.
        const processes = [1, 2, 3].map(() => server.deps.db.$extends({}) as typeof server.deps.db);
        const keys = await Promise.all(processes.map(signingKey));
        expect(keys[0]).toHaveLength(32);
        expect(new Set(keys.map((k) => k.toString("hex"))).size).toBe(1);
        expect(await server.db.serverSecret.count()).toBe(1);
      } finally {
        await server.db.serverSecret.deleteMany();
        await server.db.serverSecret.createMany({ data: saved });
      }
    });
});

describe("S3 settings", () => {
  it("takes Zulip's names, and refuses a key without its secret or an unknown addressing style", () => {
    expect(configFromEnv({}).s3).toBeUndefined();
    expect(
      configFromEnv({
        S3_BUCKET: "uploads",
        S3_KEY: "k",
        S3_SECRET_KEY: "s",
        S3_REGION: "eu-west-3",
        S3_ENDPOINT_URL: "http://127.0.0.1:9000",
        S3_ADDRESSING_STYLE: "path",
      }).s3,
    ).toEqual({
      bucket: "uploads",
      key: "k",
      secretKey: "s",
      region: "eu-west-3",
      endpointUrl: "http://127.0.0.1:9000",
      addressingStyle: "path",
    });
    expect(configFromEnv({ S3_BUCKET: "uploads" }).s3).toMatchObject({
      key: undefined,
      region: "us-east-1",
      addressingStyle: "auto",
    });
    expect(() => configFromEnv({ S3_BUCKET: "b", S3_KEY: "k" })).toThrow(
      "S3_SECRET_KEY must be set together with S3_KEY",
    );
    expect(() => configFromEnv({ S3_BUCKET: "b", S3_ADDRESSING_STYLE: "dns" })).toThrow(
      'S3_ADDRESSING_STYLE must be "auto", "path" or "virtual", not "dns"',
    );
  });
});
