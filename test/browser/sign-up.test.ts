/**
 * The sign-up page in a real browser: headless Chromium (Debian's `chromium` package, driven by
 * puppeteer-core) opens an invitation link with JavaScript off, fills the form, gets the weak
 * password refused, submits again, reads the API key from the page, and the typed client then
 * authenticates with it. Skipped, saying why, when Chromium is not installed.
 */
import { describe, expect, it } from "vitest";
import { Role } from "../../server/lib/users/users.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { createInvitation } from "../helpers/invitations.ts";
import { CHROMIUM, chromiumInstalled } from "../helpers/browser.ts";
import { useBrowserSession } from "../helpers/browser-suite.ts";

if (!chromiumInstalled)
  console.warn(
    `test/browser/sign-up.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
  );

describe.skipIf(!chromiumInstalled)(`the sign-up page in headless Chromium (${CHROMIUM})`, () => {
  const s = useBrowserSession({ users: [] });
  const server = s.server;

  it("opens the emailed link, signs up without JavaScript, and the key it shows logs in", async () => {
    const invite = await createInvitation(server, {
      email: "browser@example.com",
      streamIds: [server.creds.channels.Verona!.stream_id],
      invitedAs: Role.MEMBER,
    });
    const page = await s.browser.newPage();
    await page.setJavaScriptEnabled(false);
    const opened = await page.goto(invite.url);
    expect(opened?.status()).toBe(200);
    expect(await page.$eval("#email", (e) => e.textContent)).toBe("browser@example.com");

    // A weak password: the server re-shows the form with the error and the name kept.
    await page.type("#full_name", "Browser User");
    await page.type("#password", "abc");
    await Promise.all([page.waitForNavigation(), page.click("#submit")]);
    expect(await page.$eval("#password-error", (e) => e.textContent)).toContain(
      "The password is too weak",
    );
    expect(await page.$eval("#full_name", (e) => (e as unknown as { value: string }).value)).toBe(
      "Browser User",
    );

    await page.type("#password", "a much better passphrase 9");
    const [answer] = await Promise.all([page.waitForNavigation(), page.click("#submit")]);
    expect(answer?.status()).toBe(200);
    const key = await page.$eval("#api-key", (e) => e.textContent ?? "");
    const email = await page.$eval("#api-email", (e) => e.textContent ?? "");
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    const zuliprc = decodeURIComponent(
      (await page.$eval("#zuliprc", (e) => e.getAttribute("href") ?? "")).replace(
        /^data:[^,]*,/,
        "",
      ),
    );
    expect(zuliprc).toBe(`[api]\nemail=${email}\nkey=${key}\nsite=http://zulip.testserver\n`);

    const me = await expectSuccess(server.client(email, key).GET("/users/me"));
    expect(me).toMatchObject({ full_name: "Browser User", role: Role.MEMBER });
    const { subscriptions } = await expectSuccess(
      server.client(email, key).GET("/users/me/subscriptions", { params: { query: {} } }),
    );
    expect(subscriptions.map((s) => s.name)).toEqual(["Verona"]);

    // Back in the browser, the link is spent: the page says so and shows no key.
    const again = await page.goto(invite.url);
    expect(again?.status()).toBe(404);
    expect(await page.content()).toContain("has expired or been deactivated");
    expect(await page.content()).not.toContain(key);
    await page.close();
  });
});
