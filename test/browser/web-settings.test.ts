/**
 * Personal settings in the web app (issue 33), King Hamlet and Othello each in a browser context:
 * a new name reaches Othello's feed and user list; the dark theme is applied, saved and kept
 * across a reload; the 24-hour time changes the feed's times; the password change says Zulip's
 * error for a wrong old password and lets a fresh login use the new one; a notification setting
 * and the privacy ones are saved; alert words are added and removed; a muted user is unmuted;
 * the API key is shown, a zuliprc downloaded and the key regenerated (the old one then fails).
 * axe-core finds no serious or critical violation on any section, light or dark; screenshots of
 * the sections go to .tmp/screenshots/.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { beforeAll, expect, it } from "vitest";
import { createZulipClient } from "../../client/src/index.ts";
import {
  articleWith,
  byRole,
  eventually,
  logIn,
  screenshot,
  waitForNoRole,
} from "../helpers/browser.ts";
import { seriousAxeViolations } from "../helpers/browser-axe.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

const SECTIONS = [
  ["profile", "Profile"],
  ["account-and-privacy", "Account & privacy"],
  ["preferences", "Preferences"],
  ["notifications", "Notifications"],
  ["muted-users", "Muted users"],
  ["alert-words", "Alert words"],
] as const;

describePages("personal settings in the web app", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is injected as an inline script, which the page's CSP forbids.
    bypassCSP: ["hamlet"],
  });
  let browser: Browser;
  const server = s.server;
  let hamlet: Page;
  let othello: Page;
  let password: string;

  async function userSettings(): Promise<Record<string, unknown>> {
    const r = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["user_settings"] } }),
    );
    return (r as unknown as { user_settings: Record<string, unknown> }).user_settings;
  }

  async function openSection(page: Page, key: string, title: string) {
    await page.evaluate((k) => (location.hash = `#settings/${k}`), key);
    await byRole(page, "region", title);
  }

  beforeAll(() => {
    password = server.creds.users.hamlet!.password!;
    browser = s.browser;
    hamlet = s.page("hamlet");
    othello = s.page("othello");
  });

  it("a gear in the top bar opens the settings; a new name reaches Othello's feed and user list", async () => {
    const verona = server.creds.channels.Verona!.stream_id;
    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: { type: "stream", to: verona, topic: "settings", content: "Before the rename" },
      }),
    );
    await articleWith(othello, "Before the rename");
    await (await byRole(hamlet, "link", "Settings")).click();
    await byRole(hamlet, "region", "Profile");
    expect(new URL(hamlet.url()).hash).toBe("#settings/profile");
    const name = await byRole(hamlet, "textbox", "Name");
    await name.click({ count: 3 });
    await name.type("Prince Hamlet");
    await (await byRole(hamlet, "button", "Save name")).click();
    await byRole(othello, "link", "Prince Hamlet, Active");
    const row = await articleWith(othello, "Before the rename");
    expect(await row.evaluate((a) => a.getAttribute("aria-label"))).toMatch(/^Prince Hamlet, /);
    const me = await expectSuccess(server.as("hamlet").GET("/users/me"));
    expect(me.full_name).toBe("Prince Hamlet");
    // Hamlet's own top bar follows.
    await byRole(hamlet, "link", "Prince Hamlet (you), Active");
  });

  it("the dark theme is applied, saved on the server, and kept across a reload", async () => {
    await openSection(hamlet, "preferences", "Preferences");
    await (await byRole(hamlet, "combobox", "Theme")).select("2");
    await hamlet.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    await eventually(async () => (await userSettings()).color_scheme === 2, "color_scheme 2");
    await hamlet.reload();
    await byRole(hamlet, "region", "Preferences");
    await hamlet.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    await screenshot(hamlet, "settings-preferences-dark");
    await (await byRole(hamlet, "combobox", "Theme")).select("3");
    await hamlet.waitForFunction(() => document.documentElement.dataset.theme === "light");
    // High contrast: a data attribute the CSS variables follow.
    await (await byRole(hamlet, "checkbox", "High contrast mode")).click();
    await hamlet.waitForFunction(() => document.documentElement.dataset.contrast === "high");
    await eventually(async () => (await userSettings()).high_contrast_mode === true, "contrast");
    await (await byRole(hamlet, "checkbox", "High contrast mode")).click();
    await hamlet.waitForFunction(() => document.documentElement.dataset.contrast === undefined);
  });

  it("the 24-hour time changes the feed's times", async () => {
    const when = await othello.$eval(
      "[role=feed] article:last-of-type",
      (a) => a.getAttribute("aria-label") ?? "",
    );
    expect(when).toMatch(/(AM|PM)$/);
    await openSection(hamlet, "preferences", "Preferences");
    // Othello's own setting; Hamlet's is checked through his page's feed.
    await (await byRole(hamlet, "combobox", "Time format")).select("true");
    await eventually(
      async () => (await userSettings()).twenty_four_hour_time === true,
      "twenty_four_hour_time",
    );
    await hamlet.evaluate(() => (location.hash = "#feed"));
    const row = await articleWith(hamlet, "Before the rename");
    await eventually(
      async () =>
        /, \d{1,2}:\d\d$/.test((await row.evaluate((a) => a.getAttribute("aria-label"))) ?? ""),
      "a 24-hour time",
    );
  });

  it("a notification setting is saved on change, with a Saved status", async () => {
    await openSection(hamlet, "notifications", "Notifications");
    const before = (await userSettings()).enable_stream_desktop_notifications;
    await (
      await byRole(hamlet, "checkbox", "Visual desktop notifications for channel messages")
    ).click();
    await byRole(hamlet, "status", "Saved");
    await eventually(
      async () => (await userSettings()).enable_stream_desktop_notifications === !before,
      "enable_stream_desktop_notifications",
    );
    await (await byRole(hamlet, "combobox", "Notification sound")).select("none");
    await eventually(
      async () => (await userSettings()).notification_sound === "none",
      "notification_sound",
    );
  });

  it("a privacy setting is saved", async () => {
    await openSection(hamlet, "account-and-privacy", "Account & privacy");
    const box = await byRole(hamlet, "checkbox", "Display my availability to other users");
    const was = await box.evaluate((e) => (e as HTMLInputElement).checked);
    await box.click();
    await eventually(
      async () => (await userSettings()).presence_enabled === !was,
      "presence_enabled",
    );
    await box.click();
    await eventually(async () => (await userSettings()).presence_enabled === was, "back");
  });

  it("alert words are added and removed", async () => {
    await openSection(hamlet, "alert-words", "Alert words");
    await (await byRole(hamlet, "textbox", "New alert word")).type("Elsinore");
    await (await byRole(hamlet, "button", "Add alert word")).click();
    await byRole(hamlet, "button", "Delete alert word Elsinore");
    const words = async () =>
      (await expectSuccess(server.as("hamlet").GET("/users/me/alert_words"))).alert_words;
    expect(await words()).toContain("Elsinore");
    await (await byRole(hamlet, "button", "Delete alert word Elsinore")).click();
    await waitForNoRole(hamlet, "button", "Delete alert word Elsinore");
    expect(await words()).not.toContain("Elsinore");
  });

  it("a muted user is listed and unmuted", async () => {
    const othelloId = server.creds.users.othello!.user_id;
    await expectSuccess(
      server.as("hamlet").POST("/users/me/muted_users/{muted_user_id}", {
        params: { path: { muted_user_id: othelloId } },
      }),
    );
    await openSection(hamlet, "muted-users", "Muted users");
    await (await byRole(hamlet, "button", "Unmute Othello, the Moor of Venice")).click();
    await waitForNoRole(hamlet, "button", "Unmute Othello, the Moor of Venice");
    const r = await expectSuccess(
      server.as("hamlet").POST("/register", { body: { fetch_event_types: ["muted_users"] } }),
    );
    expect((r as unknown as { muted_users: unknown[] }).muted_users).toEqual([]);
  });

  for (const theme of ["light", "dark"] as const)
    it(`axe-core finds no serious or critical violation on any section (${theme})`, async () => {
      for (const [key, title] of SECTIONS) {
        await openSection(hamlet, key, title);
        await hamlet.evaluate((th) => (document.documentElement.dataset.theme = th), theme);
        // The page (the middle column); the rest of the app is audited by web-security.test.ts.
        expect(await seriousAxeViolations(hamlet, `#settings/${key} (${theme})`, "main")).toEqual(
          [],
        );
        if (key === "profile" || key === "notifications" || key === "account-and-privacy")
          await screenshot(hamlet, `settings-${key}-${theme}`);
      }
      await openSection(hamlet, "account-and-privacy", "Account & privacy");
      await (await byRole(hamlet, "button", "Change your password")).click();
      await byRole(hamlet, "dialog", "Change password");
      expect(
        await seriousAxeViolations(hamlet, `the Change password dialog (${theme})`, "dialog"),
      ).toEqual([]);
      await screenshot(hamlet, `settings-change-password-${theme}`);
      await (await byRole(hamlet, "button", "Cancel")).click();
      await waitForNoRole(hamlet, "dialog", "Change password");
      await hamlet.evaluate(() => (document.documentElement.dataset.theme = "light"));
    }, 90_000);

  it("an uploaded avatar shows at once in Hamlet's settings and Othello's user list (its user card button); deleting it asks first", async () => {
    await openSection(hamlet, "profile", "Profile");
    const picture = async (page: Page) =>
      (await byRole(page, "image", "Your avatar")).evaluate((i) => (i as HTMLImageElement).src);
    const inBuddyList = async () =>
      (await byRole(othello, "button", "Prince Hamlet: user card")).$$eval(
        "img",
        (imgs) => imgs[0]?.src ?? "",
      );
    const before = await picture(hamlet);
    expect(before).not.toContain("/user_avatars/");
    const dir = mkdtempSync(join(tmpdir(), "avatar-"));
    const file = join(dir, "hamlet.png");
    writeFileSync(file, PNG);
    // The button opens the file input's chooser, which takes the file.
    const [chooser] = await Promise.all([
      hamlet.waitForFileChooser(),
      (await byRole(hamlet, "button", "Upload new avatar")).click(),
    ]);
    await chooser.accept([file]);
    rmSync(dir, { recursive: true, force: true });
    await hamlet.waitForFunction(
      () =>
        [...document.querySelectorAll("img")].some(
          (i) => i.alt === "Your avatar" && i.src.includes("/user_avatars/"),
        ),
      { timeout: 5000 },
    );
    const mine = await expectSuccess(server.as("hamlet").GET("/users/me"));
    expect(mine.avatar_url).toMatch(/^\/user_avatars\//);
    expect(await picture(hamlet)).toBe(server.baseUrl + mine.avatar_url);
    await eventually(
      async () => (await inBuddyList()) === server.baseUrl + mine.avatar_url!,
      "Othello's copy",
    );
    const shown = await hamlet.$eval(
      '::-p-aria([name="Your avatar"][role=img])',
      (i) => (i as HTMLImageElement).naturalWidth,
    );
    // Stored as Zulip stores it: resized to 100×100, whatever the upload's size.
    expect(shown).toBe(100);
    await screenshot(hamlet, "settings-profile-avatar");
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    await screenshot(hamlet, "settings-profile-avatar-dark");
    expect(
      await seriousAxeViolations(hamlet, "the avatar settings (dark)", ".settings-avatar"),
    ).toEqual([]);
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "light"));

    await (await byRole(hamlet, "button", "Delete avatar")).click();
    await byRole(hamlet, "dialog", "Delete avatar");
    expect(await seriousAxeViolations(hamlet, "the delete avatar dialog", "dialog")).toEqual([]);
    await (await byRole(hamlet, "button", "Confirm")).click();
    await eventually(
      async () => !(await picture(hamlet)).includes("/user_avatars/"),
      "the Gravatar",
    );
    await eventually(
      async () => !(await inBuddyList()).includes("/user_avatars/"),
      "Othello's Gravatar",
    );
    expect((await expectSuccess(server.as("hamlet").GET("/users/me"))).avatar_url).toMatch(
      /gravatar\.com/,
    );
    await waitForNoRole(hamlet, "button", "Delete avatar");
  });

  it("the password change: Zulip's error for a wrong old password; the new one logs in", async () => {
    await openSection(hamlet, "account-and-privacy", "Account & privacy");
    await (await byRole(hamlet, "button", "Change your password")).click();
    await byRole(hamlet, "dialog", "Change password");
    await (await byRole(hamlet, "textbox", "Old password")).type("not my password");
    await (await byRole(hamlet, "textbox", "New password")).type("a new password for Hamlet");
    await (await byRole(hamlet, "button", "Change")).click();
    await byRole(hamlet, "alert", "Wrong password!", 15_000);
    const old = await byRole(hamlet, "textbox", "Old password");
    await old.click({ count: 3 });
    await old.type(password);
    await (await byRole(hamlet, "button", "Change")).click();
    await waitForNoRole(hamlet, "dialog", "Change password", 15_000);
    const fresh = await (await browser.createBrowserContext()).newPage();
    await logIn(fresh, server.baseUrl, "hamlet@zulip.com", "a new password for Hamlet");
    await fresh.browserContext().close();
    password = "a new password for Hamlet";
  });

  it("the API key: shown after the password, a zuliprc downloaded, regenerated (the old one fails)", async () => {
    await openSection(hamlet, "account-and-privacy", "Account & privacy");
    await (await byRole(hamlet, "button", "Manage your API key")).click();
    await byRole(hamlet, "dialog", "Manage your API key");
    await (await byRole(hamlet, "textbox", "Your password")).type(password);
    await (await byRole(hamlet, "button", "Get API key")).click();
    const keyText = async () =>
      (await byRole(hamlet, "textbox", "Your API key")).evaluate(
        (e) => (e as HTMLInputElement).value,
      );
    await byRole(hamlet, "textbox", "Your API key", 15_000);
    const oldKey = await keyText();
    expect(oldKey).toBe(server.creds.users.hamlet!.api_key);
    expect(await seriousAxeViolations(hamlet, "the API key dialog", "dialog")).toEqual([]);

    // The link downloads a file named zuliprc; its contents are the Blob it points to (read
    // in the page, whose CSP the test bypasses).
    const link = await byRole(hamlet, "link", "Download zuliprc");
    expect(await link.evaluate((a) => a.getAttribute("download"))).toBe("zuliprc");
    const text = await link.evaluate(async (a) =>
      (await fetch((a as HTMLAnchorElement).href)).text(),
    );
    expect(text).toMatch(/^\[api\]\nemail=hamlet@zulip\.com\nkey=(\S+)\nsite=http/);
    expect(text).toContain(`key=${oldKey}\n`);

    await (await byRole(hamlet, "button", "Generate new API key")).click();
    await eventually(async () => (await keyText()) !== oldKey, "a new key");
    const newKey = await keyText();
    const withOld = createZulipClient({
      baseUrl: server.baseUrl,
      email: "hamlet@zulip.com",
      apiKey: oldKey,
    });
    const { response } = await withOld.GET("/users/me");
    expect(response.status).toBe(401);
    const withNew = createZulipClient({
      baseUrl: server.baseUrl,
      email: "hamlet@zulip.com",
      apiKey: newKey,
    });
    expect((await withNew.GET("/users/me")).response.status).toBe(200);
    await (await byRole(hamlet, "button", "Close")).click();
  });
});
