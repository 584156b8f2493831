/**
 * POST /messages/{message_id}/report (zerver/tests/test_message_report.py): Zulip's order of
 * checks and texts, the report's exact Markdown as the moderators read it back, the reporter's
 * confirmation, the events, and the encodings real clients send.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { useTestServer } from "../helpers/server.ts";
import { type Body, sendDirect, sendToChannel, untyped } from "../helpers/builders.ts";

const server = useTestServer();

const REALM_URL = "http://zulip.testserver";
const id = (name: string) => server.creds.users[name]!.user_id;
const channelId = (name: string) => server.creds.channels[name]!.stream_id;
const mention = (name: string) => `@_**${server.creds.users[name]!.full_name}|${id(name)}**`;
const messageCount = () => server.db.message.count();

type ReportBody = Body<"/messages/{message_id}/report", "post">;
const report = (as: string, messageId: number, body: ReportBody) =>
  server
    .as(as)
    .POST("/messages/{message_id}/report", { params: { path: { message_id: messageId } }, body });

/** `<time:…>` of a message as Zulip's datetime_to_global_time writes it (UTC, whole seconds). */
async function globalTimeOf(messageId: number): Promise<string> {
  const { dateSent } = await server.db.message.findUniqueOrThrow({
    where: { id: messageId },
    select: { dateSent: true },
  });
  return `<time:${dateSent.toISOString().slice(0, 19)}+00:00>`;
}

/** The newest message a user can see in a narrow, as Markdown, with its rendering. */
async function newest(as: string, narrow: { operator: string; operand: string | number[] }[] = []) {
  const query = {
    anchor: "newest" as const,
    num_before: 1,
    num_after: 0,
    narrow,
    apply_markdown: false,
  };
  const { messages } = await expectSuccess(server.as(as).GET("/messages", { params: { query } }));
  const { messages: rendered } = await expectSuccess(
    server.as(as).GET("/messages", { params: { query: { ...query, apply_markdown: true } } }),
  );
  return { ...messages.at(-1)!, html: rendered.at(-1)!.content };
}

/** The newest report in the moderation channel, read by a moderator (iago) in a topic. */
const newestReport = (topic: string) =>
  newest("iago", [
    { operator: "channel", operand: "core team" },
    { operator: "topic", operand: topic },
  ]);

const setModerationChannel = (channel: number) =>
  expectSuccess(
    server.as("iago").PATCH("/realm", { body: { moderation_request_channel_id: channel } }),
  );

describe("POST /messages/{message_id}/report without a moderation request channel", () => {
  it("is refused with Zulip's text, and nothing is sent", async () => {
    const { id: messageId } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "civilized discussions",
      content: "I squeeze toothpaste from the middle",
    });
    const before = await messageCount();
    await expectError(
      report("hamlet", messageId, { report_type: "harassment" }),
      400,
      "Message reporting is not enabled in this organization.",
      { code: "BAD_REQUEST" },
    );
    await expectError(
      report("hamlet", messageId, { report_type: "spam" }),
      400,
      "Message reporting is not enabled in this organization.",
    );
    expect(await messageCount()).toBe(before);
  });

  it("checks the explanation first, and the message only after the channel", async () => {
    await expectError(
      report("hamlet", 1, { report_type: "other" }),
      400,
      "An explanation is required.",
    );
    await expectError(
      report("hamlet", 99_999_999, { report_type: "spam" }),
      400,
      "Message reporting is not enabled in this organization.",
    );
  });
});

describe("POST /messages/{message_id}/report", () => {
  let reportedId: number;

  beforeAll(async () => {
    // Zulip keeps reports in a private channel: "core team" (desdemona and iago).
    await setModerationChannel(channelId("core team"));
    reportedId = (
      await sendToChannel(server.as("othello"), {
        to: "Denmark",
        topic: "civilized discussions",
        content: "I squeeze toothpaste from the middle",
      })
    ).id;
  });

  it("posts the report to the moderation channel in Zulip's format, from the notification bot", async () => {
    await expectSuccess(
      report("hamlet", reportedId, {
        report_type: "harassment",
        description: "this is crime against food",
      }),
    );
    const posted = await newestReport("Othello, the Moor of Venice moderation");
    expect(posted.sender_id).toBe(server.creds.bots["notification-bot"]!.user_id);
    expect(posted.display_recipient).toBe("core team");
    expect(posted.content).toBe(
      `${mention("hamlet")} reported a message sent by ${mention("othello")} at ${await globalTimeOf(reportedId)}.\n` +
        "```quote\n**Harassment**. this is crime against food\n```\n\n" +
        `\`\`\` spoiler Original message at #**Denmark>civilized discussions@${reportedId}**\nI squeeze toothpaste from the middle\n\`\`\``,
    );
    // The link to the original message renders as Zulip renders it.
    expect(posted.html).toContain(
      `<a class="message-link" href="/#narrow/channel/${channelId("Denmark")}-Denmark/topic/civilized.20discussions/near/${reportedId}">`,
    );
  });

  it("confirms the report to the reporter in a direct message from the notification bot", async () => {
    await expectSuccess(report("hamlet", reportedId, { report_type: "spam" }));
    const confirmation = await newest("hamlet");
    expect(confirmation.sender_id).toBe(server.creds.bots["notification-bot"]!.user_id);
    expect(confirmation.type).toBe("private");
    expect(confirmation.content).toBe(
      `You reported [a message](${REALM_URL}/#narrow/channel/${channelId("Denmark")}-Denmark/topic/civilized.20discussions/near/${reportedId}) for spam.`,
    );
    // A report without a description still reads "**Spam**. ".
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      "```quote\n**Spam**. \n```",
    );
  });

  it("names each report type as Zulip does, in the report and in the confirmation", async () => {
    const names = {
      spam: "Spam",
      harassment: "Harassment",
      inappropriate: "Inappropriate content",
      norms: "Violates community norms",
      other: "Other reason",
    } as const;
    for (const [type, name] of Object.entries(names) as [keyof typeof names, string][]) {
      await expectSuccess(
        report("cordelia", reportedId, { report_type: type, description: "why" }),
      );
      expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
        `\`\`\`quote\n**${name}**. why\n\`\`\``,
      );
      expect((await newest("cordelia")).content).toMatch(
        new RegExp(`\\) for ${name.toLowerCase()}\\.$`),
      );
    }
  });

  it("requires a non-empty explanation for `other`", async () => {
    const before = await messageCount();
    await expectError(
      report("hamlet", reportedId, { report_type: "other" }),
      400,
      "An explanation is required.",
      { code: "BAD_REQUEST" },
    );
    await expectError(
      report("hamlet", reportedId, { report_type: "other", description: "" }),
      400,
      "An explanation is required.",
    );
    expect(await messageCount()).toBe(before);
    await expectSuccess(
      report("hamlet", reportedId, {
        report_type: "other",
        description: "This is crime against food.",
      }),
    );
    expect(await messageCount()).toBe(before + 2);
  });

  it("limits the description to 1000 code points", async () => {
    const before = await messageCount();
    await expectError(
      report("hamlet", reportedId, { report_type: "norms", description: "x".repeat(1001) }),
      400,
      "description is too long (limit: 1000 characters)",
    );
    expect(await messageCount()).toBe(before);
    // 1000 emoji are 2000 UTF-16 units but 1000 characters for Zulip.
    await expectSuccess(
      report("hamlet", reportedId, { report_type: "norms", description: "🍕".repeat(1000) }),
    );
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      `**Violates community norms**. ${"🍕".repeat(1000)}\n`,
    );
  });

  it("refuses an unknown or missing report_type with Zulip's texts", async () => {
    await expectError(
      report("hamlet", reportedId, { report_type: untyped("rude") }),
      400,
      "Invalid report_type: Value error, Not in the list of possible values",
      { code: "BAD_REQUEST" },
    );
    await expectError(
      server.as("hamlet").POST("/messages/{message_id}/report", {
        params: { path: { message_id: reportedId } },
        body: untyped({}),
      }),
      400,
      "Missing 'report_type' argument",
      { code: "REQUEST_VARIABLE_MISSING", var_name: "report_type" },
    );
  });

  it("refuses a message that does not exist with 'Invalid message(s)'", async () => {
    for (const messageId of [99_999_999, 2 ** 31, 2 ** 53 - 1])
      await expectError(
        report("hamlet", messageId, { report_type: "spam" }),
        400,
        "Invalid message(s)",
      );
  });

  it("lets a user report a public channel's message without a subscription", async () => {
    // Cordelia is not subscribed to Scotland.
    const { id: messageId } = await sendToChannel(server.as("othello"), {
      to: "Scotland",
      topic: "plans",
      content: "a plan",
    });
    await expectSuccess(report("cordelia", messageId, { report_type: "spam" }));
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      `Original message at #**Scotland>plans@${messageId}**`,
    );
  });

  it("refuses a private channel's message to a user who cannot see it, and accepts it from a member", async () => {
    const { id: messageId } = await sendToChannel(server.as("iago"), {
      to: "core team",
      topic: "secrets",
      content: "I dip fries in ice cream",
    });
    const before = await messageCount();
    await expectError(
      report("hamlet", messageId, { report_type: "harassment", description: "x" }),
      400,
      "Invalid message(s)",
    );
    await expectError(
      report("polonius", messageId, { report_type: "spam" }),
      400,
      "Invalid message(s)",
    );
    expect(await messageCount()).toBe(before);
    await expectSuccess(
      report("desdemona", messageId, { report_type: "harassment", description: "x" }),
    );
    expect((await newestReport("Iago moderation")).content).toBe(
      `${mention("desdemona")} reported a message sent by ${mention("iago")} at ${await globalTimeOf(messageId)}.\n` +
        "```quote\n**Harassment**. x\n```\n\n" +
        `\`\`\` spoiler Original message at #**core team>secrets@${messageId}**\nI dip fries in ice cream\n\`\`\``,
    );
  });

  it("reports a direct message, with a link to the conversation, only by its participants", async () => {
    const { id: messageId } = await sendDirect(server.as("othello"), {
      to: [id("hamlet")],
      content: "I dip fries in ice cream",
    });
    await expectError(
      report("cordelia", messageId, { report_type: "harassment" }),
      400,
      "Invalid message(s)",
    );
    await expectError(
      report("iago", messageId, { report_type: "harassment" }),
      400,
      "Invalid message(s)",
    );
    await expectSuccess(
      report("hamlet", messageId, {
        report_type: "harassment",
        description: "this is crime against food",
      }),
    );
    const [low, high] = [id("hamlet"), id("othello")].sort((a, b) => a - b);
    const url = `${REALM_URL}/#narrow/dm/${low},${high}/near/${messageId}`;
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toBe(
      `${mention("hamlet")} reported a message sent by ${mention("othello")} at ${await globalTimeOf(messageId)}.\n` +
        "```quote\n**Harassment**. this is crime against food\n```\n\n" +
        `\`\`\` spoiler [Original message](${url})\nI dip fries in ice cream\n\`\`\``,
    );
    expect((await newest("hamlet")).content).toBe(
      `You reported [a message](${url}) for harassment.`,
    );
  });

  it("names the other party when the sender reports their own direct message, and themselves in a self-DM", async () => {
    const { id: toHamlet } = await sendDirect(server.as("othello"), {
      to: [id("hamlet")],
      content: "Hi, you!",
    });
    await expectSuccess(
      report("othello", toHamlet, { report_type: "harassment", description: "just testing" }),
    );
    expect(
      (await newestReport("Othello, the Moor of Venice moderation")).content.split("\n")[0],
    ).toBe(
      `${mention("othello")} reported a message sent by ${mention("othello")} to ${mention("hamlet")} at ${await globalTimeOf(toHamlet)}.`,
    );
    const { id: toSelf } = await sendDirect(server.as("othello"), {
      to: [id("othello")],
      content: "Hi, me!",
    });
    await expectSuccess(
      report("othello", toSelf, { report_type: "harassment", description: "just testing" }),
    );
    const posted = await newestReport("Othello, the Moor of Venice moderation");
    expect(posted.content.split("\n")[0]).toBe(
      `${mention("othello")} reported a message sent by ${mention("othello")} to ${mention("othello")} at ${await globalTimeOf(toSelf)}.`,
    );
    expect(posted.content).toContain(
      `[Original message](${REALM_URL}/#narrow/dm/${id("othello")}/near/${toSelf})`,
    );
  });

  it("lists a group conversation's other recipients, and refuses it to outsiders", async () => {
    // Iago's id is lower than King Hamlet's: the recipients are listed by id.
    const { id: three } = await sendDirect(server.as("othello"), {
      to: [id("hamlet"), id("iago")],
      content: "I eat cereal with water",
    });
    await expectError(
      report("cordelia", three, { report_type: "harassment" }),
      400,
      "Invalid message(s)",
    );
    await expectSuccess(
      report("hamlet", three, { report_type: "harassment", description: "Call the police please" }),
    );
    const ids = [id("hamlet"), id("othello"), id("iago")].sort((a, b) => a - b).join(",");
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toBe(
      `${mention("hamlet")} reported a message sent by ${mention("othello")} to ${mention("iago")} and ${mention("hamlet")} at ${await globalTimeOf(three)}.\n` +
        "```quote\n**Harassment**. Call the police please\n```\n\n" +
        `\`\`\` spoiler [Original message](${REALM_URL}/#narrow/dm/${ids}-group/near/${three})\nI eat cereal with water\n\`\`\``,
    );
    const { id: four } = await sendDirect(server.as("othello"), {
      to: [id("hamlet"), id("iago"), id("cordelia")],
      content: "more cereal",
    });
    await expectSuccess(report("cordelia", four, { report_type: "spam" }));
    expect(
      (await newestReport("Othello, the Moor of Venice moderation")).content.split("\n")[0],
    ).toBe(
      `${mention("cordelia")} reported a message sent by ${mention("othello")} to ${mention("iago")}, ${mention("hamlet")}, and ${mention("cordelia")} at ${await globalTimeOf(four)}.`,
    );
  });

  it("truncates a long message in code points, and fences it past its own fences", async () => {
    const long = "🍕".repeat(9000);
    const { id: messageId } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "long",
      content: long,
    });
    await expectSuccess(report("hamlet", messageId, { report_type: "spam" }));
    const { content } = await newestReport("Othello, the Moor of Venice moderation");
    expect(content).not.toContain(long);
    expect(content).toContain(
      `@${messageId}**\n${"🍕".repeat(8500 - 20)}\n[message truncated]\n\`\`\``,
    );

    const fenced = "````python\nprint(1)\n````";
    const { id: withFence } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "code",
      content: fenced,
    });
    await expectSuccess(report("hamlet", withFence, { report_type: "spam" }));
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      `\n\`\`\`\`\` spoiler Original message at #**Denmark>code@${withFence}**\n${fenced}\n\`\`\`\`\``,
    );
  });

  it("links with a plain Markdown link when names would break the #** syntax, and shows the empty topic as general chat", async () => {
    const { id: messageId } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "a*b > c",
      content: "odd topic",
    });
    await expectSuccess(report("hamlet", messageId, { report_type: "spam" }));
    const denmark = channelId("Denmark");
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      `Original message at [#Denmark > a&#42;b &gt; c @ 💬](#narrow/channel/${denmark}-Denmark/topic/a*b.20.3E.20c/near/${messageId})`,
    );
    const { id: empty } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "",
      content: "no topic",
    });
    await expectSuccess(report("hamlet", empty, { report_type: "spam" }));
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      `Original message at #**Denmark>@${empty}**`,
    );
    expect((await newest("hamlet")).content).toBe(
      `You reported [a message](${REALM_URL}/#narrow/channel/${denmark}-Denmark/topic//near/${empty}) for spam.`,
    );
  });

  it("posts in the empty topic of a channel that allows only it", async () => {
    const core = channelId("core team");
    await server.db.stream.update({
      where: { id: core },
      data: { topicsPolicy: "empty_topic_only" },
    });
    try {
      await expectSuccess(report("hamlet", reportedId, { report_type: "harassment" }));
      const posted = await newest("iago", [{ operator: "channel", operand: "core team" }]);
      // Read without allow_empty_topic_name, the empty topic shows as the organization's display name.
      expect(posted).toMatchObject({
        subject: "(no topic)",
        sender_id: server.creds.bots["notification-bot"]!.user_id,
      });
      expect(posted.content).toContain("reported a message sent by");
      expect(
        await server.db.message.findUniqueOrThrow({
          where: { id: posted.id },
          select: { subject: true },
        }),
      ).toEqual({ subject: "" });
    } finally {
      await server.db.stream.update({ where: { id: core }, data: { topicsPolicy: "inherit" } });
    }
  });

  it("fails as Zulip does when the report cannot be posted, sending nothing", async () => {
    const core = channelId("core team");
    const before = await messageCount();
    await server.db.stream.update({ where: { id: core }, data: { isArchived: true } });
    try {
      await expectError(
        report("hamlet", reportedId, { report_type: "spam" }),
        400,
        "Failed to send the message report.",
      );
    } finally {
      await server.db.stream.update({ where: { id: core }, data: { isArchived: false } });
    }
    await expectError(
      report("hamlet", reportedId, { report_type: "other", description: "a\u0000b" }),
      400,
      "Failed to send the message report.",
    );
    expect(await messageCount()).toBe(before);
  });

  it("delivers the report to the moderators and the confirmation to the reporter through GET /events", async () => {
    const queues = Object.fromEntries(
      await Promise.all(
        ["iago", "hamlet", "othello"].map(
          async (name) =>
            [
              name,
              (
                await expectSuccess(
                  server.as(name).POST("/register", {
                    body: { event_types: ["message"], apply_markdown: false },
                  }),
                )
              ).queue_id!,
            ] as const,
        ),
      ),
    );
    await expectSuccess(
      report("hamlet", reportedId, { report_type: "inappropriate", description: "events" }),
    );
    const eventsOf = async (name: string) =>
      (
        await expectSuccess(
          server.as(name).GET("/events", {
            params: { query: { queue_id: queues[name]!, last_event_id: -1, dont_block: true } },
          }),
        )
      ).events;
    const bot = server.creds.bots["notification-bot"]!.user_id;
    const moderator = await eventsOf("iago");
    expect(moderator).toHaveLength(1);
    expect(moderator[0]).toMatchObject({
      type: "message",
      flags: [],
      message: {
        sender_id: bot,
        display_recipient: "core team",
        subject: "Othello, the Moor of Venice moderation",
      },
    });
    expect(moderator[0]!.type === "message" && moderator[0].message.content).toContain(
      "```quote\n**Inappropriate content**. events\n```",
    );
    const reporter = await eventsOf("hamlet");
    expect(reporter).toHaveLength(1);
    expect(reporter[0]).toMatchObject({
      type: "message",
      flags: [],
      message: { sender_id: bot, type: "private" },
    });
    expect(reporter[0]!.type === "message" && reporter[0].message.content).toMatch(
      /^You reported \[a message\]\(.*\) for inappropriate content\.$/,
    );
    // The reported user learns nothing.
    expect(await eventsOf("othello")).toEqual([]);
  });

  it("is one short transaction: a fixed number of statements", async () => {
    const seen: RequestInfo[] = [];
    server.deps.observe = (info) => seen.push(info);
    try {
      const statements = async (messageId: number) => {
        seen.length = 0;
        await expectSuccess(report("hamlet", messageId, { report_type: "spam" }));
        return seen.find((i) => i.operationId === "report-message")!.statements;
      };
      await statements(reportedId); // warms the caches
      const channel = await statements(reportedId);
      const direct = await statements(
        (
          await sendDirect(server.as("othello"), {
            to: [id("hamlet"), id("iago")],
            content: "count me",
          })
        ).id,
      );
      if (process.env.SHOW_STATEMENTS) console.log("report-message", { channel, direct });
      expect(channel).toBeLessThanOrEqual(13);
      expect(direct).toBeLessThanOrEqual(13);
    } finally {
      server.deps.observe = undefined;
    }
  });
});

describe("POST /messages/{message_id}/report as real clients send it", () => {
  const basic = (name: string) => {
    const c = server.creds.users[name]!;
    return "Basic " + Buffer.from(`${c.email}:${c.api_key}`).toString("base64");
  };
  const post = (path: string, body?: string) =>
    fetch(`${server.baseUrl}/api/v1${path}`, {
      method: "POST",
      headers: {
        Authorization: basic("hamlet"),
        ...(body === undefined ? {} : { "Content-Type": "application/x-www-form-urlencoded" }),
      },
      body,
    });

  it("reads a form body with spaces as '+'", async () => {
    const { id: messageId } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "forms",
      content: "form body",
    });
    const response = await post(
      `/messages/${messageId}/report`,
      "report_type=other&description=Rude+and+%2Aloud%2A",
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: "success", msg: "" });
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      "```quote\n**Other reason**. Rude and *loud*\n```",
    );
  });

  it("reads the parameters from the query string of the POST", async () => {
    const { id: messageId } = await sendToChannel(server.as("othello"), {
      to: "Denmark",
      topic: "forms",
      content: "query string",
    });
    const response = await post(
      `/messages/${messageId}/report?report_type=norms&description=from+the+query`,
    );
    expect(response.status).toBe(200);
    expect((await newestReport("Othello, the Moor of Venice moderation")).content).toContain(
      "**Violates community norms**. from the query\n",
    );
  });

  it("answers a form without report_type, or with a message id that is not a number, with Zulip's errors", async () => {
    const missing = await post("/messages/1/report", "description=x");
    expect({ status: missing.status, ...((await missing.json()) as object) }).toEqual({
      status: 400,
      result: "error",
      msg: "Missing 'report_type' argument",
      code: "REQUEST_VARIABLE_MISSING",
      var_name: "report_type",
    });
    const notNumber = await post("/messages/abc/report", "report_type=spam");
    expect(notNumber.status).toBe(400);
    expect(await notNumber.json()).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });
});
