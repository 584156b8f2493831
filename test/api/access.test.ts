/**
 * One table over every path that reads a channel message: for each kind of channel and each
 * relation of a user to it, every path gives the answer of Zulip's has_message_access
 * (lib/channel-access.ts): GET /messages/{id}, a channel narrow, a search, matches_narrow (which
 * also needs a user_message row), the edit history, the file the message links, PATCH (which
 * checks access before "Nothing to change"), a reaction (checked before its emoji), and the
 * message event (which goes to those subscribed when it was sent).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";

const server = useTestServer({ webPublicStreamsEnabled: true });

type Kind = "protected" | "shared" | "web-public" | "public";
const KINDS: Kind[] = ["protected", "shared", "web-public", "public"];

/** Each user's relation to every channel of the table. */
const ROLES = {
  othello: "subscribed when the message was sent",
  prospero: "subscribed when it was sent, then left",
  cordelia: "joined after the message",
  aaron: "a member who never subscribed",
  polonius: "a guest who never subscribed",
  iago: "an administrator without a subscription",
  hamlet: "in the channel's can_subscribe_group",
} as const;
type Who = keyof typeof ROLES;

/**
 * Zulip's answers: `access` (has_message_access) and `received` (a user_message row, given to
 * those subscribed when the message was sent).
 */
const EXPECTED: Record<Kind, Record<Who, { access: boolean; received: boolean }>> = {
  protected: {
    othello: { access: true, received: true },
    prospero: { access: false, received: true },
    cordelia: { access: false, received: false },
    aaron: { access: false, received: false },
    polonius: { access: false, received: false },
    iago: { access: false, received: false },
    hamlet: { access: false, received: false },
  },
  shared: {
    othello: { access: true, received: true },
    prospero: { access: false, received: true },
    cordelia: { access: true, received: false },
    aaron: { access: false, received: false },
    polonius: { access: false, received: false },
    iago: { access: false, received: false },
    hamlet: { access: true, received: false },
  },
  "web-public": {
    othello: { access: true, received: true },
    prospero: { access: true, received: true },
    cordelia: { access: true, received: false },
    aaron: { access: true, received: false },
    polonius: { access: false, received: false },
    iago: { access: true, received: false },
    hamlet: { access: true, received: false },
  },
  public: {
    othello: { access: true, received: true },
    prospero: { access: true, received: true },
    cordelia: { access: true, received: false },
    aaron: { access: true, received: false },
    polonius: { access: false, received: false },
    iago: { access: true, received: false },
    hamlet: { access: true, received: false },
  },
};

const WHO = Object.keys(ROLES) as Who[];
const userId = (who: string) => server.creds.users[who]!.user_id;
const basic = (who: string) =>
  "Basic " +
  Buffer.from(`${server.creds.users[who]!.email}:${server.creds.users[who]!.api_key}`).toString(
    "base64",
  );

interface Fixture {
  channelId: number;
  topic: string;
  messageId: number;
  word: string;
  fileUrl: string;
}
const fixtures = new Map<Kind, Fixture>();
/** The message ids each user's queue received in `message` events. */
const eventMessageIds = new Map<Who, Set<number>>();

async function upload(who: string, name: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([`the ${name} file`], { type: "text/plain" }), name);
  const response = await fetch(`${server.baseUrl}/api/v1/user_uploads`, {
    method: "POST",
    headers: { Authorization: basic(who) },
    body: form,
  });
  const json = (await response.json()) as { url: string };
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.url;
}

beforeAll(async () => {
  await server.db.realm.update({
    where: { id: server.creds.realm.id },
    data: { enableSpectatorAccess: true },
  });
  const queues = new Map<Who, string>();
  for (const who of WHO)
    queues.set(
      who,
      (
        await expectSuccess(
          server.as(who).POST("/register", { body: { event_types: ["message"] } as never }),
        )
      ).queue_id!,
    );

  const early = ["desdemona", "othello", "prospero"].map(userId);
  const settings: Record<Kind, Record<string, unknown>> = {
    protected: { invite_only: true, history_public_to_subscribers: false },
    shared: { invite_only: true, history_public_to_subscribers: true },
    "web-public": { is_web_public: true },
    public: {},
  };
  for (const kind of KINDS) {
    const groups =
      kind === "protected" || kind === "shared"
        ? { can_subscribe_group: { direct_members: [userId("hamlet")], direct_subgroups: [] } }
        : {};
    const body = { name: `access ${kind}`, subscribers: early, ...settings[kind], ...groups };
    const { id: channelId } = await expectSuccess(
      server.as("desdemona").POST("/channels/create", { body: body as never }),
    );
    const word = `zebra${kind.replace("-", "")}`;
    const fileUrl = await upload("desdemona", `${kind}.txt`);
    const topic = "the table";
    const { id: messageId } = await expectSuccess(
      server.as("desdemona").POST("/messages", {
        body: {
          type: "channel",
          to: channelId,
          topic,
          content: `A ${word} with [a file](${fileUrl})`,
        } as never,
      }),
    );
    fixtures.set(kind, { channelId, topic, messageId, word, fileUrl });
    await expectSuccess(
      server.as("desdemona").POST("/users/me/subscriptions", {
        body: {
          subscriptions: [{ name: `access ${kind}` }],
          principals: [userId("cordelia")],
        } as never,
      }),
    );
    await expectSuccess(
      server.as("prospero").DELETE("/users/me/subscriptions", {
        body: { subscriptions: [`access ${kind}`] } as never,
      }),
    );
  }

  for (const who of WHO) {
    const { events } = await expectSuccess(
      server.as(who).GET("/events", {
        params: { query: { queue_id: queues.get(who)!, last_event_id: -1, dont_block: true } },
      }),
    );
    eventMessageIds.set(
      who,
      new Set(
        (events as any[]).filter((e) => e.type === "message").map((e) => e.message.id as number),
      ),
    );
  }
});

/** Every path's answer for one user and one channel's message. */
async function answers(who: Who, f: Fixture) {
  const client = server.as(who);
  const fetched = await client.GET("/messages/{message_id}", {
    params: { path: { message_id: f.messageId } },
  });
  const around = async (narrow: unknown[]) =>
    (
      await expectSuccess(
        client.GET("/messages", {
          params: { query: { anchor: f.messageId, num_before: 0, num_after: 0, narrow } as never },
        }),
      )
    ).messages.map((m) => m.id);
  const inChannel = await around([{ operator: "channel", operand: f.channelId }]);
  const searched = await around([
    { operator: "channel", operand: f.channelId },
    { operator: "search", operand: f.word },
  ]);
  const matches = await expectSuccess(
    client.GET("/messages/matches_narrow", {
      params: {
        query: {
          msg_ids: [f.messageId],
          narrow: [{ operator: "channel", operand: f.channelId }],
        } as never,
      },
    }),
  );
  const history = await client.GET("/messages/{message_id}/history", {
    params: { path: { message_id: f.messageId } },
  });
  const file = await fetch(`${server.baseUrl}${f.fileUrl}`, {
    headers: { Authorization: basic(who) },
  });
  // The same topic is no change: an accessible message gets as far as "Nothing to change".
  const patch = await client.PATCH("/messages/{message_id}", {
    params: { path: { message_id: f.messageId } },
    body: { topic: f.topic } as never,
  });
  // An invalid emoji code: an accessible message gets as far as the emoji check.
  const reaction = await client.POST("/messages/{message_id}/reactions", {
    params: { path: { message_id: f.messageId } },
    body: { emoji_name: "octopus", emoji_code: "zzzz", reaction_type: "unicode_emoji" } as never,
  });
  return {
    fetch: fetched.response.status === 200,
    narrow: inChannel.includes(f.messageId),
    search: searched.includes(f.messageId),
    matchesNarrow: Object.keys((matches as any).messages).includes(String(f.messageId)),
    history: history.response.status === 200,
    file: file.status === 200,
    patch: patch.response.status,
    patchMsg: (patch.error as { msg?: string } | undefined)?.msg,
    event: eventMessageIds.get(who)!.has(f.messageId),
    fileStatus: file.status,
    fetchError: (fetched.error as { msg?: string } | undefined)?.msg,
    reactionMsg: (reaction.error as { msg?: string } | undefined)?.msg,
  };
}

describe("one access rule over every read path", () => {
  for (const kind of KINDS)
    for (const who of WHO) {
      const { access, received } = EXPECTED[kind][who];
      it(`${kind} channel, ${ROLES[who]} (${who}): ${access ? "readable" : "not readable"}`, async () => {
        const a = await answers(who, fixtures.get(kind)!);
        expect(a).toEqual({
          fetch: access,
          narrow: access,
          search: access,
          matchesNarrow: access && received,
          history: access,
          file: access,
          patch: 400,
          patchMsg: access ? "Nothing to change" : "Invalid message(s)",
          event: received,
          fileStatus: access ? 200 : 403,
          fetchError: access ? undefined : "Invalid message(s)",
          reactionMsg: access ? "Invalid emoji code." : "Invalid message(s)",
        });
      });
    }

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
          body: { topic: "elsewhere" } as never,
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
    const { id: mine } = await expectSuccess(
      server.as("cordelia").POST("/messages", {
        body: { type: "channel", to: f.channelId, topic: f.topic, content: "mine" } as never,
      }),
    );
    await expectSuccess(
      server.as("cordelia").PATCH("/messages/{message_id}", {
        params: { path: { message_id: mine } },
        body: {
          topic: "moved",
          propagate_mode: "change_all",
          send_notification_to_old_thread: false,
          send_notification_to_new_thread: false,
        } as never,
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
