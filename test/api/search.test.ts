/**
 * Full-text search (PostgreSQL text search over topic and content, through the GIN index) and
 * its highlighting on GET /messages, and GET /messages/matches_narrow
 * (zerver/tests/test_message_fetch.py test_messages_in_narrow and the search tests).
 */
import { describe, expect, it } from "vitest";
import { countStatements } from "../../server/db/statements.ts";
import { checkMessagesMatchNarrow, getMessages } from "../../server/handlers/messages.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { checkResponse } from "../helpers/spec-check.ts";
import { type NarrowTerm, sendDirect, sendToChannel, untyped } from "../helpers/builders.ts";

const server = useTestServer();

type Term = NarrowTerm;
const uid = (name: string) => server.creds.users[name]!.user_id;
let serial = 0;
/** A word no other message holds: letters only, so that it is one lexeme. */
const unique = (prefix: string) =>
  `${prefix}${"abcdefghij"[++serial % 10]}${String(Date.now()).replace(/\d/g, (d) => "klmnopqrst"[Number(d)]!)}`;

/** GET /messages with a narrow: every matching message, oldest first. */
const search = async (as: string, narrow: Term[]) =>
  (
    await expectSuccess(
      server.as(as).GET("/messages", {
        params: { query: { anchor: "newest", num_before: 100, narrow } },
      }),
    )
  ).messages;
const matches = (as: string, msgIds: number[], narrow: Term[]) =>
  server.as(as).GET("/messages/matches_narrow", { params: { query: { msg_ids: msgIds, narrow } } });
const matchesOf = async (as: string, msgIds: number[], narrow: Term[]) =>
  (await expectSuccess(matches(as, msgIds, narrow))).messages;

/** A request as a real client sends it: plain fetch, Basic auth, the query string written by hand. */
async function plainGet(as: string, pathAndQuery: string) {
  const c = server.creds.users[as]!;
  const response = await fetch(`${server.baseUrl}/api/v1${pathAndQuery}`, {
    headers: {
      Authorization: "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64"),
    },
  });
  const body: any = await response.json();
  const problem = checkResponse("GET", `http://x/api/v1${pathAndQuery}`, response.status, body);
  expect(problem).toBeFalsy();
  return { status: response.status, body };
}

const hl = (text: string) => `<span class="highlight">${text}</span>`;

describe("search", () => {
  it("finds every word in topic or content, stemmed, case-insensitively, and highlights them", async () => {
    const word = unique("quokka");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_topic",
      content: `${word.toUpperCase()} and should work`,
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_topic",
      content: "no match",
    });
    const { id: running } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: `The ${word} topic`,
      content: "They were running home",
    });
    const found = await search("othello", [{ operator: "search", operand: word }]);
    expect(found.map((m) => m.id)).toEqual([a, running]);
    expect(found[0]).toMatchObject({
      match_content: `<p>${hl(word.toUpperCase())} and should work</p>`,
      match_subject: "test_topic",
      content: `<p>${word.toUpperCase()} and should work</p>`,
    });
    expect(found[1]).toMatchObject({
      match_content: "<p>They were running home</p>",
      match_subject: `The ${hl(word)} topic`,
    });
    // Stemming: "runs" finds "running"; both words must occur; stop words are ignored.
    const both = await search("othello", [{ operator: "search", operand: `the ${word} runs` }]);
    expect(both.map((m) => m.id)).toEqual([running]);
    expect(both[0]).toMatchObject({
      match_content: `<p>They were ${hl("running")} home</p>`,
      match_subject: `The ${hl(word)} topic`,
    });
    expect(
      (await search("othello", [{ operator: "search", operand: `${word} absent` }])).map(
        (m) => m.id,
      ),
    ).toEqual([]);
    expect(b).toBeGreaterThan(a);
  });

  it("two search terms: both words, both highlighted", async () => {
    const [w1, w2] = [unique("alpha"), unique("beta")];
    const { id: both } = await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "two words",
      content: `${w1} then ${w2}`,
    });
    await sendToChannel(server.as("hamlet"), {
      to: "Denmark",
      topic: "two words",
      content: `${w1} alone`,
    });
    const found = await search("othello", [
      { operator: "search", operand: w1 },
      { operator: "search", operand: w2 },
    ]);
    expect(found.map((m) => [m.id, m.match_content])).toEqual([
      [both, `<p>${hl(w1)} then ${hl(w2)}</p>`],
    ]);
    expect(
      (await search("othello", [{ operator: "search", operand: `${w2} ${w1}` }])).map((m) => m.id),
    ).toEqual([both]);
  });

  it('"quoted phrases": the words in order, next to each other', async () => {
    const w = unique("gamma");
    const { id: phrase } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "phrases",
      content: `the big ${w} dogs barked`,
    });
    const { id: apart } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "phrases",
      content: `${w} big, then dogs`,
    });
    const { id: stemmed } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "phrases",
      content: `Big, ${w}; DOG!`,
    });
    const quoted = await search("othello", [{ operator: "search", operand: `"big ${w} dog"` }]);
    expect(quoted.map((m) => m.id)).toEqual([phrase, stemmed]);
    expect(quoted[0]!.match_content).toBe(`<p>the ${hl("big")} ${hl(w)} ${hl("dogs")} barked</p>`);
    expect(
      (await search("othello", [{ operator: "search", operand: `${w} big dog` }])).map((m) => m.id),
    ).toEqual([phrase, apart, stemmed]);
    // A phrase and a word together.
    expect(
      (await search("othello", [{ operator: "search", operand: `barked "${w} dogs"` }])).map(
        (m) => m.id,
      ),
    ).toEqual([phrase]);
  });

  it("matches the topic, and escapes it for match_subject", async () => {
    const w = unique("delta");
    const topic = `Tom & "Jerry's" <b> ${w}!`;
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic,
      content: "nothing in the content",
    });
    const [found] = await search("othello", [{ operator: "search", operand: w }]);
    expect(found).toMatchObject({
      id,
      subject: topic,
      match_content: "<p>nothing in the content</p>",
      match_subject: `Tom &amp; &quot;Jerry&#39;s&quot; &lt;b&gt; ${hl(w)}!`,
    });
  });

  it("highlights text, never inside a tag, and HTML in the content stays escaped", async () => {
    const w = unique("epsilon");
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "markup",
      content: `**${w}** and <b>${w}</b> at https://example.com/${w}`,
    });
    const [found] = await search("othello", [{ operator: "search", operand: w }]);
    expect(found!.id).toBe(id);
    const content = found!.content;
    expect(found!.match_content).toBe(
      content
        .replace(`<strong>${w}</strong>`, `<strong>${hl(w)}</strong>`)
        .replace(`&lt;b&gt;${w}&lt;/b&gt;`, `&lt;b&gt;${hl(w)}&lt;/b&gt;`),
    );
    // The link's address is not highlighted.
    expect(found!.match_content).toContain(`href="https://example.com/${w}"`);
  });

  it("negated search: what does not match; a search narrow always carries the match fields", async () => {
    const w = unique("zeta");
    const topic = unique("negtopic");
    const { id: yes } = await sendToChannel(server.as("hamlet"), {
      to: "Scotland",
      topic,
      content: `contains ${w}`,
    });
    const { id: no } = await sendToChannel(server.as("hamlet"), {
      to: "Scotland",
      topic,
      content: "contains nothing",
    });
    const narrow = [
      { operator: "channel", operand: "Scotland" },
      { operator: "topic", operand: topic },
    ];
    const found = await search("iago", [
      ...narrow,
      { operator: "search", operand: w, negated: true },
    ]);
    expect(found.map((m) => [m.id, m.match_content, m.match_subject])).toEqual([
      [no, "<p>contains nothing</p>", topic],
    ]);
    const both = await search("iago", [
      ...narrow,
      { operator: "search", operand: "contain" },
      { operator: "search", operand: w, negated: true },
    ]);
    expect(both.map((m) => [m.id, m.match_content])).toEqual([
      [no, `<p>${hl("contains")} nothing</p>`],
    ]);
    // Without a search term, no match fields.
    const plain = await search("iago", narrow);
    expect(plain.map((m) => m.id)).toEqual([yes, no]);
    for (const m of plain) expect(m).not.toHaveProperty("match_content");
  });

  it("reads a channel's history, and only what the user may see", async () => {
    const w = unique("eta");
    const { id: history } = await sendToChannel(server.as("iago"), {
      to: "Scotland",
      topic: "history",
      content: `public ${w}`,
    });
    const { id: secret } = await sendDirect(server.as("iago"), {
      to: [uid("hamlet")],
      content: `secret ${w}`,
    });
    // Cordelia is not subscribed to Scotland: its history only when the narrow names it.
    expect(
      (await search("cordelia", [{ operator: "search", operand: w }])).map((m) => m.id),
    ).toEqual([]);
    const found = await search("cordelia", [
      { operator: "channel", operand: "Scotland" },
      { operator: "search", operand: w },
    ]);
    expect(found.map((m) => [m.id, m.flags, m.match_content])).toEqual([
      [history, ["read", "historical"], `<p>public ${hl(w)}</p>`],
    ]);
    // Hamlet, subscribed to Scotland, has both; no narrow shows Cordelia his direct message.
    expect((await search("hamlet", [{ operator: "search", operand: w }])).map((m) => m.id)).toEqual(
      [history, secret],
    );
    expect(
      (
        await search("cordelia", [
          { operator: "dm-including", operand: "hamlet@zulip.com" },
          { operator: "search", operand: w },
        ])
      ).map((m) => m.id),
    ).toEqual([]);
  });

  it("message_ids with a search narrow carry the match fields too", async () => {
    const w = unique("theta");
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "by ids",
      content: `${w} here`,
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "by ids",
      content: "not here",
    });
    const data = await expectSuccess(
      server.as("othello").GET("/messages", {
        params: {
          query: { message_ids: [b, a], narrow: [{ operator: "search", operand: w }] },
        },
      }),
    );
    expect(data.messages.map((m) => [m.id, m.match_content])).toEqual([
      [a, `<p>${hl(w)} here</p>`],
    ]);
  });

  it("text PostgreSQL cannot store, and punctuation alone, find nothing", async () => {
    expect(await search("othello", [{ operator: "search", operand: "a\u0000b" }])).toEqual([]);
    expect(await search("othello", [{ operator: "search", operand: "!!! ..." }])).toEqual([]);
    expect(await search("othello", [{ operator: "search", operand: "the" }])).toEqual([]);
  });
});

describe("matches_narrow", () => {
  it("returns the listed messages that match, keyed by id as a string, with Zulip's highlighting", async () => {
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_topic",
      content: "KEYWORDMATCH and should work",
    });
    const { id: b } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_topic",
      content: "no match",
    });
    const { id: outside } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_topic",
      content: "KEYWORDMATCH too",
    });
    const messages = await matchesOf(
      "othello",
      [a, b],
      [{ operator: "search", operand: "KEYWORDMATCH" }],
    );
    expect(messages).toEqual({
      [String(a)]: {
        match_content: '<p><span class="highlight">KEYWORDMATCH</span> and should work</p>',
        match_subject: "test_topic",
      },
    });
    expect(Object.keys(messages)).toEqual([String(a)]);
    expect(outside).toBeGreaterThan(b);
  });

  it("two search terms highlight both words", async () => {
    const { id: a } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_topic",
      content: "KEYWORDMATCH and should work",
    });
    const messages = await matchesOf(
      "othello",
      [a],
      [
        { operator: "search", operand: "KEYWORDMATCH" },
        { operator: "search", operand: "work" },
      ],
    );
    expect(messages[String(a)]!.match_content).toBe(
      `<p>${hl("KEYWORDMATCH")} and should ${hl("work")}</p>`,
    );
  });

  it("any narrow: the content and the escaped topic without highlights", async () => {
    const { id: link } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_topic",
      content: "http://foo.com",
    });
    const { id: plain } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "test_<topic>",
      content: "no link",
    });
    const messages = await matchesOf(
      "othello",
      [link, plain],
      [{ operator: "has", operand: "link" }],
    );
    expect(Object.keys(messages)).toEqual([String(link)]);
    expect(messages[String(link)]!.match_subject).toBe("test_topic");
    expect(messages[String(link)]!.match_content).toContain('href="http://foo.com"');
    expect(
      (await matchesOf("othello", [plain], [{ operator: "has", operand: "link", negated: true }]))[
        String(plain)
      ]!.match_subject,
    ).toBe("test_&lt;topic&gt;");
    // Every operator works: here a legacy pair, and `with`.
    expect(
      Object.keys(await matchesOf("othello", [link, plain], [["topic", "test_topic"]])),
    ).toEqual([String(link)]);
    expect(
      Object.keys(
        await matchesOf("othello", [link, plain], [{ operator: "with", operand: plain }]),
      ),
    ).toEqual([String(plain)]);
  });

  it("only messages the user received: not a channel's history, not others' direct messages", async () => {
    const w = unique("iota");
    const { id: history } = await sendToChannel(server.as("iago"), {
      to: "Scotland",
      topic: "history",
      content: `${w} history`,
    });
    const { id: secret } = await sendDirect(server.as("iago"), {
      to: [uid("hamlet")],
      content: `${w} secret`,
    });
    const { id: mine } = await sendDirect(server.as("iago"), {
      to: [uid("cordelia")],
      content: `${w} mine`,
    });
    const narrow = [{ operator: "channel", operand: "Scotland" }];
    // GET /messages shows Cordelia Scotland's history; matches_narrow does not.
    expect((await search("cordelia", narrow)).map((m) => m.id)).toContain(history);
    expect(await matchesOf("cordelia", [history], narrow)).toEqual({});
    expect(
      Object.keys(
        await matchesOf(
          "cordelia",
          [history, secret, mine, 99999999999, -1],
          [{ operator: "search", operand: w }],
        ),
      ),
    ).toEqual([String(mine)]);
    expect(await matchesOf("cordelia", [], [{ operator: "search", operand: w }])).toEqual({});
  });

  it("refuses a bad narrow with Zulip's BAD_NARROW texts", async () => {
    const bad = (narrow: Term[], desc: string) =>
      expectError(matches("hamlet", [1], narrow), 400, `Invalid narrow operator: ${desc}`, {
        code: "BAD_NARROW",
        desc,
      });
    await bad([{ operator: "bogus", operand: "x" }], "unknown operator bogus");
    await bad([{ operator: "channel", operand: "Nowhere" }], "unknown channel Nowhere");
    await bad([{ operator: "is", operand: "bogus" }], "unknown 'is' operand bogus");
    await bad([{ operator: "has", operand: "bogus" }], "unknown 'has' operand bogus");
    await bad(
      [
        { operator: "channel", operand: "Verona" },
        { operator: "is", operand: "dm" },
      ],
      "No message can be both a channel message and direct message",
    );
    await expectError(
      server
        .as("hamlet")
        .GET("/messages/matches_narrow", { params: { query: untyped({ narrow: [] }) } }),
      400,
      "Missing 'msg_ids' argument",
      {
        code: "REQUEST_VARIABLE_MISSING",
      },
    );
  });
});

describe("as real clients send it", () => {
  it("GET /messages and matches_narrow with JSON in a hand-written query string", async () => {
    const w = unique("kappa");
    const { id } = await sendToChannel(server.as("hamlet"), {
      to: "Verona",
      topic: "wire",
      content: `${w} on the wire`,
    });
    const narrow = encodeURIComponent(JSON.stringify([{ operator: "search", operand: w }]));
    const fetched = await plainGet(
      "othello",
      `/messages?anchor=newest&num_before=5&narrow=${narrow}&apply_markdown=true`,
    );
    expect(fetched.status).toBe(200);
    expect(
      fetched.body.messages.map((m: { id: number; match_content: string }) => [
        m.id,
        m.match_content,
      ]),
    ).toEqual([[id, `<p>${hl(w)} on the wire</p>`]]);
    // The legacy pair form, unencoded brackets and a space as `+`.
    const legacy = await plainGet(
      "othello",
      `/messages/matches_narrow?msg_ids=[${id},+1]&narrow=${encodeURIComponent(`[["search","${w}"]]`)}`,
    );
    expect(legacy).toMatchObject({
      status: 200,
      body: {
        result: "success",
        messages: {
          [String(id)]: { match_content: `<p>${hl(w)} on the wire</p>`, match_subject: "wire" },
        },
      },
    });
    const phraseNarrow = encodeURIComponent(
      JSON.stringify([{ operator: "search", operand: `"${w} on the"` }]),
    ).replaceAll("%20", "+");
    const phrase = await plainGet(
      "othello",
      `/messages/matches_narrow?msg_ids=[${id}]&narrow=${phraseNarrow}`,
    );
    expect(Object.keys(phrase.body.messages)).toEqual([String(id)]);
    const bad = await plainGet(
      "othello",
      `/messages/matches_narrow?msg_ids=[${id}]&narrow=[{"operator":"foo","operand":"x"}]`,
    );
    expect(bad).toMatchObject({
      status: 400,
      body: { code: "BAD_NARROW", msg: "Invalid narrow operator: unknown operator foo" },
    });
  });
});

describe("cost", () => {
  type Ctx = Parameters<typeof getMessages>[1];
  /** These GETs have no path parameters and no body, which the handlers' input types as `never`. */
  const none = untyped({});
  async function statements<T>(run: (ctx: Ctx) => Promise<T>, user = "othello") {
    const realm = (await server.db.realm.findUnique({ where: { id: server.creds.realm.id } }))!;
    const profile = (await server.db.userProfile.findUnique({ where: { id: uid(user) } }))!;
    const ctx: Ctx = { ...server.deps, host: server.creds.realm.host, realm, user: profile };
    const counter = { statements: 0 };
    const result = await countStatements(counter, () => run(ctx));
    return { result, statements: counter.statements };
  }

  it("a search costs no statement more than any narrow: the highlights come with the messages", async () => {
    const w = unique("lambda");
    for (let i = 0; i < 8; i++)
      await sendToChannel(server.as("hamlet"), {
        to: "Denmark",
        topic: "cost",
        content: `${w} ${i}`,
      });
    const get = (narrow: Term[]) => (ctx: Ctx) =>
      getMessages(
        {
          path: none,
          query: { anchor: "newest", num_before: 20, apply_markdown: true, narrow },
          body: none,
        },
        ctx,
      );
    // Warm the per-process caches (client names) the dicts use.
    await statements(get([{ operator: "search", operand: w }]));
    const plain = await statements(get([{ operator: "sender", operand: "hamlet@zulip.com" }]));
    const searched = await statements(get([{ operator: "search", operand: w }]));
    expect(searched.result.messages).toHaveLength(8);
    // The messages, then the dicts' related rows; a sender lookup is the plain narrow's third.
    expect(searched.statements).toBeLessThanOrEqual(2);
    expect(plain.statements).toBeLessThanOrEqual(3);
    const both = await statements(
      get([
        { operator: "channel", operand: "Denmark" },
        { operator: "search", operand: w },
      ]),
    );
    expect(both.result.messages).toHaveLength(8);
    expect(both.statements).toBeLessThanOrEqual(3);
    // matches_narrow: one statement for the whole id list (and the lookup when the narrow names a channel).
    const ids = searched.result.messages.map((m) => m.id);
    const match = (narrow: Term[]) => (ctx: Ctx) =>
      checkMessagesMatchNarrow({ path: none, query: { msg_ids: ids, narrow }, body: none }, ctx);
    const one = await statements(match([{ operator: "search", operand: w }]));
    expect(Object.keys(one.result.messages)).toHaveLength(8);
    expect(one.statements).toBe(1);
    expect(
      (
        await statements(
          match([
            { operator: "channel", operand: "Denmark" },
            { operator: "search", operand: w },
          ]),
        )
      ).statements,
    ).toBe(2);
  });
});
