/**
 * Missed-message emails (zerver/tests/test_email_notifications.py, test_message_notification_emails
 * in test_notification_data.py and test_missed_message_worker.py): the decision in the send, the
 * batching per user, the email as it reaches a real SMTP server on loopback (smtp-server, parsed
 * with mailparser), and the unsubscribe link.
 */
import type { ParsedMail } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess } from "../helpers/expect.ts";
import { sleep } from "../helpers/processes.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.ts";

let smtp: SmtpSink;
let server: TestServer;
beforeAll(async () => {
  smtp = await startSmtpSink();
  server = await startTestServer({ emailHost: "127.0.0.1", emailPort: smtp.port });
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const user = (name: string) => server.creds.users[name]!;
const dm = (from: string, to: string[], content: string) =>
  expectSuccess(
    server.as(from).POST("/messages", {
      body: { type: "direct", to: JSON.stringify(to.map((n) => user(n).user_id)), content },
    }),
  );
const post = (from: string, topic: string, content: string) =>
  expectSuccess(
    server.as(from).POST("/messages", {
      body: { type: "stream", to: "Verona", topic, content },
    }),
  );
const batching = (name: string, seconds: number) =>
  expectSuccess(
    server.as(name).PATCH("/settings", {
      body: { email_notifications_batching_period_seconds: seconds },
    }),
  );
const pending = (name: string) =>
  server.db.scheduledMessageNotificationEmail.findMany({
    where: { userProfileId: user(name).user_id },
    orderBy: { id: "asc" },
  });
const mailTo = (name: string) =>
  smtp.messages.filter(
    (m) => m.to && "value" in m.to && m.to.value[0]?.address === user(name).email,
  );
/** A header as sent (mailparser folds List-* headers into one parsed "list" header). */
const header = (mail: ParsedMail, name: string) =>
  mail.headerLines
    .find((h) => h.key === name)
    ?.line.slice(name.length + 1)
    .trim();
/** The link in List-Unsubscribe: `<url>`. */
const unsubscribeLink = (mail: ParsedMail) => header(mail, "list-unsubscribe")!.slice(1, -1);
/** Runs the due rows now, then lets the outbox send; the emails to `name` that arrived. */
async function settle(name: string, waitMs = 600): Promise<ParsedMail[]> {
  await server.missedMessageEmails.deliverDue();
  await server.emailDelivery.deliverDue();
  await sleep(waitMs);
  return mailTo(name);
}

describe("missed-message emails", () => {
  it("a direct message to a user who is away arrives by email after their batching period: subject, sender, content in both parts, links, List-Unsubscribe", async () => {
    await batching("othello", 1);
    const { id } = await dm("hamlet", ["othello"], "Are you **there**?\nSecond line.");
    const [row] = await pending("othello");
    expect(row).toMatchObject({ messageId: id, trigger: "private_message" });
    // Due a batching period after the message, and not sent before.
    expect(row!.scheduledTimestamp.getTime()).toBeGreaterThan(Date.now() - 1000);
    const [mail] = await smtp.waitFor(1, 10_000);
    expect(mail!.to).toMatchObject({ value: [{ address: user("othello").email }] });
    expect(mail!.from?.value).toEqual([
      { name: "Zulip notifications", address: "noreply@zulip.testserver" },
    ]);
    expect(mail!.subject).toBe("DMs with King Hamlet");
    expect(mail!.text).toContain("You and King Hamlet");
    expect(mail!.text).toContain("> Are you **there**?\n> Second line.");
    expect(mail!.html).toContain("<strong>there</strong>");
    expect(mail!.text).toContain(
      `http://zulip.testserver/#narrow/dm/${user("hamlet").user_id}-King-Hamlet`,
    );
    expect(mail!.text).toContain("You are receiving this because you received a direct message.");
    const unsubscribe = unsubscribeLink(mail!);
    expect(unsubscribe).toMatch(
      new RegExp(
        `^http://zulip\\.testserver/accounts/unsubscribe/missed_messages/${user("othello").user_id}\\.`,
      ),
    );
    expect(header(mail!, "list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    expect(mail!.text).toContain(unsubscribe);
    // The row is gone: emailed once.
    expect(await pending("othello")).toEqual([]);
    expect(await server.missedMessageEmails.deliverDue()).toEqual({ users: [], emails: 0 });
  });

  it("three direct messages within the batching period make one email, in order", async () => {
    smtp.messages.length = 0;
    await batching("cordelia", 2);
    for (const text of ["First of three", "Second of three", "Third of three"])
      await dm("hamlet", ["cordelia"], text);
    const rows = await pending("cordelia");
    expect(rows).toHaveLength(3);
    // One due time for the user's rows: the first row's.
    expect(new Set(rows.map((r) => r.scheduledTimestamp.getTime())).size).toBe(1);
    await smtp.waitFor(1, 10_000);
    await sleep(500);
    const mails = mailTo("cordelia");
    expect(mails).toHaveLength(1);
    const text = mails[0]!.text!;
    expect(text.indexOf("First of three")).toBeLessThan(text.indexOf("Second of three"));
    expect(text.indexOf("Second of three")).toBeLessThan(text.indexOf("Third of three"));
  });

  it("nothing is sent for a direct message read within the batching period", async () => {
    smtp.messages.length = 0;
    await batching("iago", 1);
    const { id } = await dm("hamlet", ["iago"], "Read me before the email");
    expect(await pending("iago")).toHaveLength(1);
    await expectSuccess(
      server.as("iago").POST("/messages/flags", {
        body: { messages: [id], op: "add", flag: "read" },
      }),
    );
    await sleep(1200);
    expect(await settle("iago")).toEqual([]);
    expect(await pending("iago")).toEqual([]);
  });

  it("a group direct message names the group in the subject; a mention in a channel names the channel and topic", async () => {
    smtp.messages.length = 0;
    await batching("prospero", 1);
    await dm("hamlet", ["prospero", "othello"], "To the three of us");
    await post("hamlet", "plans", "@**Prospero from The Tempest** have a look");
    await sleep(1200);
    const mails = await settle("prospero");
    expect(mails.map((m) => m.subject).sort()).toEqual(
      ["#Verona > plans", "Group DMs with King Hamlet and Othello, the Moor of Venice"].sort(),
    );
    const mention = mails.find((m) => m.subject === "#Verona > plans")!;
    expect(mention.text).toContain("You are receiving this because you were personally mentioned.");
    expect(mention.text).toContain("King Hamlet:\n> @**Prospero from The Tempest** have a look");
  });

  it("a mention through a user group names the group in the footer (mentioned_user_group_name); mentioned by name as well, the mention is personal", async () => {
    smtp.messages.length = 0;
    await batching("prospero", 1);
    const { group_id } = await expectSuccess(
      server.as("hamlet").POST("/user_groups/create", {
        body: {
          name: "tempest crew",
          description: "",
          members: [user("prospero").user_id, user("shiva").user_id],
        },
      }),
    );
    const { id: grouped } = await post("hamlet", "storm", "@*tempest crew* to the ship");
    const { id: named } = await post(
      "hamlet",
      "calm",
      "@**Prospero from The Tempest** and @*tempest crew*: all is well",
    );
    expect(
      (await pending("prospero")).map((r) => [r.messageId, r.trigger, r.mentionedUserGroupId]),
    ).toEqual([
      [grouped, "mentioned", group_id],
      [named, "mentioned", null],
    ]);
    await sleep(1200);
    const mails = await settle("prospero");
    const storm = mails.find((m) => m.subject === "#Verona > storm")!;
    expect(storm.text).toContain("You are receiving this because @tempest crew was mentioned.");
    expect(storm.html).toContain("You are receiving this because @tempest crew was mentioned.");
    const calm = mails.find((m) => m.subject === "#Verona > calm")!;
    expect(calm.text).toContain("You are receiving this because you were personally mentioned.");
    expect(calm.text).not.toContain("tempest crew was mentioned");
  });

  it("a channel's email notifications follow the subscription's setting, and a muted topic sends nothing", async () => {
    smtp.messages.length = 0;
    await batching("othello", 1);
    const verona = server.creds.channels.Verona!.stream_id;
    await expectSuccess(
      server.as("othello").POST("/users/me/subscriptions/properties", {
        body: {
          subscription_data: [{ stream_id: verona, property: "email_notifications", value: true }],
        },
      }),
    );
    await expectSuccess(
      server.as("othello").POST("/user_topics", {
        body: { stream_id: verona, topic: "quiet", visibility_policy: 1 },
      }),
    );
    await post("hamlet", "quiet", "Nobody hears this");
    expect(await pending("othello")).toEqual([]);
    await post("hamlet", "loud", "Everybody hears this");
    expect(await pending("othello")).toMatchObject([{ trigger: "stream_email_notify" }]);
    await sleep(1200);
    const [mail] = await settle("othello");
    expect(mail!.subject).toBe("#Verona > loud");
    expect(mail!.text).toContain(
      "You are receiving this because you have email notifications enabled for #Verona.",
    );
  });

  it("nobody is emailed who is active: an event queue and presence in the last 140 seconds", async () => {
    await expectSuccess(
      server.as("aaron").POST("/register", { body: { event_types: ["message"] } }),
    );
    await expectSuccess(
      server.as("aaron").POST("/users/me/presence", { body: { status: "active" } }),
    );
    await dm("hamlet", ["aaron"], "You are here");
    expect(await pending("aaron")).toEqual([]);
    // A user who muted the sender, and the sender to themselves: never.
    await expectSuccess(
      server.as("iago").POST("/users/me/muted_users/{muted_user_id}", {
        params: { path: { muted_user_id: user("hamlet").user_id } },
      }),
    );
    const muted = await dm("hamlet", ["iago"], "Muted");
    const self = await dm("hamlet", ["hamlet"], "Note to self");
    const rows = await server.db.scheduledMessageNotificationEmail.findMany({
      where: { messageId: { in: [muted.id, self.id] } },
    });
    expect(rows).toEqual([]);
  });

  it("the unsubscribe link turns missed-message emails off without logging in; a changed link is refused", async () => {
    smtp.messages.length = 0;
    await batching("othello", 1);
    await dm("hamlet", ["othello"], "One more");
    const [mail] = await smtp.waitFor(1, 10_000);
    const link = unsubscribeLink(mail!);
    const path = new URL(link).pathname;

    const forged = await fetch(
      `${server.baseUrl}${path.replace(/.$/, (c) => (c === "A" ? "B" : "A"))}`,
    );
    expect(forged.status).toBe(404);
    expect(await forged.text()).toContain("The confirmation link is malformed.");
    const other = await fetch(`${server.baseUrl}${path.replace("missed_messages", "digest")}`);
    expect(other.status).toBe(404);

    const page = await fetch(`${server.baseUrl}${path}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(
      "You've successfully unsubscribed from missed messages emails",
    );
    const stored = await server.db.userProfile.findUniqueOrThrow({
      where: { id: user("othello").user_id },
    });
    expect(stored.enableOfflineEmailNotifications).toBe(false);
    // Mail clients' one-click POST (RFC 8058) works the same, and again.
    const oneClick = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(oneClick.status).toBe(200);
    await dm("hamlet", ["othello"], "Not emailed");
    expect(await pending("othello")).toEqual([]);
  });
});
