/**
 * `npm run bench:web -- [--messages N] [--runs R] [--warmups W] [--fresh] [--json FILE]
 * [--server FILE]`: the web app (web/,
 * Preact) in headless Chromium on an organization of N messages made by
 * `npm run manage -- populate-scale` (default 1,000,000 on PostgreSQL, with 1,000 users; 50,000
 * embedded), against the compiled server, as its reader (user 1) logging in with a password the
 * bench gives them. The median and p90 of R runs (default 5, after W warm-ups, default 2), each
 * in a fresh browser context (one browser for all):
 *
 * - **login → first messages visible**: from the login form's `submit` event to the animation
 *   frame after the first `article` of the feed is in view, both marked in the page
 *   (`performance.timeOrigin + performance.now()`, kept across the navigation in
 *   sessionStorage); the wall time seen from this process (click to the mark seen through
 *   puppeteer) is printed beside it, and the page's resource timings split it up (HTML, register,
 *   the first GET /json/messages).
 * - **narrow switches**: clicks on links of the left sidebar (a channel, a topic under it, a
 *   direct-message conversation; twice over two channels), from the click to the animation frame
 *   after the feed is named after the new view and one of its articles is in view, marked in the
 *   page; six first visits, then the same six again (cached by the app), per run.
 * - **scrolling 5,000 messages back** in the reader's biggest channel (opened at its newest
 *   message, `/near/<id>`): the feed scrolled to its top again and again, each time until older
 *   messages are rendered, until 5,000 distinct message ids have been rendered; the time, the
 *   most `article` elements in the DOM at any moment of the whole run (a MutationObserver counts
 *   them at every change), and at the end the DOM's element count and the JS heap used after a
 *   forced garbage collection (CDP `HeapProfiler.collectGarbage`, then `page.metrics()`).
 *
 * - **the views of a working day** (issue 33), each opened from a channel's feed by its fragment,
 *   as a click on its link does, to the frame after its rows are in view: Inbox, Recent
 *   conversations, the channel browser (`#channels/all`), and a search (`#narrow/search/deploy`,
 *   to its first result in view);
 * - **the typeahead**: "@use" typed into the compose box a key at a time, each from its input
 *   event to the typeahead's list changing;
 * - `--session-minutes M`: after the runs, a scripted session of M minutes on one page going round
 *   the views, the JS heap sampled after a forced garbage collection each minute, and its slope
 *   after the warm-up (least squares, % of its mean per minute).
 *
 * `--users U --channels C` make the fixture with that many people and channels (the database
 * `scale_<N>_u<U>_c<C>`): issue 33's figures are for 10,000 and 1,000.
 *
 * Budgets (exit code 1 when one fails): the first useful screen (the feed's first messages, or the
 * home view's Inbox rows) ≤ 1.5 s after login (median); a narrow switch and each view ≤ 200 ms
 * (p50); a typeahead keypress ≤ 16 ms (p50); ≤ 400 message rows in the DOM at any time; JS heap
 * ≤ 60 MB after the scroll (the largest over the runs); the session's heap slope under 1 %/min. `--json FILE` writes
 * every figure and sample. The server's request log (`responseTime`, `statements` per route and
 * phase) is summed up under the table, to tell the server's share from the browser's.
 *
 * - DATABASE_URL set: the database `scale_<N>` on that server, made on the first run and kept for
 *   the next (`--fresh` makes it again; drop it by hand when done), shared with `bench:scale`.
 * - Otherwise: embedded PGlite in a temporary DATA_DIR (removed at the end).
 *
 * The fixture is left as found: the reader's password is set (scrypt, server/lib/auth/passwords.ts)
 * by an UPDATE before the server starts, and the messages the app marks read as they are seen
 * are marked unread again through the API after each run, so every run opens the same views.
 * `--server FILE` runs another entry than dist/server/main.js (e.g. a one-line module importing
 * it, whose command line a `pkill -f dist/server/main.js` elsewhere on the machine does not match).
 * Chromium is Debian's `/usr/bin/chromium` (or CHROMIUM_PATH), headless, `--no-sandbox
 * --disable-dev-shm-usage --disable-gpu`, at 1280×800.
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { openScaleFixture, type Query } from "./scale-fixture.ts";
import type { Browser } from "puppeteer-core";
import { hashPassword } from "../../server/lib/auth/passwords.ts";
import { encodeHashComponent } from "../../web/src/narrow.ts";
import { byRole, CHROMIUM, chromiumInstalled, launchBrowser } from "../helpers/browser.ts";
import { cleanUp, interrupted, onCleanUp, spawnServer, stopServer, waitReady } from "./children.ts";

const { values: args } = parseArgs({
  options: {
    messages: { type: "string" },
    runs: { type: "string" },
    fresh: { type: "boolean" },
    json: { type: "string" },
    warmups: { type: "string" },
    server: { type: "string" },
    users: { type: "string" },
    channels: { type: "string" },
    "session-minutes": { type: "string" },
    scroll: { type: "string" },
  },
  strict: true,
});
const adminUrl = process.env.DATABASE_URL || undefined;
const N = Number(args.messages ?? (adminUrl ? 1_000_000 : 50_000));
const RUNS = Number(args.runs ?? 5);
const WARMUP = Number(args.warmups ?? 2);
/** Distinct messages to render while scrolling back (`--scroll N`: fewer, for a quicker look). */
const SCROLL_TARGET = Number(args.scroll ?? 5000);
const PASSWORD = "web bench passphrase 42";
const USERS = args.users ? Number(args.users) : undefined;
const CHANNELS = args.channels ? Number(args.channels) : undefined;
/** The scripted session after the runs, for the heap's slope (0: none). */
const SESSION_MINUTES = Number(args["session-minutes"] ?? 0);
/** Minutes of the session before its heap samples count (caches filling). */
const SESSION_WARMUP_MINUTES = Math.min(5, Math.max(1, Math.floor(SESSION_MINUTES / 6)));
/** A word common in the fixture's messages (populate-scale's vocabulary), for the search. */
const SEARCH_WORD = "deploy";
const BUDGET = {
  loginMs: 1500,
  switchMs: 200,
  viewMs: 200,
  typeaheadMs: 16,
  articles: 400,
  heapMb: 60,
  heapSlopePctPerMin: 1,
};
// Compiled, as `npm start` runs it; `--server FILE` runs another entry (a wrapper that imports it).
const OURS = args.server ?? "dist/server/main.js";

const quantile = (xs: number[], q: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};
const p50 = (xs: number[]) => quantile(xs, 0.5);
const p90 = (xs: number[]) => quantile(xs, 0.9);
const fmt = (n: number) => (Number.isNaN(n) ? "–" : n >= 100 ? n.toFixed(0) : n.toFixed(1));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

// ---------------------------------------------------------------------------------------------
// The fixture (as test/bench/scale.ts makes it)

interface Channel {
  id: number;
  name: string;
  recipient_id: number;
  n: number;
  newest: number;
}

/** The reader (with the bench's password), and the channels the runs visit. */
async function prepare(q: Query) {
  const reader = (
    await q(
      "SELECT id, delivery_email AS email, api_key FROM user_profile WHERE delivery_email = 'user1@scale.example.com'",
    )
  )[0] as { id: number; email: string; api_key: string };
  if (!reader) throw new Error("no user1@scale.example.com: not a populate-scale database");
  await q("UPDATE user_profile SET password_hash = $1 WHERE id = $2", [
    await hashPassword(PASSWORD),
    reader.id,
  ]);
  const channels = (await q(
    `SELECT s.id, s.name, s.recipient_id, count(m.id)::int AS n, coalesce(max(m.id), 0)::int AS newest
     FROM stream s JOIN subscription sub ON sub.recipient_id = s.recipient_id AND sub.user_profile_id = $1 AND sub.active
     LEFT JOIN message m ON m.recipient_id = s.recipient_id GROUP BY s.id ORDER BY n DESC`,
    [reader.id],
  )) as Channel[];
  const withMessages = channels.filter((c) => c.n > 0);
  const big = withMessages[0]!;
  // A middle-sized channel for the second half of the switches.
  const middle = withMessages[Math.floor(withMessages.length / 2)] ?? big;
  const rows = (
    await q(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE (flags & 1) = 0)::int AS unread FROM user_message WHERE user_profile_id = $1",
      [reader.id],
    )
  )[0] as { n: number; unread: number };
  return { reader, big, middle, channels: withMessages.length, rows };
}

// ---------------------------------------------------------------------------------------------
// In the page. Plain JavaScript in a string: functions handed to page.evaluate are serialized,
// and tsx's transform would name inner functions with a helper the page does not have.

const PAGE_SCRIPT = String.raw`(() => {
  if (window.__bench) return;
  const B = (window.__bench = { maxArticles: 0, first: undefined, waiters: new Set() });
  const epoch = () => performance.timeOrigin + performance.now();
  // The login form: when it is submitted (the next document reads it).
  addEventListener("submit", () => {
    try { sessionStorage.setItem("bench:submit", String(epoch())); } catch {}
  }, true);
  const feedOf = () => document.querySelector('[role="feed"]');
  // The first article of the feed (named label, when given) inside the scroller's box, or null.
  B.visibleIn = (label) => {
    const feed = feedOf();
    if (!feed || (label !== undefined && feed.getAttribute("aria-label") !== label)) return null;
    const articles = feed.querySelectorAll("article");
    if (!articles.length) return null;
    const box = (feed.parentElement || feed).getBoundingClientRect();
    for (const a of articles) {
      const r = a.getBoundingClientRect();
      if (r.height > 0 && r.bottom > box.top && r.top < box.bottom) return a;
    }
    return null;
  };
  const onChange = () => {
    const n = document.querySelectorAll('[role="feed"] article').length;
    if (n > B.maxArticles) B.maxArticles = n;
    // The first useful screen: the feed's messages, or the home view's page (Inbox by default).
    if (B.first === undefined && ((feedOf() && B.visibleIn()) || B.pageReady("Inbox") || B.pageReady("Recent conversations"))) {
      const first = (B.first = { seen: epoch(), frame: undefined });
      requestAnimationFrame(() => (first.frame = epoch()));
    }
    for (const w of [...B.waiters]) w();
  };
  new MutationObserver(onChange).observe(document, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["aria-label", "aria-busy"],
  });
  // Resolves with the predicate's value once it is truthy (checked at every DOM change).
  B.waitFor = (pred, timeout, what) => new Promise((resolve, reject) => {
    let timer;
    const check = () => {
      let v;
      try { v = pred(); } catch (e) { v = undefined; }
      if (v) { B.waiters.delete(check); clearTimeout(timer); resolve(v); }
    };
    timer = setTimeout(() => { B.waiters.delete(check); reject(new Error("timed out waiting for " + what)); }, timeout);
    B.waiters.add(check);
    check();
  });
  const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
  // Clicks the link, then waits for the feed named label with an article in view.
  B.switchTo = async (selector, label) => {
    const link = document.querySelector(selector);
    if (!link) throw new Error("no link " + selector);
    const t0 = performance.now();
    link.click();
    await B.waitFor(() => B.visibleIn(label), 20000, "the feed " + label);
    const seen = performance.now() - t0;
    await frame();
    return { seen, frame: performance.now() - t0 };
  };
  // Whether the feed is idle: loaded, nothing loading.
  B.idle = () => {
    const feed = feedOf();
    return !!feed && feed.getAttribute("aria-busy") !== "true" && !!feed.querySelector("article");
  };
  B.go = (hash) => { location.hash = hash; };
  // A sidebar link's name as shown, without the unread count read out to screen readers.
  B.nameOf = (a) => {
    const name = a.querySelector(".name");
    if (!name) return "";
    const copy = name.cloneNode(true);
    for (const hidden of copy.querySelectorAll(".sr-only")) hidden.remove();
    return copy.textContent.trim();
  };
  B.elements = () => document.getElementsByTagName("*").length;
  // Login to first messages, in ms since the login form's submit event (on the page before).
  B.loginMarks = () => {
    const submit = Number(sessionStorage.getItem("bench:submit"));
    const origin = performance.timeOrigin;
    const nav = performance.getEntriesByType("navigation")[0];
    const entry = (path) => performance.getEntriesByType("resource").find((r) => new URL(r.name).pathname.startsWith(path));
    const end = (path) => {
      const e = entry(path);
      return e ? origin + e.responseEnd - submit : undefined;
    };
    const sent = (path) => {
      const e = entry(path);
      return e ? origin + e.startTime - submit : undefined;
    };
    const first = B.first;
    return {
      submit,
      inPage: first.frame - submit,
      seen: first.seen - submit,
      html: origin + nav.responseEnd - submit,
      registerSent: sent("/json/register"),
      register: end("/json/register"),
      messages: end("/json/messages"),
    };
  };
  // Scrolls the feed to its top until target distinct messages have been rendered.
  B.scrollBack = async (target) => {
    const feed = feedOf();
    const scroller = feed.parentElement;
    const seen = new Set();
    const ids = () => [...feed.querySelectorAll("article[data-id]")].map((a) => Number(a.dataset.id));
    const collect = () => { const xs = ids(); for (const x of xs) seen.add(x); return xs; };
    let current = collect();
    const steps = [];
    let reachedStart = false;
    const t0 = performance.now();
    while (seen.size < target) {
      if (scroller.querySelector(".history-start")) { reachedStart = true; break; }
      const oldest = current[0];
      const s0 = performance.now();
      scroller.scrollTop = 0;
      await B.waitFor(() => {
        if (scroller.querySelector(".history-start")) return true;
        if (feed.getAttribute("aria-busy") === "true") return false;
        const a = feed.querySelector("article[data-id]");
        return a && Number(a.dataset.id) < oldest;
      }, 30000, "older messages").catch((e) => {
        const a = feed.querySelectorAll("article[data-id]");
        throw new Error(e.message + " (oldest rendered " + oldest + ", now " + (a[0] && a[0].dataset.id) + ", " + a.length + " articles, scrollTop " + scroller.scrollTop + " of " + scroller.scrollHeight + ", busy " + feed.getAttribute("aria-busy") + ", " + seen.size + " seen, step " + steps.length + ")");
      });
      await frame();
      steps.push(performance.now() - s0);
      current = collect();
    }
    return { ms: performance.now() - t0, distinct: seen.size, steps, reachedStart };
  };
  // A page of the middle column (inbox, recent conversations, channels) in view with content.
  B.pageReady = (label) => {
    const section = document.querySelector('main section[aria-label="' + label + '"]');
    if (!section || section.getBoundingClientRect().height === 0) return null;
    return section.querySelector('a[href], [role="row"], [role="listitem"], li, button') ? section : null;
  };
  // Opens a fragment (as a click on its link does), then waits for ready(): ms to seen and frame.
  B.open = async (hash, kind, label) => {
    const t0 = performance.now();
    location.hash = hash;
    const ready = kind === "page" ? () => B.pageReady(label) : () => B.visibleIn(label);
    await B.waitFor(ready, 20000, label);
    const seen = performance.now() - t0;
    await frame();
    return { seen, frame: performance.now() - t0 };
  };
  // Types text into the compose box one key at a time; per key, the ms from the input event to
  // the typeahead's list changing (a MutationObserver callback, before the next frame).
  B.typeahead = async (text) => {
    const area = document.querySelector('textarea[aria-label="Message"]');
    if (!area) throw new Error("no compose box");
    area.focus();
    area.value = "";
    area.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "deleteContentBackward" }));
    await frame();
    const times = [];
    for (const ch of text) {
      let changed;
      const seen = new Promise((r) => (changed = r));
      const mo = new MutationObserver(() => changed(performance.now()));
      mo.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
      const t0 = performance.now();
      area.value += ch;
      area.setSelectionRange(area.value.length, area.value.length);
      area.dispatchEvent(new InputEvent("input", { bubbles: true, data: ch, inputType: "insertText" }));
      const t1 = await Promise.race([seen, new Promise((r) => setTimeout(() => r(undefined), 500))]);
      mo.disconnect();
      if (t1 !== undefined) times.push(t1 - t0);
      await frame();
    }
    const listbox = document.querySelector('[role="listbox"]');
    const options = listbox ? listbox.querySelectorAll('[role="option"]').length : 0;
    area.value = "";
    area.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "deleteContentBackward" }));
    area.blur();
    return { times, options };
  };
})();`;

interface PageBench {
  maxArticles: number;
  first?: { seen: number; frame?: number };
  switchTo(selector: string, label: string): Promise<{ seen: number; frame: number }>;
  idle(): boolean;
  visibleIn(label?: string): unknown;
  go(hash: string): void;
  nameOf(link: Element): string;
  elements(): number;
  loginMarks(): {
    submit: number;
    inPage: number;
    seen: number;
    html: number;
    registerSent?: number;
    register?: number;
    messages?: number;
  };
  scrollBack(
    target: number,
  ): Promise<{ ms: number; distinct: number; steps: number[]; reachedStart: boolean }>;
  pageReady(label: string): unknown;
  open(
    hash: string,
    kind: "page" | "feed",
    label: string,
  ): Promise<{ seen: number; frame: number }>;
  typeahead(text: string): Promise<{ times: number[]; options: number }>;
}
// The page's global, as the callbacks handed to page.evaluate see it (this program has no DOM lib).
declare const window: { __bench: PageBench };

// ---------------------------------------------------------------------------------------------
// The server's request log

interface LogLine {
  phase: string;
  method: string;
  route: string;
  status: number;
  responseTime: number;
  statements?: number;
}
let phase = "start";
const logLines: LogLine[] = [];
function readRequestLog(stream: NodeJS.ReadableStream) {
  let buffered = "";
  stream.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (!line.startsWith("{")) continue;
      try {
        const j = JSON.parse(line);
        if (typeof j.responseTime === "number" && typeof j.route === "string")
          logLines.push({
            phase,
            method: j.method,
            route: j.route,
            status: j.status,
            responseTime: j.responseTime,
            statements: j.statements,
          });
      } catch {
        /* not a log line */
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// One run

interface Switch {
  kind: "channel" | "topic" | "dm";
  visit: "first" | "cached";
  label: string;
  seen: number;
  frame: number;
  wall: number;
}
interface RunResult {
  login: {
    inPage: number;
    wall: number;
    html: number;
    registerSent?: number;
    register?: number;
    messages?: number;
    seen: number;
  };
  switches: Switch[];
  /** Inbox, recent conversations, the channel browser, a search: ms to their frame. */
  views: Record<ViewName, number>;
  /** Per keypress of "@use" in the compose box, ms to the typeahead's change. */
  typeahead: number[];
  typeaheadOptions: number;
  scroll: {
    ms: number;
    distinct: number;
    loads: number;
    stepP50: number;
    stepP90: number;
    reachedStart: boolean;
  };
  maxArticles: number;
  domNodes: number;
  heapMb: number;
  chromium: Record<string, number>;
  markedRead: number;
}

type ViewName = "inbox" | "recent" | "channels" | "search";
/** Each view: its fragment, and what shows it ready (a page's name, or the feed's). */
const VIEWS: Record<ViewName, { hash: string; kind: "page" | "feed"; label: string }> = {
  inbox: { hash: "#inbox", kind: "page", label: "Inbox" },
  recent: { hash: "#recent", kind: "page", label: "Recent conversations" },
  channels: { hash: "#channels/all", kind: "page", label: "Channels" },
  search: {
    hash: `#narrow/search/${SEARCH_WORD}`,
    kind: "feed",
    label: `Search results for ${SEARCH_WORD}`,
  },
};

const BLOCKED = ["*/user_uploads/*", "*://secure.gravatar.com/*"];

const channelLink = (c: Channel) =>
  `nav[aria-label="Channels"] a[href^="#narrow/channel/${c.id}-"]:not([href*="/topic/"])`;

async function oneRun(
  browser: Browser,
  base: string,
  ctx: Awaited<ReturnType<typeof prepare>>,
  restoreUnread: (ids: number[]) => Promise<void>,
): Promise<RunResult> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  const markedRead = new Set<number>();
  try {
    await page.evaluateOnNewDocument(PAGE_SCRIPT);
    // Images are not loaded: the fixture's uploads have no files, avatars are on gravatar.com
    // (this machine may be offline), and neither is what the bench measures. (Before 60c21de,
    // /user_uploads/ answered the app's session 401 with `WWW-Authenticate: Basic`, on which
    // Chromium held each image's request open: five of them took the host's six connections and
    // the feed's next fetch waited forever.)
    const network = await page.createCDPSession();
    await network.send("Network.enable");
    await network.send("Network.setBlockedURLs", { urls: BLOCKED });
    // What the app marks read as it shows messages, to mark unread again after the run.
    page.on("request", (req) => {
      if (req.method() !== "POST" || !req.url().includes("/json/messages/flags")) return;
      const body = new URLSearchParams(req.postData() ?? "");
      if (body.get("op") === "add" && body.get("flag") === "read")
        for (const id of JSON.parse(body.get("messages") ?? "[]") as number[]) markedRead.add(id);
    });

    // Login → first messages visible.
    phase = "login";
    await page.goto(`${base}/`);
    if (!page.url().includes("/login/"))
      throw new Error(`expected the login page at ${base}/, got ${page.url()}`);
    await (await byRole(page, "textbox", "Email")).type(ctx.reader.email);
    await (await byRole(page, "textbox", "Password")).type(PASSWORD);
    const button = await byRole(page, "button", "Log in");
    const w0 = performance.now();
    await Promise.all([page.waitForNavigation(), button.click()]);
    await page.waitForFunction(() => window.__bench?.first?.frame !== undefined, {
      timeout: 60_000,
      polling: "raf",
    });
    const wall = performance.now() - w0;
    const marks = await page.evaluate(() => window.__bench.loginMarks());
    if (!marks.submit) throw new Error("the login page's submit was not marked");

    // Narrow switches: six first visits (two channels, a topic of each, two conversations),
    // then the same six again.
    phase = "switch";
    const switches: Switch[] = [];
    const settle = async () => {
      await page.waitForFunction(() => window.__bench.idle(), { timeout: 30_000 });
      await sleep(300);
    };
    const doSwitch = async (
      kind: Switch["kind"],
      visit: Switch["visit"],
      selector: string,
      label: string,
    ) => {
      await settle();
      // The sidebar fills from the registration, which may answer after the first messages.
      await page.waitForSelector(selector, { timeout: 30_000 });
      const t0 = performance.now();
      const r = await page.evaluate((s, l) => window.__bench.switchTo(s, l), selector, label);
      switches.push({ kind, visit, label, ...r, wall: performance.now() - t0 });
    };
    /** The first topic listed under the channel in view: its link and the feed's name for it. */
    const topicOf = async (c: Channel) => {
      const list = `nav[aria-label="Channels"] ul[aria-label="Topics in ${c.name}"]`;
      await page.waitForSelector(`${list} a`, { timeout: 30_000 });
      const { href, name } = await page.$eval(`${list} a`, (a) => ({
        href: a.getAttribute("href")!,
        name: window.__bench.nameOf(a),
      }));
      return { selector: `${list} a[href="${href}"]`, label: `#${c.name} > ${name}` };
    };
    const dmOf = async (i: number) => {
      const all = `nav[aria-label="Direct messages"] a`;
      await page.waitForSelector(all, { timeout: 30_000 });
      const { href, name } = await page.$$eval(
        all,
        (as, i) => ({
          href: as[i]!.getAttribute("href")!,
          name: window.__bench.nameOf(as[i]!),
        }),
        i,
      );
      return {
        selector: `nav[aria-label="Direct messages"] a[href="${href}"]`,
        label: `Messages with ${name}`,
      };
    };
    const visited: { kind: Switch["kind"]; selector: string; label: string }[] = [];
    for (const [i, c] of [ctx.big, ctx.middle].entries()) {
      const channel = { kind: "channel" as const, selector: channelLink(c), label: `#${c.name}` };
      await doSwitch("channel", "first", channel.selector, channel.label);
      await settle();
      const topic = { kind: "topic" as const, ...(await topicOf(c)) };
      await doSwitch("topic", "first", topic.selector, topic.label);
      await settle();
      const dm = { kind: "dm" as const, ...(await dmOf(i)) };
      await doSwitch("dm", "first", dm.selector, dm.label);
      visited.push(channel, topic, dm);
    }
    for (const v of visited) await doSwitch(v.kind, "cached", v.selector, v.label);
    await settle();

    // The views of a working day, each opened from a feed, then back to it.
    phase = "views";
    const views = {} as Record<ViewName, number>;
    for (const [name, v] of Object.entries(VIEWS) as [ViewName, (typeof VIEWS)[ViewName]][]) {
      const r = await page.evaluate(
        (h, k, l) => window.__bench.open(h, k, l),
        v.hash,
        v.kind,
        v.label,
      );
      views[name] = r.frame;
      if (v.kind === "feed") await settle();
      await page.evaluate(
        (s, l) => window.__bench.switchTo(s, l),
        channelLink(ctx.big),
        `#${ctx.big.name}`,
      );
      await settle();
    }
    phase = "typeahead";
    const typed = await page.evaluate(() => window.__bench.typeahead("@use"));

    // Scrolling back in the biggest channel, from its newest message.
    phase = "scroll";
    await page.evaluate(
      (hash) => window.__bench.go(hash),
      `#narrow/channel/${ctx.big.id}-${encodeHashComponent(ctx.big.name.replace(/ /g, "-"))}/near/${ctx.big.newest}`,
    );
    await page.waitForFunction(
      (label) => !!window.__bench.visibleIn(label) && window.__bench.idle(),
      { timeout: 30_000 },
      `#${ctx.big.name}`,
    );
    await sleep(300);
    const scroll = await page.evaluate((n) => window.__bench.scrollBack(n), SCROLL_TARGET);
    const cdp = await page.createCDPSession();
    await cdp.send("HeapProfiler.collectGarbage");
    await cdp.detach();
    const metrics = await page.metrics();
    const after = await page.evaluate(() => ({
      domNodes: window.__bench.elements(),
      maxArticles: window.__bench.maxArticles,
    }));
    // Let the last read flags go out before the context closes.
    await sleep(600);
    phase = "restore";
    await restoreUnread([...markedRead]);
    return {
      login: {
        inPage: marks.inPage,
        wall,
        html: marks.html,
        registerSent: marks.registerSent,
        register: marks.register,
        messages: marks.messages,
        seen: marks.seen,
      },
      switches,
      views,
      typeahead: typed.times,
      typeaheadOptions: typed.options,
      scroll: {
        ms: scroll.ms,
        distinct: scroll.distinct,
        loads: scroll.steps.length,
        stepP50: p50(scroll.steps),
        stepP90: p90(scroll.steps),
        reachedStart: scroll.reachedStart,
      },
      maxArticles: after.maxArticles,
      domNodes: after.domNodes,
      heapMb: (metrics.JSHeapUsedSize ?? NaN) / 2 ** 20,
      chromium: Object.fromEntries(
        Object.entries(metrics).filter(([, v]) => typeof v === "number") as [string, number][],
      ),
      markedRead: markedRead.size,
    };
  } finally {
    await context.close();
  }
}

/**
 * The hour of a working day, scripted (`--session-minutes M`): one page, logged in once, going
 * round the views again and again (inbox, recent conversations, the two channels, a topic, the
 * channel browser, a search, the typeahead, a scroll back), with the JS heap measured after a
 * forced garbage collection once a minute. The slope of the heap after the warm-up (least
 * squares, as a share of its mean per minute) tells a leak from a cache filling.
 */
async function session(
  browser: Browser,
  base: string,
  ctx: Awaited<ReturnType<typeof prepare>>,
  restoreUnread: (ids: number[]) => Promise<void>,
): Promise<{
  samples: { minute: number; heapMb: number; domNodes: number }[];
  slopePct: number;
  rounds: number;
}> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  const markedRead = new Set<number>();
  try {
    await page.evaluateOnNewDocument(PAGE_SCRIPT);
    const network = await page.createCDPSession();
    await network.send("Network.enable");
    await network.send("Network.setBlockedURLs", { urls: BLOCKED });
    page.on("request", (req) => {
      if (req.method() !== "POST" || !req.url().includes("/json/messages/flags")) return;
      const body = new URLSearchParams(req.postData() ?? "");
      if (body.get("op") === "add" && body.get("flag") === "read")
        for (const id of JSON.parse(body.get("messages") ?? "[]") as number[]) markedRead.add(id);
    });
    phase = "session";
    await page.goto(`${base}/`);
    await (await byRole(page, "textbox", "Email")).type(ctx.reader.email);
    await (await byRole(page, "textbox", "Password")).type(PASSWORD);
    await Promise.all([page.waitForNavigation(), (await byRole(page, "button", "Log in")).click()]);
    await page.waitForFunction(() => window.__bench?.first?.frame !== undefined, {
      timeout: 60_000,
    });
    const cdp = await page.createCDPSession();
    const samples: { minute: number; heapMb: number; domNodes: number }[] = [];
    const start = performance.now();
    let nextSample = 0;
    let rounds = 0;
    const feed = (c: Channel) => ({
      hash: `#narrow/channel/${c.id}-${encodeHashComponent(c.name.replace(/ /g, "-"))}`,
      label: `#${c.name}`,
    });
    while (performance.now() - start < SESSION_MINUTES * 60_000) {
      const steps: { hash: string; kind: "page" | "feed"; label: string }[] = [
        VIEWS.inbox,
        { ...feed(ctx.big), kind: "feed" },
        VIEWS.recent,
        { ...feed(ctx.middle), kind: "feed" },
        VIEWS.channels,
        VIEWS.search,
        { ...feed(ctx.big), kind: "feed" },
      ];
      for (const st of steps) {
        await page.evaluate((h, k, l) => window.__bench.open(h, k, l), st.hash, st.kind, st.label);
        await sleep(1500);
      }
      await page.evaluate(() => window.__bench.typeahead("@use"));
      // The feed settles (its anchor kept in place) before it is scrolled back; a round whose
      // scroll cannot go on is reported and the session goes on.
      await page.waitForFunction(() => window.__bench.idle(), { timeout: 30_000 });
      await sleep(500);
      await page
        .evaluate((n) => window.__bench.scrollBack(n), 600)
        .catch((e: unknown) => console.log(`  (round ${rounds + 1}: ${String(e).slice(0, 160)})`));
      rounds++;
      const minute = (performance.now() - start) / 60_000;
      if (minute >= nextSample) {
        await cdp.send("HeapProfiler.collectGarbage");
        const m = await page.metrics();
        const domNodes = await page.evaluate(() => window.__bench.elements());
        samples.push({ minute, heapMb: (m.JSHeapUsedSize ?? NaN) / 2 ** 20, domNodes });
        console.log(
          `  session ${minute.toFixed(1)} min: heap ${samples.at(-1)!.heapMb.toFixed(1)} MB, ${domNodes} elements, ${rounds} rounds`,
        );
        nextSample = Math.floor(minute) + 1;
      }
    }
    const after = samples.filter((x) => x.minute >= SESSION_WARMUP_MINUTES);
    const n = after.length;
    const mx = after.reduce((a, x) => a + x.minute, 0) / n;
    const my = after.reduce((a, x) => a + x.heapMb, 0) / n;
    const slope =
      after.reduce((a, x) => a + (x.minute - mx) * (x.heapMb - my), 0) /
      after.reduce((a, x) => a + (x.minute - mx) ** 2, 0);
    await sleep(600);
    await restoreUnread([...markedRead]);
    return { samples, slopePct: n >= 2 ? (100 * slope) / my : NaN, rounds };
  } finally {
    await context.close();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  if (!chromiumInstalled)
    throw new Error(
      `no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
    );
  const { query, close, env, label } = await openScaleFixture(
    N,
    args.fresh ?? false,
    "web-bench-",
    {
      users: USERS,
      channels: CHANNELS,
    },
  );
  const ctx = await prepare(query);
  if (!adminUrl) await close();
  const child = await spawnServer("our server", OURS, {
    ...env,
    LOG_LEVEL: "info",
    VALIDATE_RESPONSES: "false",
    // One user logs in once per run: no rate limit (as the soak runs).
    RATE_LIMITING: "false",
  });
  onCleanUp(async () => void (await stopServer(child)));
  // A server that stops during the runs (killed from outside) leaves the page waiting: say so.
  child.proc.once("exit", (code, signal) => {
    if (!finishing)
      console.error(
        `\nthe server exited during the bench (${signal ? `signal ${signal}` : `exit code ${code}`}):\n${child.output().slice(-1500)}`,
      );
  });
  readRequestLog(child.proc.stdout!);
  await waitReady(child, 15 * 60_000);
  const base = child.base.replace(/\/api\/v1$/, "");
  const api = `${child.base}`;
  const auth =
    "Basic " + Buffer.from(`${ctx.reader.email}:${ctx.reader.api_key}`).toString("base64");
  const restoreUnread = async (ids: number[]) => {
    for (let i = 0; i < ids.length; i += 1000) {
      const res = await fetch(`${api}/messages/flags`, {
        method: "POST",
        headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          messages: JSON.stringify(ids.slice(i, i + 1000)),
          op: "remove",
          flag: "read",
        }),
      });
      if (!res.ok) throw new Error(`marking unread again: HTTP ${res.status} ${await res.text()}`);
    }
  };

  console.log(
    `\n${label}: ${N.toLocaleString("en")} messages; reader ${ctx.reader.email}: ${ctx.rows.n.toLocaleString("en")} received, ${ctx.rows.unread.toLocaleString("en")} unread, ${ctx.channels} channels`,
  );
  console.log(
    `biggest channel #${ctx.big.name}: ${ctx.big.n.toLocaleString("en")} messages; middle #${ctx.middle.name}: ${ctx.middle.n.toLocaleString("en")}`,
  );
  console.log(
    `Chromium ${CHROMIUM}; ${WARMUP} warm-up runs, then ${RUNS}; load average ${load()} (${os.cpus().length} CPUs)\n`,
  );

  const browser = await launchBrowser();
  onCleanUp(() => browser.close());
  const version = await browser.version();
  const results: RunResult[] = [];
  const loadBefore = os.loadavg();
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const warm = i < WARMUP;
    const r = await oneRun(browser, base, ctx, restoreUnread);
    console.log(
      `${warm ? "warm-up" : "run"} ${warm ? i + 1 : i - WARMUP + 1}: login ${fmt(r.login.inPage)} ms, switches ${r.switches.map((s) => fmt(s.frame)).join(" ")} ms, views ${Object.entries(
        r.views,
      )
        .map(([k, v]) => `${k} ${fmt(v)}`)
        .join(
          ", ",
        )} ms, typeahead ${r.typeahead.map(fmt).join(" ")} ms (${r.typeaheadOptions} options), scroll ${fmt(r.scroll.ms)} ms (${r.scroll.distinct} messages, ${r.scroll.loads} steps), ≤ ${r.maxArticles} articles, ${r.domNodes} elements, heap ${r.heapMb.toFixed(1)} MB (load ${load()})`,
    );
    if (!warm) results.push(r);
  }
  let sessionResult: Awaited<ReturnType<typeof session>> | undefined;
  if (SESSION_MINUTES > 0) {
    console.log(`\nscripted session of ${SESSION_MINUTES} min (heap sampled each minute):`);
    sessionResult = await session(browser, base, ctx, restoreUnread);
  }
  const loadAfter = os.loadavg();
  const benchLines = logLines.filter((l) => l.phase !== "start");

  // The table.
  const rows: {
    label: string;
    p50: string;
    p90: string;
    n: number;
    budget: string;
    ok?: boolean;
  }[] = [];
  const stat = (
    labelText: string,
    xs: number[],
    unit: string,
    budget?: { value: number; on: "p50" | "max" },
  ) => {
    const m = p50(xs);
    const ok =
      budget === undefined
        ? undefined
        : budget.on === "p50"
          ? m <= budget.value
          : Math.max(...xs) <= budget.value;
    rows.push({
      label: labelText,
      p50: `${fmt(m)} ${unit}`,
      p90: budget?.on === "max" ? `max ${fmt(Math.max(...xs))}` : `${fmt(p90(xs))} ${unit}`,
      n: xs.length,
      budget: budget ? `${budget.on === "p50" ? "p50" : "max"} ≤ ${budget.value} ${unit}` : "",
      ok,
    });
  };
  const sw = results.flatMap((r) => r.switches);
  const of = (visit: string, kind?: string) =>
    sw
      .filter((s) => s.visit === visit && (kind === undefined || s.kind === kind))
      .map((s) => s.frame);
  stat(
    "login → first useful screen (in page)",
    results.map((r) => r.login.inPage),
    "ms",
    {
      value: BUDGET.loginMs,
      on: "p50",
    },
  );
  stat(
    "  same, wall time from puppeteer",
    results.map((r) => r.login.wall),
    "ms",
  );
  stat(
    "  HTML of the app received",
    results.map((r) => r.login.html),
    "ms",
  );
  stat(
    "  POST /json/register sent",
    results.map((r) => r.login.registerSent ?? NaN),
    "ms",
  );
  stat(
    "  POST /json/register answered",
    results.map((r) => r.login.register ?? NaN),
    "ms",
  );
  stat(
    "  first GET /json/messages answered",
    results.map((r) => r.login.messages ?? NaN),
    "ms",
  );
  stat("narrow switch, first visit", of("first"), "ms", { value: BUDGET.switchMs, on: "p50" });
  for (const k of ["channel", "topic", "dm"]) stat(`  ${k}`, of("first", k), "ms");
  stat("narrow switch, cached view", of("cached"), "ms", { value: BUDGET.switchMs, on: "p50" });
  for (const k of ["channel", "topic", "dm"]) stat(`  ${k}`, of("cached", k), "ms");
  for (const name of Object.keys(VIEWS) as ViewName[])
    stat(
      name === "search"
        ? `a search (${SEARCH_WORD}) → results visible`
        : `open ${VIEWS[name].label} → its rows visible`,
      results.map((r) => r.views[name]),
      "ms",
      { value: BUDGET.viewMs, on: "p50" },
    );
  stat(
    "typeahead: a keypress → its list changed",
    results.flatMap((r) => r.typeahead),
    "ms",
    { value: BUDGET.typeaheadMs, on: "p50" },
  );
  stat(
    `scroll back ${SCROLL_TARGET.toLocaleString("en")} messages`,
    results.map((r) => r.scroll.ms),
    "ms",
  );
  stat(
    "  one step (scroll to top → older rendered)",
    results.map((r) => r.scroll.stepP50),
    "ms",
  );
  stat(
    "message rows in the DOM, most at any time",
    results.map((r) => r.maxArticles),
    "",
    {
      value: BUDGET.articles,
      on: "max",
    },
  );
  stat(
    "DOM elements after the scroll",
    results.map((r) => r.domNodes),
    "",
  );
  stat(
    "JS heap after the scroll (after GC)",
    results.map((r) => r.heapMb),
    "MB",
    {
      value: BUDGET.heapMb,
      on: "max",
    },
  );

  if (sessionResult) {
    const after = sessionResult.samples.filter((x) => x.minute >= SESSION_WARMUP_MINUTES);
    stat(
      `JS heap over a ${SESSION_MINUTES}-min session, after ${SESSION_WARMUP_MINUTES} min`,
      after.map((x) => x.heapMb),
      "MB",
    );
    const ok = Math.abs(sessionResult.slopePct) < BUDGET.heapSlopePctPerMin;
    rows.push({
      label: "  its slope (least squares), % of its mean per minute",
      p50: `${sessionResult.slopePct.toFixed(2)} %`,
      p90: "",
      n: after.length,
      budget: `|slope| < ${BUDGET.heapSlopePctPerMin} %/min: ${ok ? "" : ""}`.replace(/: $/, ""),
      ok,
    });
  }
  console.log(
    `\n${label}, ${N.toLocaleString("en")} messages; ${version}; ${RUNS} runs after ${WARMUP} warm-ups`,
  );
  console.log(
    `load average (1, 5, 15 min) before the runs ${loadBefore.map((x) => x.toFixed(2)).join(" ")}, after ${loadAfter.map((x) => x.toFixed(2)).join(" ")}; ${os.cpus().length} CPUs\n`,
  );
  const width = Math.max(...rows.map((r) => r.label.length)) + 2;
  console.log(
    `${"".padEnd(width)}${"p50".padStart(11)}${"p90".padStart(12)}${"n".padStart(5)}  budget`,
  );
  let failed = 0;
  for (const r of rows) {
    if (r.ok === false) failed++;
    console.log(
      `${r.label.padEnd(width)}${r.p50.padStart(11)}${r.p90.padStart(12)}${String(r.n).padStart(5)}  ${r.budget ? `${r.budget}: ${r.ok ? "PASS" : "FAIL"}` : ""}`,
    );
  }
  const incomplete = results.filter((r) => r.scroll.distinct < SCROLL_TARGET);
  if (incomplete.length)
    console.log(
      `\n(the scroll reached the channel's first message after ${incomplete.map((r) => r.scroll.distinct).join(", ")} messages)`,
    );

  // The server's side: per phase and route, the request log's figures.
  const groups = new Map<string, LogLine[]>();
  for (const l of benchLines) {
    if (l.phase === "restore") continue;
    const key = `${l.phase}\t${l.method} ${l.route}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  console.log(
    `\nserver (request log, timed runs and warm-ups): ${"requests".padStart(8)} ${"p50 ms".padStart(8)} ${"p90 ms".padStart(8)} ${"max ms".padStart(8)} ${"stmts".padStart(6)}`,
  );
  const serverRows = [...groups.entries()].sort();
  for (const [key, ls] of serverRows) {
    const [ph, route] = key.split("\t");
    const t = ls.map((l) => l.responseTime);
    const st = ls.map((l) => l.statements).filter((x): x is number => x !== undefined);
    console.log(
      `  ${`${ph} ${route}`.padEnd(44)} ${String(ls.length).padStart(8)} ${fmt(p50(t)).padStart(8)} ${fmt(p90(t)).padStart(8)} ${fmt(Math.max(...t)).padStart(8)} ${(st.length ? fmt(p50(st)) : "–").padStart(6)}`,
    );
  }
  console.log(`\n${rows.filter((r) => r.ok !== undefined).length - failed} PASS, ${failed} FAIL`);

  if (args.json)
    writeFileSync(
      args.json,
      JSON.stringify(
        {
          database: label,
          messages: N,
          runs: RUNS,
          warmups: WARMUP,
          chromium: version,
          loadavg: { before: loadBefore, after: loadAfter, cpus: os.cpus().length },
          budgets: BUDGET,
          summary: Object.fromEntries(
            rows.map((r) => [r.label.trim(), { p50: r.p50, p90: r.p90, n: r.n, ok: r.ok }]),
          ),
          runsDetail: results,
          session: sessionResult,
          server: serverRows.map(([key, ls]) => ({
            phase: key.split("\t")[0],
            route: key.split("\t")[1],
            n: ls.length,
            p50: p50(ls.map((l) => l.responseTime)),
            p90: p90(ls.map((l) => l.responseTime)),
            statements: p50(ls.map((l) => l.statements ?? NaN)),
          })),
        },
        null,
        2,
      ) + "\n",
    );
  if (adminUrl) await close();
  return failed;
}

/** Set once main() is done: the server's exit is then ours. */
let finishing = false;
main()
  .then(async (failed) => {
    finishing = true;
    await cleanUp();
    process.exit(interrupted() ? 130 : failed ? 1 : 0);
  })
  .catch(async (e) => {
    finishing = true;
    console.error(e instanceof Error ? (e.stack ?? e.message) : e);
    if (logLines.length)
      console.error(
        "the server's last requests:\n" +
          logLines
            .slice(-12)
            .map((l) => `  ${l.phase} ${l.method} ${l.route} ${l.status} ${l.responseTime} ms`)
            .join("\n"),
      );
    await cleanUp();
    process.exit(1);
  });
