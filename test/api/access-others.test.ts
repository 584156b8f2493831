/**
 * The read-path matrix beyond one organization's channels: ids of organization A used by a user
 * of organization B on the same server (its owner, by its Host), direct messages between other
 * users, and requests without credentials. Each row is one path with Zulip's answer; nothing of
 * the message, its channel or its file may come back.
 */
import { request } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { answer, basic, upload, userId } from "../helpers/access.ts";
import { createChannel, sendDirect, sendToChannel, type NarrowTerm } from "../helpers/builders.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { requestOnHost } from "../helpers/net.ts";
import { useTestServer } from "../helpers/server.ts";
import { createOtherOrg } from "../helpers/other-org.ts";

const server = useTestServer({ webPublicStreamsEnabled: true });
const HOST = "second.zulip.testserver";
const WORD = "quagga";
const NAME = "open to all";
let other: { email: string; apiKey: string; id: number };
/** Organization A's web-public channel, its message and the file the message links. */
let a: { channelId: number; name: string; messageId: number; fileUrl: string; othelloId: number };
/** A direct message and a group direct message between desdemona, shiva and prospero, with a file. */
let dm: { direct: number; group: number; fileUrl: string };
let otherQueue: () => Promise<any[]>;
const dmQueues = new Map<string, () => Promise<any[]>>();
const OUTSIDERS = ["othello", "iago", "polonius"] as const;

beforeAll(async () => {
  await server.db.realm.update({
    where: { id: server.creds.realm.id },
    data: { enableSpectatorAccess: true },
  });
  const owner = await createOtherOrg(server, {
    name: "Second",
    stringId: "second",
    email: "owner@second.test",
  });
  other = { email: owner.email, apiKey: owner.apiKey, id: owner.id };
  otherQueue = await onB("POST", "/register", {
    event_types: ["message", "update_message", "reaction", "delete_message", "typing", "stream"],
    all_public_streams: true,
    client_capabilities: { stream_typing_notifications: true },
  }).then(
    ({ body }) =>
      async () =>
        (await onB("GET", `/events?queue_id=${body.queue_id}&last_event_id=-1&dont_block=true`))
          .body.events,
  );
  for (const who of OUTSIDERS)
    dmQueues.set(
      who,
      await queueOf(server, who, [
        "message",
        "update_message",
        "reaction",
        "delete_message",
        "typing",
      ]),
    );

  const desdemona = server.as("desdemona");
  const name = NAME;
  const { id: channelId } = await createChannel(desdemona, {
    name,
    is_web_public: true,
    subscribers: [userId(server, "othello")],
  });
  const fileUrl = await upload(server, "desdemona", "a.txt");
  const { id: messageId } = await sendToChannel(desdemona, {
    to: channelId,
    topic: "t",
    content: `A ${WORD} [file](${fileUrl})`,
  });
  a = { channelId, name, messageId, fileUrl, othelloId: userId(server, "othello") };

  const dmFile = await upload(server, "desdemona", "dm.txt");
  const shiva = userId(server, "shiva");
  const { id: direct } = await sendDirect(desdemona, {
    to: [shiva],
    content: `A ${WORD} [file](${dmFile})`,
  });
  const { id: group } = await sendDirect(desdemona, {
    to: [shiva, userId(server, "prospero")],
    content: `A ${WORD} too`,
  });
  dm = { direct, group, fileUrl: dmFile };
  for (const message_id of [direct, group]) {
    await expectSuccess(
      desdemona.POST("/messages/{message_id}/reactions", {
        params: { path: { message_id } },
        body: { emoji_name: "octopus" },
      }),
    );
    await expectSuccess(
      desdemona.PATCH("/messages/{message_id}", {
        params: { path: { message_id } },
        body: { content: `An edited ${WORD}` },
      }),
    );
  }
  await expectSuccess(desdemona.POST("/typing", { body: { op: "start", to: [shiva] } }));
  await expectSuccess(
    desdemona.PATCH("/messages/{message_id}", {
      params: { path: { message_id: messageId } },
      body: { content: `An edited ${WORD}` },
    }),
  );
  await expectSuccess(
    desdemona.POST("/typing", {
      body: { type: "channel", op: "start", stream_id: channelId, topic: "t" },
    }),
  );
});

function onB(
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  params?: Record<string, unknown>,
) {
  return requestOnHost(server.baseUrl, method, path, HOST, other.email, other.apiKey, params);
}
/** A file's status for B's owner, on B's host. */
function fileOnB(url: string): Promise<number> {
  const { hostname, port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path: url,
        headers: {
          Host: HOST,
          Authorization:
            "Basic " + Buffer.from(`${other.email}:${other.apiKey}`).toString("base64"),
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on("error", reject);
    req.end();
  });
}
const bAnswer = async (...args: Parameters<typeof onB>) => {
  const { status, body } = await onB(...args);
  return status === 200 ? body : `${status} ${body.msg}`;
};
const narrowOnB = (narrow: unknown[]) =>
  bAnswer(
    "GET",
    `/messages?anchor=newest&num_before=10&num_after=0&narrow=${encodeURIComponent(JSON.stringify(narrow))}`,
  ).then((r) => (typeof r === "string" ? r : r.messages.map((m: { id: number }) => m.id)));

describe("another organization's ids", () => {
  const rows: Array<[string, () => Promise<unknown>, unknown]> = [
    [
      "GET /messages/{id}",
      () => bAnswer("GET", `/messages/${a.messageId}`),
      "400 Invalid message(s)",
    ],
    [
      "GET /messages channel",
      () => narrowOnB([{ operator: "channel", operand: a.channelId }]),
      () => `400 Invalid narrow operator: unknown channel ${a.channelId}`,
    ],
    [
      "GET /messages channel by name",
      () => narrowOnB([{ operator: "channel", operand: a.name }]),
      `400 Invalid narrow operator: unknown channel ${NAME}`,
    ],
    ["GET /messages id", () => narrowOnB([{ operator: "id", operand: a.messageId }]), []],
    [
      "GET /messages with",
      () => narrowOnB([{ operator: "with", operand: a.messageId }]),
      "400 Invalid narrow operator: Invalid 'with' operator",
    ],
    ["GET /messages search", () => narrowOnB([{ operator: "search", operand: WORD }]), []],
    [
      "GET /messages channels:web-public",
      () => narrowOnB([{ operator: "channels", operand: "web-public" }]),
      [],
    ],
    [
      "GET /messages/matches_narrow",
      () =>
        bAnswer("GET", `/messages/matches_narrow?msg_ids=[${a.messageId}]&narrow=[]`).then(
          (r) => r.messages,
        ),
      {},
    ],
    [
      "GET /messages/{id}/history",
      () => bAnswer("GET", `/messages/${a.messageId}/history`),
      "400 Invalid message(s)",
    ],
    [
      "GET /messages/{id}/read_receipts",
      () => bAnswer("GET", `/messages/${a.messageId}/read_receipts`),
      "400 Invalid message(s)",
    ],
    [
      "POST /messages/{id}/reactions",
      () => bAnswer("POST", `/messages/${a.messageId}/reactions`, { emoji_name: "octopus" }),
      "400 Invalid message(s)",
    ],
    [
      "PATCH /messages/{id}",
      () => bAnswer("PATCH", `/messages/${a.messageId}`, { content: "mine" }),
      "400 Invalid message(s)",
    ],
    [
      "DELETE /messages/{id}",
      () => bAnswer("DELETE", `/messages/${a.messageId}`),
      "400 Invalid message(s)",
    ],
    [
      "POST /messages/flags",
      () =>
        bAnswer("POST", "/messages/flags", { messages: [a.messageId], op: "add", flag: "starred" }),
      "400 Invalid message(s)",
    ],
    [
      "GET /streams/{id}",
      () => bAnswer("GET", `/streams/${a.channelId}`),
      "400 Invalid channel ID",
    ],
    [
      "GET /streams/{id}/members",
      () => bAnswer("GET", `/streams/${a.channelId}/members`),
      "400 Invalid channel ID",
    ],
    [
      "GET /get_stream_id",
      () => bAnswer("GET", `/get_stream_id?stream=${encodeURIComponent(a.name)}`),
      `400 Invalid channel name '${NAME}'`,
    ],
    [
      "GET /users/me/{id}/topics",
      () => bAnswer("GET", `/users/me/${a.channelId}/topics`),
      "400 Invalid channel ID",
    ],
    [
      "GET /users/{id}/subscriptions/{stream_id}",
      () => bAnswer("GET", `/users/${a.othelloId}/subscriptions/${a.channelId}`),
      "400 No such user",
    ],
    [
      "POST /typing",
      () =>
        bAnswer("POST", "/typing", {
          type: "channel",
          op: "start",
          stream_id: a.channelId,
          topic: "t",
        }),
      "400 Invalid channel ID",
    ],
    [
      "POST /mark_stream_as_read",
      () => bAnswer("POST", "/mark_stream_as_read", { stream_id: a.channelId }),
      "400 Invalid channel ID",
    ],
    [
      "POST /user_topics (mute, unmute)",
      async () => [
        await bAnswer("POST", "/user_topics", {
          stream_id: a.channelId,
          topic: "t",
          visibility_policy: 1,
        }),
        await bAnswer("POST", "/user_topics", {
          stream_id: a.channelId,
          topic: "t",
          visibility_policy: 0,
        }),
      ],
      ["400 Invalid channel ID", "400 Invalid channel ID"],
    ],
    [
      "POST /drafts",
      () =>
        bAnswer("POST", "/drafts", {
          drafts: [{ type: "stream", to: [a.channelId], topic: "t", content: "x", timestamp: 1 }],
        }),
      "400 Invalid channel ID",
    ],
    [
      "POST /scheduled_messages",
      () =>
        bAnswer("POST", "/scheduled_messages", {
          type: "channel",
          to: a.channelId,
          topic: "t",
          content: "x",
          scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400,
        }),
      () => `400 Channel with ID '${a.channelId}' does not exist`,
    ],
    [
      "POST /messages/render",
      () =>
        bAnswer("POST", "/messages/render", { content: `#**${a.name}**` }).then((r) => r.rendered),
      `<p>#<strong>${NAME}</strong></p>`,
    ],
    ["the file, with B's credentials on B's host", () => fileOnB(a.fileUrl), 403],
    [
      "register: streams, subscriptions, unread",
      () =>
        bAnswer("POST", "/register", {
          fetch_event_types: ["stream", "subscription", "message", "update_message_flags"],
        }).then((r) => [
          r.streams.length,
          r.subscriptions.length,
          r.never_subscribed.length,
          r.unread_msgs.count,
        ]),
      [0, 0, 0, 0],
    ],
    [
      "events (an all_public_streams queue)",
      async () => (await otherQueue()).filter((e) => e.type !== "heartbeat"),
      [],
    ],
  ];
  for (const [path, run, want] of rows)
    it(path, async () => expect(await run()).toEqual(typeof want === "function" ? want() : want));
});

describe("direct messages between others", () => {
  const each = async <T>(run: (who: string) => Promise<T>) =>
    Object.fromEntries(await Promise.all(OUTSIDERS.map(async (w) => [w, await run(w)] as const)));
  const everyone = <T>(value: T) => Object.fromEntries(OUTSIDERS.map((w) => [w, value]));
  const ids = () => [dm.direct, dm.group];
  const shows = (who: string, narrow: NarrowTerm[]) =>
    expectSuccess(
      server.as(who).GET("/messages", {
        params: { query: { anchor: "newest", num_before: 50, num_after: 0, narrow } },
      }),
    ).then((r) => r.messages.map((m) => m.id).filter((id) => ids().includes(id)));
  const rows: Array<[string, (who: string) => Promise<unknown>, unknown]> = [
    [
      "GET /messages/{id}",
      async (w) =>
        Promise.all(
          ids().map((id) =>
            answer(
              server.as(w).GET("/messages/{message_id}", { params: { path: { message_id: id } } }),
            ),
          ),
        ),
      ["400 Invalid message(s)", "400 Invalid message(s)"],
    ],
    [
      "GET /messages (all, dm-including, dm, is:dm, search)",
      async (w) => {
        const desdemona = userId(server, "desdemona");
        return [
          await shows(w, []),
          await shows(w, [{ operator: "dm-including", operand: desdemona }]),
          await shows(w, [{ operator: "dm", operand: [desdemona, userId(server, "shiva")] }]),
          await shows(w, [{ operator: "is", operand: "dm" }]),
          await shows(w, [{ operator: "search", operand: WORD }]),
        ];
      },
      [[], [], [], [], []],
    ],
    [
      "GET /messages with",
      async (w) =>
        answer(
          server.as(w).GET("/messages", {
            params: {
              query: {
                anchor: "newest",
                num_before: 1,
                num_after: 0,
                narrow: [{ operator: "with", operand: dm.direct }],
              },
            },
          }),
        ),
      "400 Invalid narrow operator: Invalid 'with' operator",
    ],
    [
      "GET /messages/matches_narrow",
      async (w) =>
        (
          await expectSuccess(
            server.as(w).GET("/messages/matches_narrow", {
              params: { query: { msg_ids: ids(), narrow: [] } },
            }),
          )
        ).messages,
      {},
    ],
    [
      "GET /messages/{id}/history, read_receipts",
      async (w) => [
        await answer(
          server
            .as(w)
            .GET("/messages/{message_id}/history", { params: { path: { message_id: dm.direct } } }),
        ),
        await answer(
          server.as(w).GET("/messages/{message_id}/read_receipts", {
            params: { path: { message_id: dm.group } },
          }),
        ),
      ],
      ["400 Invalid message(s)", "400 Invalid message(s)"],
    ],
    [
      "POST /messages/{id}/reactions, /messages/flags",
      async (w) => [
        await answer(
          server.as(w).POST("/messages/{message_id}/reactions", {
            params: { path: { message_id: dm.direct } },
            body: { emoji_name: "octopus" },
          }),
        ),
        await answer(
          server.as(w).POST("/messages/flags", {
            body: { messages: [dm.group], op: "add", flag: "starred" },
          }),
        ),
      ],
      ["400 Invalid message(s)", "400 Invalid message(s)"],
    ],
    [
      "the file a direct message links",
      async (w) =>
        (
          await fetch(`${server.baseUrl}${dm.fileUrl}`, {
            headers: { Authorization: basic(server, w) },
          })
        ).status,
      403,
    ],
    [
      "register: recent_private_conversations, unread direct messages",
      async (w) => {
        const r: any = await expectSuccess(
          server.as(w).POST("/register", {
            body: {
              fetch_event_types: [
                "recent_private_conversations",
                "message",
                "update_message_flags",
              ],
            },
          }),
        );
        const unread = [...r.unread_msgs.pms, ...r.unread_msgs.huddles].flatMap(
          (c: any) => c.unread_message_ids,
        );
        return [
          r.recent_private_conversations.filter((c: any) => ids().includes(c.max_message_id)),
          unread.filter((id: number) => ids().includes(id)),
        ];
      },
      [[], []],
    ],
    // (Leaving out the web-public channel's events, which othello gets as its subscriber.)
    [
      "events",
      async (w) =>
        (await dmQueues.get(w)!()).filter(
          (e) =>
            !JSON.stringify(e).includes('"stream_id"') &&
            (JSON.stringify(e).includes(WORD) || e.type === "typing"),
        ),
      [],
    ],
  ];
  for (const [path, run, want] of rows)
    it(path, async () => expect(await each(run)).toEqual(everyone(want)));
});

describe("no credentials", () => {
  const none = () => server.client();
  it("the API answers 401 to every read path", async () => {
    const got = await Promise.all([
      answer(
        none().GET("/messages/{message_id}", { params: { path: { message_id: a.messageId } } }),
      ),
      answer(
        none().GET("/messages", {
          params: {
            query: {
              anchor: "newest",
              num_before: 1,
              num_after: 0,
              narrow: [{ operator: "channel", operand: a.channelId }],
            },
          },
        }),
      ),
      answer(
        none().GET("/users/me/{stream_id}/topics", {
          params: { path: { stream_id: a.channelId } },
        }),
      ),
      answer(none().GET("/streams/{stream_id}", { params: { path: { stream_id: a.channelId } } })),
      answer(none().POST("/register", { body: {} })),
    ]);
    expect(got).toEqual(
      Array(5).fill("401 Not logged in: API authentication or user session required"),
    );
  });
  // Zulip's web app also shows a web-public channel's files to spectators (by session); files
  // here are served by the API's credentials only, so every file asks for them.
  it("files ask for credentials", async () => {
    const status = async (url: string) => (await fetch(`${server.baseUrl}${url}`)).status;
    expect([await status(a.fileUrl), await status(dm.fileUrl)]).toEqual([401, 401]);
  });
});
