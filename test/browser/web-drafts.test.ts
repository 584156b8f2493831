/**
 * Drafts, scheduled messages, uploads and images in the web app (issue 33), in headless Chromium
 * with King Hamlet and Othello: a draft saved as Hamlet types, restored when he comes back to its
 * topic, on the server (draft synchronization on), listed on the Drafts page with Restore and
 * Delete, deleted by sending; a message scheduled for tomorrow, listed on the Scheduled messages
 * page and by the API, edited and deleted; a file uploaded with the button, sent, and seen and
 * fetched by Othello; an image pasted and sent, as the link compose inserts and as Markdown image
 * syntax, shown as its thumbnail and opened in the lightbox at its original. axe-core on the pages and
 * dialogs; screenshots (light and dark) go to .tmp/screenshots/.
 */
import type { ElementHandle, Page } from "puppeteer-core";
import { beforeAll, expect, it } from "vitest";
import { articleWith, byRole, eventually, screenshot, waitForNoRole } from "../helpers/browser.ts";
import { axeViolations } from "../helpers/browser-axe.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

describePages("drafts, scheduled messages, uploads", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is injected as an inline script, which the page's CSP forbids.
    bypassCSP: ["hamlet"],
    setup: async () => {
      verona = server.creds.channels.Verona!.stream_id;
      await expectSuccess(
        server.as("hamlet").PATCH("/settings", { body: { enable_drafts_synchronization: true } }),
      );
    },
  });
  const server = s.server;
  let hamlet: Page;
  let othello: Page;
  let verona: number;
  const shots = s.shots;

  const message = () => byRole(hamlet, "textbox", "Message");
  const messageValue = async () =>
    (await message()).evaluate((e) => (e as HTMLTextAreaElement).value);
  const goTopic = async (topic: string) => {
    await hamlet.evaluate(
      (h) => (location.hash = h),
      `#narrow/channel/${verona}-Verona/topic/${topic}`,
    );
    try {
      await hamlet.waitForFunction(
        (topic) =>
          document
            .querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")
            ?.placeholder.endsWith(`> ${topic}`),
        {},
        topic,
      );
    } catch (err) {
      const state = await hamlet.evaluate(() => ({
        hash: location.hash,
        placeholder: document.querySelector<HTMLTextAreaElement>("textarea")?.placeholder,
        body: document.body.innerText.slice(0, 500),
      }));
      shots.push(await screenshot(hamlet, `failed-${topic}`));
      throw new Error(`${String(err)}: ${JSON.stringify(state)}`);
    }
  };
  /** The button whose accessible name starts with `prefix` (a time in its name varies). */
  const buttonStarting = async (prefix: string) => {
    const name = await (
      await hamlet.waitForFunction(
        (p) =>
          [...document.querySelectorAll("button")]
            .map((b) => b.getAttribute("aria-label") ?? b.textContent ?? "")
            .find((n) => n.startsWith(p)),
        {},
        prefix,
      )
    ).jsonValue();
    return byRole(hamlet, "button", name as string);
  };
  const serverDrafts = async () => (await expectSuccess(server.as("hamlet").GET("/drafts"))).drafts;
  const serverScheduled = async () =>
    (await expectSuccess(server.as("hamlet").GET("/scheduled_messages"))).scheduled_messages;
  const expectAxeClean = async (where: string) =>
    expect(
      (await axeViolations(hamlet, where))
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => v.id),
      where,
    ).toEqual([]);
  const darkShot = async (name: string) => {
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(hamlet, `${name}-dark`));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);
  };

  beforeAll(() => {
    hamlet = s.page("hamlet");
    othello = s.page("othello");
    hamlet.setDefaultTimeout(10_000);
    othello.setDefaultTimeout(10_000);
  });

  it("saves a draft as Hamlet types, on the server too, and restores it when he comes back", async () => {
    await goTopic("draftwork");
    await (await message()).type("Half a thought about the play");
    // The save waits for a pause in typing: until it is on the server.
    await eventually(async () => (await serverDrafts()).length === 1, "the draft saved");
    await (await byRole(hamlet, "link", "All messages")).click();
    await hamlet.waitForFunction(() => !location.hash.includes("draftwork"));
    expect(await messageValue()).toBe("");
    await hamlet.goBack();
    await hamlet.waitForFunction(
      () =>
        document.querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")?.value ===
        "Half a thought about the play",
    );
    const stored = await serverDrafts();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      type: "stream",
      to: [verona],
      topic: "draftwork",
      content: "Half a thought about the play",
    });
  });

  it("lists drafts on the Drafts page (key d), with Restore and Delete; sending deletes a draft", async () => {
    // A second draft, in another topic; leaving the topic saves it at once.
    await goTopic("otherwork");
    await (await message()).type("A draft to delete");
    await (await byRole(hamlet, "link", "All messages")).click();
    await hamlet.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await hamlet.keyboard.press("d");
    await byRole(hamlet, "region", "Drafts");
    await byRole(hamlet, "article", "#Verona > draftwork");
    await byRole(hamlet, "article", "#Verona > otherwork");
    await expectAxeClean("the Drafts page");
    shots.push(await screenshot(hamlet, "drafts-page"));
    await darkShot("drafts-page");

    await (await byRole(hamlet, "button", "Delete draft for #Verona > otherwork")).click();
    await waitForNoRole(hamlet, "article", "#Verona > otherwork");
    await eventually(async () => (await serverDrafts()).length === 1, "the deleted draft to go");

    await (await byRole(hamlet, "button", "Restore draft for #Verona > draftwork")).click();
    await hamlet.waitForFunction(
      () =>
        document.querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")?.value ===
        "Half a thought about the play",
    );
    expect(hamlet.url()).toContain("/topic/draftwork");
    await (await message()).press("Enter");
    await articleWith(hamlet, "Half a thought about the play");
    await eventually(async () => (await serverDrafts()).length === 0, "the sent draft to go");
  });

  it("schedules a message for tomorrow, lists it, edits it and deletes it", async () => {
    await goTopic("schedwork");
    await (await message()).type("See you tomorrow");
    await (await byRole(hamlet, "button", "Schedule message")).click();
    await byRole(hamlet, "dialog", "Schedule message");
    await expectAxeClean("the Schedule message dialog");
    shots.push(await screenshot(hamlet, "schedule-dialog"));
    const tomorrow = await buttonStarting("Tomorrow at");
    await tomorrow.click();
    await waitForNoRole(hamlet, "dialog", "Schedule message");
    expect(await messageValue()).toBe("");
    const [sched] = await serverScheduled();
    expect(sched).toMatchObject({
      type: "stream",
      to: verona,
      topic: "schedwork",
      content: "See you tomorrow",
    });
    const due = new Date(sched!.scheduled_delivery_timestamp * 1000);
    expect(due.getTime()).toBeGreaterThan(Date.now());
    expect(due.getTime() - Date.now()).toBeLessThan(48 * 3600 * 1000);

    // The sidebar link counts them, as Zulip's does.
    await (await byRole(hamlet, "link", "Scheduled messages, 1")).click();
    await byRole(hamlet, "region", "Scheduled messages");
    await byRole(hamlet, "article", "#Verona > schedwork");
    await expectAxeClean("the Scheduled messages page");
    shots.push(await screenshot(hamlet, "scheduled-page"));
    await darkShot("scheduled-page");

    // Edit: reopened in the compose box; sending saves the edit.
    const edit = await buttonStarting("Edit message scheduled for");
    await edit.click();
    await hamlet.waitForFunction(
      () =>
        document.querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")?.value ===
        "See you tomorrow",
    );
    await (await message()).type(", at nine");
    await (await message()).press("Enter");
    await eventually(
      async () => (await serverScheduled())[0]?.content === "See you tomorrow, at nine",
      "the edit to be saved",
    );
    // Not sent as a message.
    expect(await messageValue()).toBe("");

    await (await byRole(hamlet, "link", "Scheduled messages, 1")).click();
    const del = await buttonStarting("Delete message scheduled for");
    await del.click();
    await waitForNoRole(hamlet, "article", "#Verona > schedwork");
    expect(await serverScheduled()).toEqual([]);
  });

  it("uploads a file with the button; Othello sees it in the message and can fetch it", async () => {
    await goTopic("filework");
    // The file input named "Upload files" (or the label it is in, which carries its tooltip).
    const named = await hamlet.waitForSelector("::-p-aria([name='Upload files'])");
    const input = (await named!.evaluateHandle((e) =>
      e instanceof HTMLInputElement ? e : e.querySelector("input[type=file]")!,
    )) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(`${process.cwd()}/package.json`);
    await hamlet.waitForFunction(() =>
      /\[package\.json\]\(\/user_uploads\/[^)]+\)/.test(
        document.querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")!.value,
      ),
    );
    expect(await messageValue()).not.toContain("Uploading");
    shots.push(await screenshot(hamlet, "compose-upload"));
    await (await message()).press("Enter");
    await articleWith(hamlet, "package.json");

    const row = await articleWith(othello, "package.json");
    const href = await row.evaluate(
      (a) => a.querySelector<HTMLAnchorElement>("a[href*='/user_uploads/']")?.href ?? "",
    );
    expect(href).toContain("/user_uploads/");
    const fetched = await othello.evaluate(async (u) => {
      const r = await fetch(u, { credentials: "same-origin" });
      return { status: r.status, text: await r.text() };
    }, href);
    expect(fetched.status).toBe(200);
    expect(fetched.text).toContain('"name"');
  });

  it("uploads a pasted image; a click on it opens the lightbox, Escape closes it", async () => {
    await goTopic("imagework");
    await (await message()).focus();
    // A 320×200 PNG drawn in the page (larger than the feed's 300×200 box).
    await hamlet.evaluate(async () => {
      const canvas = document.createElement("canvas");
      [canvas.width, canvas.height] = [320, 200];
      const g = canvas.getContext("2d")!;
      g.fillStyle = "#2a7";
      g.fillRect(0, 0, 320, 200);
      g.fillStyle = "#fff";
      g.beginPath();
      g.arc(160, 100, 60, 0, 2 * Math.PI);
      g.fill();
      const blob = await new Promise<Blob>((r) => canvas.toBlob((b) => r(b!), "image/png"));
      const data = new DataTransfer();
      data.items.add(new File([blob], "dot.png", { type: "image/png" }));
      document
        .querySelector("textarea[aria-label=Message]")!
        .dispatchEvent(
          new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }),
        );
    });
    const url = await (
      await hamlet.waitForFunction(
        () =>
          /\[dot\.png\]\((\/user_uploads\/[^)]+)\)/.exec(
            document.querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")!.value,
          )?.[1],
      )
    ).jsonValue();
    // The link compose inserted: Othello sees its thumbnail (Zulip's preview, sized into the
    // feed's box before it loads), and a click shows the original in the lightbox.
    await (await message()).press("Enter");
    const preview = await byRole(othello, "image", "dot.png");
    const shown = await preview.evaluate((img) => ({
      src: new URL((img as HTMLImageElement).src).pathname,
      width: img.getAttribute("width"),
      height: img.getAttribute("height"),
    }));
    expect(shown).toEqual({
      src: `/user_uploads/thumbnail/${url!.slice("/user_uploads/".length)}/840x560.webp`,
      width: "300",
      height: "188",
    });
    await othello.waitForFunction(
      (img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth === 320,
      {},
      preview,
    );
    shots.push(await screenshot(othello, "image-preview"));
    await preview.click();
    // The thumbnail stands in, then the original.
    const box = await byRole(othello, "dialog", "dot.png");
    await othello.waitForFunction(
      (d, original) => new URL(d.querySelector("img")!.src).pathname === original,
      {},
      box,
      url,
    );
    await othello.keyboard.press("Escape");
    await waitForNoRole(othello, "dialog", "dot.png");

    // Shown as an image: Markdown's image syntax, its thumbnail too.
    await (await message()).type(`A dot ![a dot](${url})`);
    await (await message()).press("Enter");
    const image = await byRole(hamlet, "image", "a dot");
    expect(await image.evaluate((img) => new URL((img as HTMLImageElement).src).pathname)).toBe(
      `/user_uploads/thumbnail/${url!.slice("/user_uploads/".length)}/840x560.webp`,
    );
    await image.click();
    await byRole(hamlet, "dialog", "a dot");
    await byRole(hamlet, "link", "Download");
    await expectAxeClean("the lightbox");
    shots.push(await screenshot(hamlet, "lightbox"));
    await hamlet.keyboard.press("Escape");
    await waitForNoRole(hamlet, "dialog", "a dot");
    await articleWith(othello, "A dot");
  });
});
