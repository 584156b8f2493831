/**
 * POST /typing (zerver/tests/test_typing.py): every refusal in Zulip's order and text, the
 * `typing` events and who gets them, the statement budget, and the requests of Zulip's clients
 * (zulip-js, the mobile apps, the terminal) replayed as they put them on the wire.
 */
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { type Body, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => server.creds.users[name]!.user_id;
const email = (name: string) => server.creds.users[name]!.email;
const channel = (name: string) => server.creds.channels[name]!.stream_id;
const typing = (as: string, body: Body<"/typing", "post">) =>
  server.as(as).POST("/typing", { body: body });

/** A queue for typing events; `streamTyping`: the client declares `stream_typing_notifications`. */
async function openQueue(as: string, streamTyping = true) {
  const { queue_id } = await expectSuccess(
    server.as(as).POST("/register", {
      body: {
        event_types: ["typing"],
        client_capabilities: { stream_typing_notifications: streamTyping },
      },
    }),
  );
  return queue_id!;
}
async function eventsOf(as: string, queueId: string) {
  const { events } = await expectSuccess(
    server.as(as).GET("/events", {
      params: { query: { queue_id: queueId, last_event_id: -1, dont_block: true } },
    }),
  );
  return events as Record<string, unknown>[];
}
const setUser = (name: string, data: Record<string, boolean>) =>
  server.db.userProfile.update({ where: { id: id(name) }, data });

describe("POST /typing: refusals, in Zulip's order", () => {
  it("checks op, type and to as parameters, then what a direct notification needs", async () => {
    const to = [id("othello")];
    await expectError(typing("hamlet", untyped({ to })), 400, "Missing 'op' argument", {
      code: "REQUEST_VARIABLE_MISSING",
      var_name: "op",
    });
    await expectError(typing("hamlet", { to, op: untyped("foo") }), 400, "Invalid op");
    await expectError(
      typing("hamlet", { to, op: "start", type: untyped("invalid") }),
      400,
      "Invalid type",
    );
    // "private" was removed at feature level 215.
    await expectError(
      typing("hamlet", { to, op: "start", type: untyped("private") }),
      400,
      "Invalid type",
    );
    await expectError(typing("hamlet", { op: "start", to: untyped("2") }), 400, "to is not a list");
    await expectError(
      typing("hamlet", { op: "start", to: untyped('[2,"a",4]') }),
      400,
      "to[1] is not an integer",
    );
    await expectError(typing("hamlet", { op: "start", to: [] }), 400, "Empty 'to' list");
    await expectError(typing("hamlet", { op: "start" }), 400, "Missing 'to' argument", {
      code: "BAD_REQUEST",
    });
    await expectError(
      typing("hamlet", { op: "start", to: [id("othello"), 9999999] }),
      400,
      "Invalid user ID 9999999",
    );
    // A user of another organization is no user here (the id exists, in no realm of ours: a big one).
    await expectError(
      typing("hamlet", { op: "start", to: [2 ** 31] }),
      400,
      `Invalid user ID ${2 ** 31}`,
    );
  });

  it("checks what a channel notification needs, for `stream` and `channel` alike", async () => {
    for (const type of ["stream", "channel"] as const) {
      await expectError(
        typing("hamlet", { type, op: "start", topic: "test" }),
        400,
        "Missing 'stream_id' argument",
        { code: "BAD_REQUEST" },
      );
      await expectError(
        typing("hamlet", { type, op: "start", stream_id: untyped("invalid"), topic: "test" }),
        400,
        "stream_id is not valid JSON",
      );
      await expectError(
        typing("hamlet", { type, op: "start", stream_id: channel("Verona") }),
        400,
        "Missing topic",
      );
      await expectError(
        typing("hamlet", { type, op: "start", stream_id: 9999999, topic: "test" }),
        400,
        "Invalid channel ID",
      );
      // A private channel the caller is not subscribed to exists for nobody but its subscribers.
      await expectError(
        typing("hamlet", { type, op: "start", stream_id: channel("core team"), topic: "test" }),
        400,
        "Invalid channel ID",
      );
    }
    // `to` is ignored for channels: the missing stream_id is reported, not a list problem.
    await expectError(
      typing("hamlet", { type: "stream", op: "start", to: [channel("Verona")], topic: "t" }),
      400,
      "Missing 'stream_id' argument",
    );
  });

  it("refuses an archived channel, and a channel the caller may not post in", async () => {
    const { id: stream_id } = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: { name: "typing archive", subscribers: [id("iago"), id("hamlet")] },
      }),
    );
    const body: Body<"/typing", "post"> = { type: "channel", op: "start", stream_id, topic: "t" };
    await expectSuccess(typing("hamlet", body));
    const admins = await server.db.namedUserGroup.findFirstOrThrow({
      where: { name: "role:administrators", realm: { stringId: "zulip" } },
    });
    await server.db.stream.update({
      where: { id: stream_id },
      data: { canSendMessageGroupId: admins.id },
    });
    await expectError(
      typing("hamlet", body),
      400,
      "You do not have permission to post in this channel.",
    );
    await expectSuccess(typing("iago", body));
    await server.db.stream.update({ where: { id: stream_id }, data: { isArchived: true } });
    await expectError(typing("iago", body), 400, "Invalid channel ID");
  });

  it("refuses when the caller turned typing notifications off, after the parameter checks", async () => {
    await setUser("cordelia", { sendPrivateTypingNotifications: false });
    try {
      await expectError(typing("cordelia", { op: "start" }), 400, "Missing 'to' argument");
      await expectError(typing("cordelia", { op: "start", to: [] }), 400, "Empty 'to' list");
      await expectError(
        typing("cordelia", { op: "start", to: [9999999] }),
        400,
        "User has disabled typing notifications for direct messages",
      );
      // Channel notifications are another setting.
      await expectSuccess(
        typing("cordelia", {
          type: "stream",
          op: "start",
          stream_id: channel("Verona"),
          topic: "t",
        }),
      );
    } finally {
      await setUser("cordelia", { sendPrivateTypingNotifications: true });
    }
    await setUser("cordelia", { sendStreamTypingNotifications: false });
    try {
      await expectError(
        typing("cordelia", { type: "stream", op: "start", stream_id: channel("Verona") }),
        400,
        "Missing topic",
      );
      await expectError(
        typing("cordelia", { type: "stream", op: "start", stream_id: 9999999, topic: "t" }),
        400,
        "User has disabled typing notifications for channel messages",
      );
      await expectSuccess(typing("cordelia", { op: "start", to: [id("hamlet")] }));
    } finally {
      await setUser("cordelia", { sendStreamTypingNotifications: true });
    }
  });

  it("is for authenticated users", async () => {
    await expectError(
      server.client().POST("/typing", { body: { op: "start", to: [id("hamlet")] } }),
      401,
      "Not logged in: API authentication or user session required",
    );
  });
});

describe("typing events", () => {
  it("direct: to every participant, the sender included, naming them all", async () => {
    const queues = {
      hamlet: await openQueue("hamlet"),
      othello: await openQueue("othello"),
      cordelia: await openQueue("cordelia"),
      iago: await openQueue("iago"),
    };
    for (const op of ["start", "stop"] as const)
      await expectSuccess(typing("hamlet", { op, to: [id("othello"), id("cordelia")] }));
    const expected = (op: string) => ({
      type: "typing",
      op,
      message_type: "direct",
      sender: { user_id: id("hamlet"), email: email("hamlet") },
      recipients: [
        { user_id: id("othello"), email: email("othello") },
        { user_id: id("cordelia"), email: email("cordelia") },
        { user_id: id("hamlet"), email: email("hamlet") },
      ],
    });
    for (const who of ["hamlet", "othello", "cordelia"] as const) {
      const events = await eventsOf(who, queues[who]);
      expect(events).toEqual([
        { ...expected("start"), id: 0 },
        { ...expected("stop"), id: 1 },
      ]);
    }
    expect(await eventsOf("iago", queues.iago)).toEqual([]);
  });

  it("direct to oneself: one recipient, one event", async () => {
    const queue = await openQueue("othello");
    await expectSuccess(typing("othello", { op: "start", to: [id("othello")] }));
    expect(await eventsOf("othello", queue)).toEqual([
      {
        id: 0,
        type: "typing",
        op: "start",
        message_type: "direct",
        sender: { user_id: id("othello"), email: email("othello") },
        recipients: [{ user_id: id("othello"), email: email("othello") }],
      },
    ]);
  });

  it("channel: to its subscribers whose clients declared stream_typing_notifications", async () => {
    // Rome: iago, cordelia, hamlet.
    const queues = {
      hamlet: await openQueue("hamlet"),
      cordelia: await openQueue("cordelia"),
      iago: await openQueue("iago"),
      othello: await openQueue("othello"),
      polonius: await openQueue("polonius"),
    };
    const rome = channel("Rome");
    await expectSuccess(
      typing("cordelia", { type: "channel", op: "start", stream_id: rome, topic: "plans" }),
    );
    await expectSuccess(
      typing("cordelia", { type: "stream", op: "stop", stream_id: rome, topic: "plans" }),
    );
    const expected = (op: string, eventId: number) => ({
      id: eventId,
      type: "typing",
      op,
      message_type: "stream",
      sender: { user_id: id("cordelia"), email: email("cordelia") },
      stream_id: rome,
      topic: "plans",
    });
    for (const who of ["hamlet", "cordelia", "iago"] as const)
      expect(await eventsOf(who, queues[who])).toEqual([expected("start", 0), expected("stop", 1)]);
    // Not subscribed: nothing, whether or not they could read the channel.
    expect(await eventsOf("othello", queues.othello)).toEqual([]);
    expect(await eventsOf("polonius", queues.polonius)).toEqual([]);
  });

  it("channel: a private channel's typing reaches its subscribers only, never guests or admins outside it", async () => {
    const core = channel("core team");
    const queues = {
      desdemona: await openQueue("desdemona"),
      hamlet: await openQueue("hamlet"),
      polonius: await openQueue("polonius"),
      shiva: await openQueue("shiva"),
    };
    await expectSuccess(
      typing("iago", { type: "stream", op: "start", stream_id: core, topic: "secret" }),
    );
    expect(await eventsOf("desdemona", queues.desdemona)).toMatchObject([
      { type: "typing", stream_id: core, topic: "secret", sender: { user_id: id("iago") } },
    ]);
    for (const who of ["hamlet", "polonius", "shiva"] as const)
      expect(await eventsOf(who, queues[who])).toEqual([]);
    // A guest cannot type into a public channel it is not subscribed to.
    await expectError(
      typing("polonius", { type: "stream", op: "start", stream_id: channel("Rome"), topic: "x" }),
      400,
      "Invalid channel ID",
    );
  });

  it("channel: the empty topic's names mean the empty topic", async () => {
    await server.db.realm.update({
      where: { stringId: "zulip" },
      data: { emptyTopicDisplayName: "lobby" },
    });
    try {
      const queue = await openQueue("hamlet");
      for (const topic of ["(no topic)", "lobby", "", "general chat"])
        await expectSuccess(
          typing("othello", { type: "stream", op: "start", stream_id: channel("Verona"), topic }),
        );
      const events = await eventsOf("hamlet", queue);
      expect(events).toHaveLength(4);
      // The queue's client did not declare empty_topic_name: what it sees of "" is the server's
      // event formatting (server/events), the logged event holds "".
      const logged = await server.db.$queryRaw<{ event: { topic: string } }[]>`
        SELECT event FROM event_log WHERE type = 'typing' ORDER BY id DESC LIMIT 4`;
      expect(logged.map((r) => r.event.topic)).toEqual(["", "", "", ""]);
    } finally {
      await server.db.realm.update({
        where: { stringId: "zulip" },
        data: { emptyTopicDisplayName: null },
      });
    }
  });

  it("channel: none beyond MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS subscribers", async () => {
    const queue = await openQueue("hamlet");
    const verona = channel("Verona");
    const before = server.deps.config.maxStreamSizeForTypingNotifications;
    const subscribers = await server.db.subscription.count({
      where: { active: true, isUserActive: true, recipient: { type: 2, typeId: verona } },
    });
    server.deps.config.maxStreamSizeForTypingNotifications = subscribers - 1;
    try {
      await expectSuccess(
        typing("othello", { type: "stream", op: "start", stream_id: verona, topic: "big" }),
      );
      expect(await eventsOf("hamlet", queue)).toEqual([]);
    } finally {
      server.deps.config.maxStreamSizeForTypingNotifications = before;
    }
    await expectSuccess(
      typing("othello", { type: "stream", op: "start", stream_id: verona, topic: "big" }),
    );
    expect(await eventsOf("hamlet", queue)).toMatchObject([{ type: "typing", topic: "big" }]);
  });

  it("channel: a queue without the stream_typing_notifications capability gets none (Tornado's accepts_event)", async () => {
    const without = await openQueue("hamlet", false);
    const withIt = await openQueue("hamlet", true);
    await expectSuccess(
      typing("othello", {
        type: "stream",
        op: "start",
        stream_id: channel("Verona"),
        topic: "caps",
      }),
    );
    await expectSuccess(typing("othello", { op: "start", to: [id("hamlet")] }));
    expect((await eventsOf("hamlet", without)).map((e) => e.message_type)).toEqual(["direct"]);
    expect((await eventsOf("hamlet", withIt)).map((e) => e.message_type)).toEqual([
      "stream",
      "direct",
    ]);
  });
});

describe("POST /typing costs", () => {
  it("at most 2 statements, direct or channel, on a warm server", async () => {
    const seen: RequestInfo[] = [];
    const statementsOf = async (body: Body<"/typing", "post">) => {
      await expectSuccess(typing("hamlet", body));
      server.deps.observe = (info) => seen.push(info);
      seen.length = 0;
      try {
        await expectSuccess(typing("hamlet", body));
      } finally {
        server.deps.observe = undefined;
      }
      expect(seen).toHaveLength(1);
      return seen[0]!.statements;
    };
    expect(await statementsOf({ op: "start", to: [id("othello"), id("cordelia")] })).toBe(2);
    expect(
      await statementsOf({ type: "stream", op: "start", stream_id: channel("Verona"), topic: "t" }),
    ).toBe(2);
  });
});

/** Sends bytes as a client writes them (node:http: no re-encoding); the answer must match the spec. */
function send(
  as: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: any }> {
  const url = new URL(server.baseUrl);
  const c = server.creds.users[as]!;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: "/api/v1/typing",
        headers: {
          Authorization: "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64"),
          "Content-Length": String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          const problem = checkResponse(
            "POST",
            `${server.baseUrl}/api/v1/typing`,
            res.statusCode!,
            parsed,
          );
          if (problem) return reject(new Error(problem));
          resolve({ status: res.statusCode!, body: parsed });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** What form-data (zulip-js's FormData in Node) writes for string fields. */
function multipart(fields: [string, string][]) {
  const boundary = "--------------------------515890814546601021194782";
  const body =
    fields
      .map(
        ([name, value]) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
      )
      .join("") + `--${boundary}--\r\n`;
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

describe("Zulip's clients, as they send a typing notification", () => {
  it("zulip-js typing.send: multipart, `to` JSON-stringified (one recipient as a one-element array too)", async () => {
    const queue = await openQueue("othello");
    // typing.send({to: [othello], op: "start"}): api() JSON-stringifies the array;
    // typing.send({to: [othello, cordelia], op: "stop"}): typing.send stringifies it first.
    for (const fields of [
      [
        ["to", `[${id("othello")}]`],
        ["op", "start"],
      ],
      [
        ["to", `[${id("othello")},${id("cordelia")}]`],
        ["op", "stop"],
      ],
    ] as [string, string][][]) {
      const { body, contentType } = multipart(fields);
      const res = await send(
        "hamlet",
        {
          "Content-Type": contentType,
          Accept: "*/*",
          "User-Agent": "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
          "Accept-Encoding": "gzip,deflate",
          Connection: "close",
        },
        body,
      );
      expect(res).toEqual({ status: 200, body: { result: "success", msg: "" } });
    }
    const events = await eventsOf("othello", queue);
    expect(
      events.map((e) => [e.op, (e.recipients as { user_id: number }[]).map((r) => r.user_id)]),
    ).toEqual([
      ["start", [id("othello"), id("hamlet")]],
      ["stop", [id("othello"), id("cordelia"), id("hamlet")]],
    ]);
  });

  it("zulip-mobile: urlencoded, `to` a JSON string of user ids", async () => {
    const queue = await openQueue("othello");
    const res = await send(
      "hamlet",
      {
        "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
        "User-Agent": "ZulipMobile/27.210 (Android 13)",
      },
      `to=${encodeURIComponent(JSON.stringify([id("othello")]))}&op=start`,
    );
    expect(res.status).toBe(200);
    expect(await eventsOf("othello", queue)).toMatchObject([
      { op: "start", message_type: "direct" },
    ]);
  });

  it("zulip-flutter: `type=channel`, `stream_id` and `topic`; `type=direct` with `to`", async () => {
    const queue = await openQueue("othello");
    const headers = {
      "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
      "User-Agent": "ZulipFlutter/30.0.256 (Android 14)",
    };
    const verona = channel("Verona");
    expect(
      (
        await send(
          "hamlet",
          headers,
          `op=start&type=channel&stream_id=${verona}&topic=greetings%20%F0%9F%91%8B`,
        )
      ).status,
    ).toBe(200);
    expect(
      (await send("hamlet", headers, `op=stop&type=direct&to=%5B${id("othello")}%5D`)).status,
    ).toBe(200);
    expect(await eventsOf("othello", queue)).toMatchObject([
      { op: "start", message_type: "stream", stream_id: verona, topic: "greetings 👋" },
      { op: "stop", message_type: "direct" },
    ]);
  });

  it("zulip-terminal (python-zulip-api set_typing_status): urlencoded, `to` as json.dumps writes it", async () => {
    const queue = await openQueue("cordelia");
    const res = await send(
      "hamlet",
      {
        "Content-Type": "application/x-www-form-urlencoded",
        "User-Agent": "ZulipTerminal/0.7.0 (Linux; 6.1.0)",
        Accept: "*/*",
      },
      `to=${encodeURIComponent(`[${id("cordelia")}, ${id("othello")}]`).replace(/%20/g, "+")}&op=start`,
    );
    expect(res.status).toBe(200);
    expect(await eventsOf("cordelia", queue)).toMatchObject([
      {
        op: "start",
        recipients: [
          { user_id: id("cordelia") },
          { user_id: id("othello") },
          { user_id: id("hamlet") },
        ],
      },
    ]);
  });

  it("JSON-text values in a form: `to` and `stream_id` strings of JSON", async () => {
    const res = await send(
      "hamlet",
      { "Content-Type": "application/x-www-form-urlencoded" },
      `type=stream&op=start&stream_id=${JSON.stringify(channel("Verona"))}&topic=t`,
    );
    expect(res.status).toBe(200);
  });
});

describe("deactivated users", () => {
  it("a deactivated recipient is named but gets no event; a deactivated caller is refused", async () => {
    const queue = await openQueue("prospero");
    const hamletQueue = await openQueue("hamlet");
    await expectSuccess(
      server
        .as("iago")
        .DELETE("/users/{user_id}", { params: { path: { user_id: id("prospero") } } }),
    );
    await expectSuccess(typing("hamlet", { op: "start", to: [id("prospero")] }));
    expect(await eventsOf("hamlet", hamletQueue)).toMatchObject([
      { recipients: [{ user_id: id("prospero") }, { user_id: id("hamlet") }] },
    ]);
    const logged = await server.db.$queryRaw<{ user_ids: number[] }[]>`
      SELECT user_ids FROM event_log WHERE type = 'typing' ORDER BY id DESC LIMIT 1`;
    expect(logged[0]!.user_ids).toEqual([id("hamlet")]);
    await expectError(
      typing("prospero", { op: "start", to: [id("hamlet")] }),
      401,
      "Account is deactivated",
    );
    void queue;
  });
});

describe("POST /messages/{message_id}/typing", () => {
  const editTyping = (as: string, messageId: number, op: "start" | "stop") =>
    server.as(as).POST("/messages/{message_id}/typing", {
      params: { path: { message_id: messageId } },
      body: { op },
    });
  async function editQueue(as: string) {
    const { queue_id } = await expectSuccess(
      server.as(as).POST("/register", { body: { event_types: ["typing_edit_message"] } }),
    );
    return queue_id!;
  }
  const send = async (as: string, body: Body<"/messages", "post">) =>
    (await expectSuccess(server.as(as).POST("/messages", { body }))).id;

  it("channel: to the subscribers who receive typing notifications, with the topic", async () => {
    const messageId = await send("hamlet", {
      type: "stream",
      to: "Denmark",
      topic: "edit typing",
      content: "x",
    });
    await setUser("othello", { receivesTypingNotifications: false });
    const queues = {
      hamlet: await editQueue("hamlet"),
      othello: await editQueue("othello"),
      iago: await editQueue("iago"),
    };
    const subscribed = await server.db.subscription.count({
      where: {
        userProfileId: id("iago"),
        recipient: { stream: { id: channel("Denmark") } },
        active: true,
      },
    });
    for (const op of ["start", "stop"] as const)
      await expectSuccess(editTyping("hamlet", messageId, op));
    await setUser("othello", { receivesTypingNotifications: true });
    const expected = (op: string, n: number) => ({
      id: n,
      type: "typing_edit_message",
      op,
      sender_id: id("hamlet"),
      message_id: messageId,
      recipient: { type: "channel", channel_id: channel("Denmark"), topic: "edit typing" },
    });
    expect(await eventsOf("hamlet", queues.hamlet)).toEqual([
      expected("start", 0),
      expected("stop", 1),
    ]);
    expect(await eventsOf("othello", queues.othello)).toEqual([]);
    expect(await eventsOf("iago", queues.iago)).toHaveLength(subscribed ? 2 : 0);
  });

  it("direct: to the participants, naming those told", async () => {
    const messageId = await send("hamlet", { type: "direct", to: [id("cordelia")], content: "x" });
    const queues = {
      hamlet: await editQueue("hamlet"),
      cordelia: await editQueue("cordelia"),
      iago: await editQueue("iago"),
    };
    await expectSuccess(editTyping("hamlet", messageId, "start"));
    const event = {
      id: 0,
      type: "typing_edit_message",
      op: "start",
      sender_id: id("hamlet"),
      message_id: messageId,
      recipient: { type: "direct", user_ids: [id("hamlet"), id("cordelia")].sort((a, b) => a - b) },
    };
    expect(await eventsOf("hamlet", queues.hamlet)).toEqual([event]);
    expect(await eventsOf("cordelia", queues.cordelia)).toEqual([event]);
    expect(await eventsOf("iago", queues.iago)).toEqual([]);
  });

  it("refuses what Zulip refuses, with its texts", async () => {
    const messageId = await send("hamlet", {
      type: "stream",
      to: "Verona",
      topic: "edit typing",
      content: "x",
    });
    await expectError(
      editTyping("othello", messageId, "start"),
      400,
      "You don't have permission to edit this message",
    );
    await expectError(editTyping("hamlet", 2 ** 31 + 7, "start"), 400, "Invalid message(s)");
    const direct = await send("hamlet", {
      type: "direct",
      to: [id("cordelia")],
      content: "private",
    });
    await expectError(editTyping("othello", direct, "start"), 400, "Invalid message(s)");
    await expectError(
      server.as("hamlet").POST("/messages/{message_id}/typing", {
        params: { path: { message_id: messageId } },
        body: untyped({ op: "typing" }),
      }),
      400,
      "Invalid op",
    );
    await setUser("hamlet", { sendStreamTypingNotifications: false });
    await expectError(
      editTyping("hamlet", messageId, "start"),
      400,
      "User has disabled typing notifications for channel messages",
    );
    await setUser("hamlet", {
      sendStreamTypingNotifications: true,
      sendPrivateTypingNotifications: false,
    });
    await expectError(
      editTyping("hamlet", direct, "stop"),
      400,
      "User has disabled typing notifications for direct messages",
    );
    await setUser("hamlet", { sendPrivateTypingNotifications: true });
  });

  it("takes a form body as the clients send it", async () => {
    const messageId = await send("hamlet", {
      type: "stream",
      to: "Verona",
      topic: "edit typing",
      content: "x",
    });
    const hamlet = server.creds.users.hamlet!;
    const response = await fetch(`${server.baseUrl}/api/v1/messages/${messageId}/typing`, {
      method: "POST",
      headers: {
        Authorization:
          "Basic " + Buffer.from(`${hamlet.email}:${hamlet.api_key}`).toString("base64"),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "op=start",
    });
    expect(response.status).toBe(200);
  });
});
