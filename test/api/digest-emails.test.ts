/**
 * The weekly digest (zerver/tests/test_digest.py): on the organization's digest day, users
 * inactive for five days get Zulip's digest (hot conversations, new channels) through the outbox,
 * as it reaches a real SMTP server on loopback; each user once a day with two loops racing; the
 * digest's unsubscribe link turns enable_digest_emails off; content hidden, the digest counts.
 */
import type { ParsedMail } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DigestEmails } from "../../server/workers/digest-emails.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { sleep } from "../helpers/processes.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.ts";

let smtp: SmtpSink;
let server: TestServer;
beforeAll(async () => {
  smtp = await startSmtpSink();
  server = await startTestServer(
    { emailHost: "127.0.0.1", emailPort: smtp.port },
    // Digest days start at midnight here, so that the test runs whatever the hour.
    { digestEmails: "manual", digestHourUtc: 0 },
  );
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const user = (name: string) => server.creds.users[name]!;
/** Zulip's weekday numbering (Monday 0) of today, by the UTC clock the loop reads. */
const today = () => (new Date().getUTCDay() + 6) % 7;
const realmSettings = (body: Record<string, unknown>) =>
  expectSuccess(server.as("iago").PATCH("/realm", { body: body as never }));
const post = (from: string, topic: string, content: string) =>
  expectSuccess(
    server.as(from).POST("/messages", { body: { type: "stream", to: "Verona", topic, content } }),
  );
const mailTo = (name: string) =>
  smtp.messages.filter(
    (m) => m.to && "value" in m.to && m.to.value[0]?.address === user(name).email,
  );
const unsubscribeLink = (mail: ParsedMail) =>
  mail.headerLines
    .find((h) => h.key === "list-unsubscribe")!
    .line.slice("list-unsubscribe".length + 1)
    .trim()
    .slice(1, -1);
/** Lets the outbox send what the digest loops queued. */
async function sendQueued() {
  await server.emailDelivery.deliverDue();
  await sleep(600);
}

describe("digest emails", () => {
  it("are off until the organization turns them on, and go out only on its digest day", async () => {
    expect(await server.digestEmails.deliverDue()).toEqual({ claimed: [], emailed: [] });
    await realmSettings({ digest_emails_enabled: true, digest_weekday: (today() + 1) % 7 });
    expect(await server.digestEmails.deliverDue()).toEqual({ claimed: [], emailed: [] });
    const { realm_digest_emails_enabled, realm_digest_weekday, settings_send_digest_emails } =
      await expectSuccess(server.as("hamlet").POST("/register", { body: {} }));
    expect([
      realm_digest_emails_enabled,
      realm_digest_weekday,
      settings_send_digest_emails,
    ]).toEqual([true, (today() + 1) % 7, true]);
  });

  it("an inactive user gets the hot conversations of their channels and the new channels, once, with two loops racing; the unsubscribe link turns digests off", async () => {
    // The development organization's channels are a month old: not new.
    await server.db.stream.updateMany({
      where: { realmId: server.creds.realm.id },
      data: { dateCreated: new Date(Date.now() - 30 * 86_400_000) },
    });
    // Hamlet has been active: no digest for him.
    await expectSuccess(
      server.as("hamlet").POST("/users/me/presence", { body: { status: "active" } }),
    );
    await post("hamlet", "harvest", "The grapes are **ripe**");
    await post("othello", "harvest", "Bring baskets");
    await post("cordelia", "harvest", "And carts");
    await post("hamlet", "harvest", "Tomorrow at dawn");
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name: "harvest festival" }] },
      }),
    );
    await expectSuccess(
      server.as("iago").POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name: "secret cellar" }], invite_only: true },
      }),
    );
    await realmSettings({ digest_weekday: today() });

    // Two processes' loops at once: each user is claimed by one of them.
    const other = new DigestEmails(server.deps, { intervalMs: 3_600_000, hourUtc: 0 });
    const [a, b] = await Promise.all([server.digestEmails.deliverDue(), other.deliverDue()]);
    await other.stop();
    const claimed = [...a.claimed, ...b.claimed].sort((x, y) => x - y);
    const humans = Object.entries(server.creds.users)
      .filter(([name]) => name !== "hamlet")
      .map(([, u]) => u.user_id)
      .sort((x, y) => x - y);
    expect(claimed).toEqual(humans);
    const emailed = [...a.emailed, ...b.emailed];
    expect(new Set(emailed).size).toBe(emailed.length);
    expect(emailed).toContain(user("othello").user_id);
    expect(emailed).not.toContain(user("hamlet").user_id);
    // The day is done: nobody is looked at again.
    expect(await server.digestEmails.deliverDue()).toEqual({ claimed: [], emailed: [] });
    expect(
      await server.db.realmAuditLog.count({
        where: { eventType: 133, modifiedUserId: { in: emailed } },
      }),
    ).toBe(emailed.length);

    await sendQueued();
    expect(mailTo("hamlet")).toEqual([]);
    const mails = mailTo("othello");
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.subject).toBe("Zulip digest for Zulip Dev");
    expect(mail.from?.value).toEqual([
      { name: "Zulip digest", address: "noreply@zulip.testserver" },
    ]);
    const text = mail.text!;
    // The most diverse topic first, its first two messages, and who wrote the rest.
    expect(text).toContain(
      "Verona > harvest\nKing Hamlet:\n> The grapes are **ripe**\nOthello, the Moor of Venice:\n> Bring baskets\n+ 2 more messages by Cordelia, Lear's daughter, King Hamlet and Othello, the Moor of Venice.",
    );
    expect(text.indexOf("Verona > harvest")).toBeLessThan(text.indexOf("Verona > greetings"));
    expect(mail.html).toContain("<strong>ripe</strong>");
    // A public channel created since is listed; a private one is not.
    expect(text).toContain("** New channels **\n    harvest festival.");
    expect(text).not.toContain("secret cellar");
    expect(text).toContain("Log in to Zulip to catch up: http://zulip.testserver.");
    // A guest sees only new web-public channels.
    const guest = mailTo("polonius");
    expect(guest).toHaveLength(1);
    expect(guest[0]!.text).toContain("Verona > harvest");
    expect(guest[0]!.text).not.toContain("harvest festival");

    const link = unsubscribeLink(mail);
    expect(link).toMatch(
      new RegExp(
        `^http://zulip\\.testserver/accounts/unsubscribe/digest/${user("othello").user_id}\\.`,
      ),
    );
    expect(text).toContain(`Unsubscribe from digest emails:\n\n${link}`);
    const page = await fetch(`${server.baseUrl}${new URL(link).pathname}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("You've successfully unsubscribed from digest emails");
    const othello = await server.db.userProfile.findUniqueOrThrow({
      where: { id: user("othello").user_id },
    });
    expect(othello.enableDigestEmails).toBe(false);
    // The same token does not unsubscribe from another kind of email.
    const forged = await fetch(
      `${server.baseUrl}${new URL(link).pathname.replace("/digest/", "/missed_messages/")}`,
    );
    expect(forged.status).toBe(404);
  });

  it("next week: digests off are not sent; hidden content is counted instead; nothing new, nothing sent", async () => {
    // A week later, as far as the loop can tell: the day's claims are older than the day.
    await server.db.digestEmailRecord.updateMany({
      data: { lastDigestAt: new Date(Date.now() - 7 * 86_400_000) },
    });
    smtp.messages.length = 0;
    await expectSuccess(
      server.as("cordelia").PATCH("/settings", {
        body: { message_content_in_email_notifications: false },
      }),
    );
    // Nothing new for Prospero: he muted the channel with the news.
    const verona = server.creds.channels.Verona!.stream_id;
    await expectSuccess(
      server.as("prospero").POST("/users/me/subscriptions/properties", {
        body: { subscription_data: [{ stream_id: verona, property: "is_muted", value: true }] },
      }),
    );
    await server.db.stream.updateMany({
      where: { realmId: server.creds.realm.id },
      data: { dateCreated: new Date(Date.now() - 30 * 86_400_000) },
    });
    const report = await server.digestEmails.deliverDue();
    expect(report.claimed).not.toContain(user("othello").user_id);
    expect(report.claimed).toContain(user("prospero").user_id);
    expect(report.emailed).not.toContain(user("prospero").user_id);
    expect(report.emailed).toContain(user("cordelia").user_id);
    await sendQueued();
    expect(mailTo("othello")).toEqual([]);
    expect(mailTo("prospero")).toEqual([]);
    const [hidden] = mailTo("cordelia");
    expect(hidden!.text).toMatch(/You have \d+ new messages in Zulip Dev\./);
    expect(hidden!.text).toContain(
      "This email does not include message content because you have chosen to hide message content in email notifications.",
    );
    expect(hidden!.text).not.toContain("The grapes are");
  });
});
