/**
 * The compose box that helps (issue 33), in headless Chromium, King Hamlet writing and Othello
 * reading: the message typeahead (`@` people with the mention reaching Othello and his Mentions
 * count, `#` channels and `#channel>` topics, `:` emoji), the Topic and To fields' typeahead,
 * formatting keys and buttons, the server-rendered preview, and the length limit (counter and
 * Send refused). The typeahead's keypress is timed with 10,000 people in the register. axe-core
 * runs with the typeahead open; screenshots (light and dark) go to .tmp/screenshots/.
 */
import type { Page } from "puppeteer-core";
import { beforeAll, expect, it } from "vitest";
import { expectNoSeriousAxeViolations as audit } from "../helpers/browser-axe.ts";
import { articleWith, byRole, screenshot, waitForFeed, waitForNoRole } from "../helpers/browser.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

/** The message box's text, caret at its end, as typing would leave it (input event included). */
async function setMessage(page: Page, text: string) {
  const box = await byRole(page, "textbox", "Message");
  await box.evaluate((el, value) => {
    const t = el as HTMLTextAreaElement;
    t.focus();
    t.value = value;
    t.setSelectionRange(value.length, value.length);
    t.dispatchEvent(new Event("input", { bubbles: true }));
  }, text);
}

async function messageValue(page: Page): Promise<string> {
  return page.$eval("textarea", (e) => e.value);
}

describePages("the compose box that helps", () => {
  const s = useBrowserSession({
    users: ["hamlet", "othello"],
    // axe-core is injected as an inline script, which the page's CSP (rightly) forbids.
    bypassCSP: ["hamlet"],
    setup: async () => {
      verona = server.creds.channels.Verona!.stream_id;
      await expectSuccess(
        server.as("iago").POST("/messages", {
          body: { type: "stream", to: verona, topic: "castle walls", content: "The walls hold." },
        }),
      );
      await expectSuccess(server.as("othello").POST("/mark_all_as_read"));
    },
  });
  const server = s.server;
  let hamlet: Page;
  let othello: Page;
  let verona: number;
  const shots = s.shots;

  beforeAll(async () => {
    hamlet = s.page("hamlet");
    othello = s.page("othello");
    await waitForFeed(hamlet, "All messages");
    await waitForFeed(othello, "All messages");
  });

  it("@oth offers Othello (an accessible combobox); Enter inserts his mention, which reaches him rendered and counted", async () => {
    await (await byRole(hamlet, "combobox", "Channel")).select(String(verona));
    const topic = await byRole(hamlet, "textbox", "Topic");
    await topic.click({ count: 3 });
    await topic.type("mentions");
    // Othello looks at another view: the mention stays unread, and counted.
    await othello.evaluate(() => (location.hash = "#narrow/is/starred"));
    await waitForFeed(othello, "Starred messages");
    await (await byRole(hamlet, "textbox", "Message")).type("Hark @oth");
    const option = await byRole(hamlet, "option", "Othello, the Moor of Venice");
    const box = await byRole(hamlet, "combobox", "Message");
    const aria = await box.evaluate((e) => ({
      expanded: e.getAttribute("aria-expanded"),
      controls: e.getAttribute("aria-controls"),
      active: e.getAttribute("aria-activedescendant"),
    }));
    expect(aria.expanded).toBe("true");
    expect(await hamlet.$eval(`#${aria.controls}`, (e) => e.getAttribute("role"))).toBe("listbox");
    expect(await option.evaluate((e) => [e.id, e.getAttribute("aria-selected")])).toEqual([
      aria.active,
      "true",
    ]);
    shots.push(await screenshot(hamlet, "compose-typeahead"));
    await audit(hamlet, "the compose box with the mention typeahead open");
    await hamlet.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    shots.push(await screenshot(hamlet, "compose-typeahead-dark"));
    await hamlet.evaluate(() => delete document.documentElement.dataset.theme);

    await hamlet.keyboard.press("Enter");
    await waitForNoRole(hamlet, "listbox", "Suggestions");
    expect(await messageValue(hamlet)).toBe("Hark @**Othello, the Moor of Venice** ");
    await hamlet.keyboard.type("a word.");
    await hamlet.keyboard.press("Enter");

    await (await byRole(othello, "link", "Mentions, 1 unread", 10_000)).click();
    await waitForFeed(othello, "Mentions");
    const row = await articleWith(othello, "Hark @Othello, the Moor of Venice a word.");
    expect(await row.evaluate((e) => e.textContent)).not.toContain("**");
    const { messages } = await expectSuccess(
      server.as("othello").GET("/messages", {
        params: {
          query: {
            anchor: "newest",
            num_before: 1,
            num_after: 0,
            narrow: [{ operator: "is", operand: "mentioned" }],
          },
        },
      }),
    );
    expect(messages[0]?.content).toContain("Othello, the Moor of Venice");
  });

  it("#Ver completes to #**Verona**, and #Verona> offers its topics", async () => {
    await setMessage(hamlet, "");
    await hamlet.keyboard.type("See #Ver");
    await byRole(hamlet, "option", "Verona");
    await hamlet.keyboard.press("Enter");
    expect(await messageValue(hamlet)).toBe("See #**Verona** ");
    await hamlet.keyboard.type("and #Verona>");
    await byRole(hamlet, "option", "mentions");
    await byRole(hamlet, "option", "castle walls");
    await hamlet.keyboard.type("ca");
    await waitForNoRole(hamlet, "option", "mentions");
    await hamlet.keyboard.press("Tab");
    expect(await messageValue(hamlet)).toBe("See #**Verona** and #**Verona>castle walls** ");
  });

  it(":thumbs offers :thumbs_up: with the emoji; @_ makes a silent mention", async () => {
    await setMessage(hamlet, "Agreed ");
    await hamlet.keyboard.type(":thumbs");
    const option = await byRole(hamlet, "option", ":thumbs_up:");
    expect(await option.evaluate((e) => e.textContent)).toContain("👍");
    await byRole(hamlet, "option", ":thumbs_down:");
    // ↓ moves to the next row and ↑ back: Enter picks the active one.
    await hamlet.keyboard.press("ArrowDown");
    expect(await hamlet.$eval("textarea", (e) => e.getAttribute("aria-activedescendant"))).not.toBe(
      await option.evaluate((e) => e.id),
    );
    await hamlet.keyboard.press("ArrowUp");
    expect(await option.evaluate((e) => e.getAttribute("aria-selected"))).toBe("true");
    await hamlet.keyboard.press("Enter");
    expect(await messageValue(hamlet)).toBe("Agreed :thumbs_up: ");
    await hamlet.keyboard.type("@_iag");
    await byRole(hamlet, "option", "Iago");
    await hamlet.keyboard.press("Enter");
    expect(await messageValue(hamlet)).toBe("Agreed :thumbs_up: @_**Iago** ");
    // Escape closes the list and keeps the text.
    await hamlet.keyboard.type("@al");
    await byRole(hamlet, "option", "all");
    await hamlet.keyboard.press("Escape");
    await waitForNoRole(hamlet, "listbox", "Suggestions");
    expect(await messageValue(hamlet)).toBe("Agreed :thumbs_up: @_**Iago** @al");
    await setMessage(hamlet, "");
  });

  it("the Topic field offers the channel's topics", async () => {
    const topic = await byRole(hamlet, "textbox", "Topic");
    await topic.click({ count: 3 });
    await topic.type("cas");
    await byRole(hamlet, "option", "castle walls");
    await hamlet.keyboard.press("Enter");
    expect(await topic.evaluate((e) => (e as HTMLInputElement).value)).toBe("castle walls");
  });

  it("Ctrl+B, Ctrl+I, Ctrl+Shift+L and the toolbar's buttons wrap the selection in Zulip's Markdown", async () => {
    const select = (from: number, to: number) =>
      hamlet.$eval("textarea", (e, a, b) => e.setSelectionRange(a, b), from, to);
    await setMessage(hamlet, "make this bold");
    await select(10, 14);
    await hamlet.keyboard.down("Control");
    await hamlet.keyboard.press("b");
    await hamlet.keyboard.up("Control");
    expect(await messageValue(hamlet)).toBe("make this **bold**");

    await setMessage(hamlet, "a lean word");
    await select(2, 6);
    await hamlet.keyboard.down("Control");
    await hamlet.keyboard.press("i");
    await hamlet.keyboard.up("Control");
    expect(await messageValue(hamlet)).toBe("a *lean* word");

    await setMessage(hamlet, "the site");
    await select(4, 8);
    await hamlet.keyboard.down("Control");
    await hamlet.keyboard.down("Shift");
    await hamlet.keyboard.press("L");
    await hamlet.keyboard.up("Shift");
    await hamlet.keyboard.up("Control");
    expect(await messageValue(hamlet)).toBe("the [site](url)");

    await setMessage(hamlet, "run x()");
    await select(4, 7);
    await (await byRole(hamlet, "button", "Code")).click();
    expect(await messageValue(hamlet)).toBe("run `x()`");

    await setMessage(hamlet, "line one\nline two");
    await select(0, 17);
    await (await byRole(hamlet, "button", "Code")).click();
    expect(await messageValue(hamlet)).toBe("```\nline one\nline two\n```");

    await setMessage(hamlet, "to be or not");
    await select(0, 12);
    await (await byRole(hamlet, "button", "Quote")).click();
    expect(await messageValue(hamlet)).toBe("```quote\nto be or not\n```");

    await setMessage(hamlet, "plain");
    await select(0, 5);
    await (await byRole(hamlet, "button", "Bold")).click();
    await (await byRole(hamlet, "button", "Italic")).click();
    expect(await messageValue(hamlet)).toBe("***plain***");
    await (await byRole(hamlet, "button", "Link")).click();
    expect(await messageValue(hamlet)).toBe("***[plain](url)***");
  });

  it("Preview shows the message as the server renders it; Write goes back", async () => {
    await setMessage(hamlet, "Some **strong words** and `code`");
    await (await byRole(hamlet, "button", "Preview")).click();
    const preview = await byRole(hamlet, "region", "Preview");
    await hamlet.waitForFunction(
      () => document.querySelector("[aria-label=Preview] strong")?.textContent === "strong words",
    );
    expect(await preview.evaluate((e) => e.querySelector("code")?.textContent)).toBe("code");
    await waitForNoRole(hamlet, "textbox", "Message");
    shots.push(await screenshot(hamlet, "compose-preview"));
    await audit(hamlet, "the compose box's preview");
    await (await byRole(hamlet, "button", "Write")).click();
    expect(await messageValue(hamlet)).toBe("Some **strong words** and `code`");
    await setMessage(hamlet, "");
  });

  it("counts down near the length limit, and refuses to send past it with Zulip's words", async () => {
    await waitForNoRole(hamlet, "status", "50 characters remaining", 100);
    await setMessage(hamlet, "x".repeat(9950));
    await byRole(hamlet, "status", "50 characters remaining");
    expect(
      await (
        await byRole(hamlet, "button", "Send")
      ).evaluate((b) => (b as HTMLButtonElement).disabled),
    ).toBe(false);
    await setMessage(hamlet, "x".repeat(10005));
    await byRole(hamlet, "status", "-5 characters remaining");
    const send = await byRole(hamlet, "button", "Send");
    expect(await send.evaluate((b) => (b as HTMLButtonElement).disabled)).toBe(true);
    expect(await hamlet.$eval("form[aria-label=Compose]", (f) => f.textContent)).toContain(
      "Message length shouldn't be greater than 10000 characters.",
    );
    shots.push(await screenshot(hamlet, "compose-too-long"));
    await hamlet.keyboard.press("Enter");
    expect((await messageValue(hamlet)).length).toBe(10005);
    await setMessage(hamlet, "");
  });

  it("the To field offers people; the DM goes to those chosen", async () => {
    await (await byRole(hamlet, "button", "New direct message")).click();
    const to = await byRole(hamlet, "textbox", "To");
    await to.click({ count: 3 });
    await hamlet.keyboard.press("Backspace");
    await to.type("oth");
    await byRole(hamlet, "option", "Othello, the Moor of Venice");
    await hamlet.keyboard.press("Enter");
    await to.type("iag");
    await byRole(hamlet, "option", "Iago");
    await hamlet.keyboard.press("Tab");
    expect(await to.evaluate((e) => (e as HTMLInputElement).value)).toBe(
      "Othello, the Moor of Venice, Iago, ",
    );
    await (await byRole(othello, "link", "All messages")).click();
    await waitForFeed(othello, "All messages");
    await (await byRole(hamlet, "textbox", "Message")).type("To you both.");
    await hamlet.keyboard.press("Enter");
    await articleWith(othello, "To you both.");
    const { messages } = await expectSuccess(
      server.as("iago").GET("/messages", {
        params: { query: { anchor: "newest", num_before: 1, num_after: 0 } },
      }),
    );
    expect(messages[0]?.content).toContain("To you both.");
    expect(messages[0]?.type).toBe("private");
  });

  it("a typeahead keypress takes under 16 ms with 10,000 people", async () => {
    const page = await hamlet.browserContext().newPage();
    // 10,000 more people in the register's answer, as a large organization's would carry.
    await page.evaluateOnNewDocument(() => {
      const original = window.fetch.bind(window);
      window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
        const response = await original(input, init);
        const url = input instanceof Request ? input.url : String(input);
        if (!url.includes("/json/register")) return response;
        const data = (await response.json()) as { realm_users: Record<string, unknown>[] };
        const words = ["Oliver", "Olga", "Othmar", "Otto", "Anna", "Ben", "Carla", "Dmitri"];
        for (let i = 0; i < 10_000; i++)
          data.realm_users.push({
            ...data.realm_users[0],
            user_id: 1_000_000 + i,
            email: `person${i}@example.com`,
            delivery_email: `person${i}@example.com`,
            full_name: `${words[i % words.length]} ${words[(i >> 3) % words.length]}son ${i}`,
            is_active: true,
          });
        return new Response(JSON.stringify(data), {
          status: response.status,
          headers: response.headers,
        });
      };
    });
    await page.goto(`${server.baseUrl}/#feed`);
    await waitForFeed(page, "All messages");
    await byRole(page, "textbox", "Message");
    // Typing "@othe" and "@an", five times over: the best of the five per keypress is its cost
    // (the rest is other processes' share of a busy machine's CPUs).
    const times = await page.evaluate(async () => {
      const box = document.querySelector<HTMLTextAreaElement>("textarea[aria-label=Message]")!;
      box.focus();
      const keys = ["@", "@o", "@ot", "@oth", "@othe", "@", "@a", "@an"];
      const best = keys.map(() => Infinity);
      for (let round = 0; round < 5; round++)
        for (const [k, text] of keys.entries()) {
          const start = performance.now();
          box.value = text;
          box.setSelectionRange(text.length, text.length);
          box.dispatchEvent(new Event("input", { bubbles: true }));
          // The list renders in a microtask after the handler.
          for (let i = 0; i < 5; i++) await Promise.resolve();
          best[k] = Math.min(best[k]!, performance.now() - start);
          const first = document.querySelector("[role=listbox] [role=option]");
          if (text === "@oth" && !first?.textContent?.startsWith("Othello, the Moor of Venice"))
            throw new Error(`Othello is not first for @oth: ${first?.textContent}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      return keys.map((text, k) => [text, best[k]!] as const);
    });
    console.log(
      `typeahead keypress with 10,000 more people (best of 5): ${times.map(([k, t]) => `${k} ${t.toFixed(1)} ms`).join(", ")}`,
    );
    expect(Math.max(...times.map(([, t]) => t))).toBeLessThan(16);
    await page.close();
  });
});
