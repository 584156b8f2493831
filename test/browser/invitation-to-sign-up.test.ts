/**
 * The whole path a new member takes, with every part real: an administrator invites by email
 * through the typed client; the invitation reaches an SMTP server on loopback (smtp-server,
 * parsed with mailparser); headless Chromium opens the link exactly as the email gives it
 * (http://zulip.testserver/…, resolved to the test server by Chromium's host rules), fills the
 * form and reads the new API key from the page; the key then authenticates a request, and the
 * inviter has Notification Bot's notice. Skipped, saying why, when Chromium is not installed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../server/lib/users/users.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { CHROMIUM, chromiumInstalled } from "../helpers/browser.ts";
import { useBrowserSession } from "../helpers/browser-suite.ts";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp.ts";

if (!chromiumInstalled)
  console.warn(
    `test/browser/invitation-to-sign-up.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
  );

describe.skipIf(!chromiumInstalled)("from invitation to authenticated request", () => {
  let smtp: SmtpSink;
  beforeAll(async () => {
    smtp = await startSmtpSink();
  });
  afterAll(() => smtp?.close());
  const s = useBrowserSession({
    users: [],
    server: () => ({ emailHost: "127.0.0.1", emailPort: smtp.port }),
    // The organization's own host name, as the emailed link has it, reaches the test server.
    launchArgs: (baseUrl) => [
      `--host-resolver-rules=MAP zulip.testserver 127.0.0.1:${new URL(baseUrl).port}`,
    ],
  });
  const server = s.server;

  it("invite, email, sign up in the browser, then use the API with the key", async () => {
    const verona = server.creds.channels.Verona!.stream_id;
    await expectSuccess(
      server.as("iago").POST("/invites", {
        body: {
          invitee_emails: "Newcomer <newcomer@example.com>",
          stream_ids: [verona],
          invite_as: Role.MODERATOR,
          notify_referrer_on_join: true,
        },
      }),
    );

    const [mail] = await smtp.waitFor(1);
    expect(mail!.to).toMatchObject({ value: [{ address: "newcomer@example.com" }] });
    expect(mail!.from?.value[0]?.address).toBe("noreply@zulip.testserver");
    const link = /http:\/\/zulip\.testserver\/join\/[a-z2-7]{24}\//.exec(mail!.text ?? "")?.[0];
    expect(link, "the plain-text part carries the link").toBeDefined();
    expect(mail!.html || "").toContain(link!);

    const page = await s.browser.newPage();
    await page.setJavaScriptEnabled(false);
    const opened = await page.goto(link!);
    expect(opened?.status()).toBe(200);
    await page.type("#full_name", "New Comer");
    await page.type("#password", "a sturdy passphrase for the test 7");
    const [created] = await Promise.all([page.waitForNavigation(), page.click("#submit")]);
    expect(created?.status()).toBe(200);
    const email = await page.$eval("#api-email", (e) => e.textContent ?? "");
    const key = await page.$eval("#api-key", (e) => e.textContent ?? "");
    await page.close();

    const newcomer = server.client(email, key);
    const me = await expectSuccess(newcomer.GET("/users/me"));
    expect(me).toMatchObject({ full_name: "New Comer", role: Role.MODERATOR });
    const { subscriptions } = await expectSuccess(
      newcomer.GET("/users/me/subscriptions", { params: { query: {} } }),
    );
    expect(subscriptions.map((s) => s.stream_id)).toEqual([verona]);
    // The key works for writing too: the new member posts where they were invited.
    await expectSuccess(
      newcomer.POST("/messages", {
        body: { type: "stream", to: String(verona), topic: "hello", content: "Glad to be here" },
      }),
    );

    const { messages } = await expectSuccess(
      server.as("iago").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 5,
            num_after: 0,
            narrow: [{ operator: "sender", operand: "notification-bot@zulip.com" }],
          },
        },
      }),
    );
    expect(messages.at(-1)?.content).toContain("accepted your invitation to join Zulip!");
  });
});
