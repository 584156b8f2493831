/**
 * GET /attachments and DELETE /attachments/{attachment_id} (zerver/views/attachments.py,
 * zerver/tests/test_attachments.py): the caller's uploads with the messages that link them, the
 * organization's upload space, deleting one's own file (from the store too) with its `attachment`
 * remove event, and Zulip's "Invalid attachment" for anyone else's or an unknown ID.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { asUser, ofType, openQueue, sendToChannel } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { storedFilePath } from "../../server/lib/uploads/upload-storage.ts";

const dataDir = mkdtempSync(join(tmpdir(), "attachments-test-"));
const server = useTestServer({ dataDir });
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function upload(as: string, name: string, text: string) {
  const form = new FormData();
  form.append("file", new Blob([Buffer.from(text)], { type: "text/plain" }), name);
  const { url } = await expectSuccess(
    server.as(as).POST("/user_uploads", {
      body: form,
      bodySerializer: (b: unknown) => b,
      headers: { "Content-Type": null },
    }),
  );
  const pathId = url.slice("/user_uploads/".length);
  const row = await server.db.attachment.findUniqueOrThrow({ where: { pathId } });
  return { url, pathId, id: row.id, createTime: Math.floor(row.createTime.getTime() / 1000) };
}

const spaceUsed = async () =>
  (
    await server.db.attachment.aggregate({
      where: { realmId: server.creds.realm.id },
      _sum: { size: true },
    })
  )._sum.size ?? 0;

describe("GET /attachments", () => {
  it("lists the caller's files with the messages linking them, and the organization's space", async () => {
    const a = await upload("prospero", "one.txt", "first");
    const b = await upload("prospero", "two.txt", "second!");
    await upload("hamlet", "not-mine.txt", "hamlet's");
    const { id: msg } = await sendToChannel(asUser(server, "prospero"), {
      to: "Verona",
      topic: "files",
      content: `[one](${a.url})`,
    });
    const data = await expectSuccess(server.as("prospero").GET("/attachments"));
    expect(data.attachments).toEqual([
      {
        id: a.id,
        name: "one.txt",
        path_id: a.pathId,
        size: 5,
        create_time: a.createTime,
        message_ids: [msg],
      },
      {
        id: b.id,
        name: "two.txt",
        path_id: b.pathId,
        size: 7,
        create_time: b.createTime,
        message_ids: [],
      },
    ]);
    expect(data.upload_space_used).toBe(await spaceUsed());
  });

  it("answers an empty list to a user who uploaded nothing", async () => {
    const data = await expectSuccess(server.as("cordelia").GET("/attachments"));
    expect(data.attachments).toEqual([]);
    expect(data.upload_space_used).toBe(await spaceUsed());
  });
});

describe("DELETE /attachments/{attachment_id}", () => {
  it("deletes the caller's file from the store, with an attachment remove event", async () => {
    const file = await upload("othello", "gone.txt", "soon gone");
    const stored = storedFilePath({ dataDir }, file.pathId)!;
    expect(existsSync(stored)).toBe(true);
    const queue = await openQueue(asUser(server, "othello"), { event_types: ["attachment"] });
    await expectSuccess(
      server.as("othello").DELETE("/attachments/{attachment_id}", {
        params: { path: { attachment_id: file.id } },
      }),
    );
    expect(existsSync(stored)).toBe(false);
    expect(await server.db.attachment.findUnique({ where: { id: file.id } })).toBeNull();
    const [event] = ofType(await queue.nextEvents(), "attachment", "remove");
    expect(event).toMatchObject({
      type: "attachment",
      op: "remove",
      attachment: { id: file.id },
      upload_space_used: await spaceUsed(),
    });
    const served = await fetch(`${server.baseUrl}${file.url}`, {
      headers: {
        Authorization:
          "Basic " +
          Buffer.from(
            `${server.creds.users.othello!.email}:${server.creds.users.othello!.api_key}`,
          ).toString("base64"),
      },
    });
    expect(served.status).toBe(404);
  });

  it("refuses another user's file and an unknown ID with Zulip's text, changing nothing", async () => {
    const file = await upload("hamlet", "keep.txt", "kept");
    await expectError(
      server.as("othello").DELETE("/attachments/{attachment_id}", {
        params: { path: { attachment_id: file.id } },
      }),
      400,
      "Invalid attachment",
    );
    await expectError(
      server.as("iago").DELETE("/attachments/{attachment_id}", {
        params: { path: { attachment_id: 999999 } },
      }),
      400,
      "Invalid attachment",
    );
    expect(await server.db.attachment.findUnique({ where: { id: file.id } })).not.toBeNull();
  });

  it("takes the request as python-zulip-api sends it (DELETE, no body)", async () => {
    const file = await upload("iago", "py.txt", "python");
    const cred = server.creds.users.iago!;
    const response = await fetch(`${server.baseUrl}/api/v1/attachments/${file.id}`, {
      method: "DELETE",
      headers: {
        Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
      },
    });
    expect(await response.json()).toEqual({ result: "success", msg: "" });
  });
});
