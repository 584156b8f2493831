/**
 * Widgets (zerver/tests/test_submessage.py, test_widgets.py): `/poll` and `/todo` messages get
 * their widget submessage when sent, in the message event and in fetched messages; POST
 * /submessage with Zulip's checks and texts (the first submessage is the sender's, the content
 * JSON, poll and todo events as validate_poll_data / validate_todo_data want them, the question
 * and title the author's); the `submessage` event to those who have the message; the form body
 * real clients send.
 */
import { describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { queueOf } from "../helpers/event-queue.ts";
import { useTestServer } from "../helpers/server.ts";
import { zulipEventErrors } from "../helpers/zulip-spec.ts";
import { sendDirect, sendToChannel, untyped } from "../helpers/builders.ts";

const server = useTestServer();
const id = (name: string) => server.creds.users[name]!.user_id;

const send = async (as: string, content: string, to = "Verona") =>
  (await sendToChannel(server.as(as), { to, topic: "widgets", content })).id;
const submit = (as: string, message_id: number, content: string, msg_type = "widget") =>
  server.as(as).POST("/submessage", { body: { message_id, msg_type, content } });
const getMessage = async (as: string, messageId: number) =>
  (
    await expectSuccess(
      server.as(as).GET("/messages/{message_id}", { params: { path: { message_id: messageId } } }),
    )
  ).message;

describe("widgets created when sent", () => {
  it("a /poll message: question and options, list markers stripped, in Zulip's JSON text", async () => {
    const queue = await queueOf(server, "othello", ["message"]);
    const messageId = await send("hamlet", "/poll Lunch?\n- pizza\n* salad\n\n  soup  ");
    const content =
      '{"widget_type": "poll", "extra_data": {"question": "Lunch?", "options": ["pizza", "salad", "soup"]}}';
    const submessage = {
      msg_type: "widget",
      content,
      message_id: messageId,
      sender_id: id("hamlet"),
      id: expect.any(Number),
    };
    expect((await getMessage("othello", messageId)).submessages).toEqual([submessage]);
    const [event] = await queue();
    expect(event).toMatchObject({ type: "message", message: { submessages: [submessage] } });
  });

  it("a /todo message: title and tasks with their descriptions", async () => {
    const messageId = await send("hamlet", "/todo Chores\nsweep: the floor\ndishes");
    const [widget] = (await getMessage("hamlet", messageId)).submessages;
    expect(JSON.parse(widget!.content)).toEqual({
      widget_type: "todo",
      extra_data: {
        task_list_title: "Chores",
        tasks: [
          { task: "sweep", desc: "the floor" },
          { task: "dishes", desc: "" },
        ],
      },
    });
  });

  it("an empty /poll, and no widget for other text", async () => {
    const poll = await send("hamlet", "/poll");
    expect(JSON.parse((await getMessage("hamlet", poll)).submessages[0]!.content)).toEqual({
      widget_type: "poll",
      extra_data: { question: "", options: [] },
    });
    const plain = await send("hamlet", "not /poll really");
    expect((await getMessage("hamlet", plain)).submessages).toEqual([]);
    const other = await send("hamlet", "/pollster here");
    expect((await getMessage("hamlet", other)).submessages).toEqual([]);
  });

  it("GET /messages carries submessages in order", async () => {
    const messageId = await send("hamlet", "/poll Order?\nA\nB");
    await expectSuccess(submit("othello", messageId, '{"type":"vote","key":"canned,0","vote":1}'));
    await expectSuccess(submit("iago", messageId, '{"type":"new_option","option":"C","idx":1}'));
    const { messages } = await expectSuccess(
      server.as("cordelia").GET("/messages", {
        params: { query: { anchor: messageId, num_before: 0, num_after: 0 } },
      }),
    );
    expect(messages[0]!.submessages.map((s) => s.sender_id)).toEqual([
      id("hamlet"),
      id("othello"),
      id("iago"),
    ]);
    const ids = messages[0]!.submessages.map((s) => s.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });
});

describe("POST /submessage", () => {
  it("a vote reaches everyone who has the message, in Zulip's event shape", async () => {
    const messageId = await send("hamlet", "/poll Tea?\nyes\nno");
    const cordelia = await queueOf(server, "cordelia", ["submessage"]);
    const content = '{"type":"vote","key":"canned,1","vote":1}';
    await expectSuccess(submit("othello", messageId, content));
    const events = await cordelia();
    expect(events).toEqual([
      {
        type: "submessage",
        msg_type: "widget",
        message_id: messageId,
        submessage_id: expect.any(Number),
        sender_id: id("othello"),
        content,
      },
    ]);
    expect(events.flatMap((e) => zulipEventErrors({ ...e, id: 0 }))).toEqual([]);
    const stored = (await getMessage("hamlet", messageId)).submessages;
    expect(stored.at(-1)).toEqual({
      msg_type: "widget",
      content,
      message_id: messageId,
      sender_id: id("othello"),
      id: events[0]!.type === "submessage" ? events[0].submessage_id : -1,
    });
  });

  it("the first submessage is the sender's", async () => {
    const messageId = await send("hamlet", "plain");
    await expectError(
      submit("othello", messageId, "{}"),
      400,
      "You cannot attach a submessage to this message.",
    );
    // The sender may, with any JSON (no widget to check it against); then anyone may.
    await expectSuccess(submit("hamlet", messageId, '{"anything": [1]}'));
    await expectSuccess(submit("othello", messageId, "[]"));
  });

  it("the message must be readable, and exist", async () => {
    const { id: privateMessage } = await sendDirect(server.as("iago"), {
      to: [id("hamlet")],
      content: "/poll secret?",
    });
    await expectError(
      submit("othello", privateMessage, '{"type":"vote","key":"canned,0","vote":1}'),
      400,
      "Invalid message(s)",
    );
    await expectError(submit("hamlet", 999_999_999, "{}"), 400, "Invalid message(s)");
  });

  it("content must be JSON", async () => {
    const messageId = await send("hamlet", "/poll Q");
    await expectError(submit("othello", messageId, "{nope"), 400, "Invalid json for submessage");
    await expectError(submit("othello", messageId, ""), 400, "Invalid json for submessage");
  });

  it("poll data as validate_poll_data wants it", async () => {
    const messageId = await send("hamlet", "/poll Q\nA");
    const cases: [string, string][] = [
      ["[]", "poll data is not a dict"],
      ["{}", "type key is missing from poll data"],
      ['{"type": 3}', 'poll data["type"] is not a string'],
      ['{"type":"nonsense"}', "Unknown type for poll data: nonsense"],
      ['{"type":"vote","key":"canned,0"}', "vote key is missing from poll data"],
      ['{"type":"vote","key":5,"vote":1}', 'poll data["key"] is not a string'],
      ['{"type":"vote","key":"canned,0","vote":2}', 'Invalid poll data["vote"]'],
      ['{"type":"vote","key":"canned,0","vote":1,"x":1}', "Unexpected arguments: x"],
      ['{"type":"new_option","option":"B","idx":1001}', 'poll data["idx"] is too large'],
      ['{"type":"new_option","option":"B","idx":-1}', 'poll data["idx"] is too small'],
      ['{"type":"new_option","option":"B","idx":"1"}', 'poll data["idx"] is not an integer'],
      [
        '{"type":"question","question":"Q2"}',
        "You can't edit a question unless you are the author.",
      ],
    ];
    for (const [content, msg] of cases)
      await expectError(submit("othello", messageId, content), 400, msg);
    // The author may change the question; a vote of -1 withdraws one.
    await expectSuccess(submit("hamlet", messageId, '{"type":"question","question":"Q2"}'));
    await expectSuccess(submit("othello", messageId, '{"type":"vote","key":"canned,0","vote":-1}'));
    await expectSuccess(
      submit("othello", messageId, '{"type":"new_option","option":"B","idx":1000}'),
    );
    expect((await getMessage("hamlet", messageId)).submessages).toHaveLength(4);
  });

  it("todo data as validate_todo_data wants it", async () => {
    const messageId = await send("hamlet", "/todo List");
    const cases: [string, string][] = [
      ['{"type":"nonsense"}', "Unknown type for todo data: nonsense"],
      [
        '{"type":"new_task","key":1,"task":"t","desc":"d","completed":"no"}',
        'todo data["completed"] is not a boolean',
      ],
      [
        '{"type":"new_task","key":1,"task":"t","desc":"d"}',
        "completed key is missing from todo data",
      ],
      ['{"type":"strike","key":3}', 'todo data["key"] is not a string'],
      [
        '{"type":"new_task_list_title","title":"T"}',
        "You can't edit the task list title unless you are the author.",
      ],
    ];
    for (const [content, msg] of cases)
      await expectError(submit("othello", messageId, content), 400, msg);
    await expectSuccess(
      submit(
        "othello",
        messageId,
        '{"type":"new_task","key":1,"task":"t","desc":"d","completed":false}',
      ),
    );
    await expectSuccess(
      submit("othello", messageId, '{"type":"strike","key":"1,' + id("othello") + '"}'),
    );
    await expectSuccess(submit("hamlet", messageId, '{"type":"new_task_list_title","title":"T"}'));
  });

  it("nothing is stored when refused", async () => {
    const messageId = await send("hamlet", "/poll Q");
    await expectError(
      submit("othello", messageId, '{"type":"nonsense"}'),
      400,
      "Unknown type for poll data: nonsense",
    );
    expect((await getMessage("hamlet", messageId)).submessages).toHaveLength(1);
  });

  it("missing arguments", async () => {
    await expectError(
      server.as("hamlet").POST("/submessage", {
        body: untyped({ message_id: 1, msg_type: "widget" }),
      }),
      400,
      "Missing 'content' argument",
    );
  });
});

describe("as real clients send it", () => {
  it("a form body with JSON text in content (zulip-flutter, the web app)", async () => {
    const messageId = await send("hamlet", "/poll Form?\nA");
    const { email, api_key } = server.creds.users.othello!;
    const body = new URLSearchParams({
      message_id: String(messageId),
      msg_type: "widget",
      content: JSON.stringify({ type: "new_option", idx: 1, option: "B and C" }),
    }).toString();
    expect(body).toContain("B+and+C");
    const response = await fetch(`${server.baseUrl}/api/v1/submessage`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${Buffer.from(`${email}:${api_key}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body,
    });
    expect(response.status).toBe(200);
    const last = (await getMessage("hamlet", messageId)).submessages.at(-1)!;
    expect(JSON.parse(last.content)).toEqual({ type: "new_option", idx: 1, option: "B and C" });
  });
});
