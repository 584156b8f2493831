/**
 * The organization settings pages (#organization/...) in headless Chromium: Iago (administrator)
 * renames the organization and King Hamlet (member, a second browser context) sees the new name
 * in his title and top bar at once; Iago changes the editing settings and a permission, Othello's
 * role, deactivates and reactivates Cordelia (after a confirmation), sends and revokes an
 * invitation and makes an invitation link, edits and archives channels, creates a user group
 * (which Hamlet's compose typeahead offers at once) and adds Hamlet to it, uploads a custom emoji
 * (which Hamlet's page shows live), adds a linkifier (a message with its pattern renders a link; a
 * bad pattern shows the server's error), and adds a custom profile field; each change checked through the API. Hamlet sees the read-only profile,
 * none of the administrators' sections. axe-core on each section and dialog; light and dark
 * screenshots. Skipped, saying why, when Chromium is not installed.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ElementHandle, Page } from "puppeteer-core";
import { beforeAll, expect, it } from "vitest";
import { articleWith, byRole, screenshot, waitForNoRole } from "../helpers/browser.ts";
import { seriousAxeViolations } from "../helpers/browser-axe.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

describePages("organization settings pages", () => {
  const s = useBrowserSession({
    users: ["iago", "hamlet"],
    // axe-core is injected as an inline script, which the page's CSP (rightly) forbids.
    bypassCSP: true,
  });
  const server = s.server;
  let iago: Page;
  let hamlet: Page;
  const shots = s.shots;

  async function open(page: Page, section: string, heading: string) {
    await page.evaluate((h) => (location.hash = h), `#organization/${section}`);
    await byRole(page, "region", heading);
  }

  async function axe(page: Page, where: string) {
    expect(await seriousAxeViolations(page, where), `serious or critical on ${where}`).toEqual([]);
  }

  /** The status line's text once it is no longer "Saving…". */
  async function settled(page: Page): Promise<string> {
    const h = await page.waitForFunction(
      () => {
        const texts = [
          ...document.querySelectorAll(
            ".org-content [role=status], .org-content [role=alert], dialog [role=status], dialog [role=alert]",
          ),
        ]
          .map((e) => e.textContent ?? "")
          .filter((x) => x && x !== "Saving…");
        return texts[0];
      },
      { timeout: 5000 },
    );
    return (await h.jsonValue()) as string;
  }

  async function setText(page: Page, name: string, value: string, within?: ElementHandle) {
    const box = within
      ? await within.waitForSelector(`::-p-aria([name=${JSON.stringify(name)}][role="textbox"])`)
      : await byRole(page, "textbox", name);
    await box!.click({ count: 3 });
    await page.keyboard.press("Backspace");
    await box!.type(value);
  }

  async function clickIn(dialogName: string, page: Page, button: string) {
    const dialog = await byRole(page, "dialog", dialogName);
    const b = await dialog.waitForSelector(
      `::-p-aria([name=${JSON.stringify(button)}][role="button"])`,
    );
    await b!.click();
  }

  async function darkShot(page: Page, name: string) {
    await page.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(page, name));
    await page.evaluate(() => delete document.documentElement.dataset.theme);
  }

  beforeAll(() => {
    iago = s.page("iago");
    hamlet = s.page("hamlet");
  });

  it("Iago renames the organization from its profile: Hamlet's title and top bar show the new name at once", async () => {
    await (await byRole(iago, "link", "Organization settings")).click();
    await byRole(iago, "region", "Organization profile");
    await setText(iago, "Organization name", "Elsinore Players");
    await setText(iago, "Organization description", "The company at **Elsinore**.");
    await (await byRole(iago, "button", "Save changes")).click();
    expect(await settled(iago)).toBe("Saved");
    await hamlet.waitForFunction(() => document.title.endsWith(" - Elsinore Players"));
    await byRole(hamlet, "link", "Elsinore Players");
    const settings = await expectSuccess(
      server.as("iago").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    );
    expect(settings).toMatchObject({
      realm_name: "Elsinore Players",
      realm_description: "The company at **Elsinore**.",
    });
    shots.push(await screenshot(iago, "org-profile"));
    await darkShot(iago, "org-profile-dark");
    await axe(iago, "the organization profile");
  });

  it("Iago sets the editing time limit and who may delete their own messages", async () => {
    await open(iago, "organization-settings", "Organization settings");
    await (await byRole(iago, "combobox", "Time limit for editing messages")).select("600");
    await (await byRole(iago, "checkbox", "Enable read receipts")).click();
    await (await byRole(iago, "button", "Save changes")).click();
    expect(await settled(iago)).toBe("Saved");
    await axe(iago, "the organization settings");

    await open(iago, "organization-permissions", "Organization permissions");
    const select = await byRole(iago, "combobox", "Who can delete their own messages");
    const admins = await select.evaluate(
      (s) => [...(s as HTMLSelectElement).options].find((o) => o.text === "Administrators")!.value,
    );
    await select.select(admins);
    expect(await settled(iago)).toBe("Saved");
    const r = (await expectSuccess(
      server.as("iago").POST("/register", { body: { fetch_event_types: ["realm"] } }),
    )) as Record<string, unknown>;
    expect(r.realm_message_content_edit_limit_seconds).toBe(600);
    expect(r.realm_can_delete_own_message_group).toBe(Number(admins));
    shots.push(await screenshot(iago, "org-permissions"));
    await axe(iago, "the organization permissions");
  });

  it("Iago makes Othello a moderator, deactivates Cordelia after confirming, and reactivates her", async () => {
    await open(iago, "users", "Users");
    await (await byRole(iago, "searchbox", "Filter users")).type("o");
    await (await byRole(iago, "combobox", "Role of Othello, the Moor of Venice")).select("300");
    expect(await settled(iago)).toBe("Saved");
    const othello = await expectSuccess(
      server.as("iago").GET("/users/{email}", { params: { path: { email: "othello@zulip.com" } } }),
    );
    expect(othello.user.role).toBe(300);
    shots.push(await screenshot(iago, "org-users"));
    await darkShot(iago, "org-users-dark");
    await axe(iago, "the users list");

    await (await byRole(iago, "button", "Deactivate Cordelia, Lear's daughter")).click();
    await byRole(iago, "dialog", "Deactivate Cordelia, Lear's daughter?");
    await axe(iago, "the deactivation confirmation");
    await clickIn("Deactivate Cordelia, Lear's daughter?", iago, "Deactivate");
    await waitForNoRole(iago, "button", "Deactivate Cordelia, Lear's daughter");
    const gone = await expectSuccess(
      server
        .as("iago")
        .GET("/users/{email}", { params: { path: { email: "cordelia@zulip.com" } } }),
    );
    expect(gone.user.is_active).toBe(false);

    await (await byRole(iago, "link", "Deactivated")).click();
    await byRole(iago, "region", "Deactivated users");
    await (await byRole(iago, "button", "Reactivate Cordelia, Lear's daughter")).click();
    await waitForNoRole(iago, "button", "Reactivate Cordelia, Lear's daughter");
    const back = await expectSuccess(
      server
        .as("iago")
        .GET("/users/{email}", { params: { path: { email: "cordelia@zulip.com" } } }),
    );
    expect(back.user.is_active).toBe(true);
  });

  it("Iago invites by email (listed by GET /invites), revokes it, and makes an invitation link", async () => {
    await open(iago, "invites", "Invitations");
    await setText(iago, "Emails (one on each line or separated by commas)", "yorick@example.com");
    await (await byRole(iago, "checkbox", "#Verona")).click();
    await (await byRole(iago, "button", "Invite")).click();
    expect(await settled(iago)).toBe("Saved");
    const listed = await expectSuccess(server.as("iago").GET("/invites"));
    const invite = listed.invites.find((i) => i.email === "yorick@example.com");
    expect(invite).toMatchObject({ invited_as: 400, is_multiuse: false });
    await (await byRole(iago, "button", "Revoke invitation to yorick@example.com")).click();
    await byRole(iago, "dialog", "Revoke invitation?");
    await axe(iago, "the revoke confirmation");
    await clickIn("Revoke invitation?", iago, "Revoke");
    await waitForNoRole(iago, "button", "Revoke invitation to yorick@example.com");
    const after = await expectSuccess(server.as("iago").GET("/invites"));
    expect(after.invites.some((i) => i.email === "yorick@example.com")).toBe(false);

    await (await byRole(iago, "button", "Generate invite link")).click();
    const link = await byRole(iago, "textbox", "Invitation link");
    expect(await link.evaluate((e) => (e as HTMLInputElement).value)).toMatch(/\/join\/\w+\/$/);
    const links = await expectSuccess(server.as("iago").GET("/invites"));
    expect(links.invites.some((i) => i.is_multiuse)).toBe(true);
    shots.push(await screenshot(iago, "org-invites"));
    await axe(iago, "the invitations");
  });

  it("Iago edits a channel's description and privacy, and archives another", async () => {
    const iagoApi = server.as("iago");
    await expectSuccess(
      iagoApi.POST("/users/me/subscriptions", {
        body: { subscriptions: [{ name: "old plans", description: "" }] },
      }),
    );
    await open(iago, "channels", "Channels");
    await (await byRole(iago, "button", "Edit #Rome")).click();
    await byRole(iago, "dialog", "Edit #Rome");
    await axe(iago, "the channel edit dialog");
    await setText(iago, "Description", "Where all roads lead");
    await (await byRole(iago, "combobox", "Who can access the channel?")).select("private");
    await clickIn("Edit #Rome", iago, "Save changes");
    await waitForNoRole(iago, "dialog", "Edit #Rome");
    const rome = server.creds.channels.Rome!.stream_id;
    const { stream } = await expectSuccess(
      iagoApi.GET("/streams/{stream_id}", { params: { path: { stream_id: rome } } }),
    );
    expect(stream).toMatchObject({ description: "Where all roads lead", invite_only: true });

    await (await byRole(iago, "button", "Archive #old plans")).click();
    await clickIn("Archive #old plans?", iago, "Archive");
    await waitForNoRole(iago, "button", "Archive #old plans");
    const { stream_id } = await expectSuccess(
      iagoApi.GET("/get_stream_id", { params: { query: { stream: "old plans" } } }),
    );
    const archived = await expectSuccess(
      iagoApi.GET("/streams/{stream_id}", { params: { path: { stream_id } } }),
    );
    expect(archived.stream.is_archived).toBe(true);
    shots.push(await screenshot(iago, "org-channels"));
    await axe(iago, "the channels");
  });

  it("Iago creates a user group and adds Hamlet to it", async () => {
    await open(iago, "groups", "User groups");
    await setText(iago, "User group name", "Players");
    await setText(iago, "User group description", "They act.");
    await (await byRole(iago, "button", "Create")).click();
    await byRole(iago, "listitem", "Players");
    const box = await byRole(iago, "combobox", "Add member to Players");
    await box.type("hamlet@zulip.com");
    await box.press("Enter");
    await byRole(iago, "button", "Remove King Hamlet from Players");
    const { user_groups } = await expectSuccess(server.as("iago").GET("/user_groups"));
    const players = user_groups.find((g) => g.name === "Players")!;
    expect(players.members).toContain(server.creds.users.hamlet!.user_id);
    // The one group store (state/groups.ts) took the new group from its event: Hamlet's compose
    // typeahead offers it at once.
    await hamlet.evaluate(() => (location.hash = "#feed"));
    const message = await byRole(hamlet, "textbox", "Message");
    await message.type("@Playe");
    await hamlet.waitForFunction(
      () =>
        [...document.querySelectorAll("[role=option]")].some((o) =>
          o.textContent?.includes("Players"),
        ),
      { timeout: 5000 },
    );
    await message.click({ count: 3 });
    await hamlet.keyboard.press("Backspace");
    await hamlet.keyboard.press("Escape");
    shots.push(await screenshot(iago, "org-groups"));
    await axe(iago, "the user groups");
  });

  it("Iago uploads a custom emoji: Hamlet's page shows it at once", async () => {
    await open(hamlet, "emoji-settings", "Custom emoji");
    await open(iago, "emoji-settings", "Custom emoji");
    await setText(iago, "Emoji name", "yorick_skull");
    const file = path.join(mkdtempSync(path.join(tmpdir(), "org-emoji-")), "skull.png");
    writeFileSync(file, PNG);
    // Chromium names a file input's button, not the input: the one file input of the form.
    const input = (await iago.waitForSelector(
      'form[aria-label="Add a new emoji"] input[type=file]',
      {
        timeout: 5000,
      },
    )) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(file);
    await (await byRole(iago, "button", "Add emoji")).click();
    expect(await settled(iago)).toBe("Saved");
    // The emoji's image (Chromium's role for it is "image"), or its cell, by its name.
    await hamlet.waitForSelector('::-p-aria([name=":yorick_skull:"])', { timeout: 10_000 });
    const { emoji } = await expectSuccess(server.as("hamlet").GET("/realm/emoji"));
    expect(Object.values(emoji).some((e) => e.name === "yorick_skull" && !e.deactivated)).toBe(
      true,
    );
    // Members see the list, not the administrators' controls.
    expect(await hamlet.$('::-p-aria([name="Deactivate :yorick_skull:"])')).toBeNull();
    shots.push(await screenshot(iago, "org-emoji"));
    await axe(iago, "the custom emoji");
  });

  it("Iago adds a linkifier (a bad pattern shows the server's error): a message with its pattern renders a link", async () => {
    await open(iago, "linkifier-settings", "Linkifiers");
    await setText(iago, "Pattern", "ZT-(?P<id>[0-9]+");
    await setText(iago, "URL template", "https://tracker.example.com/ZT-{id}");
    await (await byRole(iago, "button", "Add linkifier")).click();
    const error = await settled(iago);
    expect(error).not.toBe("Saved");
    expect(error.length).toBeGreaterThan(0);
    await setText(iago, "Pattern", "ZT-(?P<id>[0-9]+)");
    await (await byRole(iago, "button", "Add linkifier")).click();
    await byRole(iago, "button", "Edit ZT-(?P<id>[0-9]+)");
    await (await byRole(iago, "button", "Edit ZT-(?P<id>[0-9]+)")).click();
    await byRole(iago, "dialog", "Edit linkifier");
    await axe(iago, "the linkifier edit dialog");
    const dialog = await byRole(iago, "dialog", "Edit linkifier");
    await setText(iago, "URL template", "https://tracker.example.com/issue/{id}", dialog);
    await clickIn("Edit linkifier", iago, "Save changes");
    await waitForNoRole(iago, "dialog", "Edit linkifier");
    await iago.waitForFunction(() =>
      document.body.textContent?.includes("https://tracker.example.com/issue/{id}"),
    );

    await expectSuccess(
      server.as("hamlet").POST("/messages", {
        body: {
          type: "stream",
          to: server.creds.channels.Verona!.stream_id,
          topic: "tickets",
          content: "Please look at ZT-42 today.",
        },
      }),
    );
    await hamlet.evaluate(() => (location.hash = "#feed"));
    const article = await articleWith(hamlet, "Please look at ZT-42 today.");
    const link = await article.waitForSelector('::-p-aria([name="ZT-42"][role="link"])');
    expect(await link!.evaluate((a) => a.getAttribute("href"))).toBe(
      "https://tracker.example.com/issue/42",
    );
    shots.push(await screenshot(iago, "org-linkifiers"));
    await axe(iago, "the linkifiers");
  });

  it("Iago adds a custom profile field", async () => {
    await open(iago, "profile-field-settings", "Custom profile fields");
    await setText(iago, "Label", "Favourite play");
    await setText(iago, "Hint (up to 80 characters)", "Which one do you know by heart?");
    await (await byRole(iago, "combobox", "Type")).select("2");
    await (await byRole(iago, "button", "Add")).click();
    await byRole(iago, "button", "Delete Favourite play");
    const { custom_fields } = await expectSuccess(server.as("iago").GET("/realm/profile_fields"));
    expect(custom_fields.find((f) => f.name === "Favourite play")).toMatchObject({
      hint: "Which one do you know by heart?",
      type: 2,
    });
    shots.push(await screenshot(iago, "org-profile-fields"));
    await axe(iago, "the custom profile fields");
  });

  it("Hamlet (a member) sees the organization read-only: no administrators' sections or controls", async () => {
    expect(await hamlet.$('::-p-aria([name="Organization settings"][role="link"])')).toBeNull();
    await open(hamlet, "users", "Organization profile");
    await hamlet.waitForFunction(() =>
      document.body.textContent?.includes(
        "Only organization administrators can change these settings.",
      ),
    );
    const name = await byRole(hamlet, "textbox", "Organization name");
    expect(await name.evaluate((e) => (e as HTMLInputElement).readOnly)).toBe(true);
    expect(await name.evaluate((e) => (e as HTMLInputElement).value)).toBe("Elsinore Players");
    for (const admin of ["Users", "Invitations", "Channels", "User groups"])
      expect(await hamlet.$(`::-p-aria([name="${admin}"][role="link"])`), admin).toBeNull();
    expect(await hamlet.$('::-p-aria([name="Save changes"][role="button"])')).toBeNull();
    await open(hamlet, "organization-permissions", "Organization permissions");
    const select = await byRole(hamlet, "combobox", "Who can delete their own messages");
    expect(await select.evaluate((e) => (e as HTMLSelectElement).disabled)).toBe(true);
    shots.push(await screenshot(hamlet, "org-member-view"));
    await axe(hamlet, "the member's view of the organization settings");
  });
});
