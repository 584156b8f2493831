/**
 * Emoji reactions (zerver/tests/test_reactions.py): POST and DELETE /messages/{id}/reactions with
 * Unicode, custom and Zulip's extra emoji, Zulip's texts and codes, the vote for a reaction
 * another user added (even with a custom emoji deactivated since), the access rule and historical
 * rows, the `reaction` events and who gets them, reactions in message dicts, statement budgets,
 * and the form bodies real clients send.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { RequestInfo } from "../../server/context.ts";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";
import { zulipEventErrors } from "../helpers/zulip-spec.ts";
import {
  type Body as BodyOf,
  createChannel,
  sendDirect,
  sendToChannel,
} from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => (server.creds.users[name] ?? server.creds.bots[name])!.user_id;

type Body = BodyOf<"/messages/{message_id}/reactions", "post">;
const react = (as: string, messageId: number, body: Body) =>
  server.as(as).POST("/messages/{message_id}/reactions", {
    params: { path: { message_id: messageId } },
    body: body,
  });
const unreact = (
  as: string,
  messageId: number,
  body: BodyOf<"/messages/{message_id}/reactions", "delete">,
) =>
  server.as(as).DELETE("/messages/{message_id}/reactions", {
    params: { path: { message_id: messageId } },
    body: body,
  });
const channelMessage = async (as: string, to: string | number, content = "react to me") =>
  (await sendToChannel(server.as(as), { to, topic: "reactions", content })).id;
const getMessage = async (as: string, messageId: number) =>
  (
    await expectSuccess(
      server.as(as).GET("/messages/{message_id}", { params: { path: { message_id: messageId } } }),
    )
  ).message;

const ALREADY = { code: "REACTION_ALREADY_EXISTS" };
const MISSING = { code: "REACTION_DOES_NOT_EXIST" };

/** Custom emoji rows as an upload leaves them. */
const custom = { active: 0, retired: 0 };
beforeAll(async () => {
  const realmId = server.creds.realm.id;
  const row = async (name: string) =>
    (
      await server.db.realmEmoji.create({
        data: { realmId, name, fileName: `${name}.png`, authorId: id("iago") },
      })
    ).id;
  custom.active = await row("green_tick");
  custom.retired = await row("old_tick");
});

describe("adding a reaction", () => {
  it("takes a Unicode emoji by name alone, shows it in the message dict, and refuses it twice", async () => {
    const messageId = await channelMessage("hamlet", "Verona");
    await expectSuccess(react("othello", messageId, { emoji_name: "octopus" }));
    expect((await getMessage("hamlet", messageId)).reactions).toEqual([
      {
        emoji_name: "octopus",
        emoji_code: "1f419",
        reaction_type: "unicode_emoji",
        user_id: id("othello"),
      },
    ]);
    await expectError(
      react("othello", messageId, { emoji_name: "octopus" }),
      400,
      "Reaction already exists.",
      ALREADY,
    );
    // Named by code and type too, the same reaction.
    await expectError(
      react("othello", messageId, {
        emoji_name: "octopus",
        emoji_code: "1f419",
        reaction_type: "unicode_emoji",
      }),
      400,
      "Reaction already exists.",
      ALREADY,
    );
  });

  it("refuses unknown and inconsistent emoji with Zulip's texts", async () => {
    const messageId = await channelMessage("hamlet", "Verona");
    const cases: [Body, string][] = [
      [{ emoji_name: "nonsense" }, "Emoji 'nonsense' does not exist"],
      [{ emoji_name: "car", emoji_code: "1f4bb" }, "Invalid emoji name."],
      [
        { emoji_name: "car", emoji_code: "zzzz", reaction_type: "unicode_emoji" },
        "Invalid emoji code.",
      ],
      [{ emoji_name: "car", emoji_code: "1f697", reaction_type: "bogus" }, "Invalid emoji type."],
      [
        { emoji_name: "green_tick", emoji_code: "1f697", reaction_type: "realm_emoji" },
        "Invalid custom emoji.",
      ],
      [
        {
          emoji_name: "wrong_name",
          emoji_code: String(custom.active),
          reaction_type: "realm_emoji",
        },
        "Invalid custom emoji name.",
      ],
      [
        { emoji_name: "octopus", emoji_code: "octopus", reaction_type: "zulip_extra_emoji" },
        "Invalid emoji code.",
      ],
    ];
    for (const [body, msg] of cases) await expectError(react("othello", messageId, body), 400, msg);
    expect((await getMessage("othello", messageId)).reactions).toEqual([]);
  });

  it("takes custom emoji and Zulip's extra emoji by name", async () => {
    const messageId = await channelMessage("hamlet", "Verona");
    await expectSuccess(react("othello", messageId, { emoji_name: "green_tick" }));
    await expectSuccess(react("othello", messageId, { emoji_name: "zulip" }));
    expect((await getMessage("othello", messageId)).reactions).toEqual([
      {
        emoji_name: "green_tick",
        emoji_code: String(custom.active),
        reaction_type: "realm_emoji",
        user_id: id("othello"),
      },
      {
        emoji_name: "zulip",
        emoji_code: "zulip",
        reaction_type: "zulip_extra_emoji",
        user_id: id("othello"),
      },
    ]);
  });

  it("counts a reaction with another user's emoji code as a vote, with that reaction's name, even for a custom emoji deactivated since", async () => {
    const messageId = await channelMessage("hamlet", "Verona");
    await expectSuccess(react("othello", messageId, { emoji_name: "+1" }));
    // thumbs_up is 1f44d too: the vote keeps the first reaction's name.
    await expectSuccess(react("hamlet", messageId, { emoji_name: "thumbs_up" }));
    await expectSuccess(react("cordelia", messageId, { emoji_name: "old_tick" }));
    await server.db.realmEmoji.update({
      where: { id: custom.retired },
      data: { deactivated: true },
    });
    const retired = { emoji_code: String(custom.retired), reaction_type: "realm_emoji" };
    await expectSuccess(react("iago", messageId, { emoji_name: "old_tick", ...retired }));
    const reactions = (await getMessage("hamlet", messageId)).reactions;
    expect(reactions.map((r) => [r.emoji_name, r.emoji_code, r.user_id])).toEqual([
      ["+1", "1f44d", id("othello")],
      ["+1", "1f44d", id("hamlet")],
      ["old_tick", String(custom.retired), id("cordelia")],
      ["old_tick", String(custom.retired), id("iago")],
    ]);
    // Nobody reacted with it to this one: the deactivated emoji is refused.
    const other = await channelMessage("hamlet", "Verona");
    await expectError(
      react("iago", other, { emoji_name: "old_tick", ...retired }),
      400,
      "This custom emoji has been deactivated.",
    );
    // By name alone it is no longer an emoji at all.
    await expectError(
      react("iago", other, { emoji_name: "old_tick" }),
      400,
      "Emoji 'old_tick' does not exist",
    );
  });

  it("reads the message through the access rule", async () => {
    await expectError(
      react("othello", 99_999_999, { emoji_name: "octopus" }),
      400,
      "Invalid message(s)",
    );
    await expectError(
      react("othello", 2 ** 40, { emoji_name: "octopus" }),
      400,
      "Invalid message(s)",
    );
    const { id: channelId } = await createChannel(server.as("iago"), {
      name: "reaction secrets",
      invite_only: true,
      subscribers: [id("iago")],
    });
    const secret = await channelMessage("iago", channelId);
    await expectError(
      react("othello", secret, { emoji_name: "octopus" }),
      400,
      "Invalid message(s)",
    );
    await expectError(
      unreact("othello", secret, { emoji_name: "octopus" }),
      400,
      "Invalid message(s)",
    );
    // A direct message between others.
    const { id: dm } = await sendDirect(server.as("hamlet"), {
      to: [id("othello")],
      content: "psst",
    });
    await expectError(react("cordelia", dm, { emoji_name: "octopus" }), 400, "Invalid message(s)");
    await expectSuccess(react("othello", dm, { emoji_name: "octopus" }));
  });

  it("gives a user reacting to a public channel's message they never received a historical row, as Zulip does", async () => {
    // Cordelia is not subscribed to Scotland.
    const messageId = await channelMessage("iago", "Scotland");
    expect((await getMessage("cordelia", messageId)).flags).toEqual(["read", "historical"]);
    expect(
      await server.db.userMessage.count({ where: { userProfileId: id("cordelia"), messageId } }),
    ).toBe(0);
    await expectSuccess(react("cordelia", messageId, { emoji_name: "octopus" }));
    const row = await server.db.userMessage.findUnique({
      where: { userProfileId_messageId: { userProfileId: id("cordelia"), messageId } },
    });
    expect(row?.flags).toBe(1n | (1n << 10n));
    // With that row she hears of the message's other reactions.
    const cordelia = await queueOf(server, "cordelia", ["reaction"]);
    await expectSuccess(react("hamlet", messageId, { emoji_name: "tada" }));
    expect((await cordelia()).map((e) => e.type === "reaction" && e.message_id)).toEqual([
      messageId,
    ]);
  });
});

describe("removing a reaction", () => {
  it("by name, by code and type (a deactivated custom emoji too), and Zulip's refusals", async () => {
    const messageId = await channelMessage("hamlet", "Verona");
    await expectSuccess(react("othello", messageId, { emoji_name: "octopus" }));
    await expectSuccess(react("othello", messageId, { emoji_name: "green_tick" }));
    await expectError(
      unreact("othello", messageId, {}),
      400,
      "At least one of the following arguments must be present: emoji_name, emoji_code",
    );
    await expectError(
      unreact("othello", messageId, { emoji_name: "nonsense" }),
      400,
      "Emoji 'nonsense' does not exist",
    );
    // The type defaults to unicode_emoji, even when the name is a custom emoji's (as in Zulip).
    await expectError(
      unreact("othello", messageId, { emoji_name: "green_tick" }),
      400,
      "Reaction doesn't exist.",
      MISSING,
    );
    await expectSuccess(unreact("othello", messageId, { emoji_name: "octopus" }));
    await expectError(
      unreact("othello", messageId, { emoji_name: "octopus" }),
      400,
      "Reaction doesn't exist.",
      MISSING,
    );
    // Another user's reaction is not the caller's.
    await expectError(
      unreact("hamlet", messageId, {
        emoji_code: String(custom.active),
        reaction_type: "realm_emoji",
      }),
      400,
      "Reaction doesn't exist.",
      MISSING,
    );
    await server.db.realmEmoji.update({
      where: { id: custom.active },
      data: { deactivated: true },
    });
    try {
      await expectSuccess(
        unreact("othello", messageId, {
          emoji_code: String(custom.active),
          reaction_type: "realm_emoji",
        }),
      );
    } finally {
      await server.db.realmEmoji.update({
        where: { id: custom.active },
        data: { deactivated: false },
      });
    }
    expect((await getMessage("othello", messageId)).reactions).toEqual([]);
  });
});

describe("reaction events", () => {
  it("add and remove in Zulip's shape, to the channel's subscribers", async () => {
    const messageId = await channelMessage("hamlet", "Denmark");
    const hamlet = await queueOf(server, "hamlet", ["reaction"]);
    await expectSuccess(react("othello", messageId, { emoji_name: "octopus" }));
    await expectSuccess(unreact("othello", messageId, { emoji_code: "1f419" }));
    const othello = server.creds.users.othello!;
    const full = (op: string) => ({
      type: "reaction",
      op,
      user_id: othello.user_id,
      // No deprecated `user` object since feature level 484: toEqual fails on any other field.
      message_id: messageId,
      emoji_name: "octopus",
      emoji_code: "1f419",
      reaction_type: "unicode_emoji",
    });
    const events = await hamlet();
    expect(events).toEqual([full("add"), full("remove")]);
    // Exactly Zulip's fields (its GET /events schemas), the queue's id put back.
    expect(events.flatMap((e) => zulipEventErrors({ ...e, id: 0 }))).toEqual([]);
  });

  it("go to Zulip's recipients: direct-message participants; subscribers with a row when history is protected", async () => {
    const { id: dm } = await sendDirect(server.as("hamlet"), {
      to: [id("othello")],
      content: "just us",
    });
    const { id: channelId } = await expectSuccess(
      server.as("iago").POST("/channels/create", {
        body: {
          name: "reaction protected",
          invite_only: true,
          history_public_to_subscribers: false,
          subscribers: [id("iago"), id("hamlet")],
        },
      }),
    );
    const early = await channelMessage("iago", channelId, "before othello");
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: {
          subscriptions: [{ name: "reaction protected" }],
          principals: [id("othello")],
        },
      }),
    );
    const queues = Object.fromEntries(
      await Promise.all(
        ["hamlet", "othello", "cordelia", "iago"].map(
          async (who) => [who, await queueOf(server, who, ["reaction"])] as const,
        ),
      ),
    );
    await expectSuccess(react("hamlet", dm, { emoji_name: "heart" }));
    await expectSuccess(react("hamlet", early, { emoji_name: "heart" }));
    const got = async (who: string) =>
      (await queues[who]!()).map((e) => e.type === "reaction" && e.message_id);
    expect(await got("hamlet")).toEqual([dm, early]);
    expect(await got("othello")).toEqual([dm]);
    expect(await got("iago")).toEqual([early]);
    expect(await got("cordelia")).toEqual([]);
  });
});

describe("statement budgets", () => {
  const seen: RequestInfo[] = [];
  beforeAll(() => {
    server.deps.observe = (info) => seen.push(info);
  });
  const statementsOf = async (operationId: string, request: () => Promise<unknown>) => {
    seen.length = 0;
    await request();
    const info = seen.filter((i) => i.operationId === operationId);
    expect(info).toHaveLength(1);
    if (process.env.SHOW_STATEMENTS) console.log(operationId, info[0]!.statements);
    return info[0]!.statements;
  };

  it("adding or removing a reaction: at most 6 statements, BEGIN and COMMIT included", async () => {
    const messageId = await channelMessage("hamlet", "Verona");
    await expectSuccess(react("othello", messageId, { emoji_name: "heart" })); // warms the caches
    const add = await statementsOf("add-reaction", () =>
      expectSuccess(
        react("othello", messageId, {
          emoji_name: "octopus",
          emoji_code: "1f419",
          reaction_type: "unicode_emoji",
        }),
      ),
    );
    expect(add).toBeLessThanOrEqual(6);
    const remove = await statementsOf("remove-reaction", () =>
      expectSuccess(unreact("othello", messageId, { emoji_code: "1f419" })),
    );
    expect(remove).toBeLessThanOrEqual(6);
  });

  it("GET /messages loads reactions in the messages' own statement: the same count with and without", async () => {
    const bare = await channelMessage("hamlet", "Denmark", "no reactions");
    const reacted = await channelMessage("hamlet", "Denmark", "many reactions");
    for (const who of ["othello", "iago", "cordelia", "hamlet"])
      for (const emoji_name of ["octopus", "tada", "green_tick"])
        await expectSuccess(react(who, reacted, { emoji_name }));
    const fetchOne = (messageId: number) => () =>
      expectSuccess(
        server.as("hamlet").GET("/messages", {
          params: {
            query: { anchor: messageId, num_before: 0, num_after: 0, narrow: [] },
          },
        }),
      );
    await fetchOne(bare)();
    const without = await statementsOf("get-messages", fetchOne(bare));
    const withReactions = await statementsOf("get-messages", fetchOne(reacted));
    expect(withReactions).toBe(without);
    const { messages } = await fetchOne(reacted)();
    expect(messages[0]!.reactions).toHaveLength(12);
  });
});

describe("as real clients send them", () => {
  const basic = (who: string) => {
    const { email, api_key } = server.creds.users[who]!;
    return `Basic ${Buffer.from(`${email}:${api_key}`).toString("base64")}`;
  };
  const call = async (method: string, path: string, body?: string) => {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        Authorization: basic("othello"),
        ...(body !== undefined && { "Content-Type": "application/x-www-form-urlencoded" }),
      },
      body,
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it("a form body (python-zulip-api, `+1` percent-encoded) and the query string (zulip-js)", async () => {
    const messageId = await channelMessage("hamlet", "Verona");
    const form = new URLSearchParams({ emoji_name: "+1" }).toString();
    expect(form).toBe("emoji_name=%2B1");
    expect(await call("POST", `/messages/${messageId}/reactions`, form)).toMatchObject({
      status: 200,
      json: { result: "success" },
    });
    expect((await getMessage("othello", messageId)).reactions[0]).toMatchObject({
      emoji_name: "+1",
      emoji_code: "1f44d",
    });
    // zulip-js sends DELETE's parameters in the query string.
    const query = new URLSearchParams({ emoji_name: "+1", reaction_type: "unicode_emoji" });
    expect(await call("DELETE", `/messages/${messageId}/reactions?${query}`)).toMatchObject({
      status: 200,
      json: { result: "success" },
    });
    expect((await getMessage("othello", messageId)).reactions).toEqual([]);
  });
});
