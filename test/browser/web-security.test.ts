/**
 * The web app against hostile message content, and its accessibility, in headless Chromium.
 * Messages sent through the API try every way into the page (a script tag, an image's onerror,
 * `javascript:` and `data:` links, raw HTML with onclick, an iframe): no script runs, no dialog
 * opens, links open in a new tab without an opener, the dangerous ones have no address; the page
 * is served with a strict Content-Security-Policy. axe-core finds no serious or critical violation
 * on the login page, the feed, and with the compose box filled. Skipped, saying why, when Chromium
 * is not installed.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "puppeteer-core";
import { beforeAll, describe, expect, it } from "vitest";
import { articleWith, byRole, logIn, waitForFeed } from "../helpers/browser.ts";
import { expectSuccess } from "../helpers/expect.ts";
import { describePages, useBrowserSession } from "../helpers/browser-suite.ts";

const HOSTILE = [
  "<script>window.__pwned=1</script> after the script tag",
  '<img src=x onerror="window.__pwned=1"> after the image',
  "[click](javascript:window.__pwned=1) the javascript link",
  '<a href="#" onclick="window.__pwned=1">raw onclick</a> raw HTML with onclick',
  '<iframe src="javascript:window.__pwned=1" srcdoc="<script>parent.__pwned=1</script>"></iframe> the iframe',
  "[data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cub3BlbmVyLl9fcHduZWQ9MTwvc2NyaXB0Pg==) the data link",
  "[a real link](https://example.com/page) and https://example.org/bare",
];

describePages("the web app's defences and accessibility", () => {
  const dialogs: string[] = [];
  const s = useBrowserSession({
    users: ["hamlet"],
    // Any alert(), confirm() or prompt() is recorded (and dismissed).
    prepare: (p) =>
      void p.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      }),
  });
  const server = s.server;
  let browser: Browser;
  let page: Page;

  beforeAll(() => {
    browser = s.browser;
    page = s.page("hamlet");
  });

  it("serves the app with a strict Content-Security-Policy", async () => {
    // The set-up left the page at /#feed: a new document is loaded from elsewhere, for its response.
    await page.goto("about:blank");
    const response = await page.goto(`${server.baseUrl}/#feed`);
    expect(response?.status()).toBe(200);
    const csp = response?.headers()["content-security-policy"] ?? "";
    const directives = new Map(
      csp
        .split(";")
        .map((d) => d.trim().split(/\s+/))
        .filter((d) => d[0])
        .map(([name, ...values]) => [name!, values]),
    );
    console.log(`Content-Security-Policy: ${csp}`);
    expect(directives.get("script-src")).toEqual(["'self'"]);
    expect(directives.get("object-src")).toEqual(["'none'"]);
    expect(directives.get("frame-ancestors")).toEqual(["'none'"]);
    expect(directives.get("base-uri")).toEqual(["'none'"]);
    await waitForFeed(page, "All messages");
  });

  it("runs no script from message content; links open in a new tab without an opener, javascript: and data: ones have no address", async () => {
    const verona = server.creds.channels.Verona!.stream_id;
    for (const content of HOSTILE)
      await expectSuccess(
        server.as("iago").POST("/messages", {
          body: { type: "stream", to: verona, topic: "hostile", content },
        }),
      );
    await page.goto(`${server.baseUrl}/#narrow/channel/${verona}-Verona/topic/hostile`);
    await waitForFeed(page, "#Verona > hostile");
    for (const marker of [
      "after the script tag",
      "after the image",
      "the javascript link",
      "raw HTML with onclick",
      "the iframe",
      "the data link",
      "and https://example.org/bare",
    ])
      await articleWith(page, marker);
    // Give anything that would run (an image error, a frame) its chance.
    await new Promise((r) => setTimeout(r, 500));

    // Click everything that could be clicked in the messages.
    const feed = (await page.$("[role=feed]"))!;
    for (const text of ["click", "raw onclick", "data link"]) {
      const link = await feed.$(`::-p-text(${text})`);
      if (link) await link.click().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBe(
      undefined,
    );
    expect(dialogs).toEqual([]);
    expect(page.url()).toContain("/topic/hostile");

    const report = await page.$eval("[role=feed]", (f) => {
      const all = [...f.querySelectorAll("article *")];
      return {
        scripts: f.querySelectorAll("script, iframe, object, embed").length,
        handlers: all.flatMap((e) =>
          [...e.attributes]
            .filter((a) => a.name.startsWith("on"))
            .map((a) => `${e.tagName} ${a.name}`),
        ),
        unsafe: all
          .flatMap((e) => ["href", "src", "srcdoc"].map((n) => e.getAttribute(n) ?? ""))
          .filter((v) => /^\s*(javascript|data|vbscript):/i.test(v) || v.includes("__pwned")),
        links: [...f.querySelectorAll("article a")].map((a) => ({
          text: a.textContent,
          href: a.getAttribute("href"),
          target: a.getAttribute("target"),
          rel: a.getAttribute("rel"),
        })),
      };
    });
    expect(report.scripts).toBe(0);
    expect(report.handlers).toEqual([]);
    expect(report.unsafe).toEqual([]);
    const external = report.links.filter((l) => l.href !== null && !l.href.startsWith("#"));
    expect(external.map((l) => l.href).sort()).toEqual([
      "https://example.com/page",
      "https://example.org/bare",
    ]);
    for (const l of external)
      expect(l).toMatchObject({ target: "_blank", rel: "noopener noreferrer" });
    // The javascript: and data: links, where rendered as links at all, have no address.
    for (const l of report.links.filter((x) => x.text === "click" || x.text === "data link"))
      expect(l.href).toBeNull();
    // The raw HTML is shown as the text it is.
    await articleWith(page, '<a href="#" onclick="window.__pwned=1">raw onclick</a>');
  });

  describe("axe-core", () => {
    let axePage: Page;
    const axeSource = readFileSync(
      createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
      "utf8",
    );

    async function audit(where: string): Promise<void> {
      await axePage.addScriptTag({ content: axeSource });
      const results = await axePage.evaluate(async () => {
        const axe = (
          window as unknown as {
            axe: {
              run(): Promise<{
                violations: {
                  id: string;
                  impact: string;
                  help: string;
                  nodes: { target: string[] }[];
                }[];
              }>;
            };
          }
        ).axe;
        const r = await axe.run();
        return r.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
        }));
      });
      console.log(
        `axe-core on ${where}: ${results.length} violation(s)` +
          results
            .map((v) => `\n  [${v.impact}] ${v.id}: ${v.help} (${v.nodes.join("; ")})`)
            .join(""),
      );
      expect(
        results.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id),
        `serious or critical violations on ${where}`,
      ).toEqual([]);
    }

    beforeAll(async () => {
      axePage = await (await browser.createBrowserContext()).newPage();
      // axe-core is injected as an inline script, which the page's CSP (rightly) forbids.
      await axePage.setBypassCSP(true);
    });

    it("finds no serious or critical violation on the login page", async () => {
      await axePage.goto(`${server.baseUrl}/login/`);
      await byRole(axePage, "button", "Log in");
      await audit("the login page");
    });

    it("finds no serious or critical violation on the feed, nor with the compose box filled", async () => {
      await logIn(
        axePage,
        server.baseUrl,
        "othello@zulip.com",
        server.creds.users.othello!.password!,
      );
      await waitForFeed(axePage, "All messages");
      await audit("the feed (All messages)");
      await (await byRole(axePage, "textbox", "Topic")).type("accessibility");
      await (await byRole(axePage, "textbox", "Message")).type("A draft, not sent.");
      await audit("the feed with the compose box filled");
    });
  });
});
