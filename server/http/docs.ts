/**
 * The API reference page: Redoc built by Redocly CLI from the bundled spec into
 * generated/docs/index.html and served at /api/docs. The page works with no network at all:
 * - the Redoc bundle is inlined (`--inlineBundle`);
 * - Redoc's telemetry is off (REDOCLY_TELEMETRY=off);
 * - the Redocly logo, the one image Redoc loads from its CDN, is replaced by nothing (the
 *   component hides itself when its image fails);
 * - the sidebar links stay under /api/docs: Redoc routes with the history API under basePath
 *   /api/docs, and the server answers every /api/docs/… path with the page. Redocly prerenders
 *   the page for basePath "/" and React's hydration keeps the prerendered links, so the
 *   prerendered markup is dropped and the page renders in the browser.
 * The page records the spec it was built from; the server rebuilds it, in the background, when
 * it is missing or the spec changed.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Router, type Request, type Response } from "express";
import type { Logger } from "pino";

const root = fileURLToPath(new URL("../..", import.meta.url));
const SPEC = join(root, "generated", "openapi.json");
export const DOCS_PAGE = join(root, "generated", "docs", "index.html");
const STAMP = join(root, "generated", "docs", "spec.sha256");
const REDOCLY = join(root, "node_modules", ".bin", "redocly");
const BASE_PATH = "/api/docs";
const CDN_LOGOS = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g;

const specHash = () => createHash("sha256").update(readFileSync(SPEC)).digest("hex");

/** Whether the page exists and was built from the current spec. */
export function docsAreCurrent(): boolean {
  return (
    existsSync(DOCS_PAGE) && existsSync(STAMP) && readFileSync(STAMP, "utf8").trim() === specHash()
  );
}

export const redoclyInstalled = () => existsSync(REDOCLY);

/** Builds the page (a few seconds, in a child process); throws with Redocly's output if it fails. */
export async function buildDocs(): Promise<void> {
  const hash = specHash();
  const raw = `${DOCS_PAGE}.${process.pid}.build.html`;
  mkdirSync(dirname(DOCS_PAGE), { recursive: true });
  try {
    await promisify(execFile)(
      REDOCLY,
      [
        "build-docs",
        SPEC,
        "--output",
        raw,
        "--inlineBundle",
        "--title",
        "Zulip-compatible chat server API",
        "--openapi",
        JSON.stringify({ basePath: BASE_PATH, router: "history" }),
      ],
      {
        cwd: root,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", NO_COLOR: "1" },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  } catch (err) {
    const { stdout = "", stderr = "" } = err as { stdout?: string; stderr?: string };
    throw new Error(
      `redocly build-docs failed: ${(stderr || stdout || (err as Error).message).trim().slice(-2000)}`,
    );
  }
  let html = readFileSync(raw, "utf8");
  const start = html.indexOf('<div id="redoc">');
  const script = html.indexOf('<script type="module">', start);
  if (start < 0 || script < 0 || !html.includes('"disableTelemetry":true'))
    throw new Error("redocly build-docs: the page's layout changed; update server/http/docs.ts");
  html = html.slice(0, start) + '<div id="redoc"></div>\n      ' + html.slice(script);
  html = html.replace(CDN_LOGOS, "data:,");
  writeFileSync(raw, html);
  renameSync(raw, DOCS_PAGE);
  writeFileSync(STAMP, hash + "\n");
}

let building: Promise<void> | null = null;

/** At start-up (npm start): builds the page in the background when it is missing or stale. */
export function ensureDocs(log: Logger): void {
  if (building || docsAreCurrent()) return;
  if (!redoclyInstalled()) {
    log.warn(
      "the API docs page is not built and Redocly CLI is not installed (an install with dev dependencies builds it)",
    );
    return;
  }
  log.info("building the API docs page in the background");
  building = buildDocs().then(
    () => log.info({ page: DOCS_PAGE }, "API docs built: /api/docs"),
    (err: Error) => log.error({ err: { message: err.message } }, "building the API docs failed"),
  );
  void building.finally(() => (building = null));
}

/** GET /api/docs and every page under it (Redoc's history routing); while a build runs the answer says so. */
export function docsRoutes() {
  const router = Router();
  const page = (_req: Request, res: Response) => {
    if (building)
      res
        .status(503)
        .set("Retry-After", "5")
        .type("text/plain")
        .send("The API docs are being built: reload in a few seconds.\n");
    else if (existsSync(DOCS_PAGE))
      res.sendFile(DOCS_PAGE, { headers: { "Cache-Control": "no-cache" } });
    else res.status(404).type("text/plain").send("API docs are not built: run `npm run docs`.\n");
  };
  router.get(BASE_PATH, page);
  router.get(`${BASE_PATH}/*rest`, page);
  return router;
}
