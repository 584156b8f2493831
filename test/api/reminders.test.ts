/**
 * Message reminders: creating, listing and deleting them with Zulip's checks and texts, their
 * `reminders` events and register state, and their delivery by the scheduled-delivery worker
 * (driven through the server's own clock) as Notification Bot's direct message to the owner.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { expectError, expectSuccess } from "../helpers/expect.ts";
import { realClient } from "../helpers/real-client.ts";
import { useTestServer } from "../helpers/server.ts";

let clock = Date.now();
const server = useTestServer({}, { now: () => new Date(clock), scheduledDelivery: "manual" });

const nowS = () => Math.floor(clock / 1000);
const uid = (name: string) => server.creds.users[name]!.user_id;

type Body = { message_id: number; scheduled_delivery_timestamp: number; note?: string };
const create = (as: string, body: Body) => server.as(as).POST("/reminders", { body });
const created = async (as: string, body: Body) =>
  (await expectSuccess(create(as, body))).reminder_id;
const list = async (as: string) => (await expectSuccess(server.as(as).GET("/reminders"))).reminders;
const remove = (as: string, id: number) =>
  server.as(as).DELETE("/reminders/{reminder_id}", { params: { path: { reminder_id: id } } });

async function sendChannel(as: string, content: string) {
  return (
    await expectSuccess(
      server.as(as).POST("/messages", {
        body: { type: "channel", to: "Verona", topic: "reminded", content },
      }),
    )
  ).id;
}
async function sendDirect(as: string, to: number[], content: string) {
  return (
    await expectSuccess(server.as(as).POST("/messages", { body: { type: "direct", to, content } }))
  ).id;
}
async function queue(as: string, eventTypes = ["reminders"]) {
  return (
    await expectSuccess(server.as(as).POST("/register", { body: { event_types: eventTypes } }))
  ).queue_id!;
}
async function events(as: string, queue_id: string) {
  return (
    await expectSuccess(
      server
        .as(as)
        .GET("/events", { params: { query: { queue_id, last_event_id: -1, dont_block: true } } }),
    )
  ).events as Record<string, any>[];
}

beforeEach(async () => {
  await server.db.scheduledMessage.deleteMany({ where: { delivered: false } });
});

describe("create, list, delete", () => {
  it("stores a reminder with a link to the message and a quote of it, and lists it", async () => {
    const messageId = await sendChannel("othello", "Remember the handkerchief");
    const ts = nowS() + 3600;
    const id = await created("hamlet", { message_id: messageId, scheduled_delivery_timestamp: ts });
    const [reminder, ...rest] = await list("hamlet");
    expect(rest).toEqual([]);
    expect(reminder).toMatchObject({
      reminder_id: id,
      type: "private",
      to: [uid("hamlet")],
      scheduled_delivery_timestamp: ts,
      failed: false,
      reminder_target_message_id: messageId,
    });
    expect(reminder!.content).toContain("You requested a reminder for the following message.");
    expect(reminder!.content).toContain(
      `@_**Othello, the Moor of Venice|${uid("othello")}** [said](`,
    );
    expect(reminder!.content).toContain(`/near/${messageId})`);
    expect(reminder!.content).toContain(`>reminded@${messageId}**:`);
    expect(reminder!.content).toMatch(/```quote\nRemember the handkerchief\n```$/);
    expect(reminder!.rendered_content).toContain("<blockquote>");
    // Reminders are not scheduled messages, and another user sees none of them.
    expect(
      (await expectSuccess(server.as("hamlet").GET("/scheduled_messages"))).scheduled_messages,
    ).toEqual([]);
    expect(await list("othello")).toEqual([]);
  });

  it("quotes a direct message with its recipients and the note", async () => {
    const messageId = await sendDirect("othello", [uid("hamlet")], "see you at noon");
    await created("hamlet", {
      message_id: messageId,
      scheduled_delivery_timestamp: nowS() + 60,
      note: "\n\nbring the skull  \n",
    });
    const [reminder] = await list("hamlet");
    expect(reminder!.content).toMatch(
      /^You requested a reminder for the following direct message\. Note:\n > bring the skull\n\n/,
    );
    expect(reminder!.content).toContain(`to @_**King Hamlet|${uid("hamlet")}**:`);
  });

  it("refuses in Zulip's order: past time, inaccessible message, long note", async () => {
    const hidden = await sendDirect("othello", [uid("iago")], "secret");
    const visible = await sendChannel("othello", "public");
    await expectError(
      create("hamlet", { message_id: hidden, scheduled_delivery_timestamp: nowS() - 1 }),
      400,
      "Scheduled delivery time must be in the future.",
    );
    await expectError(
      create("hamlet", { message_id: hidden, scheduled_delivery_timestamp: nowS() + 60 }),
      400,
      "Invalid message(s)",
    );
    await expectError(
      create("hamlet", { message_id: 2 ** 31 + 3, scheduled_delivery_timestamp: nowS() + 60 }),
      400,
      "Invalid message(s)",
    );
    await expectError(
      create("hamlet", {
        message_id: visible,
        scheduled_delivery_timestamp: nowS() + 60,
        note: "x".repeat(1001),
      }),
      400,
      "Maximum reminder note length: 1000 characters",
    );
    expect(await list("hamlet")).toEqual([]);
  });

  it("deletes the owner's reminder only, with a remove event", async () => {
    const messageId = await sendChannel("othello", "to forget");
    const id = await created("hamlet", {
      message_id: messageId,
      scheduled_delivery_timestamp: nowS() + 60,
    });
    const q = await queue("hamlet");
    await expectError(remove("othello", id), 404, "Reminder does not exist");
    await expectError(remove("hamlet", 2 ** 31 + 5), 404, "Reminder does not exist");
    // A scheduled message is not a reminder.
    const sm = (
      await expectSuccess(
        server.as("hamlet").POST("/scheduled_messages", {
          body: {
            type: "direct",
            to: [uid("othello")],
            content: "later",
            scheduled_delivery_timestamp: nowS() + 60,
          },
        }),
      )
    ).scheduled_message_id;
    await expectError(remove("hamlet", sm), 404, "Reminder does not exist");
    await expectSuccess(remove("hamlet", id));
    expect(await list("hamlet")).toEqual([]);
    expect(await events("hamlet", q)).toMatchObject([
      { type: "reminders", op: "remove", reminder_id: id },
    ]);
    await expectError(remove("hamlet", id), 404, "Reminder does not exist");
  });

  it("sends an add event and fills the register's reminders state", async () => {
    const messageId = await sendChannel("othello", "evented");
    const q = await queue("hamlet");
    const id = await created("hamlet", {
      message_id: messageId,
      scheduled_delivery_timestamp: nowS() + 60,
    });
    const listed = await list("hamlet");
    expect(await events("hamlet", q)).toEqual([
      { id: 0, type: "reminders", op: "add", reminders: listed },
    ]);
    expect(listed[0]!.reminder_id).toBe(id);
    const state = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["reminders"] } }),
    );
    expect(state.reminders).toEqual(listed);
  });

  it("takes a real client's form body", async () => {
    const messageId = await sendChannel("othello", "form body");
    const made = await realClient(server, "hamlet", "POST", "/reminders", {
      message_id: messageId,
      scheduled_delivery_timestamp: nowS() + 60,
      note: "a note with spaces",
    });
    expect(made).toMatchObject({ status: 200, body: { result: "success" } });
    const [reminder] = await list("hamlet");
    expect(reminder!.reminder_id).toBe(made.body.reminder_id);
    expect(reminder!.content).toContain(" > a note with spaces");
    const deleted = await realClient(
      server,
      "hamlet",
      "DELETE",
      `/reminders/${reminder!.reminder_id}`,
    );
    expect(deleted).toMatchObject({ status: 200, body: { result: "success" } });
  });
});

describe("delivery", () => {
  it("Notification Bot sends the reminder to its owner at its time, and it leaves the list", async () => {
    const messageId = await sendChannel("othello", "deliver me");
    const ts = nowS() + 120;
    const id = await created("hamlet", { message_id: messageId, scheduled_delivery_timestamp: ts });
    const content = (await list("hamlet"))[0]!.content;
    const q = await queue("hamlet", ["reminders", "message"]);
    expect(await server.delivery.deliverDue()).toEqual({ delivered: [], failed: [] });
    clock = ts * 1000 + 500;
    expect(await server.delivery.deliverDue()).toEqual({ delivered: [id], failed: [] });
    expect(await server.delivery.deliverDue()).toEqual({ delivered: [], failed: [] });
    expect(await list("hamlet")).toEqual([]);
    const stored = await server.db.scheduledMessage.findUniqueOrThrow({ where: { id } });
    expect(stored.delivered).toBe(true);
    const sent = await server.db.message.findUniqueOrThrow({
      where: { id: stored.deliveredMessageId! },
      include: { sender: true },
    });
    expect(sent.sender.deliveryEmail).toBe("notification-bot@zulip.com");
    expect(sent.content).toBe(content);
    const got = await events("hamlet", q);
    const message = got.find((e) => e.type === "message");
    expect(message?.message).toMatchObject({
      id: sent.id,
      type: "private",
      sender_email: "notification-bot@zulip.com",
    });
    expect(message!.message.content).toContain(`/near/${messageId}`);
    expect(got.filter((e) => e.type === "reminders")).toMatchObject([
      { type: "reminders", op: "remove", reminder_id: id },
    ]);
  });
});
