/**
 * The situations of the read-path matrix (test/api/access*.test.ts): four kinds of channel, each
 * with a message sent while some users were subscribed, and users in every relation to it. What
 * Zulip answers in each situation is stated here once, per kind and user, from Zulip's rules
 * (zerver/lib/message.py has_message_access, zerver/lib/streams.py user_has_metadata_access /
 * user_has_content_access / access_stream_for_send_message); the tests compare every path's
 * answer with these.
 */
import { expect } from "vitest";
import { createChannel, sendToChannel, type Body } from "./builders.ts";
import { expectSuccess } from "./expect.ts";
import type { TestServer } from "./server.ts";

export type Kind = "protected" | "shared" | "web-public" | "public";
export const KINDS: Kind[] = ["protected", "shared", "web-public", "public"];

/** Each user's relation to every channel of the table. */
export const ROLES = {
  othello: "subscribed when the message was sent",
  prospero: "subscribed when it was sent, then left",
  cordelia: "joined after the message",
  aaron: "a member who never subscribed",
  polonius: "a guest who never subscribed",
  iago: "an administrator without a subscription",
  hamlet: "in the channel's can_subscribe_group",
} as const;
export type Who = keyof typeof ROLES;
export const WHO = Object.keys(ROLES) as Who[];

const ALL = WHO;
const NOT_GUEST = WHO.filter((w) => w !== "polonius");
const table = (rows: Record<Kind, readonly Who[]>) => (kind: Kind, who: Who) =>
  rows[kind].includes(who);

/** has_message_access. */
export const access = table({
  protected: ["othello"],
  shared: ["othello", "cordelia", "hamlet"],
  "web-public": NOT_GUEST,
  public: NOT_GUEST,
});
/** A user_message row: those subscribed when the message was sent. */
export const received = table({
  protected: ["othello", "prospero"],
  shared: ["othello", "prospero"],
  "web-public": ["othello", "prospero"],
  public: ["othello", "prospero"],
});
/** user_has_metadata_access: the channel exists for them (its name, settings, subscribers). */
export const metadata = table({
  protected: ["othello", "cordelia", "iago", "hamlet"],
  shared: ["othello", "cordelia", "iago", "hamlet"],
  "web-public": ALL,
  public: NOT_GUEST,
});
/** user_has_content_access: accessing the channel by id (topics, drafts, typing, muting, marking read). */
export const content = table({
  protected: ["othello", "cordelia", "hamlet"],
  shared: ["othello", "cordelia", "hamlet"],
  "web-public": ALL,
  public: NOT_GUEST,
});
/** access_stream_for_send_message. */
export const send = table({
  protected: ["othello", "cordelia"],
  shared: ["othello", "cordelia", "hamlet"],
  "web-public": ALL,
  public: NOT_GUEST,
});
/** Subscribed now. */
export const subscribed = (_kind: Kind, who: Who) => who === "othello" || who === "cordelia";

export interface Fixture {
  kind: Kind;
  name: string;
  channelId: number;
  topic: string;
  messageId: number;
  /** A second message, which the events test deletes. */
  secondId: number;
  word: string;
  fileUrl: string;
}

export const userId = (server: TestServer, who: string) => server.creds.users[who]!.user_id;
export const basic = (server: TestServer, who: string) =>
  "Basic " +
  Buffer.from(`${server.creds.users[who]!.email}:${server.creds.users[who]!.api_key}`).toString(
    "base64",
  );

export async function upload(server: TestServer, who: string, name: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([`the ${name} file`], { type: "text/plain" }), name);
  const response = await fetch(`${server.baseUrl}/api/v1/user_uploads`, {
    method: "POST",
    headers: { Authorization: basic(server, who) },
    body: form,
  });
  const json = (await response.json()) as { url: string };
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.url;
}

/**
 * Creates the four channels (desdemona, othello and prospero subscribed; hamlet in the private
 * ones' can_subscribe_group), sends in each a message that mentions everyone and links a file,
 * which othello and prospero star; then cordelia joins and prospero leaves. `beforeSend` runs
 * before the first message (to register event queues that should see it).
 */
export async function createAccessChannels(
  server: TestServer,
  beforeSend: () => Promise<void> = async () => {},
): Promise<Map<Kind, Fixture>> {
  await server.db.realm.update({
    where: { id: server.creds.realm.id },
    data: { enableSpectatorAccess: true },
  });
  const early = ["desdemona", "othello", "prospero"].map((w) => userId(server, w));
  const settings: Record<Kind, Partial<Body<"/channels/create", "post">>> = {
    protected: { invite_only: true, history_public_to_subscribers: false },
    shared: { invite_only: true, history_public_to_subscribers: true },
    "web-public": { is_web_public: true },
    public: {},
  };
  const channels = new Map<Kind, { channelId: number; name: string }>();
  for (const kind of KINDS) {
    const groups =
      kind === "protected" || kind === "shared"
        ? {
            can_subscribe_group: {
              direct_members: [userId(server, "hamlet")],
              direct_subgroups: [],
            },
          }
        : {};
    const name = `access ${kind}`;
    const { id } = await createChannel(server.as("desdemona"), {
      name,
      subscribers: early,
      ...settings[kind],
      ...groups,
    });
    channels.set(kind, { channelId: id, name });
  }
  await beforeSend();
  const fixtures = new Map<Kind, Fixture>();
  for (const kind of KINDS) {
    const { channelId, name } = channels.get(kind)!;
    const word = `zebra${kind.replace("-", "")}`;
    const fileUrl = await upload(server, "desdemona", `${kind}.txt`);
    const topic = "the table";
    const desdemona = server.as("desdemona");
    const { id: messageId } = await sendToChannel(desdemona, {
      to: channelId,
      topic,
      content: `@**all** A ${word} with [a file](${fileUrl})`,
    });
    const { id: secondId } = await sendToChannel(desdemona, {
      to: channelId,
      topic,
      content: "the second",
    });
    for (const who of ["othello", "prospero"])
      await expectSuccess(
        server.as(who).POST("/messages/flags", {
          body: { messages: [messageId], op: "add", flag: "starred" },
        }),
      );
    fixtures.set(kind, { kind, name, channelId, topic, messageId, secondId, word, fileUrl });
    await expectSuccess(
      server.as("desdemona").POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name }], principals: [userId(server, "cordelia")] },
      }),
    );
    await expectSuccess(
      server.as("prospero").DELETE("/users/me/subscriptions", {
        body: { subscriptions: [name] },
      }),
    );
  }
  return fixtures;
}

/** A typed client's answer, compact: "ok" or "<status> <msg>". */
export async function answer(request: Promise<{ error?: unknown; response: Response }>) {
  const { error, response } = await request;
  return error === undefined
    ? "ok"
    : `${response.status} ${(error as { msg?: string }).msg ?? JSON.stringify(error)}`;
}
