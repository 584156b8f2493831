/**
 * GET /messages with narrows: every operator and its negation, flags tested in SQL at Zulip's
 * bit positions, anchors (first_unread among them), and whose history a narrow reads.
 */
import { describe, expect, it } from "vitest";
import { doCreateChannel } from "../../server/actions/channels/channels.ts";
import { doSubscribe } from "../../server/actions/channels/subscriptions.ts";
import { Prisma } from "../../server/db/index.ts";
import { countStatements } from "../../server/db/statements.ts";
import { getMessages } from "../../server/handlers/messages.ts";
import { FLAG_BITS, flagsOf } from "../../server/lib/messages/messages.ts";
import { compileNarrow } from "../../server/lib/narrow/narrow.ts";
import { firstMessageAtSql } from "../../server/lib/messages/message-fetch.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import {
  type NarrowTerm,
  type Query as QueryOf,
  sendDirect,
  sendToChannel,
} from "../helpers/builders.ts";

const server = useTestServer();

type Term = NarrowTerm;
type Query = QueryOf<"/messages", "get">;

const uid = (name: string) => server.creds.users[name]!.user_id;
let serial = 0;
/** A name no other test uses. */
const unique = (prefix: string) => `${prefix} ${++serial}`;

const get = (as: string, query: Query) =>
  server.as(as).GET("/messages", { params: { query: { apply_markdown: false, ...query } } });
const fetch = (as: string, query: Query) => expectSuccess(get(as, query));
/** Ids of every message matching the narrow, oldest first. */
const ids = async (as: string, narrow: Term[]) =>
  (await fetch(as, { anchor: "newest", num_before: 1000, narrow })).messages.map((m) => m.id);
const badNarrow = (as: string, narrow: Term[], desc: string) =>
  expectError(
    get(as, { anchor: "newest", num_before: 5, narrow }),
    400,
    `Invalid narrow operator: ${desc}`,
    { code: "BAD_NARROW", desc },
  );

/** GET /messages as a real client sends it: the query string written by hand. */
async function rawGet(as: string, query: string) {
  const cred = server.creds.users[as]!;
  const response = await globalThis.fetch(`${server.baseUrl}/api/v1/messages?${query}`, {
    headers: {
      Authorization: "Basic " + Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64"),
    },
  });
  return (await response.json()) as Record<string, unknown>;
}

/** The handler called directly (no HTTP), with its statements counted (the context's reads are not). */
async function direct(user: string, query: Query) {
  const realm = (await server.db.realm.findUnique({ where: { id: server.creds.realm.id } }))!;
  const profile = (await server.db.userProfile.findUnique({ where: { id: uid(user) } }))!;
  const ctx = { ...server.deps, host: server.creds.realm.host, realm, user: profile };
  const input = {
    path: {},
    query: { apply_markdown: true, ...query },
    body: {},
  } as unknown as Parameters<typeof getMessages>[0];
  const counter = { statements: 0 };
  const result = await countStatements(counter, () => getMessages(input, ctx));
  return { result, statements: counter.statements };
}

async function setFlags(user: string, messageId: number, flags: bigint) {
  await server.db.userMessage.update({
    where: { userProfileId_messageId: { userProfileId: uid(user), messageId } },
    data: { flags },
  });
}

/** A new channel with these subscribers (by short name). */
async function createChannel(
  name: string,
  members: string[],
  options: { inviteOnly?: boolean; historyPublicToSubscribers?: boolean } = {},
) {
  const realmId = server.creds.realm.id;
  return server.db.$transaction(async (tx) => {
    const stream = await doCreateChannel(tx, realmId, { name, ...options, creatorId: uid("iago") });
    await doSubscribe(tx, realmId, stream, members.map(uid));
    return stream;
  });
}
const subscribe = (stream: { id: number; recipientId: number | null }, members: string[]) =>
  server.db.$transaction((tx) => doSubscribe(tx, server.creds.realm.id, stream, members.map(uid)));

describe("narrow operators", () => {
  it("channel and stream, by name in any case or by id", async () => {
    const topic = unique("channel op");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic,
      content: `${topic} message`,
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    const denmark = server.creds.channels.Denmark!.stream_id;
    for (const term of [
      { operator: "channel", operand: "Denmark" },
      { operator: "channel", operand: "dEnMaRk" },
      { operator: "stream", operand: "denmark" },
      { operator: "channel", operand: denmark },
      { operator: "stream", operand: denmark },
    ])
      expect(await ids("othello", [term, { operator: "topic", operand: topic }])).toEqual([a]);
    expect(
      await ids("othello", [
        { operator: "channel", operand: "Denmark", negated: true },
        { operator: "topic", operand: topic },
      ]),
    ).toEqual([b]);
  });

  it("topic and subject, case-insensitively, with '(no topic)' for the empty topic", async () => {
    const topic = unique("Mixed Case Topic");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic,
      content: `${topic} message`,
    });
    const otherTopic = unique("other topic");
    const { id: other } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: otherTopic,
      content: `${otherTopic} message`,
    });
    const { id: dm } = await sendDirect(server.as("hamlet"), {
      to: [uid("othello")],
      content: `${topic} in a DM`,
    });
    for (const operand of [topic, topic.toUpperCase(), topic.toLowerCase(), `  ${topic}  `]) {
      expect(await ids("othello", [{ operator: "topic", operand }])).toEqual([a]);
      expect(await ids("othello", [{ operator: "subject", operand }])).toEqual([a]);
    }
    const negated = await ids("othello", [
      { operator: "channel", operand: "Denmark" },
      { operator: "topic", operand: topic.toUpperCase(), negated: true },
    ]);
    expect(negated).toContain(other);
    expect(negated).not.toContain(a);
    expect(negated).not.toContain(dm);
    const { id: empty } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "",
      content: " message",
    });
    expect(
      await ids("othello", [
        { operator: "channel", operand: "Denmark" },
        { operator: "topic", operand: "(no topic)" },
      ]),
    ).toContain(empty);
    expect(
      await ids("othello", [
        { operator: "channel", operand: "Denmark" },
        { operator: "topic", operand: "" },
      ]),
    ).toContain(empty);
  });

  it("sender, by API email in any case or by id", async () => {
    const topic = unique("sender op");
    const { id: a } = await sendToChannel(server.as("cordelia"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    const t = { operator: "topic", operand: topic };
    expect(
      await ids("othello", [t, { operator: "sender", operand: "cordelia@zulip.com" }]),
    ).toEqual([a]);
    expect(
      await ids("othello", [t, { operator: "sender", operand: " CORDELIA@zulip.com " }]),
    ).toEqual([a]);
    expect(await ids("othello", [t, { operator: "sender", operand: uid("hamlet") }])).toEqual([b]);
    expect(
      await ids("othello", [t, { operator: "sender", operand: uid("hamlet"), negated: true }]),
    ).toEqual([a]);
  });

  it("id, as digits or an integer", async () => {
    const topic = unique("id op");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    expect(await ids("othello", [{ operator: "id", operand: a }])).toEqual([a]);
    expect(await ids("othello", [{ operator: "id", operand: String(b) }])).toEqual([b]);
    expect(
      await ids("othello", [
        { operator: "topic", operand: topic },
        { operator: "id", operand: a, negated: true },
      ]),
    ).toEqual([b]);
    expect(await ids("othello", [{ operator: "id", operand: "2147483647" }])).toEqual([]);
  });

  it("search: the full-text search of topic and content, and its negation", async () => {
    const topic = unique("search op");
    const word = `quokka${Date.now()}`;
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `The ${word} smiles`,
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `Nothing to see`,
    });
    const { id: c } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: `${word} in the topic`,
      content: "plain",
    });
    expect(await ids("othello", [{ operator: "search", operand: word.toUpperCase() }])).toEqual([
      a,
      c,
    ]);
    expect(
      await ids("othello", [
        { operator: "topic", operand: topic },
        { operator: "search", operand: word, negated: true },
      ]),
    ).toEqual([b]);
    // Two search terms are one search: both words.
    expect(
      await ids("othello", [
        { operator: "search", operand: word },
        { operator: "search", operand: "smiling" },
      ]),
    ).toEqual([a]);
  });

  it("has: link, image, attachment and reaction", async () => {
    const topic = unique("has op");
    const t = { operator: "topic", operand: topic };
    const { id: link } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: "see http://foo.com",
    });
    const { id: image } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: "[pic](https://example.com/cat.png)",
    });
    const { id: plain } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: "plain",
    });
    await server.db.message.update({ where: { id: plain }, data: { hasAttachment: true } });
    await server.db.reaction.create({
      data: {
        realmId: server.creds.realm.id,
        messageId: plain,
        userProfileId: uid("othello"),
        emojiName: "smile",
        emojiCode: "1f604",
      },
    });
    expect(await ids("othello", [t, { operator: "has", operand: "link" }])).toEqual([link, image]);
    expect(await ids("othello", [t, { operator: "has", operand: "image" }])).toEqual([image]);
    expect(await ids("othello", [t, { operator: "has", operand: "attachment" }])).toEqual([plain]);
    expect(await ids("othello", [t, { operator: "has", operand: "reaction" }])).toEqual([plain]);
    expect(
      await ids("othello", [t, { operator: "has", operand: "reaction", negated: true }]),
    ).toEqual([link, image]);
    expect(await ids("othello", [t, { operator: "has", operand: "link", negated: true }])).toEqual([
      plain,
    ]);
  });

  it("is:resolved, is:dm and is:private", async () => {
    const topic = unique("resolved op");
    const { id: resolved } = await sendToChannel(server.as("hamlet"), {
      to: "Rome",
      topic: `✔ ${topic}`,
      content: `✔ ${topic} message`,
    });
    const { id: open } = await sendToChannel(server.as("hamlet"), {
      to: "Rome",
      topic,
      content: `${topic} message`,
    });
    const rome = { operator: "channel", operand: "Rome" };
    expect(await ids("cordelia", [rome, { operator: "is", operand: "resolved" }])).toContain(
      resolved,
    );
    const unresolved = await ids("cordelia", [
      rome,
      { operator: "is", operand: "resolved", negated: true },
    ]);
    expect(unresolved).toContain(open);
    expect(unresolved).not.toContain(resolved);

    const { id: dm } = await sendDirect(server.as("prospero"), {
      to: [uid("shiva")],
      content: "dm",
    });
    const { id: group } = await sendDirect(server.as("prospero"), {
      to: [uid("shiva"), uid("aaron")],
      content: "group",
    });
    const notADmTopic = unique("not a dm");
    const { id: channel } = await sendToChannel(server.as("prospero"), {
      to: "Verona",
      topic: notADmTopic,
      content: `${notADmTopic} message`,
    });
    for (const operand of ["dm", "private"]) {
      const mine = await ids("shiva", [{ operator: "is", operand }]);
      expect(mine).toEqual(expect.arrayContaining([dm, group]));
      expect(mine).not.toContain(channel);
      const notDms = await ids("shiva", [{ operator: "is", operand, negated: true }]);
      expect(notDms).toContain(channel);
      expect(notDms).not.toContain(dm);
    }
  });

  it("dm / pm-with: one-to-one both ways, oneself, and groups by their members", async () => {
    const { id: toAaron } = await sendDirect(server.as("prospero"), {
      to: [uid("aaron")],
      content: "to aaron",
    });
    const { id: toProspero } = await sendDirect(server.as("aaron"), {
      to: [uid("prospero")],
      content: "to prospero",
    });
    const { id: self } = await sendDirect(server.as("aaron"), {
      to: [uid("aaron")],
      content: "note to self",
    });
    const { id: group } = await sendDirect(server.as("aaron"), {
      to: [uid("prospero"), uid("desdemona")],
      content: "group",
    });
    expect(await ids("aaron", [{ operator: "dm", operand: "prospero@zulip.com" }])).toEqual([
      toAaron,
      toProspero,
    ]);
    expect(await ids("aaron", [{ operator: "pm-with", operand: "PROSPERO@zulip.com" }])).toEqual([
      toAaron,
      toProspero,
    ]);
    expect(await ids("aaron", [{ operator: "dm", operand: [uid("prospero")] }])).toEqual([
      toAaron,
      toProspero,
    ]);
    expect(await ids("prospero", [{ operator: "dm", operand: "aaron@zulip.com" }])).toEqual([
      toAaron,
      toProspero,
    ]);
    expect(await ids("aaron", [{ operator: "dm", operand: "aaron@zulip.com" }])).toEqual([self]);
    // A group by its other members, in any order, with or without oneself.
    for (const operand of [
      "prospero@zulip.com,desdemona@zulip.com",
      "desdemona@zulip.com,aaron@zulip.com,prospero@zulip.com",
    ])
      expect(await ids("aaron", [{ operator: "dm", operand }])).toEqual([group]);
    expect(
      await ids("desdemona", [{ operator: "dm", operand: [uid("aaron"), uid("prospero")] }]),
    ).toEqual([group]);
    // A group that never talked matches nothing, and its negation everything else.
    expect(
      await ids("aaron", [{ operator: "dm", operand: "prospero@zulip.com,iago@zulip.com" }]),
    ).toEqual([]);
    const notThatGroup = await ids("aaron", [
      { operator: "is", operand: "dm" },
      { operator: "dm", operand: "prospero@zulip.com,iago@zulip.com", negated: true },
    ]);
    expect(notThatGroup).toEqual(expect.arrayContaining([toAaron, toProspero, self, group]));
    const notProspero = await ids("aaron", [
      { operator: "is", operand: "dm" },
      { operator: "dm", operand: "prospero@zulip.com", negated: true },
    ]);
    expect(notProspero).toEqual(expect.arrayContaining([self, group]));
    expect(notProspero).not.toContain(toAaron);
  });

  it("dm: a one-to-one conversation's ranges around an anchor take from both senders, limited", async () => {
    // Interleaved: iago, hamlet, hamlet, iago, … (each side is read as a scan of its own).
    const sent: number[] = [];
    for (let i = 0; i < 12; i++) {
      const from = i % 3 === 0 ? "iago" : "hamlet";
      const to = from === "iago" ? "hamlet" : "iago";
      const content = i % 4 === 0 ? `pair search marker ${i}` : `pair ${i}`;
      sent.push((await sendDirect(server.as(from), { to: [uid(to)], content })).id);
    }
    // Another conversation of each, in between: never in the pair's ranges.
    await sendDirect(server.as("hamlet"), { to: [uid("othello")], content: "elsewhere" });
    const narrow: Term[] = [{ operator: "dm", operand: [uid("iago")] }];
    const around = await fetch("hamlet", { anchor: sent[6]!, num_before: 4, num_after: 3, narrow });
    expect(around.messages.map((m) => m.id)).toEqual(sent.slice(2, 10));
    expect(around.found_anchor).toBe(true);
    expect(around.found_oldest).toBe(false);
    expect(around.found_newest).toBe(false);
    const newest = await fetch("iago", {
      anchor: "newest",
      num_before: 5,
      narrow: [{ operator: "dm", operand: [uid("hamlet")] }],
    });
    expect(newest.messages.map((m) => m.id)).toEqual(sent.slice(-5));
    const oldest = await fetch("hamlet", { anchor: "oldest", num_after: 5, narrow });
    expect(oldest.messages.map((m) => m.id).slice(0, 5)).toEqual(
      (await ids("hamlet", narrow)).slice(0, 5),
    );
    // With a second term: the limit counts the messages that match both.
    const marked = await fetch("hamlet", {
      anchor: "newest",
      num_before: 2,
      narrow: [...narrow, { operator: "search", operand: "marker" }],
    });
    expect(marked.messages.map((m) => m.id)).toEqual([sent[4]!, sent[8]!]);
    // Negated, the pair is excluded (no branches: the condition as a whole).
    const others = await ids("hamlet", [
      { operator: "is", operand: "dm" },
      { operator: "dm", operand: [uid("iago")], negated: true },
    ]);
    expect(others.some((id) => sent.includes(id))).toBe(false);
  });

  it("dm-including: every direct message with that user; group-pm-with: the group ones", async () => {
    const { id: one } = await sendDirect(server.as("shiva"), {
      to: [uid("cordelia")],
      content: "one",
    });
    const { id: back } = await sendDirect(server.as("cordelia"), {
      to: [uid("shiva")],
      content: "back",
    });
    const { id: group } = await sendDirect(server.as("shiva"), {
      to: [uid("cordelia"), uid("othello")],
      content: "group",
    });
    const { id: other } = await sendDirect(server.as("shiva"), {
      to: [uid("othello")],
      content: "other",
    });
    const { id: self } = await sendDirect(server.as("shiva"), {
      to: [uid("shiva")],
      content: "self",
    });
    const notADmTopic = unique("not a dm");
    const { id: channel } = await sendToChannel(server.as("cordelia"), {
      to: "Verona",
      topic: notADmTopic,
      content: `${notADmTopic} message`,
    });
    for (const operand of ["cordelia@zulip.com", uid("cordelia")]) {
      const found = await ids("shiva", [{ operator: "dm-including", operand }]);
      expect(found).toEqual(expect.arrayContaining([one, back, group]));
      for (const id of [other, self, channel]) expect(found).not.toContain(id);
      const groups = await ids("shiva", [{ operator: "group-pm-with", operand }]);
      expect(groups).toContain(group);
      for (const id of [one, back, other, self, channel]) expect(groups).not.toContain(id);
    }
    // Oneself: every direct message.
    expect(await ids("shiva", [{ operator: "dm-including", operand: "shiva@zulip.com" }])).toEqual(
      expect.arrayContaining([one, back, group, other, self]),
    );
    const without = await ids("shiva", [
      { operator: "is", operand: "dm" },
      { operator: "dm-including", operand: "cordelia@zulip.com", negated: true },
    ]);
    expect(without).toEqual(expect.arrayContaining([other, self]));
    expect(without).not.toContain(one);
    const notGroups = await ids("shiva", [
      { operator: "is", operand: "dm" },
      { operator: "group-pm-with", operand: "cordelia@zulip.com", negated: true },
    ]);
    expect(notGroups).toEqual(expect.arrayContaining([one, back]));
    expect(notGroups).not.toContain(group);
  });

  it("channels:public (streams:public): every public channel, with its history", async () => {
    const topic = `pubchan${Date.now()}`;
    const secret = await createChannel(unique("secret"), ["iago", "hamlet"], { inviteOnly: true });
    const { id: open } = await sendToChannel(server.as("iago"), {
      to: "Scotland",
      topic,
      content: `${topic} message`,
    });
    const { id: hidden } = await sendToChannel(server.as("iago"), {
      to: secret.name,
      topic,
      content: `${topic} message`,
    });
    const { id: dm } = await sendDirect(server.as("iago"), { to: [uid("hamlet")], content: topic });
    const t = { operator: "topic", operand: topic };
    // Hamlet is not subscribed to Scotland: channels:public reads its history.
    for (const operator of ["channels", "streams"])
      expect(await ids("hamlet", [{ operator, operand: "public" }, t])).toEqual([open]);
    expect(
      await ids("hamlet", [
        { operator: "channels", operand: "public", negated: true },
        { operator: "search", operand: topic },
      ]),
    ).toEqual([hidden, dm]);
    // A guest reads no public history that way, only what she received.
    expect(await ids("polonius", [{ operator: "channels", operand: "public" }, t])).toEqual([]);
    expect(await ids("hamlet", [{ operator: "channels", operand: "web-public" }, t])).toEqual([]);
    await badNarrow(
      "hamlet",
      [{ operator: "channels", operand: "private" }],
      "unknown channels operand private",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "streams", operand: "bogus" }],
      "unknown channels operand bogus",
    );
  });

  it("channels:archived (feature level 489): what the user received in archived channels", async () => {
    const topic = `archchan${Date.now()}`;
    const gone = await createChannel(unique("gone"), ["iago", "hamlet"]);
    const kept = await createChannel(unique("kept"), ["iago", "hamlet"]);
    const { id: old } = await sendToChannel(server.as("iago"), {
      to: gone.name,
      topic,
      content: `${topic} message`,
    });
    const { id: live } = await sendToChannel(server.as("iago"), {
      to: kept.name,
      topic,
      content: `${topic} message`,
    });
    await expectSuccess(
      server
        .as("iago")
        .DELETE("/streams/{stream_id}", { params: { path: { stream_id: gone.id } } }),
    );
    const t = { operator: "topic", operand: topic };
    for (const operator of ["channels", "streams"])
      expect(await ids("hamlet", [{ operator, operand: "archived" }, t])).toEqual([old]);
    expect(
      await ids("hamlet", [{ operator: "channels", operand: "archived", negated: true }, t]),
    ).toEqual([live]);
    // Othello never received it: the operator reads no history.
    expect(await ids("othello", [{ operator: "channels", operand: "archived" }, t])).toEqual([]);
    // A real client's encoding: the narrow as JSON text in the query string.
    const narrow = JSON.stringify([{ operator: "channels", operand: "archived" }, t]);
    const body = await rawGet(
      "hamlet",
      `anchor=newest&num_before=10&narrow=${encodeURIComponent(narrow)}`,
    );
    expect((body.messages as { id: number }[]).map((m) => m.id)).toEqual([old]);
  });

  it("mentions:<user> (feature level 446): a direct, visible personal mention of that user", async () => {
    const topic = `mentions${Date.now()}`;
    const send = async (content: string) =>
      (await sendToChannel(server.as("iago"), { to: "Verona", topic, content })).id;
    const named = await send("hi @**King Hamlet**");
    const silent = await send("hi @_**King Hamlet**");
    const wildcard = await send("hi @**all**");
    const other = await send("hi @**Othello, the Moor of Venice**");
    const t = { operator: "topic", operand: topic };
    // By ID or by email, whoever asks: the mention is in the message itself.
    for (const as of ["hamlet", "othello"]) {
      expect(await ids(as, [{ operator: "mentions", operand: uid("hamlet") }, t])).toEqual([named]);
      expect(await ids(as, [{ operator: "mentions", operand: "hamlet@zulip.com" }, t])).toEqual([
        named,
      ]);
    }
    expect(
      await ids("hamlet", [{ operator: "mentions", operand: uid("hamlet"), negated: true }, t]),
    ).toEqual([silent, wildcard, other]);
    expect(await ids("hamlet", [{ operator: "mentions", operand: uid("othello") }, t])).toEqual([
      other,
    ]);
    await badNarrow(
      "hamlet",
      [{ operator: "mentions", operand: "nobody@zulip.com" }],
      "unknown user nobody@zulip.com",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "mentions", operand: 9_999_999 }],
      "unknown user 9999999",
    );
    // matches_narrow takes it too.
    const { messages } = await expectSuccess(
      server.as("hamlet").GET("/messages/matches_narrow", {
        params: {
          query: {
            msg_ids: [named, silent],
            narrow: [{ operator: "mentions", operand: uid("hamlet") }],
          },
        },
      }),
    );
    expect(Object.keys(messages)).toEqual([String(named)]);
    // A real client's encoding.
    const narrow = JSON.stringify([{ operator: "mentions", operand: "hamlet@zulip.com" }, t]);
    const body = await rawGet(
      "othello",
      `anchor=newest&num_before=10&narrow=${encodeURIComponent(narrow)}`,
    );
    expect((body.messages as { id: number }[]).map((m) => m.id)).toEqual([named]);
  });

  it("sender:me is the caller", async () => {
    const topic = unique("sender me");
    const { id: mine } = await sendToChannel(server.as("aaron"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    const { id: theirs } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    const t = { operator: "topic", operand: topic };
    expect(await ids("aaron", [t, { operator: "sender", operand: "me" }])).toEqual([mine]);
    expect(await ids("aaron", [t, { operator: "sender", operand: "me", negated: true }])).toEqual([
      theirs,
    ]);
  });

  it("near changes nothing; legacy [operator, operand] pairs work", async () => {
    const topic = unique("legacy");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic,
      content: `${topic} message`,
    });
    expect(
      await ids("othello", [
        ["channel", "Denmark"],
        ["topic", topic],
      ]),
    ).toEqual([a]);
    expect(
      await ids("othello", [
        ["channel", "Denmark"],
        ["topic", topic],
        ["near", String(a)],
      ]),
    ).toEqual([a]);
    expect(
      await ids("othello", [
        { operator: "topic", operand: topic },
        { operator: "near", operand: "12345", negated: true },
      ]),
    ).toEqual([a]);
  });

  it("with: the conversation of a message, in place of the narrow's channel, topic and dm terms", async () => {
    const topic = unique("with op");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic,
      content: "first",
    });
    const { id: b } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic,
      content: "second",
    });
    const otherTopic = unique("other topic");
    await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: otherTopic,
      content: `${otherTopic} message`,
    });
    // The narrow's own channel and topic give way to the message's.
    for (const operand of [a, String(b), ` ${a} `])
      expect(
        await ids("othello", [
          { operator: "channel", operand: "Verona" },
          { operator: "topic", operand: "elsewhere" },
          { operator: "with", operand },
        ]),
      ).toEqual([a, b]);
    // Other terms still apply.
    expect(
      await ids("othello", [
        { operator: "with", operand: a },
        { operator: "sender", operand: "othello@zulip.com" },
      ]),
    ).toEqual([b]);
    // A direct message: its conversation, seen from either side.
    const { id: dm1 } = await sendDirect(server.as("prospero"), {
      to: [uid("cordelia")],
      content: "hi",
    });
    const { id: dm2 } = await sendDirect(server.as("cordelia"), {
      to: [uid("prospero")],
      content: "hello",
    });
    expect(await ids("cordelia", [{ operator: "with", operand: dm1 }])).toEqual([dm1, dm2]);
    expect(
      await ids("prospero", [
        { operator: "with", operand: dm2 },
        { operator: "dm", operand: "iago@zulip.com" },
      ]),
    ).toEqual([dm1, dm2]);
    const { id: group } = await sendDirect(server.as("prospero"), {
      to: [uid("cordelia"), uid("aaron")],
      content: "group",
    });
    expect(await ids("aaron", [{ operator: "with", operand: group }])).toEqual([group]);
    // A message in a public channel's history the user is not subscribed to.
    const { id: scotland } = await sendToChannel(server.as("iago"), {
      to: "Scotland",
      topic,
      content: `${topic} message`,
    });
    expect(await ids("cordelia", [{ operator: "with", operand: scotland }])).toEqual([scotland]);
    // A message the user may not see: the narrow as it is, if it names a conversation.
    expect(
      await ids("othello", [
        { operator: "channel", operand: "Denmark" },
        { operator: "topic", operand: topic },
        { operator: "with", operand: dm1 },
      ]),
    ).toEqual([a, b]);
    await badNarrow("othello", [{ operator: "with", operand: dm1 }], "Invalid 'with' operator");
    await badNarrow(
      "othello",
      [
        { operator: "channel", operand: "Denmark" },
        { operator: "with", operand: 99999999 },
      ],
      "Invalid 'with' operator",
    );
    await badNarrow("othello", [{ operator: "with", operand: "abc" }], "Invalid 'with' operator");
    const duplicate = "Duplicate 'with' operators.";
    await expectError(
      get("othello", {
        anchor: "newest",
        narrow: [
          { operator: "with", operand: a },
          { operator: "with", operand: b },
        ],
      }),
      400,
      `Invalid narrow operator combination: ${duplicate}`,
      {
        code: "BAD_NARROW",
        desc: duplicate,
      },
    );
  });
});

describe("flags", () => {
  it("is:unread, is:starred, is:mentioned and is:alerted test the user's flags, and their negations", async () => {
    const topic = unique("flags");
    const t = { operator: "topic", operand: topic };
    const m: number[] = [];
    for (let i = 0; i < 7; i++)
      m.push(
        (await sendToChannel(server.as("hamlet"), { to: "Denmark", topic, content: `m${i}` })).id,
      );
    const R = FLAG_BITS.read;
    await setFlags("othello", m[0]!, R);
    await setFlags("othello", m[1]!, R | FLAG_BITS.starred);
    await setFlags("othello", m[2]!, FLAG_BITS.mentioned);
    await setFlags("othello", m[3]!, R | FLAG_BITS.stream_wildcard_mentioned);
    await setFlags("othello", m[4]!, R | FLAG_BITS.group_mentioned);
    await setFlags("othello", m[5]!, R | FLAG_BITS.has_alert_word);
    await setFlags("othello", m[6]!, 0n);
    const is = (operand: string, negated = false) =>
      ids("othello", [t, { operator: "is", operand, negated }]);
    expect(await is("unread")).toEqual([m[2], m[6]]);
    expect(await is("unread", true)).toEqual([m[0], m[1], m[3], m[4], m[5]]);
    expect(await is("starred")).toEqual([m[1]]);
    expect(await is("starred", true)).toEqual([m[0], m[2], m[3], m[4], m[5], m[6]]);
    expect(await is("mentioned")).toEqual([m[2], m[3], m[4]]);
    expect(await is("mentioned", true)).toEqual([m[0], m[1], m[5], m[6]]);
    expect(await is("alerted")).toEqual([m[5]]);
    expect(await is("alerted", true)).toEqual([m[0], m[1], m[2], m[3], m[4], m[6]]);
    // The flags shown are the same bits.
    const data = await fetch("othello", { anchor: "oldest", num_after: 10, narrow: [t] });
    expect(data.messages.map((x) => x.flags)).toEqual([
      ["read"],
      ["read", "starred"],
      ["mentioned"],
      ["read", "stream_wildcard_mentioned", "wildcard_mentioned"],
      ["read"],
      ["read", "has_alert_word"],
      [],
    ]);
    // Another user's flags are theirs.
    expect(await ids("hamlet", [t, { operator: "is", operand: "starred" }])).toEqual([]);
  });

  it("reads a flag narrow from the user's own rows even in a channel whose history they may read", async () => {
    const topic = unique("no history for flags");
    const { id: before } = await sendToChannel(server.as("iago"), {
      to: "Scotland",
      topic,
      content: `${topic} message`,
    });
    const scotland = { operator: "channel", operand: "Scotland" };
    // Cordelia is not subscribed to the public Scotland: its history is hers to read, as read and historical.
    const history = await fetch("cordelia", {
      anchor: "newest",
      num_before: 1000,
      narrow: [scotland, { operator: "topic", operand: topic }],
    });
    expect(history.messages.map((x) => [x.id, x.flags])).toEqual([
      [before, ["read", "historical"]],
    ]);
    // Zulip's ok_to_include_history: an is: term (negated or not) reads only her own rows, of which she has none.
    expect(
      await ids("cordelia", [
        scotland,
        { operator: "topic", operand: topic },
        { operator: "is", operand: "unread", negated: true },
      ]),
    ).toEqual([]);
    expect(
      await ids("cordelia", [
        scotland,
        { operator: "topic", operand: topic },
        { operator: "is", operand: "starred", negated: true },
      ]),
    ).toEqual([]);
    // is:resolved is about the topic, not her rows.
    const { id: resolved } = await sendToChannel(server.as("iago"), {
      to: "Scotland",
      topic: `✔ ${topic}`,
      content: `✔ ${topic} message`,
    });
    expect(await ids("cordelia", [scotland, { operator: "is", operand: "resolved" }])).toContain(
      resolved,
    );
  });
});

describe("topic visibility and muting", () => {
  /** A user's visibility policy for a topic (1 muted, 2 unmuted, 3 followed), as POST /user_topics records it. */
  async function setPolicy(
    user: string,
    stream: { id: number; recipientId: number | null },
    topic: string,
    visibilityPolicy: number,
  ) {
    await server.db.userTopic.create({
      data: {
        realmId: server.creds.realm.id,
        userProfileId: uid(user),
        streamId: stream.id,
        recipientId: stream.recipientId!,
        topicName: topic,
        topicNameLower: topic.toLowerCase(),
        visibilityPolicy,
      },
    });
  }
  const muteChannel = (user: string, stream: { recipientId: number | null }) =>
    server.db.subscription.updateMany({
      where: { userProfileId: uid(user), recipientId: stream.recipientId! },
      data: { isMuted: true },
    });

  it("is:followed, is:muted and in:home, from topic policies and channel muting", async () => {
    const loud = await createChannel(unique("loud"), ["iago", "aaron"]);
    const quiet = await createChannel(unique("quiet"), ["iago", "aaron"]);
    const [followed, muted, plain, unmutedInQuiet, followedInQuiet, inQuiet] = [
      "Followed",
      "Muted",
      "Plain",
      "Unmuted",
      "Followed too",
      "Quiet",
    ];
    const m = {
      followed: (
        await sendToChannel(server.as("iago"), {
          to: loud.name,
          topic: followed,
          content: `${followed} message`,
        })
      ).id,
      muted: (
        await sendToChannel(server.as("iago"), {
          to: loud.name,
          topic: muted,
          content: `${muted} message`,
        })
      ).id,
      plain: (
        await sendToChannel(server.as("iago"), {
          to: loud.name,
          topic: plain,
          content: `${plain} message`,
        })
      ).id,
      unmutedInQuiet: (
        await sendToChannel(server.as("iago"), {
          to: quiet.name,
          topic: unmutedInQuiet,
          content: `${unmutedInQuiet} message`,
        })
      ).id,
      followedInQuiet: (
        await sendToChannel(server.as("iago"), {
          to: quiet.name,
          topic: followedInQuiet,
          content: `${followedInQuiet} message`,
        })
      ).id,
      inQuiet: (
        await sendToChannel(server.as("iago"), {
          to: quiet.name,
          topic: inQuiet,
          content: `${inQuiet} message`,
        })
      ).id,
      dm: (await sendDirect(server.as("iago"), { to: [uid("aaron")], content: "a dm" })).id,
    };
    // Policies match topics case-insensitively.
    await setPolicy("aaron", loud, followed.toUpperCase(), 3);
    await setPolicy("aaron", loud, muted, 1);
    await setPolicy("aaron", quiet, unmutedInQuiet, 2);
    await setPolicy("aaron", quiet, followedInQuiet, 3);
    await muteChannel("aaron", quiet);
    const mine = new Set(Object.values(m));
    const narrowed = async (narrow: Term[]) =>
      (await ids("aaron", narrow)).filter((id) => mine.has(id));
    expect(await narrowed([{ operator: "is", operand: "followed" }])).toEqual([
      m.followed,
      m.followedInQuiet,
    ]);
    expect(await narrowed([{ operator: "is", operand: "followed", negated: true }])).toEqual([
      m.muted,
      m.plain,
      m.unmutedInQuiet,
      m.inQuiet,
      m.dm,
    ]);
    expect(await narrowed([{ operator: "is", operand: "muted" }])).toEqual([m.muted, m.inQuiet]);
    expect(await narrowed([{ operator: "is", operand: "muted", negated: true }])).toEqual([
      m.followed,
      m.plain,
      m.unmutedInQuiet,
      m.followedInQuiet,
      m.dm,
    ]);
    expect(await narrowed([{ operator: "in", operand: "home" }])).toEqual([
      m.followed,
      m.plain,
      m.unmutedInQuiet,
      m.followedInQuiet,
      m.dm,
    ]);
    expect(await narrowed([{ operator: "in", operand: "home", negated: true }])).toEqual([
      m.muted,
      m.inQuiet,
    ]);
    expect(await narrowed([{ operator: "in", operand: "all" }])).toEqual(Object.values(m));
    // Another user's policies are theirs.
    expect(
      await ids("iago", [
        { operator: "channel", operand: loud.id },
        { operator: "is", operand: "muted" },
      ]),
    ).toEqual([]);
    await badNarrow("aaron", [{ operator: "in", operand: "bogus" }], "unknown 'in' operand bogus");
  });

  it("first_unread skips muted topics, and muted channels unless the narrow names the channel", async () => {
    const quiet = await createChannel(unique("first unread quiet"), ["iago", "prospero"]);
    const loud = await createChannel(unique("first unread loud"), ["iago", "prospero"]);
    const topic = unique("unread");
    // Everything else Prospero has is read.
    await server.db.userMessage.updateMany({
      where: { userProfileId: uid("prospero") },
      data: { flags: FLAG_BITS.read },
    });
    const { id: inQuiet } = await sendToChannel(server.as("iago"), {
      to: quiet.name,
      topic,
      content: `${topic} message`,
    });
    const { id: mutedTopic } = await sendToChannel(server.as("iago"), {
      to: loud.name,
      topic: "muted topic",
      content: "muted topic message",
    });
    const { id: open } = await sendToChannel(server.as("iago"), {
      to: loud.name,
      topic,
      content: `${topic} message`,
    });
    await muteChannel("prospero", quiet);
    await setPolicy("prospero", loud, "muted topic", 1);
    expect((await fetch("prospero", { anchor: "first_unread" })).anchor).toBe(open);
    expect(
      (
        await fetch("prospero", {
          anchor: "first_unread",
          narrow: [{ operator: "channel", operand: quiet.id }],
        })
      ).anchor,
    ).toBe(inQuiet);
    expect(
      (
        await fetch("prospero", {
          anchor: "first_unread",
          narrow: [{ operator: "channel", operand: loud.id }],
        })
      ).anchor,
    ).toBe(open);
    // The muted messages are still unread, and in the narrow.
    expect(await ids("prospero", [{ operator: "is", operand: "unread" }])).toEqual([
      inQuiet,
      mutedTopic,
      open,
    ]);
  });
});

describe("anchors", () => {
  it("first_unread: the first unread message of the narrow, or the newest when none is unread", async () => {
    const topic = unique("first unread");
    const t = [
      { operator: "channel", operand: "Denmark" },
      { operator: "topic", operand: topic },
    ];
    // An unread message outside the narrow does not count.
    await sendToChannel(server.as("hamlet"), { to: "Verona", topic, content: `${topic} message` });
    const m: number[] = [];
    for (let i = 0; i < 5; i++)
      m.push(
        (await sendToChannel(server.as("hamlet"), { to: "Denmark", topic, content: `u${i}` })).id,
      );
    for (const id of m.slice(0, 2)) await setFlags("othello", id, FLAG_BITS.read);
    const data = await fetch("othello", {
      anchor: "first_unread",
      num_before: 1,
      num_after: 1,
      narrow: t,
    });
    expect(data).toMatchObject({
      anchor: m[2],
      found_anchor: true,
      found_oldest: false,
      found_newest: false,
      history_limited: false,
    });
    expect(data.messages.map((x) => x.id)).toEqual([m[1], m[2], m[3]]);
    // A starred unread message is still unread.
    await setFlags("othello", m[2]!, FLAG_BITS.starred);
    expect((await fetch("othello", { anchor: "first_unread", narrow: t })).anchor).toBe(m[2]);
    for (const id of m) await setFlags("othello", id, FLAG_BITS.read);
    const none = await fetch("othello", {
      anchor: "first_unread",
      num_before: 2,
      num_after: 2,
      narrow: t,
    });
    expect(none).toMatchObject({
      anchor: 10_000_000_000_000_000,
      found_anchor: false,
      found_newest: true,
      found_oldest: false,
    });
    expect(none.messages.map((x) => x.id)).toEqual([m[3], m[4]]);
    // In a channel's history, messages without a row of hers are read.
    const history = await fetch("cordelia", {
      anchor: "first_unread",
      num_before: 5,
      narrow: [{ operator: "channel", operand: "Scotland" }],
    });
    expect(history.anchor).toBe(10_000_000_000_000_000);
    expect(history.found_newest).toBe(true);
  });

  it("pages with num_before, num_after and include_anchor, and reports what it found", async () => {
    const topic = unique("paging");
    const t = [{ operator: "topic", operand: topic }];
    const m: number[] = [];
    for (let i = 0; i < 6; i++)
      m.push(
        (await sendToChannel(server.as("hamlet"), { to: "Verona", topic, content: `p${i}` })).id,
      );
    const page = await fetch("othello", { anchor: m[2], num_before: 1, num_after: 2, narrow: t });
    expect(page.messages.map((x) => x.id)).toEqual([m[1], m[2], m[3], m[4]]);
    expect(page).toMatchObject({
      anchor: m[2],
      found_anchor: true,
      found_oldest: false,
      found_newest: false,
    });
    const exclusive = await fetch("othello", {
      anchor: m[2],
      num_before: 0,
      num_after: 2,
      include_anchor: false,
      narrow: t,
    });
    expect(exclusive.messages.map((x) => x.id)).toEqual([m[3], m[4]]);
    expect(exclusive.found_anchor).toBe(true);
    // Only an end of the range may be left out (Zulip's get_messages_backend).
    await expectError(
      get("othello", {
        anchor: m[2],
        num_before: 1,
        num_after: 1,
        include_anchor: false,
        narrow: t,
      }),
      400,
      "The anchor can only be excluded at an end of the range",
    );
    const all = await fetch("othello", { anchor: m[3], num_before: 10, num_after: 10, narrow: t });
    expect(all.messages.map((x) => x.id)).toEqual(m);
    expect(all).toMatchObject({ found_oldest: true, found_newest: true });
    // An anchor that is not in the narrow is not found, and the ranges are around it.
    const elsewhereTopic = unique("elsewhere");
    const { id: outside } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: elsewhereTopic,
      content: `${elsewhereTopic} message`,
    });
    const around = await fetch("othello", {
      anchor: outside,
      num_before: 2,
      num_after: 2,
      narrow: t,
    });
    expect(around.messages.map((x) => x.id)).toEqual([m[4], m[5]]);
    expect(around).toMatchObject({
      anchor: outside,
      found_anchor: false,
      found_newest: true,
      found_oldest: false,
    });
    const oldest = await fetch("othello", { anchor: "oldest", num_after: 2, narrow: t });
    expect(oldest.messages.map((x) => x.id)).toEqual([m[0], m[1]]);
    expect(oldest).toMatchObject({
      anchor: 0,
      found_oldest: true,
      found_newest: false,
      found_anchor: false,
    });
    const newest = await fetch("othello", {
      anchor: "newest",
      num_before: 2,
      num_after: 3,
      narrow: t,
    });
    expect(newest.messages.map((x) => x.id)).toEqual([m[4], m[5]]);
    expect(newest).toMatchObject({
      anchor: 10_000_000_000_000_000,
      found_newest: true,
      found_oldest: false,
      found_anchor: false,
    });
    // parse_anchor_value: a negative anchor is 0; ids beyond 32 bits have nothing at or after them.
    expect((await fetch("othello", { anchor: -5, num_after: 1, narrow: t })).anchor).toBe(0);
    const beyond = await fetch("othello", {
      anchor: 99999999999,
      num_before: 1,
      num_after: 1,
      narrow: t,
    });
    expect(beyond.messages.map((x) => x.id)).toEqual([m[5]]);
    expect(beyond).toMatchObject({ anchor: 99999999999, found_anchor: false, found_newest: true });
    // Only the anchor itself.
    const just = await fetch("othello", { anchor: m[1], narrow: t });
    expect(just.messages.map((x) => x.id)).toEqual([m[1]]);
    expect(just).toMatchObject({ found_anchor: true, found_oldest: false, found_newest: false });
  });

  it("message_ids: those that exist, match the narrow and the user may see", async () => {
    const topic = unique("by ids");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: `${topic} message`,
    });
    const otherTopic = unique("other");
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: otherTopic,
      content: `${otherTopic} message`,
    });
    const { id: secret } = await sendDirect(server.as("hamlet"), {
      to: [uid("cordelia")],
      content: "secret",
    });
    const data = await fetch("othello", {
      message_ids: [b, a, secret, 99999999999, 0],
      narrow: [{ operator: "channel", operand: "Verona" }],
    });
    expect(data.messages.map((x) => x.id)).toEqual([a, b]);
    expect(data).toMatchObject({ found_anchor: false, found_oldest: false, found_newest: false });
    expect(data).not.toHaveProperty("anchor");
    expect(
      (
        await fetch("othello", {
          message_ids: [a, b],
          narrow: [{ operator: "topic", operand: topic }],
        })
      ).messages.map((x) => x.id),
    ).toEqual([a]);
    expect((await fetch("othello", { message_ids: [] })).messages).toEqual([]);
    // (5001 ids do not fit in a URL Node accepts: the handler is called directly.)
    await expect(
      direct("othello", { message_ids: Array.from({ length: 5001 }, (_, i) => i + 1) }),
    ).rejects.toThrow("Too many messages requested (maximum 5000).");
    await expectError(
      get("othello", { anchor: "newest", num_before: 4000, num_after: 1001 }),
      400,
      "Too many messages requested (maximum 5000).",
    );
  });
});

describe("anchor=date (feature level 445)", () => {
  it("anchors at the narrow's first message sent at or after the date, in UTC without a zone", async () => {
    const topic = `bydate${Date.now()}`;
    const send = async () =>
      (await sendToChannel(server.as("iago"), { to: "Verona", topic, content: "dated" })).id;
    const [m1, m2, m3] = [await send(), await send(), await send()];
    const at = (iso: string) => new Date(iso);
    for (const [id, date] of [
      [m1, "2001-01-01T00:00:00Z"],
      [m2, "2001-06-01T00:00:00Z"],
      [m3, "2002-01-01T00:00:00Z"],
    ] as const)
      await server.db.message.update({ where: { id }, data: { dateSent: at(date) } });
    const narrow = [{ operator: "topic", operand: topic }];
    const byDate = (anchor_date: string, num_before = 1, num_after = 1) =>
      fetch("hamlet", { anchor: "date", anchor_date, num_before, num_after, narrow });

    const middle = await byDate("2001-03-01");
    expect(middle).toMatchObject({ anchor: m2, found_anchor: true });
    expect(middle.messages.map((m) => m.id)).toEqual([m1, m2, m3]);
    // At the very instant, and the same instant written in another zone.
    expect((await byDate("2001-06-01")).anchor).toBe(m2);
    expect((await byDate("2001-06-01T01:30:00+01:30")).anchor).toBe(m2);
    expect((await byDate("2001-06-01T00:00:01")).anchor).toBe(m3);
    expect((await byDate("1990-01-01", 0, 1)).anchor).toBe(m1);
    // Nothing at or after it: the anchor of "newest".
    const late = await byDate("2100-01-01", 2, 0);
    expect(late).toMatchObject({ anchor: 10_000_000_000_000_000, found_newest: true });
    expect(late.messages.map((m) => m.id)).toEqual([m2, m3]);

    await expectError(
      get("hamlet", { anchor: "date", num_before: 1, narrow }),
      400,
      "Missing 'anchor_date' argument.",
    );
    for (const bad of ["yesterday", "2001-02-30", "2001-01-01T25:00", ""])
      await expectError(
        get("hamlet", { anchor: "date", anchor_date: bad, num_before: 1, narrow }),
        400,
        "Invalid anchor_date",
      );
    // A real client's query string: `+` for the space between date and time.
    const body = await rawGet(
      "hamlet",
      `anchor=date&anchor_date=2001-03-01+00:00:00&num_before=0&num_after=1&narrow=${encodeURIComponent(JSON.stringify(narrow))}`,
    );
    expect(body).toMatchObject({ result: "success", anchor: m2 });
  });

  it("finds the date through the (realm_id, date_sent) index", async () => {
    const realmId = server.creds.realm.id;
    const { id: seed } = await sendToChannel(server.as("iago"), {
      to: "Verona",
      topic: "many dates",
      content: "x",
    });
    await server.db.$executeRawUnsafe(
      `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, sending_client_id, is_channel_message, date_sent)
       SELECT realm_id, sender_id, recipient_id, subject, 'copy ' || n, rendered_content, sending_client_id, true, now() - n * interval '1 hour'
       FROM message m, generate_series(1, 4000) AS n WHERE m.id = ${seed}`,
    );
    await server.db.$executeRawUnsafe("ANALYZE message");
    const date = new Date(Date.now() - 1000 * 3_600_000);
    const lines = (
      await server.db.$queryRaw<
        { "QUERY PLAN": string }[]
      >`EXPLAIN SELECT ${firstMessageAtSql(realmId, date)}`
    ).map((r) => r["QUERY PLAN"]);
    if (process.env.SHOW_PLANS) console.log(lines.join("\n"));
    expect(lines.join("\n")).toContain("message_realm_id_date_sent_idx");
    expect(lines.join("\n")).not.toContain("Seq Scan on message");
  });
});

describe("channel history", () => {
  it("a public channel's history for a member who is not subscribed, but not without naming the channel", async () => {
    const topic = unique("public history");
    const { id: a } = await sendToChannel(server.as("iago"), {
      to: "Scotland",
      topic,
      content: `${topic} message`,
    });
    const scotland = { operator: "channel", operand: "Scotland" };
    expect(await ids("cordelia", [scotland, { operator: "topic", operand: topic }])).toEqual([a]);
    expect(await ids("cordelia", [{ operator: "topic", operand: topic }])).toEqual([]);
    // A negated channel term grants nothing.
    expect(
      await ids("cordelia", [
        { operator: "channel", operand: "Verona", negated: true },
        { operator: "topic", operand: topic },
      ]),
    ).toEqual([]);
    // Subscribing later: the earlier message stays historical, later ones are hers.
    const channel = await createChannel(unique("late joiners"), ["iago"]);
    const { id: early } = await sendToChannel(server.as("iago"), {
      to: channel.name,
      topic,
      content: `${topic} message`,
    });
    await subscribe(channel, ["cordelia"]);
    const { id: late } = await sendToChannel(server.as("iago"), {
      to: channel.name,
      topic,
      content: `${topic} message`,
    });
    const data = await fetch("cordelia", {
      anchor: "newest",
      num_before: 10,
      narrow: [{ operator: "channel", operand: channel.id }],
    });
    expect(data.messages.map((x) => [x.id, x.flags])).toEqual([
      [early, ["read", "historical"]],
      [late, []],
    ]);
    expect(await ids("cordelia", [{ operator: "topic", operand: topic }])).toEqual([late]);
  });

  it("a private channel's history only for subscribers, and only when its history is shared", async () => {
    const shared = await createChannel(unique("private shared"), ["iago"], {
      inviteOnly: true,
      historyPublicToSubscribers: true,
    });
    const protectedHistory = await createChannel(unique("private protected"), ["iago"], {
      inviteOnly: true,
      historyPublicToSubscribers: false,
    });
    const { id: s1 } = await sendToChannel(server.as("iago"), {
      to: shared.name,
      topic: "t",
      content: "t message",
    });
    const { id: p1 } = await sendToChannel(server.as("iago"), {
      to: protectedHistory.name,
      topic: "t",
      content: "t message",
    });
    // Not subscribed: nothing, and the channel is still named without an error.
    expect(await ids("hamlet", [{ operator: "channel", operand: shared.name }])).toEqual([]);
    await subscribe(shared, ["hamlet"]);
    await subscribe(protectedHistory, ["hamlet"]);
    const { id: s2 } = await sendToChannel(server.as("iago"), {
      to: shared.name,
      topic: "t",
      content: "t message",
    });
    const { id: p2 } = await sendToChannel(server.as("iago"), {
      to: protectedHistory.name,
      topic: "t",
      content: "t message",
    });
    expect(await ids("hamlet", [{ operator: "channel", operand: shared.name }])).toEqual([s1, s2]);
    expect(await ids("hamlet", [{ operator: "channel", operand: protectedHistory.name }])).toEqual([
      p2,
    ]);
    // An inactive subscription reads no history, nor (has_message_access) the messages received while it was active.
    await server.db.subscription.updateMany({
      where: { userProfileId: uid("hamlet"), recipientId: shared.recipientId! },
      data: { active: false },
    });
    expect(await ids("hamlet", [{ operator: "channel", operand: shared.name }])).toEqual([]);
    await expectError(
      server.as("hamlet").GET("/messages/{message_id}", { params: { path: { message_id: s2 } } }),
      400,
      "Invalid message(s)",
    );
    expect(await ids("iago", [{ operator: "channel", operand: protectedHistory.name }])).toEqual([
      p1,
      p2,
    ]);
  });

  it("a guest reads a public channel's history only when subscribed to it", async () => {
    const channel = await createChannel(unique("guest history"), ["iago"]);
    const { id: a } = await sendToChannel(server.as("iago"), {
      to: channel.name,
      topic: "t",
      content: "t message",
    });
    const narrow = [{ operator: "channel", operand: channel.name }];
    expect(await ids("polonius", narrow)).toEqual([]);
    expect(await ids("othello", narrow)).toEqual([a]);
    await subscribe(channel, ["polonius"]);
    const data = await fetch("polonius", { anchor: "newest", num_before: 5, narrow });
    expect(data.messages.map((x) => [x.id, x.flags])).toEqual([[a, ["read", "historical"]]]);
  });
});

describe("BAD_NARROW", () => {
  it("names the unknown operator, channel, user or operand with Zulip's texts", async () => {
    await badNarrow("hamlet", [{ operator: "bogus", operand: "x" }], "unknown operator bogus");
    await badNarrow(
      "hamlet",
      [{ operator: "channel", operand: "Nowhere" }],
      "unknown channel Nowhere",
    );
    await badNarrow("hamlet", [{ operator: "stream", operand: 99999 }], "unknown channel 99999");
    await badNarrow(
      "hamlet",
      [{ operator: "channel", operand: 99999999999 }],
      "unknown channel 99999999999",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "channel", operand: "Ver\u0000ona" }],
      "unknown channel Ver\u0000ona",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "sender", operand: "nobody@zulip.com" }],
      "unknown user nobody@zulip.com",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "sender", operand: 2147483648 }],
      "unknown user 2147483648",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "dm", operand: "othello@zulip.com,nobody@zulip.com" }],
      "unknown user in othello@zulip.com,nobody@zulip.com",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "pm-with", operand: [uid("othello"), 99999] }],
      `unknown user in ${uid("othello")},99999`,
    );
    await badNarrow(
      "hamlet",
      [{ operator: "dm-including", operand: "nobody@zulip.com" }],
      "unknown user nobody@zulip.com",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "group-pm-with", operand: 99999 }],
      "unknown user 99999",
    );
    await badNarrow("hamlet", [{ operator: "is", operand: "bogus" }], "unknown 'is' operand bogus");
    await badNarrow(
      "hamlet",
      [{ operator: "is", operand: "constructor" }],
      "unknown 'is' operand constructor",
    );
    await badNarrow(
      "hamlet",
      [{ operator: "has", operand: "toString" }],
      "unknown 'has' operand toString",
    );
    await badNarrow("hamlet", [{ operator: "id", operand: "12a" }], "Invalid message ID");
    await badNarrow("hamlet", [["id", "-1"]], "Invalid message ID");
    await badNarrow("hamlet", [{ operator: "id", operand: "2147483648" }], "Invalid message ID");
    await badNarrow(
      "hamlet",
      [{ operator: "dm", operand: "othello@zulip.com," }],
      "unknown user in othello@zulip.com,",
    );
    // A valid term before an unknown one does not hide it.
    await badNarrow(
      "hamlet",
      [
        { operator: "sender", operand: "hamlet@zulip.com", negated: true },
        { operator: "sender", operand: "x@y" },
      ],
      "unknown user x@y",
    );
  });

  it("refuses a narrow asking for both channel messages and direct messages", async () => {
    const both = "No message can be both a channel message and direct message";
    for (const narrow of [
      [
        { operator: "channel", operand: "Verona" },
        { operator: "dm", operand: "othello@zulip.com" },
      ],
      [
        { operator: "topic", operand: "x" },
        { operator: "is", operand: "dm" },
      ],
      [
        { operator: "is", operand: "private" },
        { operator: "channels", operand: "public" },
      ],
      [
        { operator: "dm-including", operand: "othello@zulip.com" },
        { operator: "stream", operand: "Verona" },
      ],
      [
        { operator: "is", operand: "dm", negated: true },
        { operator: "group-pm-with", operand: "othello@zulip.com" },
      ],
      // Checked before the term's channel is looked up.
      [
        { operator: "is", operand: "dm" },
        { operator: "channel", operand: "Nowhere" },
      ],
    ] as Term[][])
      await badNarrow("hamlet", narrow, both);
    // A negated term asks for nothing.
    await fetch("hamlet", {
      anchor: "newest",
      narrow: [
        { operator: "channel", operand: "Verona", negated: true },
        { operator: "is", operand: "dm" },
      ],
    });
    await fetch("hamlet", {
      anchor: "newest",
      narrow: [
        { operator: "topic", operand: "x" },
        { operator: "dm", operand: "othello@zulip.com", negated: true },
      ],
    });
    // An unknown channel before the conflict is reported first.
    await badNarrow(
      "hamlet",
      [
        { operator: "channel", operand: "Nowhere" },
        { operator: "is", operand: "dm" },
      ],
      "unknown channel Nowhere",
    );
  });

  it("reports the first bad term, whether it needs a lookup or not", async () => {
    await badNarrow(
      "hamlet",
      [
        { operator: "sender", operand: "nobody@zulip.com" },
        { operator: "id", operand: "abc" },
      ],
      "unknown user nobody@zulip.com",
    );
    await badNarrow(
      "hamlet",
      [
        { operator: "id", operand: "abc" },
        { operator: "sender", operand: "nobody@zulip.com" },
      ],
      "Invalid message ID",
    );
    await badNarrow(
      "hamlet",
      [
        { operator: "channel", operand: "Verona" },
        { operator: "channel", operand: "Nowhere" },
        { operator: "bogus", operand: "x" },
      ],
      "unknown channel Nowhere",
    );
    await badNarrow(
      "hamlet",
      [
        { operator: "channel", operand: "Verona" },
        { operator: "bogus", operand: "x" },
        { operator: "channel", operand: "Nowhere" },
      ],
      "unknown operator bogus",
    );
  });
});

describe("cost", () => {
  const statementsOf = direct;

  it("runs a constant number of statements, whatever the number of messages", async () => {
    const topic = unique("cost");
    for (let i = 0; i < 12; i++)
      await sendToChannel(server.as("hamlet"), { to: "Denmark", topic, content: `c${i}` });
    await sendDirect(server.as("hamlet"), { to: [uid("othello"), uid("iago")], content: "group" });
    const narrow = [
      { operator: "channel", operand: "Denmark" },
      { operator: "topic", operand: topic },
    ];
    // Warm the per-process caches (client names) the dicts use.
    await statementsOf("othello", { anchor: "newest", num_before: 1, narrow });
    // The channel lookup, the messages (anchor included) and the dicts' related rows.
    for (const query of [
      { anchor: "first_unread", num_before: 5, num_after: 5, narrow },
      { anchor: "newest", num_before: 20, narrow },
      { anchor: "oldest", num_after: 3, narrow },
    ] as Query[]) {
      const { statements, result } = await statementsOf("othello", query);
      expect(result.messages.length).toBeGreaterThan(0);
      expect(statements).toBeLessThanOrEqual(3);
    }
    // No lookup for a narrow that names no channel or user.
    const { statements } = await statementsOf("othello", {
      anchor: "first_unread",
      num_before: 10,
      num_after: 10,
      narrow: [{ operator: "is", operand: "unread" }],
    });
    expect(statements).toBeLessThanOrEqual(2);
    const dms = await statementsOf("othello", {
      anchor: "newest",
      num_before: 10,
      narrow: [{ operator: "dm", operand: "hamlet@zulip.com,iago@zulip.com" }],
    });
    expect(dms.result.messages).toHaveLength(1);
    expect(dms.statements).toBeLessThanOrEqual(3);
  });

  it("finds unread and starred messages through the partial indexes", async () => {
    // A user with many read rows, and statistics that say so.
    const channel = await createChannel(unique("many read"), ["shiva"]);
    const { id: template } = await sendToChannel(server.as("shiva"), {
      to: channel.name,
      topic: "bulk",
      content: "bulk message",
      read_by_sender: true,
    });
    await server.db.$executeRaw`
      WITH m AS (
        INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, date_sent, sending_client_id, is_channel_message)
        SELECT realm_id, sender_id, recipient_id, subject, content, rendered_content, date_sent, sending_client_id, is_channel_message
        FROM message, generate_series(1, 3000) WHERE id = ${template}
        RETURNING id)
      INSERT INTO user_message (user_profile_id, message_id, flags) SELECT ${uid("shiva")}, id, ${flagsOf("read")} FROM m`;
    await server.db.$executeRawUnsafe("ANALYZE user_message");
    const realm = (await server.db.realm.findUnique({ where: { id: server.creds.realm.id } }))!;
    const shiva = (await server.db.userProfile.findUnique({ where: { id: uid("shiva") } }))!;
    const plan = async (operand: string) => {
      const narrow = await compileNarrow(server.db, realm, shiva, [{ operator: "is", operand }]);
      const sql = (source: typeof narrow.unread) =>
        Prisma.sql`EXPLAIN SELECT ${source.id} FROM ${source.from} WHERE ${source.where} ORDER BY ${source.id} LIMIT 50`;
      // The planner's choice between indexes is what is tested, not whether a scan of a small table is cheaper.
      return server.db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
        const lines = async (s: Prisma.Sql) =>
          (await tx.$queryRaw<{ "QUERY PLAN": string }[]>(s))
            .map((r) => r["QUERY PLAN"])
            .join("\n");
        return { narrow: await lines(sql(narrow)), firstUnread: await lines(sql(narrow.unread)) };
      });
    };
    const unread = await plan("unread");
    expect(unread.narrow).toContain("user_message_unread_idx");
    expect(unread.firstUnread).toContain("user_message_unread_idx");
    expect((await plan("starred")).narrow).toContain("user_message_starred_idx");
    expect((await plan("mentioned")).narrow).toContain("user_message_mentioned_idx");
    expect((await plan("alerted")).narrow).toContain("user_message_has_alert_word_idx");
    expect((await plan("dm")).narrow).toContain("user_message_is_private_idx");
    // And the answer is right: the one unread message among thousands read.
    const { id: unreadOne } = await sendToChannel(server.as("iago"), {
      to: channel.name,
      topic: "bulk",
      content: "bulk message",
    });
    const data = await fetch("shiva", {
      anchor: "first_unread",
      num_before: 0,
      num_after: 0,
      narrow: [{ operator: "channel", operand: channel.id }],
    });
    expect(data).toMatchObject({ anchor: unreadOne, found_anchor: true });
  });
});
