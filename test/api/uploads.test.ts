/**
 * Uploads and attachments: POST /user_uploads (multipart, as browsers, curl and
 * python-zulip-api send it), the files served at /user_uploads/… to those who may see them,
 * temporary URLs, messages claiming the files they link, and an edit's detached uploads.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { doCreateChannel } from "../../server/actions/channels/channels.ts";
import { doSubscribe } from "../../server/actions/channels/subscriptions.ts";
import { inTransaction } from "../../server/actions/transaction.ts";
import type { RequestInfo } from "../../server/context.ts";
import {
  claimAttachments,
  reconcileMessageAttachments,
} from "../../server/lib/uploads/attachments.ts";
import { sanitizeName } from "../../server/lib/uploads/uploads.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { sendDirect, sendToChannel } from "../helpers/builders.ts";

const dataDir = mkdtempSync(join(tmpdir(), "uploads-test-"));
const server = useTestServer({ dataDir, maxFileUploadSizeMib: 1 });
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const MiB = 1024 * 1024;
const uploadsDir = () => join(dataDir, "uploads");

function credsOf(who: string) {
  return server.creds.users[who] ?? server.creds.bots[who]!;
}
function basic(who: string) {
  const c = credsOf(who);
  return "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64");
}

interface Part {
  name?: string;
  filename?: string;
  /** The part's Content-Type; none when absent (python-zulip-api sends none). */
  type?: string;
  data: string | Buffer;
}

/** A multipart body written byte by byte, as clients put it on the wire. */
function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = "----zulipTestBoundary7MA4YWxkTrZu0gW";
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name ?? "file"}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    if (p.type) head += `\r\nContent-Type: ${p.type}`;
    chunks.push(Buffer.from(head + "\r\n\r\n", "utf8"), Buffer.from(p.data), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POST /user_uploads with plain fetch; the JSON answer is checked against the spec. */
async function post(
  body: FormData | Buffer | string,
  {
    as = "hamlet",
    contentType,
    query = "",
  }: { as?: string | null; contentType?: string; query?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (as) headers.Authorization = basic(as);
  if (contentType) headers["Content-Type"] = contentType;
  const url = `${server.baseUrl}/api/v1/user_uploads${query}`;
  const response = await fetch(url, { method: "POST", headers, body });
  const json = (await response.json()) as any;
  expect(checkResponse("POST", url, response.status, json)).toBeNull();
  return { status: response.status, json };
}

async function upload(
  as: string,
  filename: string,
  data: string | Buffer = "zulip!",
  type = "text/plain",
) {
  const form = new FormData();
  form.append("file", new Blob([data], { type }), filename);
  const { status, json } = await post(form, { as });
  expect(status, JSON.stringify(json)).toBe(200);
  return {
    url: json.url as string,
    pathId: (json.url as string).slice("/user_uploads/".length),
    filename: json.filename as string,
  };
}

/** GET of a file URL outside /api/v1 (the body as bytes, or the JSON error). */
async function getFile(
  path: string,
  { as, query = "" }: { as?: string | null; query?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (as) headers.Authorization = basic(as);
  const response = await fetch(`${server.baseUrl}${path}${query}`, { headers });
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get("content-type")?.startsWith("application/json")
    ? JSON.parse(bytes.toString("utf8"))
    : undefined;
  return { status: response.status, headers: response.headers, bytes, json };
}

async function expectFileError(path: string, as: string | null, status: number, msg: string) {
  const r = await getFile(path, { as });
  expect({ status: r.status, msg: r.json?.msg, result: r.json?.result }).toEqual({
    status,
    msg,
    result: "error",
  });
}

const attachmentRow = (pathId: string) =>
  server.db.attachment.findUniqueOrThrow({
    where: { pathId },
    include: { messages: true, scheduledMessages: true },
  });
const hasAttachment = async (id: number) =>
  (await server.db.message.findUniqueOrThrow({ where: { id }, select: { hasAttachment: true } }))
    .hasAttachment;
const incoming = () =>
  existsSync(join(uploadsDir(), ".incoming")) ? readdirSync(join(uploadsDir(), ".incoming")) : [];

describe("POST /user_uploads", () => {
  it("stores a file sent as multipart with Basic auth and answers Zulip's url, uri and filename", async () => {
    const form = new FormData();
    form.append("file", new Blob(["zulip!"], { type: "text/plain" }), "zulip.txt");
    const { status, json } = await post(form);
    expect(status).toBe(200);
    const realmId = server.creds.realm.id;
    expect(json.url).toMatch(
      new RegExp(`^/user_uploads/${realmId}/[0-9a-f]{1,2}/[A-Za-z0-9_-]{24}/zulip\\.txt$`),
    );
    expect(json).toMatchObject({
      result: "success",
      msg: "",
      uri: json.url,
      filename: "zulip.txt",
    });
    const pathId = json.url.slice("/user_uploads/".length);
    expect(readFileSync(join(uploadsDir(), pathId), "utf8")).toBe("zulip!");
    const row = await attachmentRow(pathId);
    expect(row).toMatchObject({
      realmId,
      ownerId: credsOf("hamlet").user_id,
      fileName: "zulip.txt",
      size: 6,
      contentType: "text/plain",
      messages: [],
    });
    expect(incoming()).toEqual([]);
  });

  it("takes a FormData body through the typed client", async () => {
    const form = new FormData();
    form.append(
      "file",
      new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47])], { type: "image/png" }),
      "pic.png",
    );
    const data = await expectSuccess(
      server.as("othello").POST("/user_uploads", {
        body: form,
        bodySerializer: (b: unknown) => b,
        headers: { "Content-Type": null },
      }),
    );
    expect(data.filename).toBe("pic.png");
    const row = await attachmentRow(data.url.slice("/user_uploads/".length));
    expect(row).toMatchObject({
      contentType: "image/png",
      size: 4,
      ownerId: credsOf("othello").user_id,
    });
  });

  it("refuses a request without a file, a second file, and a file over the limit, and keeps nothing", async () => {
    const before = await server.db.attachment.count();
    const none = "You must specify a file to upload";
    expect((await post("", { contentType: "application/x-www-form-urlencoded" })).json.msg).toBe(
      none,
    );
    expect(
      (
        await post(multipart([{ name: "note", data: "only a field" }]).body, {
          contentType: multipart([]).contentType,
        })
      ).json.msg,
    ).toBe(none);
    // A part with an empty file name is not a file (Django skips it).
    const empty = multipart([{ filename: "", type: "text/plain", data: "x" }]);
    expect((await post(empty.body, { contentType: empty.contentType })).json.msg).toBe(none);

    const two = new FormData();
    two.append("f1", new Blob(["bah!"]), "a.txt");
    two.append("f2", new Blob(["pshaw!"]), "b.txt");
    expect(await post(two)).toEqual({
      status: 400,
      json: { result: "error", msg: "You may only upload one file at a time", code: "BAD_REQUEST" },
    });

    const big = new FormData();
    big.append("file", new Blob([Buffer.alloc(MiB + 1, 97)]), "big.txt");
    expect(await post(big)).toEqual({
      status: 400,
      json: {
        result: "error",
        msg: "File is larger than this server's configured maximum upload size (1 MiB).",
        code: "BAD_REQUEST",
      },
    });

    expect(await server.db.attachment.count()).toBe(before);
    expect(incoming()).toEqual([]);
  });

  it("accepts a file of exactly the size limit", async () => {
    const { pathId } = await upload(
      "hamlet",
      "exact.bin",
      Buffer.alloc(MiB, 1),
      "application/octet-stream",
    );
    expect((await attachmentRow(pathId)).size).toBe(MiB);
  });

  it("authenticates before judging the body, and refuses a malformed multipart body with 400", async () => {
    const big = new FormData();
    big.append("file", new Blob([Buffer.alloc(MiB + 10)]), "big.txt");
    const anonymous = await post(big, { as: null });
    expect(anonymous.status).toBe(401);
    const truncated = multipart([{ filename: "cut.txt", type: "text/plain", data: "abc" }]);
    const cut = await post(truncated.body.subarray(0, truncated.body.length - 20), {
      contentType: truncated.contentType,
    });
    expect(cut).toEqual({
      status: 400,
      json: { result: "error", msg: "Invalid multipart body", code: "BAD_REQUEST" },
    });
    const noBoundary = await post("--x\r\n\r\n", { contentType: "multipart/form-data" });
    expect(noBoundary.json).toEqual({
      result: "error",
      msg: "Invalid multipart body",
      code: "BAD_REQUEST",
    });
    expect(incoming()).toEqual([]);
  });

  it("keeps nothing of an upload whose client goes away mid-body, and goes on serving", async () => {
    const before = await server.db.attachment.count();
    const { body, contentType } = multipart([
      { filename: "half.txt", type: "text/plain", data: Buffer.alloc(512 * 1024, 98) },
    ]);
    const { hostname, port } = new URL(server.baseUrl);
    await new Promise<void>((resolve) => {
      const req = request({
        host: hostname,
        port,
        method: "POST",
        path: "/api/v1/user_uploads",
        headers: {
          Authorization: basic("hamlet"),
          "Content-Type": contentType,
          "Content-Length": String(body.length),
        },
      });
      req.on("error", () => resolve());
      req.write(body.subarray(0, 300 * 1024), () => setTimeout(() => req.destroy(), 100));
      req.on("close", () => resolve());
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(incoming()).toEqual([]);
    expect(await server.db.attachment.count()).toBe(before);
    await upload("hamlet", "after.txt");
  });

  it("records an upload in one short transaction", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      await upload("hamlet", "warm.txt");
      seen.length = 0;
      await upload("hamlet", "counted.txt");
      // BEGIN, the attachment row, the event log, COMMIT.
      expect(seen.map((i) => [i.operationId, i.statements])).toEqual([["upload-file", 4]]);
    } finally {
      server.deps.observe = undefined;
    }
  });

  it("reports other parameters, from the body and the query string, as ignored", async () => {
    const { body, contentType } = multipart([
      { name: "note", data: "hi" },
      { filename: "q.txt", type: "text/plain", data: "q" },
    ]);
    const r = await post(body, { contentType, query: "?client=test" });
    expect(r.status).toBe(200);
    expect(r.json.ignored_parameters_unsupported).toEqual(["client", "note"]);
  });

  it("records percent-encoded and Unicode names decoded, and sanitizes the stored name as Zulip does", async () => {
    const encoded = multipart([
      { filename: encodeURIComponent("Здравейте.txt"), type: "text/plain", data: "bah!" },
    ]);
    const r = await post(encoded.body, { contentType: encoded.contentType });
    expect(r.json.filename).toBe("Здравейте.txt");
    expect(r.json.url).toMatch(/\/Здравейте\.txt$/);
    const raw = multipart([
      { filename: "some 例 thing! ... like this?", type: "text/plain", data: "x" },
    ]);
    expect((await post(raw.body, { contentType: raw.contentType })).json.url).toMatch(
      /\/some-例-thing-\.\.\.-like-this$/,
    );
    for (const [name, stored] of [
      ["../foo", "foo"],
      [".. ", "uploaded-file"],
      [".!", "uploaded-file"],
      ["**", "uploaded-file"],
      ["a\u0000b.txt", "ab.txt"],
    ] as const) {
      const part = multipart([
        { filename: encodeURIComponent(name).replace(/%2F/g, "/"), type: "text/plain", data: "x" },
      ]);
      const res = await post(part.body, { contentType: part.contentType });
      expect(res.status, name).toBe(200);
      expect(res.json.url.split("/").at(-1), name).toBe(stored);
    }
    expect(sanitizeName("x".repeat(300) + ".txt")).toBe("x".repeat(251) + ".txt");
    expect(sanitizeName("é".repeat(200))).toHaveLength(127);
  });

  it("guesses the type of a part sent without one from its name, as Zulip does for python-zulip-api", async () => {
    for (const [filename, type] of [
      ["photo.png", "image/png"],
      ["notes.txt", "text/plain"],
      ["blob", "application/octet-stream"],
    ] as const) {
      const part = multipart([{ filename, data: "x" }]);
      const r = await post(part.body, { contentType: part.contentType });
      expect((await attachmentRow(r.json.url.slice(14))).contentType, filename).toBe(type);
    }
  });

  it("tells the uploader's clients with an attachment event", async () => {
    const { queue_id } = await expectSuccess(
      server.as("cordelia").POST("/register", { body: { event_types: ["attachment"] } }),
    );
    const { pathId } = await upload("cordelia", "event.txt", "twelve bytes");
    const { events } = await expectSuccess(
      server
        .as("cordelia")
        .GET("/events", { params: { query: { queue_id: queue_id!, dont_block: true } } }),
    );
    const row = await attachmentRow(pathId);
    expect(events).toEqual([
      expect.objectContaining({
        type: "attachment",
        op: "add",
        attachment: {
          id: row.id,
          name: "event.txt",
          path_id: pathId,
          size: 12,
          create_time: Math.floor(row.createTime.getTime() / 1000),
          message_ids: [],
        },
      }),
    ]);
    const total = await server.db.attachment.aggregate({
      where: { realmId: server.creds.realm.id },
      _sum: { size: true },
    });
    expect(events[0]!.type === "attachment" && events[0]!.upload_space_used).toBe(total._sum.size);
  });
});

describe("serving files", () => {
  it("serves the uploader their file with Basic auth or an api_key parameter, and refuses others", async () => {
    const { url } = await upload("hamlet", "mine.txt", "hamlet's");
    const mine = await getFile(url, { as: "hamlet" });
    expect(mine.status).toBe(200);
    expect(mine.bytes.toString()).toBe("hamlet's");
    expect(mine.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(mine.headers.get("content-disposition")).toBe('inline; filename="mine.txt"');
    expect(mine.headers.get("cache-control")).toBe("private, immutable");
    expect(mine.headers.get("x-content-type-options")).toBe("nosniff");
    expect(
      (await getFile(url, { query: `?api_key=${credsOf("hamlet").api_key}` })).bytes.toString(),
    ).toBe("hamlet's");

    await expectFileError(url, "othello", 403, "You are not authorized to view this file.");
    await expectFileError(
      url,
      null,
      401,
      "Not logged in: API authentication or user session required",
    );
    expect((await getFile(url, { query: "?api_key=invalid" })).json.msg).toBe("Invalid API key");
    expect((await getFile(url, { query: "?api_key=" + "a".repeat(32) })).status).toBe(401);
  });

  it("answers 404 for an unknown file, or a path that is not valid percent-encoding", async () => {
    const realmId = server.creds.realm.id;
    await expectFileError(
      `/user_uploads/${realmId}/ff/gg/abc.py`,
      "hamlet",
      404,
      "This file does not exist or has been deleted.",
    );
    await expectFileError(
      `/user_uploads/${realmId}/ff/%E0%A4%A/abc.py`,
      "hamlet",
      404,
      "This file does not exist or has been deleted.",
    );
  });

  it("serves unsafe types and /user_uploads/download/… as downloads, names encoded as RFC 6266 says", async () => {
    const html = await upload("hamlet", "page.html", "<script>alert(1)</script>", "text/html");
    const served = await getFile(html.url, { as: "hamlet" });
    expect(served.headers.get("content-type")).toMatch(/^text\/html/);
    expect(served.headers.get("content-disposition")).toBe('attachment; filename="page.html"');
    const image = await upload("hamlet", "áéБД.png", "png", "image/png");
    const inline = await getFile(image.url, { as: "hamlet" });
    expect(inline.headers.get("content-disposition")).toBe(
      "inline; filename*=utf-8''%C3%A1%C3%A9%D0%91%D0%94.png",
    );
    const download = await getFile(image.url.replace("/user_uploads/", "/user_uploads/download/"), {
      as: "hamlet",
    });
    expect(download.headers.get("content-disposition")).toBe(
      "attachment; filename*=utf-8''%C3%A1%C3%A9%D0%91%D0%94.png",
    );
    expect(download.bytes.toString()).toBe("png");
  });

  it("answers 404 when the file's contents are gone", async () => {
    const { url, pathId } = await upload("hamlet", "gone.txt");
    rmSync(join(uploadsDir(), pathId));
    await expectFileError(url, "hamlet", 404, "File not found");
  });
});

describe("access through messages", () => {
  it("lets the recipients of a direct message see its files, and no one else", async () => {
    const { url, pathId } = await upload("hamlet", "dm.txt", "secret");
    const { id } = await sendDirect(server.as("hamlet"), {
      to: [credsOf("othello").user_id],
      content: `[dm.txt](${url})`,
    });
    expect((await attachmentRow(pathId)).messages.map((m) => m.messageId)).toEqual([id]);
    expect(await hasAttachment(id)).toBe(true);
    expect((await getFile(url, { as: "othello" })).bytes.toString()).toBe("secret");
    await expectFileError(url, "iago", 403, "You are not authorized to view this file.");
  });

  it("opens a public channel's files to every member but guests who are not subscribed", async () => {
    const { url } = await upload("hamlet", "scotland.txt", "public");
    await sendToChannel(server.as("hamlet"), {
      to: "Scotland",
      topic: "files",
      content: `look: [scotland.txt](${url})`,
    });
    // Cordelia is not subscribed to Scotland; Polonius is a guest.
    expect((await getFile(url, { as: "cordelia" })).status).toBe(200);
    await expectFileError(url, "polonius", 403, "You are not authorized to view this file.");
    const scotland = await server.db.stream.findFirstOrThrow({ where: { name: "Scotland" } });
    await server.db.$transaction((tx) =>
      doSubscribe(tx, server.creds.realm.id, scotland, [credsOf("polonius").user_id]),
    );
    expect((await getFile(url, { as: "polonius" })).bytes.toString()).toBe("public");
  });

  it("keeps a private channel's files to those who received them when its history is protected", async () => {
    const { url } = await upload("iago", "core.txt", "core");
    await sendToChannel(server.as("iago"), {
      to: "core team",
      topic: "files",
      content: `[core.txt](${url})`,
    });
    expect((await getFile(url, { as: "desdemona" })).status).toBe(200);
    await expectFileError(url, "hamlet", 403, "You are not authorized to view this file.");
    const core = await server.db.stream.findFirstOrThrow({ where: { name: "core team" } });
    await server.db.$transaction((tx) =>
      doSubscribe(tx, server.creds.realm.id, core, [credsOf("aaron").user_id]),
    );
    await expectFileError(url, "aaron", 403, "You are not authorized to view this file.");
  });

  it("opens a private channel's files to later subscribers when its history is shared", async () => {
    const realmId = server.creds.realm.id;
    const users = [credsOf("hamlet").user_id, credsOf("polonius").user_id];
    const stream = await server.db.$transaction(async (tx) => {
      const s = await doCreateChannel(tx, realmId, {
        name: "shared secrets",
        inviteOnly: true,
        historyPublicToSubscribers: true,
      });
      await doSubscribe(tx, realmId, s, users);
      return s;
    });
    const { url } = await upload("hamlet", "shared.txt", "shared");
    await sendToChannel(server.as("hamlet"), {
      to: stream.id,
      topic: "files",
      content: `[shared.txt](${url})`,
    });
    expect((await getFile(url, { as: "polonius" })).status).toBe(200);
    await expectFileError(url, "prospero", 403, "You are not authorized to view this file.");
    await server.db.$transaction((tx) =>
      doSubscribe(tx, realmId, stream, [credsOf("prospero").user_id]),
    );
    expect((await getFile(url, { as: "prospero" })).bytes.toString()).toBe("shared");
  });

  it("claims links on the organization's host and several files at once, not links in code", async () => {
    const a = await upload("hamlet", "a.txt");
    const b = await upload("hamlet", "b.txt");
    const c = await upload("hamlet", "c.txt");
    const content = `http://zulip.testserver${a.url} and [b](${b.url}?download#x)\n\n\`\`\`\n[c](${c.url})\n\`\`\``;
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "files",
      content,
    });
    expect((await attachmentRow(a.pathId)).messages.map((m) => m.messageId)).toEqual([id]);
    expect((await attachmentRow(b.pathId)).messages.map((m) => m.messageId)).toEqual([id]);
    expect((await attachmentRow(c.pathId)).messages).toEqual([]);
    // A second message claims the same file again.
    const again = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "files",
      content: `[a](${a.url})`,
    });
    expect((await attachmentRow(a.pathId)).messages.map((m) => m.messageId).sort()).toEqual(
      [id, again.id].sort(),
    );
  });

  it("does not let a user share a file they cannot see, nor mark a message by a link to nothing", async () => {
    const { url, pathId } = await upload("hamlet", "private.txt", "mine only");
    const { id } = await sendToChannel(server.as("cordelia"), {
      to: "Verona",
      topic: "files",
      content: `[stolen](${url})`,
    });
    expect((await attachmentRow(pathId)).messages).toEqual([]);
    expect(await hasAttachment(id)).toBe(false);
    await expectFileError(url, "othello", 403, "You are not authorized to view this file.");
    const fake = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "files",
      content: `[x](/user_uploads/${server.creds.realm.id}/64/fake_path_id.txt)`,
    });
    expect(await hasAttachment(fake.id)).toBe(false);
  });

  it("costs a message without upload links no statement, and one with links two more (claiming, image previews)", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      const count = async (content: string) => {
        seen.length = 0;
        await sendToChannel(server.as("hamlet"), { to: "Verona", topic: "budget", content });
        return seen.find((i) => i.operationId === "send-message")!.statements;
      };
      await count("warm up");
      const plain = await count("no link here");
      const { url } = await upload("hamlet", "budget.txt");
      const linked = await count(`[budget](${url})`);
      // The claim, and one look-up of the linked uploads' thumbnails for rendering.
      expect(linked).toBe(plain + 2);
    } finally {
      server.deps.observe = undefined;
    }
  });
});

describe("GET /user_uploads/{realm_id_str}/{filename}", () => {
  const split = (pathId: string) => {
    const [realm, ...rest] = pathId.split("/");
    return { realm_id_str: realm!, filename: rest.join("/") };
  };

  it("gives a temporary URL that serves the file without authentication, for 60 seconds", async () => {
    const { pathId } = await upload("hamlet", "temp.txt", "temporary");
    const { url } = await expectSuccess(
      server
        .as("hamlet")
        .GET("/user_uploads/{realm_id_str}/{filename}", { params: { path: split(pathId) } }),
    );
    expect(url).toMatch(/^\/user_uploads\/temporary\/[0-9A-F]+\/temp\.txt$/);
    const served = await getFile(url);
    expect(served.status).toBe(200);
    expect(served.bytes.toString()).toBe("temporary");
    expect(served.headers.get("content-disposition")).toBe('inline; filename="temp.txt"');

    const token = url.split("/")[3]!;
    await expectFileError(url.replace("temp.txt", "other.txt"), null, 400, "Invalid filename");
    const altered = token.slice(0, -2) + (token.endsWith("41") ? "42" : "41");
    await expectFileError(
      `/user_uploads/temporary/${altered}/temp.txt`,
      null,
      400,
      "Invalid token",
    );
    await expectFileError(`/user_uploads/temporary/nothex/temp.txt`, null, 400, "Invalid token");
    const realNow = server.deps.now;
    server.deps.now = () => new Date(Date.now() + 61_000);
    try {
      await expectFileError(url, null, 400, "Invalid token");
    } finally {
      server.deps.now = realNow;
    }
  });

  it("takes the path with its slashes as the URL has them, and answers 403 and 404 as the file URL does", async () => {
    const { pathId } = await upload("hamlet", "slashes.txt");
    const url = `${server.baseUrl}/api/v1/user_uploads/${pathId}`;
    const response = await fetch(url, { headers: { Authorization: basic("hamlet") } });
    const json = (await response.json()) as { url: string };
    expect(
      checkResponse(
        "GET",
        `${server.baseUrl}/api/v1/user_uploads/${split(pathId).realm_id_str}/${encodeURIComponent(split(pathId).filename)}`,
        response.status,
        json,
      ),
    ).toBeNull();
    expect(json.url).toMatch(/\/slashes\.txt$/);

    await expectError(
      server
        .as("othello")
        .GET("/user_uploads/{realm_id_str}/{filename}", { params: { path: split(pathId) } }),
      403,
      "You are not authorized to view this file.",
    );
    await expectError(
      server.as("hamlet").GET("/user_uploads/{realm_id_str}/{filename}", {
        params: {
          path: { realm_id_str: String(server.creds.realm.id), filename: "ff/gg/none.txt" },
        },
      }),
      404,
      "This file does not exist or has been deleted.",
    );
    await expectError(
      server
        .client()
        .GET("/user_uploads/{realm_id_str}/{filename}", { params: { path: split(pathId) } }),
      401,
      "Not logged in: API authentication or user session required",
    );
  });

  it("runs one statement on a warm server", async () => {
    const { pathId } = await upload("hamlet", "count.txt");
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      const ask = () =>
        expectSuccess(
          server
            .as("hamlet")
            .GET("/user_uploads/{realm_id_str}/{filename}", { params: { path: split(pathId) } }),
        );
      await ask();
      seen.length = 0;
      await ask();
      expect(seen.map((i) => i.statements)).toEqual([1]);
    } finally {
      server.deps.observe = undefined;
    }
  });
});

describe("reconcileMessageAttachments", () => {
  const realm = () => server.db.realm.findUniqueOrThrow({ where: { id: server.creds.realm.id } });
  const user = (who: string) =>
    server.db.userProfile.findUniqueOrThrow({ where: { id: credsOf(who).user_id } });
  const reconcile = async (
    who: string,
    message: { id: number; senderId: number },
    content: string,
  ) => {
    const [r, editor] = await Promise.all([realm(), user(who)]);
    return inTransaction(server.deps, r.id, ({ tx }) =>
      reconcileMessageAttachments(tx, r, editor, message, content),
    );
  };
  const linkedIds = async (messageId: number) =>
    (
      await server.db.attachmentMessage.findMany({
        where: { messageId },
        select: { attachmentId: true },
        orderBy: { attachmentId: "asc" },
      })
    ).map((r) => r.attachmentId);

  it("unlinks removed files, claims new ones, keeps has_attachment, and returns the editor's files left unreferenced", async () => {
    const f1 = await upload("hamlet", "file1.txt", "file1");
    const f2 = await upload("hamlet", "file2.txt", "file2");
    const f3 = await upload("hamlet", "file3.txt", "file3");
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "edit",
      content: `[f1](${f1.url}) [f2](${f2.url})`,
    });
    const message = { id, senderId: credsOf("hamlet").user_id };
    const [a1, a2, a3] = await Promise.all([f1, f2, f3].map((f) => attachmentRow(f.pathId)));

    const detached = await reconcile(
      "hamlet",
      message,
      `[f3](http://zulip.testserver${f3.url}) [f2](${f2.url})`,
    );
    expect(detached).toEqual([
      {
        id: a1!.id,
        name: "file1.txt",
        path_id: f1.pathId,
        size: 5,
        create_time: Math.floor(a1!.createTime.getTime() / 1000),
        message_ids: [],
      },
    ]);
    expect(await linkedIds(id)).toEqual([a2!.id, a3!.id]);
    expect(await hasAttachment(id)).toBe(true);

    // f2 is also linked by another message: only f3 is left with no reference.
    await sendDirect(server.as("hamlet"), {
      to: [credsOf("othello").user_id],
      content: `[f2](${f2.url})`,
    });
    const all = await reconcile("hamlet", message, "(deleted)");
    expect(all.map((d) => d.path_id)).toEqual([f3.pathId]);
    expect(await linkedIds(id)).toEqual([]);
    expect(await hasAttachment(id)).toBe(false);
    // Unchanged content changes nothing.
    expect(await reconcile("hamlet", message, "(deleted)")).toEqual([]);
  });

  it("does not report files of others, or files a scheduled message still references", async () => {
    const mine = await upload("hamlet", "keep.txt");
    const theirs = await upload("othello", "theirs.txt");
    const { id } = await sendDirect(server.as("hamlet"), {
      to: [credsOf("othello").user_id],
      content: `[k](${mine.url})`,
    });
    await sendDirect(server.as("othello"), {
      to: [credsOf("hamlet").user_id],
      content: `[t](${theirs.url})`,
    });
    const message = { id, senderId: credsOf("hamlet").user_id };
    // Hamlet can see Othello's file (he received it), so an edit may link it.
    expect(await reconcile("hamlet", message, `[k](${mine.url}) [t](${theirs.url})`)).toEqual([]);
    expect(await linkedIds(id)).toHaveLength(2);

    const [r, hamlet] = await Promise.all([realm(), user("hamlet")]);
    const recipient = await server.db.message.findUniqueOrThrow({
      where: { id },
      select: { recipientId: true, sendingClientId: true },
    });
    const scheduled = await server.db.scheduledMessage.create({
      data: {
        realmId: r.id,
        senderId: hamlet.id,
        recipientId: recipient.recipientId,
        content: `[k](${mine.url})`,
        sendingClientId: recipient.sendingClientId,
        scheduledTimestamp: new Date(Date.now() + 3_600_000),
      },
    });
    const claimed = await inTransaction(server.deps, r.id, ({ tx }) =>
      claimAttachments(tx, r, hamlet, { scheduledMessageId: scheduled.id }, scheduled.content),
    );
    expect(claimed).toBe(true);
    expect(
      (await server.db.scheduledMessage.findUniqueOrThrow({ where: { id: scheduled.id } }))
        .hasAttachment,
    ).toBe(true);

    expect(await reconcile("hamlet", message, "nothing")).toEqual([]);
    expect(await linkedIds(id)).toEqual([]);
  });

  it("claims nothing the editor cannot see", async () => {
    const hidden = await upload("iago", "hidden.txt");
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "edit",
      content: "plain",
    });
    expect(
      await reconcile("hamlet", { id, senderId: credsOf("hamlet").user_id }, `[h](${hidden.url})`),
    ).toEqual([]);
    expect(await linkedIds(id)).toEqual([]);
    expect(await hasAttachment(id)).toBe(false);
  });
});
