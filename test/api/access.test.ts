/**
 * The read-path matrix: every path that can reveal a channel message or its metadata, a row each,
 * against every situation of test/helpers/access.ts (four kinds of channel × seven relations of a
 * user to it), a column each. Each cell states Zulip's answer (status and msg, or whether the
 * message, its topic or its channel appears); nothing may appear where Zulip's rule says no. Paths
 * that change something come last, in an order that keeps the situations as they were (a flag
 * change gives a user a historical user_message row, so it is the very last). Events, other
 * organizations, direct messages and requests without credentials: test/api/access-*.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  KINDS,
  ROLES,
  WHO,
  access,
  answer,
  basic,
  content,
  createAccessChannels,
  metadata,
  received,
  send,
  subscribed,
  userId,
  type Fixture,
  type Kind,
  type Who,
} from "../helpers/access.ts";
import { sendToChannel, type Body, type NarrowTerm } from "../helpers/builders.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer({ webPublicStreamsEnabled: true });
let fixtures: Map<Kind, Fixture>;

beforeAll(async () => {
  fixtures = await createAccessChannels(server);
  const realm = server.creds.realm.id;
  const owners = await server.db.userGroup.findFirstOrThrow({
    where: { realmId: realm, named: { name: "role:owners" } },
  });
  const moderation = await server.db.stream.findFirstOrThrow({
    where: { realmId: realm, name: "Denmark" },
  });
  // Only owners delete others' messages, so an administrator's delete stops at the permission check.
  await server.db.realm.update({
    where: { id: realm },
    data: {
      canDeleteAnyMessageGroupId: owners.id,
      moderationRequestChannelId: moderation.id,
      enableReadReceipts: true,
    },
  });
});

const client = (who: Who) => server.as(who);
const messages = async (who: Who, narrow: NarrowTerm[], anchor: number) => {
  const { data, error, response } = await client(who).GET("/messages", {
    params: { query: { anchor, num_before: 0, num_after: 0, narrow } },
  });
  return data ? data.messages.map((m) => m.id) : `${response.status} ${(error as any).msg}`;
};
/** Whether a narrow around the message shows it. */
const shows = async (who: Who, f: Fixture, narrow: NarrowTerm[]) => {
  const ids = await messages(who, narrow, f.messageId);
  return typeof ids === "string" ? ids : ids.includes(f.messageId);
};
const channel = (f: Fixture) => ({ operator: "channel", operand: f.channelId });
const invalidMessage = "400 Invalid message(s)";
const invalidChannel = "400 Invalid channel ID";
const ok = (yes: boolean, no: string) => (yes ? "ok" : no);

interface Row {
  path: string;
  run(who: Who, f: Fixture): Promise<unknown>;
  want(kind: Kind, who: Who, f: Fixture): unknown;
}

const READS: Row[] = [
  {
    path: "GET /messages/{id}",
    run: (who, f) =>
      answer(
        client(who).GET("/messages/{message_id}", {
          params: { path: { message_id: f.messageId } },
        }),
      ),
    want: (k, w) => ok(access(k, w), invalidMessage),
  },
  {
    path: "GET /messages channel",
    run: (who, f) => shows(who, f, [channel(f)]),
    want: access,
  },
  {
    path: "GET /messages channel (by name) + topic",
    run: (who, f) =>
      shows(who, f, [
        { operator: "channel", operand: f.name },
        { operator: "topic", operand: f.topic },
      ]),
    want: access,
  },
  {
    // Without a channel term a narrow is over the user's own rows (ok_to_include_history).
    path: "GET /messages id",
    run: (who, f) => shows(who, f, [{ operator: "id", operand: f.messageId }]),
    want: (k, w) => access(k, w) && received(k, w),
  },
  {
    path: "GET /messages near",
    run: (who, f) =>
      shows(who, f, [channel(f), { operator: "near", operand: String(f.messageId) }]),
    want: access,
  },
  {
    path: "GET /messages with",
    run: (who, f) => shows(who, f, [{ operator: "with", operand: f.messageId }]),
    want: (k, w) => access(k, w) || "400 Invalid narrow operator: Invalid 'with' operator",
  },
  {
    path: "GET /messages search",
    run: (who, f) => shows(who, f, [{ operator: "search", operand: f.word }]),
    want: (k, w) => access(k, w) && received(k, w),
  },
  {
    path: "GET /messages channel + search",
    run: (who, f) => shows(who, f, [channel(f), { operator: "search", operand: f.word }]),
    want: access,
  },
  {
    path: "GET /messages is:starred",
    run: (who, f) => shows(who, f, [{ operator: "is", operand: "starred" }]),
    want: (k, w) => access(k, w) && received(k, w),
  },
  {
    path: "GET /messages is:unread",
    run: (who, f) => shows(who, f, [{ operator: "is", operand: "unread" }]),
    want: (k, w) => access(k, w) && received(k, w),
  },
  {
    path: "GET /messages is:mentioned",
    run: (who, f) => shows(who, f, [{ operator: "is", operand: "mentioned" }]),
    want: (k, w) => access(k, w) && received(k, w),
  },
  {
    path: "GET /messages channel + has:attachment",
    run: (who, f) => shows(who, f, [channel(f), { operator: "has", operand: "attachment" }]),
    want: access,
  },
  {
    path: "GET /messages dm-including / dm with its sender",
    run: async (who, f) => {
      const desdemona = userId(server, "desdemona");
      return [
        await shows(who, f, [{ operator: "dm-including", operand: desdemona }]),
        await shows(who, f, [{ operator: "dm", operand: [desdemona] }]),
      ];
    },
    want: () => [false, false],
  },
  {
    path: "GET /messages/matches_narrow",
    run: async (who, f) =>
      Object.keys(
        (
          await expectSuccess(
            client(who).GET("/messages/matches_narrow", {
              params: { query: { msg_ids: [f.messageId], narrow: [channel(f)] } },
            }),
          )
        ).messages,
      ).includes(String(f.messageId)),
    want: (k, w) => access(k, w) && received(k, w),
  },
  {
    path: "GET /messages/{id}/history",
    run: (who, f) =>
      answer(
        client(who).GET("/messages/{message_id}/history", {
          params: { path: { message_id: f.messageId } },
        }),
      ),
    want: (k, w) => ok(access(k, w), invalidMessage),
  },
  {
    path: "GET /messages/{id}/read_receipts",
    run: (who, f) =>
      answer(
        client(who).GET("/messages/{message_id}/read_receipts", {
          params: { path: { message_id: f.messageId } },
        }),
      ),
    want: (k, w) => ok(access(k, w), invalidMessage),
  },
  {
    path: "GET /user_uploads/… (the file a message links)",
    run: async (who, f) =>
      (
        await fetch(`${server.baseUrl}${f.fileUrl}`, {
          headers: { Authorization: basic(server, who) },
        })
      ).status,
    want: (k, w) => (access(k, w) ? 200 : 403),
  },
  {
    path: "GET /api/v1/user_uploads/… (its temporary URL), then the URL",
    run: async (who, f) => {
      const response = await fetch(`${server.baseUrl}/api/v1${f.fileUrl}`, {
        headers: { Authorization: basic(server, who) },
      });
      if (response.status !== 200) return response.status;
      const { url } = (await response.json()) as { url: string };
      return (await fetch(`${server.baseUrl}${url}`)).status;
    },
    want: (k, w) => (access(k, w) ? 200 : 403),
  },
  {
    // A channel whose history is not shared lists only the topics of the user's own rows.
    path: "GET /users/me/{stream_id}/topics",
    run: async (who, f) => {
      const { data, error, response } = await client(who).GET("/users/me/{stream_id}/topics", {
        params: { path: { stream_id: f.channelId } },
      });
      return data
        ? data.topics.some((t) => t.name === f.topic)
        : `${response.status} ${(error as any).msg}`;
    },
    want: (k, w) =>
      content(k, w) ? k !== "protected" || (received(k, w) && subscribed(k, w)) : invalidChannel,
  },
  {
    path: "GET /streams/{id}",
    run: (who, f) =>
      answer(
        client(who).GET("/streams/{stream_id}", { params: { path: { stream_id: f.channelId } } }),
      ),
    want: (k, w) => ok(metadata(k, w), invalidChannel),
  },
  {
    path: "GET /streams/{id}/members",
    run: (who, f) =>
      answer(
        client(who).GET("/streams/{stream_id}/members", {
          params: { path: { stream_id: f.channelId } },
        }),
      ),
    want: (k, w) => ok(metadata(k, w), invalidChannel),
  },
  {
    path: "GET /get_stream_id",
    run: (who, f) =>
      answer(client(who).GET("/get_stream_id", { params: { query: { stream: f.name } } })),
    // access_stream_by_name, which wants content access (an administrator sees the channel but not this).
    want: (k, w, f) => ok(content(k, w), `400 Invalid channel name '${f.name}'`),
  },
  {
    path: "GET /users/{id}/subscriptions/{stream_id}",
    run: (who, f) =>
      answer(
        client(who).GET("/users/{user_id}/subscriptions/{stream_id}", {
          params: { path: { user_id: userId(server, "othello"), stream_id: f.channelId } },
        }),
      ),
    want: (k, w) => ok(metadata(k, w), invalidChannel),
  },
  {
    // A link names a channel only for those with access to its content (get_stream_name_map).
    path: "POST /messages/render (a link to the channel)",
    run: async (who, f) =>
      (
        await expectSuccess(
          client(who).POST("/messages/render", {
            body: { content: `#**${f.name}>${f.topic}**` },
          }),
        )
      ).rendered.includes(`data-stream-id="${f.channelId}"`),
    want: content,
  },
];

/** What /register gives about the channel and its message. */
const STATE: Row[] = [
  {
    path: "register: unread_msgs",
    run: async (who, f) => {
      const state = await register(who);
      return state.unread_msgs.streams.some((s: any) => s.unread_message_ids.includes(f.messageId));
    },
    // Zulip leaves out the channels the user is no longer subscribed to (get_inactive_recipient_ids).
    want: (k, w) => received(k, w) && subscribed(k, w),
  },
  {
    path: "register: starred_messages",
    // Zulip's get_starred_message_ids: the user's own rows, whatever became of the channel.
    run: async (who, f) => (await register(who)).starred_messages.includes(f.messageId),
    want: received,
  },
  {
    path: "register: subscriptions / unsubscribed / never_subscribed",
    run: async (who, f) => {
      const state = await register(who);
      const lists = ["subscriptions", "unsubscribed", "never_subscribed"] as const;
      return lists.filter((l) => state[l].some((s: any) => s.stream_id === f.channelId));
    },
    want: (k, w) =>
      subscribed(k, w)
        ? ["subscriptions"]
        : w === "prospero" && metadata(k, w)
          ? ["unsubscribed"]
          : metadata(k, w) && w !== "prospero"
            ? ["never_subscribed"]
            : [],
  },
  {
    path: "register: streams",
    run: async (who, f) =>
      (await register(who)).streams.some((s: any) => s.stream_id === f.channelId),
    want: metadata,
  },
];
const registered = new Map<Who, Promise<any>>();
function register(who: Who) {
  if (!registered.has(who))
    registered.set(
      who,
      expectSuccess(
        client(who).POST("/register", {
          body: {
            fetch_event_types: [
              "message",
              "subscription",
              "stream",
              "starred_messages",
              "update_message_flags",
            ],
          },
        }),
      ),
    );
  return registered.get(who)!;
}

/** Paths that change something: each stops before the change where access allows it. */
const CHANGES: Row[] = [
  {
    // The same topic is no change: an accessible message gets as far as "Nothing to change".
    path: "PATCH /messages/{id}",
    run: (who, f) =>
      answer(
        client(who).PATCH("/messages/{message_id}", {
          params: { path: { message_id: f.messageId } },
          body: { topic: f.topic },
        }),
      ),
    want: (k, w) => (access(k, w) ? "400 Nothing to change" : invalidMessage),
  },
  {
    path: "DELETE /messages/{id}",
    run: (who, f) =>
      answer(
        client(who).DELETE("/messages/{message_id}", {
          params: { path: { message_id: f.messageId } },
        }),
      ),
    want: (k, w) =>
      access(k, w) ? "400 You don't have permission to delete this message" : invalidMessage,
  },
  {
    // An invalid emoji code: an accessible message gets as far as the emoji check.
    path: "POST /messages/{id}/reactions",
    run: (who, f) =>
      answer(
        client(who).POST("/messages/{message_id}/reactions", {
          params: { path: { message_id: f.messageId } },
          body: {
            emoji_name: "octopus",
            emoji_code: "zzzz",
            reaction_type: "unicode_emoji",
          },
        }),
      ),
    want: (k, w) => (access(k, w) ? "400 Invalid emoji code." : invalidMessage),
  },
  {
    path: "DELETE /messages/{id}/reactions",
    run: (who, f) =>
      answer(
        client(who).DELETE("/messages/{message_id}/reactions", {
          params: { path: { message_id: f.messageId } },
          body: { emoji_name: "octopus" },
        }),
      ),
    want: (k, w) => (access(k, w) ? "400 Reaction doesn't exist." : invalidMessage),
  },
  {
    path: "POST /messages/{id}/report",
    run: (who, f) =>
      answer(
        client(who).POST("/messages/{message_id}/report", {
          params: { path: { message_id: f.messageId } },
          body: { report_type: "spam" },
        }),
      ),
    want: (k, w) => ok(access(k, w), invalidMessage),
  },
  {
    path: "POST /typing (to the channel)",
    run: (who, f) =>
      answer(
        client(who).POST("/typing", {
          body: { type: "channel", op: "start", stream_id: f.channelId, topic: f.topic },
        }),
      ),
    // access_stream_by_id_for_message, then access_stream_for_send_message.
    want: (k, w, f) =>
      content(k, w)
        ? ok(send(k, w), `400 Not authorized to send to channel '${f.name}'`)
        : invalidChannel,
  },
  {
    // Muting needs content access; going back to the default works in any channel of the
    // organization (access_stream_to_remove_visibility_policy_by_id).
    path: "POST /user_topics",
    run: async (who, f) => {
      const set = (visibility_policy: Body<"/user_topics", "post">["visibility_policy"]) =>
        answer(
          client(who).POST("/user_topics", {
            body: { stream_id: f.channelId, topic: f.topic, visibility_policy },
          }),
        );
      return [await set(1), await set(0)];
    },
    want: (k, w) => [ok(content(k, w), invalidChannel), "ok"],
  },
  {
    path: "POST /drafts (to the channel)",
    run: (who, f) =>
      answer(
        client(who).POST("/drafts", {
          body: {
            drafts: [
              { type: "stream", to: [f.channelId], topic: f.topic, content: "x", timestamp: 1 },
            ],
          },
        }),
      ),
    want: (k, w) => ok(content(k, w), invalidChannel),
  },
  {
    path: "POST /scheduled_messages (to the channel)",
    run: (who, f) =>
      answer(
        client(who).POST("/scheduled_messages", {
          body: {
            type: "channel",
            to: f.channelId,
            topic: f.topic,
            content: "later",
            scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400 * 30,
          },
        }),
      ),
    want: (k, w, f) => ok(send(k, w), `400 Not authorized to send to channel '${f.name}'`),
  },
  {
    path: "POST /mark_topic_as_read",
    run: (who, f) =>
      answer(
        client(who).POST("/mark_topic_as_read", {
          body: { stream_id: f.channelId, topic_name: f.topic },
        }),
      ),
    want: (k, w, f) =>
      content(k, w) ? ok(received(k, w), `400 No such topic '${f.topic}'`) : invalidChannel,
  },
  {
    path: "POST /mark_stream_as_read",
    run: (who, f) =>
      answer(client(who).POST("/mark_stream_as_read", { body: { stream_id: f.channelId } })),
    want: (k, w) => ok(content(k, w), invalidChannel),
  },
  {
    // What a narrow reveals is what it processes.
    path: "POST /messages/flags/narrow",
    run: async (who, f) => {
      const { data, error, response } = await client(who).POST("/messages/flags/narrow", {
        body: {
          anchor: f.messageId,
          num_before: 0,
          num_after: 0,
          narrow: [channel(f)],
          op: "add",
          flag: "read",
        },
      });
      return data ? data.processed_count : `${response.status} ${(error as any).msg}`;
    },
    want: (k, w) => (access(k, w) ? 1 : 0),
  },
  {
    path: "POST /messages/flags",
    run: (who, f) =>
      answer(
        client(who).POST("/messages/flags", {
          body: { messages: [f.messageId], op: "add", flag: "starred" },
        }),
      ),
    // A row of one's own is changed as it is; a historical row is made only for a message one may read.
    want: (k, w) => ok(access(k, w) || received(k, w), invalidMessage),
  },
];

describe("the read-path matrix", () => {
  for (const row of [...READS, ...STATE, ...CHANGES])
    it(row.path, async () => {
      const cells = KINDS.flatMap((kind) => WHO.map((who) => ({ kind, who })));
      const got = await Promise.all(cells.map((c) => row.run(c.who, fixtures.get(c.kind)!)));
      // Only the cells that differ, each with Zulip's answer and ours.
      const wrong = cells.flatMap((c, i) => {
        const want = row.want(c.kind, c.who, fixtures.get(c.kind)!);
        return JSON.stringify(got[i]) === JSON.stringify(want)
          ? []
          : [
              `${c.kind} / ${c.who} (${ROLES[c.who]}): got ${JSON.stringify(got[i])}, Zulip ${JSON.stringify(want)}`,
            ];
      });
      expect(wrong).toEqual([]);
    });

  it("refuses edits in an archived channel the message is still readable in", async () => {
    const f = fixtures.get("public")!;
    await server.db.stream.update({ where: { id: f.channelId }, data: { isArchived: true } });
    try {
      await expectSuccess(
        server
          .as("othello")
          .GET("/messages/{message_id}", { params: { path: { message_id: f.messageId } } }),
      );
      await expectError(
        server.as("othello").PATCH("/messages/{message_id}", {
          params: { path: { message_id: f.messageId } },
          body: { topic: "elsewhere" },
        }),
        400,
        "Invalid message(s)",
      );
    } finally {
      await server.db.stream.update({ where: { id: f.channelId }, data: { isArchived: false } });
    }
  });

  it("moves, for a user who may, only the messages of the topic they may read", async () => {
    // Cordelia joined the protected channel after its first message: a whole-topic move takes only hers.
    const f = fixtures.get("protected")!;
    await server.db.realm.update({
      where: { id: server.creds.realm.id },
      data: { moveMessagesWithinStreamLimitSeconds: null },
    });
    const { id: mine } = await sendToChannel(server.as("cordelia"), {
      to: f.channelId,
      topic: f.topic,
      content: "mine",
    });
    await expectSuccess(
      server.as("cordelia").PATCH("/messages/{message_id}", {
        params: { path: { message_id: mine } },
        body: {
          topic: "moved",
          propagate_mode: "change_all",
          send_notification_to_old_thread: false,
          send_notification_to_new_thread: false,
        },
      }),
    );
    const topics = await server.db.message.findMany({
      where: { id: { in: [mine, f.messageId] } },
      select: { id: true, subject: true },
    });
    expect(Object.fromEntries(topics.map((t) => [t.id, t.subject]))).toEqual({
      [mine]: "moved",
      [f.messageId]: f.topic,
    });
  });
});
